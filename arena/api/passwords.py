"""Secrets stored as salted scrypt hashes, checked in constant time.

scrypt (``hashlib.scrypt``, OpenSSL's) rather than argon2: it is in the standard library, so
accounts work on the core install (``arena users add`` needs no extra, nothing compiled), and
it is one of the two password hashes OWASP's password storage cheat sheet recommends. The cost
is OWASP's N=2^14, r=8, p=5 (16 MiB, about 0.3 s of CPU a hash). The parameters are stored
in the hash (``scrypt$N$r$p$salt$hash``), so a later release can raise them and still check
what is stored.

``$ARENA_SCRYPT_N`` lowers N for a test suite, and for nothing else: the server tests sign in
and check tokens hundreds of times, in processes of their own, and at the real cost those
hashes took about 24 s of the suite's CPU (0.2 s each). Unset (as everywhere but the tests),
N is OWASP's; :func:`check_secret` reads N from what is stored, so a hash made at either cost
still checks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

N, R, P = 2**14, 8, 5
_MAXMEM = 64 * 2**20
_PREFIX = "scrypt"
COST_ENV = "ARENA_SCRYPT_N"  # a test suite's cheaper N (a power of two); unset: N
MAX_SECRET = 1024  # longest password accepted (bytes): the hash's work does not depend on it


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def cost() -> int:
    """The N new hashes are made with: ``$ARENA_SCRYPT_N`` when set (a power of two from 2 to
    N, never above the default), else N. Read at each hash, so a test can set it late."""
    raw = os.environ.get(COST_ENV, "").strip()
    if not raw:
        return N
    n = int(raw) if raw.isdigit() and len(raw) <= 7 else 0
    if n < 2 or n > N or n & (n - 1):
        raise ValueError(f"${COST_ENV}: {raw!r} is not a power of two from 2 to {N}")
    return n


def hash_secret(secret: str) -> str:
    """A fresh salted hash of ``secret``, in the stored form."""
    salt = secrets.token_bytes(16)
    n = cost()
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=R, p=P, maxmem=_MAXMEM, dklen=32)
    return f"{_PREFIX}${n}${R}${P}${_b64(salt)}${_b64(digest)}"


def check_secret(stored: str, secret: str) -> bool:
    """Whether ``secret`` hashes to ``stored`` (compared in constant time). A stored value
    that is not one of ours, or parameters beyond what this release would make, are False."""
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != _PREFIX or len(secret.encode()) > MAX_SECRET:
        return False
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt = base64.b64decode(parts[4], validate=True)
        expected = base64.b64decode(parts[5], validate=True)
    except ValueError:
        return False
    if not (2 <= n <= 2**17 and 1 <= r <= 16 and 1 <= p <= 16) or not expected:
        return False
    digest = hashlib.scrypt(
        secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM, dklen=len(expected)
    )
    return hmac.compare_digest(digest, expected)


def new_secret() -> str:
    """A random secret of 256 bits, URL-safe text."""
    return secrets.token_urlsafe(32)


def fingerprint(secret: str) -> str:
    """The SHA-256 of a random secret (a session cookie): enough for 256 random bits, and
    what a table can be searched by."""
    return hashlib.sha256(secret.encode()).hexdigest()
