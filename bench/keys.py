"""The signing key: one Ed25519 key per user, kept in the user's config directory.

A label is evidence only if a later reader can tell who produced it, so every run
signs its label (bench/attest.py). The private half never goes near results/: it
lives in ``$BENCH_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/hermetic-bench``, else
``~/.config/hermetic-bench``, created on first use with mode 0600 in a 0700 folder.
The public half is recorded in every label and exported by ``bench keys``; a reader
trusts it by passing ``--key PUB`` or listing it in the trusted-keys file beside the
key. Without ``--key`` the user's own key is trusted on their own machine: a forger who
can read it can also rewrite the harness, so trusting it there adds no hole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .errors import UsageError
from .hashing import sha256_bytes

KEY_FILE = "signing-key.pem"
TRUSTED_FILE = "trusted-keys.pem"
PEM_END = b"-----END PUBLIC KEY-----"


def config_dir() -> Path:
    """Where the key lives; BENCH_CONFIG_DIR lets tests (and CI) keep it out of the real home."""
    if explicit := os.environ.get("BENCH_CONFIG_DIR"):
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "hermetic-bench"


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def fingerprint(key: Ed25519PublicKey) -> str:
    """SHA-256 of the raw 32-byte public key: the keyid in every envelope and in `bench keys`."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + sha256_bytes(raw)


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    path: Path

    @property
    def public(self) -> Ed25519PublicKey:
        return self.private.public_key()

    @property
    def keyid(self) -> str:
        return fingerprint(self.public)

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


def load_or_create(folder: Path | None = None) -> SigningKey:
    """The user's key, created (0600, never under results/) the first time a run needs it."""
    folder = folder or config_dir()
    path = folder / KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another run created it a moment ago: use that one
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(pem)
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path}: not an unencrypted Ed25519 private key ({exc}) — move it away and a new "
                         "key is made on the next run (labels it signed then verify only by its public key)") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise UsageError(f"{path}: holds a {type(private).__name__}, not an Ed25519 key — move it away")
    return SigningKey(private, path)


def parse_public(data: bytes, where: str) -> list[Ed25519PublicKey]:
    """Every Ed25519 public key in PEM text (a trusted-keys file holds several, one after another)."""
    keys = []
    for block in data.split(PEM_END)[:-1]:
        try:
            key = serialization.load_pem_public_key(block.strip() + b"\n" + PEM_END + b"\n")
        except ValueError as exc:
            raise UsageError(f"{where}: a public key block does not parse ({exc}) — export keys with `bench keys`")
        if not isinstance(key, Ed25519PublicKey):
            raise UsageError(f"{where}: holds a {type(key).__name__}, not an Ed25519 public key")
        keys.append(key)
    if not keys:
        raise UsageError(f"{where}: no PEM public key found — export one with `bench keys --export FILE`")
    return keys


def read_public(path: Path) -> list[Ed25519PublicKey]:
    if not path.is_file():
        raise UsageError(f"{path}: no such key file — pass a public key exported with `bench keys --export FILE`")
    return parse_public(path.read_bytes(), str(path))


def trusted_keys(extra: list[Path] = (), trusted_file: Path | None = None) -> dict[str, Ed25519PublicKey]:
    """By fingerprint: the keys asked for (--key, --trusted-keys), else the trusted-keys file and your own key.

    Naming keys replaces the defaults, so `--key PUB` proves a label was made by PUB's
    holder and not merely by someone this machine trusts.
    """
    folder = config_dir()
    keys: list[Ed25519PublicKey] = []
    for path in extra:
        keys += read_public(path)
    if trusted_file is not None:
        keys += read_public(trusted_file)
    if not keys:
        if (folder / TRUSTED_FILE).is_file():
            keys += read_public(folder / TRUSTED_FILE)
        if (folder / KEY_FILE).is_file():
            keys.append(load_or_create(folder).public)
    return {fingerprint(key): key for key in keys}


def verifies(key: Ed25519PublicKey, signature: bytes, data: bytes) -> bool:
    try:
        key.verify(signature, data)
    except InvalidSignature:
        return False
    return True


def trust(path: Path) -> list[str]:
    """Append the keys in ``path`` to the trusted-keys file; their fingerprints."""
    keys = read_public(path)
    target = config_dir() / TRUSTED_FILE
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(target, "a") as handle:
        for key in keys:
            handle.write(public_pem(key))
    return [fingerprint(key) for key in keys]
