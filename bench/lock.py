"""provenance/images.lock.json: what each pinned image is, and the level a result reaches.

The lock is the claim a result's reproducibility level rests on, so it is read
strictly (bench/readback.py): a lock that does not read back stops the run with the
file and the fix, rather than quietly demoting every result to "pinned". The verbs
that change it (`bench images lock`, `load`), `bench images build` (which never
does) and `bench images list` live here too; building an image is bench/images.py's concern.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple

from .engine import HARNESS_LABEL, engine_faults
from .errors import UsageError
from .hashing import sha256_file, short_tag
from .models import LEVELS, NAME, ImageLock, ImageRecord, LockEntry, toolchains_of
from .paths import Project
from .readback import read_record

if TYPE_CHECKING:
    from .images import Images

Log = Callable[[str], None]
LOCK_FIX = "restore it from git (`git checkout provenance/images.lock.json`) or rewrite it with `bench images lock`"


def read_lock(project: Project) -> ImageLock:
    """The lock, or an empty one when none was written yet; a lock that does not read back raises RecordError."""
    if not project.lock_file.is_file():
        return ImageLock()
    return read_record(project.lock_file, ImageLock, LOCK_FIX)


def write_lock(project: Project, lock: ImageLock) -> None:
    project.lock_file.parent.mkdir(parents=True, exist_ok=True)
    project.lock_file.write_text(lock.model_dump_json(indent=2) + "\n")


def carry_verification(old: LockEntry | None, new: LockEntry) -> LockEntry:
    """Keep what a rebuild proved about the old entry, as far as it still holds for the new one.

    Same ID: the same bytes, so the proof stands. Same content digest, other ID: a rebuild
    gave this content, so at most "content" stands. Anything else was never verified.
    Registry digests hold for the same ID only: they name those exact bytes.
    """
    if old is not None and old.id == new.id and old.registry_digests:
        new = new.model_copy(update={"registry_digests": {**old.registry_digests, **new.registry_digests}})
    if old is None or old.verified is None or old.content_digest != new.content_digest:
        return new
    return new.model_copy(update={"verified": old.verified if old.id == new.id else "content"})


def reproducibility_level(images: dict[str, ImageRecord], project_root: Path) -> str:
    """The level a result reached: the lowest over every image it used (DESIGN.md, levels 1-3).

    An image counts as content-reproducible when its lock entry has the image's content
    digest and a rebuild verified that entry; as bit-reproducible when the rebuild gave
    the very image ID used. An image with no lock entry (a staged image: its setup ran
    against live registries and nothing rebuilds it) keeps the result at pinned.

    A lock that does not read back raises RecordError (naming the file and the fix)
    instead of answering "pinned": a level is a claim, and a user who verified their
    images wants to hear that the proof became unreadable, not find every result
    silently demoted. `bench run` reads the lock before its first trial, so this only
    raises when the lock was broken during the run.
    """
    lock = read_lock(Project(project_root))
    reached = [_image_level(record, lock.images.get(record.name)) for record in images.values()]
    return min(reached, key=LEVELS.index, default=LEVELS[0])


def _image_level(record: ImageRecord, entry: LockEntry | None) -> str:
    if entry is None or entry.verified is None or record.content_digest is None:
        return LEVELS[0]
    if entry.content_digest != record.content_digest:
        return LEVELS[0]
    return LEVELS[2] if entry.verified == "bit" and entry.id == record.id else LEVELS[1]


# --- the verbs that write it -------------------------------------------------------------


def _lock_names(images: Images, lock: ImageLock, names: list[str]) -> list[tuple[LockEntry | None, LockEntry]]:
    changes = []
    for name in names:
        old = lock.images.get(name)
        entry = carry_verification(old, images.lock_entry(name))
        lock.images[name] = entry
        changes.append((old, entry))
    return changes


def _images(project: Project, ca: str | None, log: Log) -> Images:
    from .engine import connect
    from .images import Images
    from .trust import ca_bundle

    return Images(connect(), project, ca_bundle(ca), log=log)


def build_images(project: Project, names: list[str], ca: str | None, log: Log) -> list[tuple[ImageRecord, str]]:
    """`bench images build`: ensure each image (all by default, parents too) and say how it stands against the lock.

    Building never writes the lock (issue 12): a lock that follows whatever was built
    is no lock. `bench images lock` is the one verb that records an intended change.
    Returns each image's record with its lock state (bench/lockcheck.py).
    """
    from .lockcheck import check

    images = _images(project, ca, log)
    lock = read_lock(project)
    for name in names or images.names():
        images.ensure(name)
    pinned = images.pinned()
    found = check(lock, pinned, lambda record: images.filesystem(record.name, record.id)["packages"])
    return [(pinned[item.name], item.state) for item in found]


def relock(project: Project, names: list[str], ca: str | None, log: Log) -> list[tuple[LockEntry | None, LockEntry]]:
    """`bench images lock`: rewrite the lock from the images as they are now, after an intended change.

    Without names every images/ folder is locked and entries whose folder is gone are
    dropped (loaded dockerTools images have no folder and are kept). Returns (old, new) pairs.
    A lock that no longer reads back is replaced rather than refused: rewriting it is
    the fix read_lock names.
    """
    images = _images(project, ca, log)
    lock = read_lock(project) if names else _readable_lock(project, log)
    if not names:
        known = set(images.names())
        lock.images = {n: e for n, e in lock.images.items() if n in known or e.builder == "dockertools"}
    changes = _lock_names(images, lock, names or images.names())
    write_lock(project, lock)
    return changes


def _readable_lock(project: Project, log: Log) -> ImageLock:
    from .errors import RecordError

    try:
        return read_lock(project)
    except RecordError as exc:
        log(f"replacing an unreadable lock: {exc}")
        return ImageLock()


def load_archive(project: Project, archive: Path, name: str, log: Log) -> LockEntry:
    """`bench images load`: a Nix dockerTools tarball into the engine, recorded in the lock.

    dockerTools writes the image config with a fixed creation time, so the same flake.lock
    gives the same image ID on any machine: the entry is marked builder="dockertools"
    (bit-reproducible-capable). A name that images/ already builds is refused, because
    runs resolve that name from images/ and the lock would then describe another image.
    """
    from .engine import connect
    from .images import Images

    if not NAME.match(name):
        raise UsageError(f"--name {name!r} is not a plain lowercase name (a-z, 0-9, '.', '_', '-')")
    if (project.image_dir(name) / "image.toml").is_file():
        raise UsageError(f"images/{name} already builds an image named {name!r}; "
                         f"load the Nix build under another name (e.g. --name {name}-nix)")
    if not archive.is_file():
        raise UsageError(f"{archive} is not a file — pass the tarball `nix build .#<image>` wrote (./result)")
    lock = read_lock(project)  # before loading: a broken lock stops us with nothing changed
    client = connect()
    log(f"loading {archive}")
    with engine_faults(f"loading {archive}"), open(archive, "rb") as handle:
        loaded = client.images.load(handle)
    if len(loaded) != 1:
        raise UsageError(f"{archive} holds {len(loaded)} images; load one image per --name")
    image = loaded[0]
    tag = f"bench/{name}:{short_tag(image.id)}"
    with engine_faults(f"tagging {tag}"):
        image.tag(*tag.split(":"))
    data = Images(client, project, log=log).filesystem(name, image.id)
    entry = LockEntry(name=name, tag=tag, id=image.id, content_digest=data["digest"],
                      context_hash="sha256:" + sha256_file(archive), packages=data["packages"], builder="dockertools")
    entry = carry_verification(lock.images.get(name), entry)
    lock.images[name] = entry
    write_lock(project, lock)
    return entry


class Listed(NamedTuple):
    """One local tag of a harness image, as `bench images list` shows it (``cells``) or prints it as JSON."""

    name: str
    tag: str
    id: str
    size_bytes: int
    toolchains: dict[str, str]
    lock: str

    def cells(self) -> tuple[str, str, str, str, str, str]:
        tools = ", ".join(f"{tool} {version}" for tool, version in self.toolchains.items())
        return self.name, self.tag, self.id[7:19], f"{self.size_bytes / 1e6:.0f} MB", tools or "-", self.lock


def listing(project: Project) -> list[Listed]:
    """Every local tag of a harness image: name, tag, ID, size, toolchains (tool: version), and the lock's opinion."""
    from .engine import connect

    client = connect()
    lock = read_lock(project)
    rows = []
    for image in client.images.list(filters={"label": HARNESS_LABEL}):
        name = image.labels.get("bench.image", "staged" if image.labels.get("bench.case") else "?")
        for tag in image.tags or ["<untagged>"]:
            rows.append(Listed(name, tag, image.id, int(image.attrs["Size"]), dict(toolchains_of(image.labels)),
                               listed_state(lock.images.get(name), image.id, tag)))
    return sorted(rows)


def listed_state(locked: LockEntry | None, image_id: str, tag: str) -> str:
    """What the lock says of one local tag.

    bit-verified: the lock's tag holds the lock's image ID here, so these are the very
    bytes the lock names (built here, pulled or loaded by digest). locked: the lock's ID
    under another tag. other ID: not the lock's bytes (built here from the same sources;
    `bench images build` or a run says whether the content is equal or drifted, which
    needs the content digest this listing does not compute). A rebuild's proof
    (`verified`) is added, since it says more: that the bytes can be made again from images/.
    """
    if locked is None:
        return "-"
    if locked.id != image_id:
        return "other ID than the lock's"
    state = "bit-verified" if tag == locked.tag else "locked"
    return state + (f" (rebuild: {locked.verified})" if locked.verified else "")
