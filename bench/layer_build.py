"""Build a derived pinned image: pinned inputs installed offline, written as one deterministic layer.

The recipe is images/<name>/image.toml: ``debs`` (exact files from inputs.lock.json),
``fetch`` (artifacts by hash) and an ``install`` script. The host fetches every input
(bench/fetch.py), copies them with the recipe into a container from the parent that
has **no network**, installs, and writes what changed as a layer (bench/layer_writer.py).
So the tag derives from the recipe and the parent's ID alone, nothing reaches the
build that is not pinned, and the same inputs give the same image ID on any machine.
"""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .debs import read_inputs, snapshot_url
from .engine import engine_faults, harness_labels, owner_labels, patient
from .errors import InfrastructureError
from .fetch import fetched
from .image_spec import ImageSpec, InputsLock
from .layer_writer import ChunkReader, derived_config, select, write_archive, write_layer

if TYPE_CHECKING:
    from .images import Images

INPUTS, RECIPE = "bench-inputs", "bench-recipe"
INSTALL = r"""set -eu
if [ -d /bench-inputs/debs ]; then
  apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 /bench-inputs/debs/*.deb
fi
if [ -n "$BENCH_INSTALL" ]; then cd /bench-recipe && sh "./$BENCH_INSTALL"; fi
# A random per-build identity (dbus's postinst makes one): never part of an image.
rm -f /etc/machine-id /var/lib/dbus/machine-id
"""
INSTALL_TIMEOUT_S = 1800
# Bump when a layer or config gets other bytes for the same inputs. Everything in the config
# must derive from the tag's own inputs (the parent by ID, never by tag): one tag, one image ID.
LAYER_FORMAT = 2
# Written by dpkg/apt/ldconfig with times or run-specific state; never part of a layer.
BUILD_VOLATILE = ("var/lib/dpkg/status-old", "var/lib/dpkg/diversions-old", "var/lib/dpkg/statoverride-old",
                  "var/cache/ldconfig", "etc/ld.so.cache~")


def builder_digest() -> str:
    """What of the harness shapes a layer build: part of every layer image's tag, so changing it rebuilds."""
    from .hashing import sha256_bytes

    return sha256_bytes(f"{LAYER_FORMAT}\n{INSTALL}\n{sorted(BUILD_VOLATILE)}".encode())


def inputs(images: Images, name: str, spec: ImageSpec) -> dict[str, Path]:
    """Archive name -> cached, verified file: the pinned .debs and fetched artifacts of one image."""
    lock = read_inputs(images.project.image_dir(name), spec)
    files = {f"{INPUTS}/debs/{file}": path for file, path in fetch_debs(lock, spec, images.ca, images.log).items()}
    for item in spec.fetch:
        algorithm, expected = item.check
        files[f"{INPUTS}/{item.name}"] = fetched([item.url], algorithm, expected, images.ca, images.log)
    return files


def fetch_debs(lock: InputsLock | None, spec: ImageSpec, ca: Path | None, log) -> dict[str, Path]:
    """Pool file name -> the cached, verified .deb: from the mirror, else the snapshot archive if set."""
    files = {}
    for pin in lock.debs if lock else []:
        urls = [pin.url] + ([snapshot_url(pin, spec.snapshot)] if spec.snapshot else [])
        files[pin.file] = fetched(urls, "sha256", pin.sha256, ca, log)
    return files


def recipe_files(images: Images, name: str) -> dict[str, Path]:
    folder = images.project.image_dir(name)
    files = {f"{RECIPE}/{p.relative_to(folder)}": p for p in sorted(folder.rglob("*")) if p.is_file()}
    files.update({f"{RECIPE}/{file}": path for file, path in images.shared_files(name).items()})
    return files


def build(images: Images, name: str, spec: ImageSpec, tag: str):
    """Make ``tag`` from the parent and the recipe; returns the loaded image."""
    parent = images.ensure(spec.parent)
    files = {**inputs(images, name, spec), **recipe_files(images, name)}
    images.log(f"installing {name} offline on {parent.tag}: {len(files)} pinned files")
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
        bundle = Path(tmp) / "inputs.tar"
        with tarfile.open(bundle, "w") as archive:
            for arcname, path in sorted(files.items()):
                info = archive.gettarinfo(str(path), arcname=arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
        layer = Path(tmp) / "layer.tar"
        diff_id = _install(images, name, spec, parent.id, bundle, layer)
        with engine_faults(f"reading the config of {parent.tag}"):
            parent_attrs = images.client.api.inspect_image(parent.id)
        config = derived_config(parent_attrs, diff_id, spec.source_date_epoch, spec.env,
                                {**spec.labels, **harness_labels(**{"bench.image": name})},
                                f"hermetic-bench layer: images/{name} on {parent.id}")
        archive_path = Path(tmp) / "image.tar"
        write_archive(archive_path, config, tag, layer, len(parent_attrs["RootFS"]["Layers"]), spec.source_date_epoch)
        load(images.client, archive_path, name)
    with engine_faults(f"looking up image {name}"):
        return images.client.images.get(tag)


def _install(images: Images, name: str, spec: ImageSpec, parent_id: str, bundle: Path, layer: Path) -> str:
    """Run the install in a container without network; write its changes to ``layer``; the diff ID."""
    client = images.client
    environment = {**spec.env, "SOURCE_DATE_EPOCH": str(spec.source_date_epoch),
                   "DEBIAN_FRONTEND": "noninteractive", "BENCH_INSTALL": spec.install or "", "LANG": "C.UTF-8"}
    with engine_faults(f"creating the install container of {name}"):
        container = client.containers.create(parent_id, command=["sh", "-c", INSTALL], user="root",
                                             network_disabled=True, environment=environment, labels=owner_labels())
    try:
        with engine_faults(f"installing {name}"), open(bundle, "rb") as handle:
            client.api.put_archive(container.id, "/", handle)
            container.start()
            status = container.wait(timeout=INSTALL_TIMEOUT_S).get("StatusCode", 1)
        if status != 0:
            tail = container.logs().decode("utf-8", "replace").strip()[-2000:]
            raise InfrastructureError(f"installing image {name} failed ({status}): {tail}")
        with engine_faults(f"listing the changes of {name}"):
            changes = container.diff() or []
        selection = select(changes, (INPUTS, RECIPE, *spec.volatile, *BUILD_VOLATILE, *CONTAINER_VOLATILE))
        return patient(client, "export", f"exporting the install container of {name}",
                       lambda timed: write_layer(ChunkReader(timed.api.export(container.id)), selection, layer,
                                                 spec.source_date_epoch))
    finally:
        patient(client, "remove", f"removing the install container of {name}",
                lambda timed: timed.api.remove_container(container.id, force=True))


def load(client, archive: Path, name: str) -> None:
    """`docker load` a file, streamed; the engine's own error becomes a build failure naming the image."""
    with engine_faults(f"loading image {name}"), open(archive, "rb") as handle:
        for chunk in client.api.load_image(handle):
            if "error" in chunk:
                raise InfrastructureError(f"loading image {name} failed: {chunk['error'].strip()}")


# Files Docker itself writes into every container; never part of an image's identity.
CONTAINER_VOLATILE = (".dockerenv", "etc/hostname", "etc/hosts", "etc/resolv.conf", "proc", "sys", "dev")
