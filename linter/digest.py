"""SHA-256 hex digests, without loading OpenSSL for a one-manifest check.

hashlib's sha256 is OpenSSL's: the fastest per byte (0.6 ms a MB on the bench machine, which
has the SHA instructions, against 4.4 ms for CPython's own), but importing hashlib loads
libcrypto, about 4 ms, some 4% of a one-manifest check, which hashes a few kB. So the first
MB a process hashes goes through CPython's built-in implementation (the same digest, the
same standard: FIPS 180-4), and hashlib is loaded only once more than that has been hashed.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

BUILTIN_BYTES = 1 << 20  # beyond this, OpenSSL's speed pays for its loading
_hashed = 0
_builtin: Callable[[bytes], Any] | None = None


def sha256(data: bytes) -> str:
    """The SHA-256 of `data`, as 64 hexadecimal digits."""
    global _hashed
    _hashed += len(data)
    return (_builtin or _first())(data).hexdigest() if _hashed <= BUILTIN_BYTES else _openssl(data)


def _first() -> Callable[[bytes], Any]:
    global _builtin
    try:
        from _sha2 import sha256 as found  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256 as found  # CPython 3.10 and 3.11
        except ImportError:  # a Python built without them
            from hashlib import sha256 as found
    _builtin = found
    return found


def _openssl(data: bytes) -> str:
    from hashlib import sha256 as openssl

    return openssl(data).hexdigest()
