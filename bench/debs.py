"""Pin an image's Debian packages: the exact .deb files apt would install, with their SHA-256.

`bench images pin NAME` asks apt, in a container from the image's parent, which files
it would download for the image's ``debs`` (``--print-uris``: URL, size, SHA-256, the
whole dependency closure the parent lacks) and writes them to ``inputs.lock.json``.
Only pinning reaches a mirror from a container; builds install exactly these files,
offline, so the next point release cannot change an image behind the lock's back.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Callable

import docker

from .engine import engine_faults, owner_labels, patient
from .errors import CaseError, InfrastructureError
from .image_spec import DebPin, ImageSpec, InputsLock
from .readback import read_record

Log = Callable[[str], None]
LOCK_NAME = "inputs.lock.json"
URI = re.compile(r"^'(?P<url>[^']+)' (?P<file>\S+) (?P<size>\d+) SHA256:(?P<sha256>[0-9a-f]{64})$")
RESOLVE = r"""set -eu
if [ -n "$BENCH_SOURCES" ]; then printf '%s\n' "$BENCH_SOURCES" > /etc/apt/sources.list.d/bench-pin.list; fi
apt-get update -qq >&2
apt-get install -qq --no-install-recommends --print-uris -y -o Acquire::ForceHash=SHA256 "$@"
"""


def lock_path(image_dir: Path) -> Path:
    return image_dir / LOCK_NAME


def read_inputs(image_dir: Path, spec: ImageSpec) -> InputsLock | None:
    """The image's pinned .debs, checked to be resolved for exactly the debs image.toml asks for."""
    if not spec.debs:
        return None
    if not lock_path(image_dir).is_file():
        raise CaseError(image_dir / "image.toml", "debs", f"{lock_path(image_dir)} does not exist: nothing pins "
                        "these packages", _pin_fix(image_dir))
    return _read_pins(image_dir, spec.debs)


def _pin_fix(image_dir: Path) -> str:
    return f"run `bench images pin {image_dir.name}` and commit {LOCK_NAME}"


def _read_pins(image_dir: Path, asked: list[str]) -> InputsLock:
    """inputs.lock.json, refused when it was resolved for other packages than image.toml ``asked`` for."""
    path = lock_path(image_dir)
    lock = read_record(path, InputsLock, _pin_fix(image_dir))
    if sorted(lock.packages) != sorted(asked):
        raise CaseError(path, "packages", f"pinned for {sorted(lock.packages)}, image.toml asks for {sorted(asked)}",
                        _pin_fix(image_dir))
    return lock


def parse_uris(output: str) -> list[DebPin]:
    """apt's --print-uris lines as pins; anything else apt printed is ignored."""
    pins = []
    for line in output.splitlines():
        if match := URI.match(line.strip()):
            file = match["file"]
            package, version, _ = file[:-len(".deb")].split("_", 2)
            pins.append(DebPin(package=package, version=urllib.parse.unquote(version), file=file,
                               url=match["url"], sha256=match["sha256"], size=int(match["size"])))
    return sorted(pins, key=lambda pin: pin.package)


def snapshot_url(pin: DebPin, timestamp: str) -> str:
    """The same pool file on snapshot.debian.org, for when the mirror dropped its version."""
    archive, _, pool = pin.url.partition("/pool/")
    return f"http://snapshot.debian.org/archive/{archive.rstrip('/').rsplit('/', 1)[-1]}/{timestamp}/pool/{pool}"


def resolve(client: docker.DockerClient, parent_id: str, spec: ImageSpec, log: Log) -> InputsLock:
    """Ask apt in a throwaway container from the parent which .debs the image's ``debs`` need."""
    log(f"resolving {len(spec.debs)} Debian packages against the parent image {parent_id[7:19]}")
    output = _in_container(client, parent_id, RESOLVE, spec.debs, {"BENCH_SOURCES": "\n".join(spec.apt_sources)})
    pins = parse_uris(output)
    if not pins:
        raise InfrastructureError(f"apt resolved nothing to download for {spec.debs}: the parent already has them; "
                                  "drop them from debs")
    return InputsLock(packages=sorted(spec.debs), resolved_on=parent_id, debs=pins)


