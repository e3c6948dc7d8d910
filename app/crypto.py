"""Secrets at rest: AES-256-GCM with a master key from a file (beside the database) or the env."""

import base64
import hashlib
import logging
import os
from pathlib import Path

from .errors import LlmbenchError

log = logging.getLogger(__name__)

_key = None


class KeyError_(LlmbenchError):
    """The master key is missing, malformed, or not the one the secrets were written with."""


def fingerprint(key):
    """Short, non-reversible id of a key for logs."""
    return hashlib.sha256(key).hexdigest()[:12]


def load_key(key_path=None, key_base64=None, instance_path=None, setting=True):
    """Return the 32-byte master key: from `key_path` (LLMBENCH_MASTER_KEY_PATH when `setting`,
    else the key file beside the database), `key_base64`, or `instance_path`/master.key,
    generated (0600) when missing."""
    if key_path:
        try:
            raw = Path(key_path).read_bytes().strip()
        except OSError as exc:
            if setting:
                raise KeyError_(
                    f"LLMBENCH_MASTER_KEY_PATH ({key_path}) cannot be read ({exc.strerror}); "
                    "point it at the key file, or unset it to use the master.key beside the "
                    "database"
                ) from None
            raise KeyError_(f"the master key {key_path} cannot be read ({exc.strerror})") from None
        where = f"LLMBENCH_MASTER_KEY_PATH ({key_path})" if setting else str(key_path)
        key = _decode(raw, where)
        source = key_path
    elif key_base64:
        key = _decode(
            key_base64.encode() if isinstance(key_base64, str) else key_base64,
            "LLMBENCH_MASTER_KEY_BASE64",
        )
        source = "env"
    else:
        path = Path(instance_path) / "master.key"
        if path.exists():
            key = _decode(path.read_bytes().strip(), str(path))
            source = str(path)
        else:
            return create_key_file(path)
    log.info("master key loaded from %s, fingerprint %s", source, fingerprint(key))
    return key


def new_key():
    """A new random 32-byte master key (AESGCM.generate_key(bit_length=256) is os.urandom)."""
    return os.urandom(32)


def _aesgcm(key):
    """The AES-GCM cipher of `key` and the error a wrong key or changed value raises."""
    # Lazy: cryptography (~20 ms to import) only when a secret is encrypted or decrypted;
    # every command installs the key, most never use it (a database without secrets).
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key), InvalidTag


def create_key_file(path):
    """A new master key written to `path` (mode 0600, never over an existing file)."""
    path = Path(path)
    key = new_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(base64.b64encode(key) + b"\n")
    log.warning(
        "No LLMBENCH_MASTER_KEY_PATH or LLMBENCH_MASTER_KEY_BASE64 set: generated a new "
        "master key in %s (mode 0600). Back it up with the database.",
        path,
    )
    log.info("master key loaded from %s, fingerprint %s", path, fingerprint(key))
    return key


def opens(key, token, aad):
    """Whether `key` decrypts `token` (a stored secret bound to `aad`)."""
    cipher, invalid_tag = _aesgcm(key)
    try:
        blob = base64.b64decode(token)
        cipher.decrypt(blob[:12], blob[12:], aad.encode("utf-8"))
    except (invalid_tag, ValueError):
        return False
    return True


def _decode(raw, where):
    try:
        key = base64.b64decode(raw, validate=True)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise KeyError_(
            f"{where}: the master key must be 32 bytes, base64-encoded "
            "(make one with: head -c 32 /dev/urandom | base64)"
        )
    return key


def set_key(key):
    """Install the process-wide master key."""
    global _key
    _key = key


def get_key():
    if _key is None:
        raise KeyError_("no master key loaded")
    return _key


def encrypt(plaintext, aad):
    """base64(nonce || ciphertext+tag); a fresh 12-byte nonce each call; AAD binds it to its row."""
    cipher, _ = _aesgcm(get_key())
    nonce = os.urandom(12)
    ct = cipher.encrypt(nonce, plaintext.encode("utf-8"), aad.encode("utf-8"))
    return base64.b64encode(nonce + ct).decode("ascii")


def decrypt(token, aad):
    """Inverse of encrypt(); a wrong key or a value moved to another row fails clearly."""
    cipher, invalid_tag = _aesgcm(get_key())
    try:
        blob = base64.b64decode(token)
        return cipher.decrypt(blob[:12], blob[12:], aad.encode("utf-8")).decode("utf-8")
    except (invalid_tag, ValueError) as exc:
        raise KeyError_(
            "a stored secret cannot be decrypted: the master key differs from the one it was "
            "saved with, or the value was tampered with; re-enter the secret"
        ) from exc


def mask(value):
    """'****abcd' (last four characters); short values are fully masked."""
    if not value:
        return ""
    if len(value) <= 4:
        return "****"
    return "****" + value[-4:]
