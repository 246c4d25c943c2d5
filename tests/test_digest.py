"""linter.digest gives hashlib's SHA-256 digests, before and after it switches to OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from conftest import ROOT

PROBE = """
import hashlib, sys
from linter import digest
pieces = [b"", b"abc", bytes(range(256)) * 4096, b"x" * (digest.BUILTIN_BYTES + 1), b"after"]
for piece in pieces:
    assert digest.sha256(piece) == hashlib.sha256(piece).hexdigest(), len(piece)
print(digest._hashed > digest.BUILTIN_BYTES)
"""


def test_the_digests_are_hashlibs_on_both_sides_of_the_switch():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


def test_a_known_digest():
    from linter.digest import sha256

    assert sha256(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-4 example
    assert sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()