def _in_container(client: docker.DockerClient, image_id: str, script: str, args: list[str],
                  environment: dict[str, str]) -> str:
    """Run ``script`` as root in a throwaway container (with network: pinning asks a mirror); its stdout."""
    with engine_faults("resolving Debian packages"):
        container = client.containers.create(image_id, command=["sh", "-c", script, "resolve", *args], user="root",
                                             environment=environment, labels=owner_labels())
    try:
        with engine_faults("resolving Debian packages"):
            container.start()
            status = container.wait(timeout=600).get("StatusCode", 1)
            output = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
            errors = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
    finally:
        patient(client, "remove", "removing the resolve container",
                lambda c: c.api.remove_container(container.id, force=True))
    if status != 0:
        raise InfrastructureError(f"apt could not resolve the packages ({status}): {errors.strip()[-1500:]}")
    return output


def write_inputs(image_dir: Path, lock: InputsLock) -> Path:
    path = lock_path(image_dir)
    path.write_text(lock.model_dump_json(indent=2) + "\n")
    return path


def pin_images(project, names: list[str], ca: str | None, log: Log) -> list[tuple[str, InputsLock]]:
    """`bench images pin`: resolve and write inputs.lock.json for NAMES (default: every image with debs)."""
    from .lock import _images

    images = _images(project, ca, log)
    pinned = []
    for name in names or [n for n in images.names() if images.spec(n).debs or images.spec(n).parent is None]:
        spec = images.spec(name)
        if spec.parent is None:
            lock = resolve_installed(images.client, images.ensure(name).id, spec, log)
        elif not spec.debs:
            raise CaseError(project.image_dir(name) / "image.toml", "debs", "lists no Debian packages to pin",
                            "add debs = [...] or pin another image")
        else:
            lock = resolve(images.client, images.ensure(spec.parent).id, spec, log)
        write_inputs(project.image_dir(name), lock)
        pinned.append((name, lock))
    return pinned


# --- base: mmdebstrap installs exactly the pinned .debs ------------------------------------

INSTALLED = r"""set -eu
apt-get update -qq >&2
apt-get download --print-uris -o Acquire::ForceHash=SHA256 $(dpkg-query -W -f '${Package}=${Version} ')
"""


def read_base_pins(image_dir: Path, spec: ImageSpec) -> InputsLock | None:
    """base's pinned .debs, or None before `bench images pin base` ever ran (then it records nothing)."""
    return _read_pins(image_dir, spec.packages) if lock_path(image_dir).is_file() else None


def resolve_installed(client: docker.DockerClient, image_id: str, spec: ImageSpec, log: Log) -> InputsLock:
    """The exact .debs behind every package installed in ``image_id`` (base): what a rebuild must install."""
    log(f"resolving the installed packages of {image_id[7:19]} to .deb files")
    output = _in_container(client, image_id, INSTALLED, [], {})
    return InputsLock(packages=sorted(spec.packages), resolved_on=image_id, debs=parse_uris(output))


def check_installed(pins: InputsLock, installed: dict[str, str]) -> None:
    """mmdebstrap installed exactly the pinned versions, or the mirror moved: say which and what to do."""
    bare = lambda version: version.split(":", 1)[-1]  # pool file names may leave the epoch out
    pinned = {pin.package: bare(pin.version) for pin in pins.debs}
    moved = [f"{name} {pinned.get(name, 'unpinned')} -> {version}" for name, version in sorted(installed.items())
             if pinned.get(name) != bare(version)]
    missing = sorted(set(pinned) - set(installed))
    if moved or missing:
        raise InfrastructureError(
            "the base image did not get its pinned packages (the mirror has moved on): "
            + "; ".join(moved + [f"{name} not installed" for name in missing])
            + " — set `snapshot` in images/base/image.toml to a snapshot.debian.org time of the pins, "
            "or accept the new packages with `bench images pin base`")
