"""Download a pinned build input on the host, once, and prove it is the pinned bytes.

Builds never reach the network themselves: the host fetches every input with its
own trust (the system bundle, or --ca-bundle behind an intercepting proxy), so the
bundle never enters an image, and nothing unpinned can. Files are cached under
``~/.cache/hermetic-bench/inputs/<sha256>``: the name is the content, so a cached
file is checked once more on use and never goes stale. A cache is speed, never state.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from .errors import InfrastructureError
from .trust import trusted_bundle

Log = Callable[[str], None]
CHUNK = 1 << 20


class Mismatch(Exception):
    """The bytes a URL gave are not the pinned ones (a moved pin or a hostile mirror): never retried."""


def inputs_cache() -> Path:
    path = Path(os.environ.get("BENCH_INPUTS_CACHE") or Path.home() / ".cache" / "hermetic-bench" / "inputs")
    path.mkdir(parents=True, exist_ok=True)
    return path


def file_digest(path: Path, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fetched(urls: list[str], algorithm: str, expected: str, ca: Path | None, log: Log) -> Path:
    """The cached file with these bytes, downloaded from the first URL that serves them.

    Raises InfrastructureError naming every URL tried and what each gave.
    """
    target = inputs_cache() / f"{algorithm}-{expected}"
    if target.is_file() and file_digest(target, algorithm) == expected:
        return target
    failures = []
    for url in urls:
        try:
            _download(url, algorithm, expected, target, ca, log)
            return target
        except (Mismatch, OSError, urllib.error.URLError) as exc:
            failures.append(f"{url}: {exc}")
    raise InfrastructureError("could not fetch a pinned build input — " + "; ".join(failures)
                              + " (check the network, --ca-bundle, or the pin in image.toml / inputs.lock.json)")


@retry(retry=retry_if_exception_type((OSError, urllib.error.URLError)), stop=stop_after_attempt(3),
       wait=wait_exponential(multiplier=2, max=20), reraise=True)
def _download(url: str, algorithm: str, expected: str, target: Path, ca: Path | None, log: Log) -> None:
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    digest = hashlib.new(algorithm)
    context = ssl.create_default_context(cafile=str(ca)) if (ca := trusted_bundle(ca)) else None
    try:
        with urllib.request.urlopen(url, context=context, timeout=120) as response, open(partial, "wb") as out:
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise Mismatch(f"got {algorithm} {digest.hexdigest()}, pinned {expected}")
        partial.replace(target)
        log(f"fetched {url} ({target.stat().st_size} bytes, {algorithm} verified)")
    finally:
        partial.unlink(missing_ok=True)
