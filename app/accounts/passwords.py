"""Password hashes: scrypt from the standard library (memory-hard), a random salt per account.

Stored as "scrypt$n$r$p$salt$hash" (base64), so the cost can rise later and old hashes still
check. n=2**14, r=8 takes 16 MiB and ~50 ms a check: cheap for one login, dear for a guesser."""

import base64
import hashlib
import hmac
import secrets

N, R, P = 2**14, 8, 1
SALT_BYTES = 16
HASH_BYTES = 32
NO_PASSWORD = "!"  # an account that cannot sign in with a password (made by a proxy)
MIN_LENGTH = 8


def _b64(raw):
    return base64.b64encode(raw).decode("ascii")


def hash_password(password, salt=None, n=N):
    """The stored form of `password`, with a fresh salt unless one is given."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=n,
        r=R,
        p=P,
        maxmem=256 * 1024 * 1024,
        dklen=HASH_BYTES,
    )
    return f"scrypt${n}${R}${P}${_b64(salt)}${_b64(digest)}"


def verify_password(password, stored):
    """Whether `password` matches the stored hash (compared in constant time)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode("utf-8"),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            maxmem=256 * 1024 * 1024,
            dklen=len(expected),
        )
    except (ValueError, TypeError):
        return False  # "!" or a damaged row: no password matches it
    return hmac.compare_digest(actual, expected)
