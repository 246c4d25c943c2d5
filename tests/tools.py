"""Real third-party tools the tests drive (yaml-language-server, mermaid-cli), installed from
npm at a pinned version into .ci/node/<package>-<version> (ignored by git), once per checkout. Each tool
has a folder of its own: `npm install --no-save` into one folder removes what an earlier
`--no-save` install put there. A test that needs one is skipped only where npm itself is
missing; .ci/run installs node and npm."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

NODE_DIR = ROOT / ".ci" / "node"
PINNED = {"yaml-language-server": "1.25.0", "@mermaid-js/mermaid-cli": "11.12.0"}


def npm_tool(package: str, binary: str, env: dict | None = None) -> Path:
    """Path of `binary` from npm `package` (pinned in PINNED), installing it if needed."""
    prefix = NODE_DIR / f"{package.replace('@', '').replace('/', '-')}-{PINNED[package]}"  # a new pin installs afresh
    found = prefix / "node_modules" / ".bin" / binary
    if found.exists():
        return found
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (.ci/run installs it)")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:  # pytest-xdist or two checkouts at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not found.exists():
            run = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                 f"{package}@{PINNED[package]}"],
                capture_output=True, text=True, timeout=900, env={**os.environ, **(env or {})},
            )
            assert run.returncode == 0, f"npm install {package} failed:\n{run.stderr[-3000:]}"
    return found
