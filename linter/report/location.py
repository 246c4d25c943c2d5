"""Where a manifest is, as code-hosting tools want it: relative to the repository root.

GitHub matches SARIF results and workflow annotations to files by their path from the root
of the checkout, whatever folder hwlint ran in. The root is the nearest folder above the
file that holds `.git` (a folder, or a file in a worktree or submodule); outside any
repository the path is taken relative to the current folder when it lies below it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=256)
def _root_of(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def repo_relative(file: str) -> str:
    """`file` as a forward-slash path from the repository root (or the current folder)."""
    absolute = Path(os.path.abspath(file))
    root = _root_of(absolute.parent) or Path.cwd()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return Path(file).as_posix()
