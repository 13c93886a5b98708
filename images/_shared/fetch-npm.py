"""Fetch one npm registry tarball and verify it against its pinned integrity hash.

Used inside the image build (no node in the base image): the build trusts the CA
bundle the harness puts in the build context (bench-ca.crt) when it is not empty,
so it works behind TLS-intercepting proxies, and it refuses any byte that does not
match the registry's published sha512 integrity, so the version pin is exact.
"""

import base64
import hashlib
import ssl
import sys
import time
import urllib.request
from pathlib import Path


def context(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca)) if ca.is_file() and ca.stat().st_size else ssl.create_default_context()


def fetch(url: str, integrity: str, out: Path, ca: Path) -> None:
    algorithm, _, expected = integrity.partition("-")
    for attempt in range(1, 4):
        try:
            digest = hashlib.new(algorithm)
            with urllib.request.urlopen(url, context=context(ca), timeout=120) as response, open(out, "wb") as handle:
                while chunk := response.read(1 << 20):
                    digest.update(chunk)
                    handle.write(chunk)
            break
        except OSError as exc:
            print(f"fetch {url}: attempt {attempt} failed: {exc}", file=sys.stderr)
            if attempt == 3:
                raise
            time.sleep(5 * attempt)
    actual = base64.b64encode(digest.digest()).decode()
    if actual != expected:
        sys.exit(f"{url}: integrity mismatch: expected {integrity}, got {algorithm}-{actual}")
    print(f"fetched {url} ({out.stat().st_size} bytes, {algorithm} verified)")


if __name__ == "__main__":
    fetch(sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
