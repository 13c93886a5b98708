"""images/<name>/image.toml and its inputs lock: how one pinned image is made, from what.

Every byte a derived image gets from outside is named here with its hash: Debian
packages by exact version and `.deb` SHA-256 (``inputs.lock.json``, written by `bench
images pin`), npm and PyPI artifacts by URL and SHA-256 or registry integrity (``fetch``
in image.toml). The host downloads them with its own trust and the build runs offline,
so no CA bundle, host path or clock reaches an image's tag or filesystem (issue 12).
"""

from __future__ import annotations

import base64
import re
from pathlib import PurePosixPath

from pydantic import Field, field_validator, model_validator

from .models import SCHEMA_VERSION, Record, Strict

SHA256 = re.compile(r"^[0-9a-f]{64}$")


class Fetch(Strict):
    """One artifact downloaded on the host, checked against its hash, handed to the install script."""

    name: str = Field(description="File name under /bench-inputs/ in the install container.")
    url: str = Field(description="Where it is downloaded from (http or https).")
    sha256: str | None = Field(None, description="Hex SHA-256 of the file.")
    integrity: str | None = Field(None, description="npm-style `sha512-<base64>` (the registry's dist.integrity).")

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str) -> str:
        if "/" in value or value in ("", ".", "..", "debs"):
            raise ValueError(f"{value!r} is not a plain file name")
        return value

    @model_validator(mode="after")
    def _one_hash(self) -> Fetch:
        if (self.sha256 is None) == (self.integrity is None):
            raise ValueError(f"{self.name}: give exactly one of sha256 or integrity")
        if self.sha256 is not None and not SHA256.match(self.sha256):
            raise ValueError(f"{self.name}: sha256 must be 64 lowercase hex digits")
        if self.integrity is not None:
            algorithm, _, value = self.integrity.partition("-")
            if algorithm not in ("sha256", "sha384", "sha512") or not value:
                raise ValueError(f"{self.name}: integrity must read sha512-<base64> (npm's dist.integrity)")
            base64.b64decode(value, validate=True)
        return self

    @property
    def check(self) -> tuple[str, str]:
        """(hashlib algorithm, expected hex digest)."""
        if self.sha256:
            return "sha256", self.sha256
        algorithm, _, value = (self.integrity or "").partition("-")
        return algorithm, base64.b64decode(value).hex()


class ImageSpec(Strict):
    """How one pinned image is made: from Debian packages (base), pinned inputs on a parent, or a Dockerfile."""

    parent: str | None = Field(None, description="Image this one is made on (every image but base).")
    shared: list[str] = Field(
        default_factory=list, description="Files from images/_shared/ the build uses (mounted beside install.sh)."
    )
    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    variant: str = "minbase"
    packages: list[str] = Field(default_factory=list, description="Debian packages (base kind).")
    source_date_epoch: int = Field(1735689600, description="Fixed time stamped into the image.")
    debs: list[str] = Field(
        default_factory=list, description="Debian packages installed on the parent, at the exact versions and "
        ".deb SHA-256 in inputs.lock.json (`bench images pin NAME` resolves and writes it).")
    apt_sources: list[str] = Field(
        default_factory=list, description="Extra sources.list lines `bench images pin` resolves against "
        "(e.g. bookworm-security). Used only when pinning; builds are offline.")
    snapshot: str | None = Field(
        None, description="A snapshot.debian.org timestamp (e.g. 20261130T000000Z): where a pinned .deb is "
        "fetched from once the mirror no longer carries its version. Optional: needs a machine that reaches it.")
    fetch: list[Fetch] = Field(default_factory=list, description="npm / PyPI / other artifacts, pinned by hash.")
    install: str | None = Field(
        None, description="Script in this folder run by `sh` as root after the debs, with no network, in "
        "a container from the parent: inputs under /bench-inputs, this folder at /bench-recipe.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables the image sets.")
    labels: dict[str, str] = Field(default_factory=dict, description="Image labels (e.g. bench.agent.*).")
    volatile: list[str] = Field(
        default_factory=lambda: ["var/log", "var/cache", "tmp", "root/.cache", "root/.npm"],
        description="Paths left out of the content digest (and never written into a layer).",
    )

    @field_validator("install")
    @classmethod
    def _script(cls, value: str | None) -> str | None:
        if value is not None and (PurePosixPath(value).is_absolute() or ".." in PurePosixPath(value).parts):
            raise ValueError(f"{value!r} must be a path inside the image folder")
        return value


class DebPin(Strict):
    """One .deb exactly: what apt resolved when the image was pinned."""

    package: str
    version: str
    file: str = Field(description="The pool file name (name_version_arch.deb).")
    url: str
    sha256: str
    size: int = Field(ge=0)


class InputsLock(Record):
    """images/<name>/inputs.lock.json: the Debian closure an image installs, by exact file."""

    schema_version: int = SCHEMA_VERSION
    packages: list[str] = Field(description="The image.toml debs this closure was resolved for.")
    resolved_on: str = Field(description="Parent image ID the closure was resolved against.")
    debs: list[DebPin] = Field(default_factory=list)
