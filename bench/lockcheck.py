"""Before the first trial: every pinned image a run uses, held against provenance/images.lock.json.

A lock that nobody checks is no lock (issue 12): a run on images that differ from it
proceeded silently, and results from two machines recorded different images without
a word. So each run says, per image, where it stands — locked (the very image ID),
content-equal (another ID, the same content digest), drifted (other content, with the
packages that changed, from the dpkg lists the lock keeps) or unlocked (no entry) —
and every result records it. `bench run --locked` refuses any difference before
anything runs, like `uv --locked`: exit 2, one line per image naming the fix.

Only images that images/ builds (and their parents) are held against the lock; layers
made per run on top of them (an agent CLI, a subject's project, a staged workspace)
have no entry by design, and are recorded by ID as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import UsageError
from .models import ImageLock, ImageRecord, LockEntry, LockState

Packages = Callable[[ImageRecord], dict[str, str]]
SHOWN = 8  # package changes named per image; the rest are counted


class LockRefused(UsageError):
    """`--locked` and an image that is not the locked one: nothing was run."""


@dataclass(frozen=True)
class ImageCheck:
    """One image as the lock sees it."""

    name: str
    state: LockState
    detail: str = ""

    def line(self) -> str:
        return f"image {self.name}: {self.state}" + (f" — {self.detail}" if self.detail else "")

    def refusal(self) -> str:
        """The line `--locked` prints: the difference, then the fix."""
        fix = {
            "content-equal": f"load the locked image (`bench images pull` or `load`), or accept this build with "
                             f"`bench images lock {self.name}`",
            "drifted": f"restore images/{self.name} to what the lock was made from, or record the change with "
                       f"`bench images lock {self.name}`",
            "unlocked": f"record it with `bench images lock {self.name}`",
        }[self.state]
        return f"{self.line()} — {fix}"


def check(lock: ImageLock, used: dict[str, ImageRecord], packages: Packages) -> list[ImageCheck]:
    """Each image of ``used`` (by name) against its lock entry, in name order."""
    return [_check_one(record, lock.images.get(name), packages) for name, record in sorted(used.items())]


def _check_one(record: ImageRecord, entry: LockEntry | None, packages: Packages) -> ImageCheck:
    if entry is None:
        return ImageCheck(record.name, "unlocked", "no entry in provenance/images.lock.json")
    if entry.id == record.id:
        return ImageCheck(record.name, "locked")
    if record.content_digest is not None and record.content_digest == entry.content_digest:
        return ImageCheck(record.name, "content-equal", f"image ID {_short(record.id)}, lock has {_short(entry.id)}")
    changed = package_changes(entry.packages, packages(record))
    what = f"packages changed: {changed}" if changed else "no package changed; other files differ"
    return ImageCheck(record.name, "drifted", f"content differs from the lock ({what})")


def package_changes(locked: dict[str, str], now: dict[str, str]) -> str:
    """'curl 7.88.1-10 -> 7.88.1-11, +jq 1.6-2, -vim 2:9.0' for what differs; '' when nothing does."""
    changes = [f"{name} {locked[name]} -> {now[name]}" if name in locked and name in now
               else (f"+{name} {now[name]}" if name in now else f"-{name} {locked[name]}")
               for name in sorted(set(locked) | set(now)) if locked.get(name) != now.get(name)]
    more = f", and {len(changes) - SHOWN} more" if len(changes) > SHOWN else ""
    return ", ".join(changes[:SHOWN]) + more


def enforce(checks: list[ImageCheck], locked: bool, say: Callable[[str], None]) -> dict[str, LockState]:
    """Say each image's state; with ``locked``, refuse (LockRefused, exit 2) on any difference."""
    for found in checks:
        say(found.line())
    differing = [found for found in checks if found.state != "locked"]
    if locked and differing:
        lines = "\n".join(found.refusal() for found in differing)
        raise LockRefused(f"--locked: {len(differing)} image(s) differ from provenance/images.lock.json; "
                          f"nothing was run\n{lines}")
    return {found.name: found.state for found in checks}


def _short(image_id: str) -> str:
    return image_id.split(":")[-1][:12]
