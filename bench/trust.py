"""An extra CA bundle for users behind TLS-intercepting proxies (and for our own CI).

Set with ``--ca-bundle PATH`` or ``BENCH_CA_BUNDLE``. Pinned images never see it: the host
fetches their inputs with it (bench/fetch.py). A subject's project image, which installs
from a live registry, gets it as ``bench-ca.crt`` in its build context; containers that
reach a registry or model endpoint get it mounted and named in every variable common
clients read.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError

HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
CONTAINER_PATH = "/opt/bench/ca-bundle.crt"  # under /opt/bench, so no system folder changes owner
CLIENT_VARIABLES = ("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


def ca_bundle(explicit: str | Path | None = None) -> Path | None:
    """The configured bundle, checked to exist, or None."""
    value = explicit or os.environ.get("BENCH_CA_BUNDLE")
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise UsageError(f"CA bundle {path} (from --ca-bundle or BENCH_CA_BUNDLE) does not exist — point it at a PEM file")
    return path


def trusted_bundle(explicit: Path | None) -> Path | None:
    """What a fetch that needs HTTPS trusts: the configured bundle, else the host's own, if any.

    The host's system bundle is what its own npm and pip trust, so a build or download
    that must reach a registry behind an intercepting proxy works without a flag.
    """
    return explicit or (HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None)


def container_env() -> dict[str, str]:
    """Environment that makes common clients trust the mounted bundle."""
    return {name: CONTAINER_PATH for name in CLIENT_VARIABLES}
