"""Which files `hwlint check PATH...` reviews, found as ruff finds Python files.

- A file given by name is reviewed whatever its name (`-` is standard input); with
  `force_exclude` (`--force-exclude`, for pre-commit, which names every staged file) the
  exclusions below apply to it too.
- A folder is searched for `*.hw.yaml` and `*.hw.yml`, in sorted order, skipping hidden
  folders and what is excluded: inside a git work tree the files come from git itself
  (`git ls-files --cached --others --exclude-standard`: tracked files, and untracked ones
  that no .gitignore, .git/info/exclude or global excludes file ignores); elsewhere, or
  without git, from the folder as it is.
- Excluded are the names in DEFAULT_EXCLUDE, or the config's `exclude:` in their place, plus
  its `extend_exclude:`. The config that governs a folder decides for it. A pattern without
  a `/` matches a file or folder of that name anywhere (`venv`, `*.draft.hw.yaml`); one with
  a `/` is a path from the config's folder (`archive/2023`, `teams/*/old`; `**` spans
  folders). An excluded folder is not entered.
- A file reached twice (given twice, or by a folder and by name, or through a link) is
  reviewed once, where it first came.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

SUFFIXES = (".hw.yaml", ".hw.yml")
# ruff's defaults that are not hidden folders (hidden ones are always skipped)
DEFAULT_EXCLUDE = ("venv", "site-packages", "build", "dist", "node_modules", "__pypackages__", "_build", "buck-out",
                   ".venv")


class Excludes:
    """The exclusions one config sets: patterns, and the folder the path patterns start from."""

    def __init__(self, patterns: Iterable[str], folder: str):
        self.folder = os.path.abspath(folder)
        self.patterns = list(patterns)
        self.names = [p for p in self.patterns if "/" not in p.strip("/")]
        self.paths = [_glob(p.strip().lstrip("./").rstrip("/")) for p in self.patterns if "/" in p.strip("/")]

    def matches(self, path: str) -> bool:
        """Whether `path` (absolute) is excluded by its own name or, below the folder, its path."""
        from fnmatch import fnmatchcase

        name = os.path.basename(path)
        if any(fnmatchcase(name, pattern.strip("/")) for pattern in self.names):
            return True
        relative = os.path.relpath(path, self.folder).replace(os.sep, "/")
        return not relative.startswith("../") and any(p.fullmatch(relative) for p in self.paths)


def excludes_of(config: Any) -> Excludes:
    """The exclusions of a linter.manifest.config.Config (its defaults when it sets none)."""
    patterns = list(DEFAULT_EXCLUDE if config.exclude is None else config.exclude) + list(config.extend_exclude)
    folder = os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()
    return Excludes(patterns, folder)


def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regular expression: `*` and `?` within one folder name, `**` across."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            out, i = out + "[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "(?:/.*)?")  # a folder's pattern covers what is inside it


def manifest_files(paths: Iterable[str], excludes_for: Callable[[str], Excludes],
                   force_exclude: bool = False) -> list[str]:
    """The files to review for PATHS, in order, each once. `excludes_for(folder)` gives the
    exclusions of the config that governs a folder."""
    excludes_for = lru_cache(maxsize=None)(excludes_for)  # one config look-up per folder
    out: list[str] = []
    seen: set[Any] = set()
    for given in paths:
        if given != "-" and os.path.isdir(given):
            found = _search(given, excludes_for)
        elif given != "-" and force_exclude and _excluded(os.path.abspath(given), excludes_for):
            found = []
        else:
            found = [given]
        for path in found:
            identity = _identity(path)
            if identity not in seen:
                seen.add(identity)
                out.append(path)
    return out


def _identity(path: str) -> Any:
    """What makes two names one file: the device and inode where the file exists."""
    if path == "-":
        return path
    try:
        status = os.stat(path)
        return (status.st_dev, status.st_ino)
    except OSError:
        return os.path.normcase(os.path.abspath(path))


def _excluded(path: str, excludes_for: Callable[[str], Excludes]) -> bool:
    """Whether `path` or a folder above it, below its config's folder, is excluded."""
    excludes = excludes_for(os.path.dirname(path))
    here = path
    while True:
        if excludes.matches(here):
            return True
        parent = os.path.dirname(here)
        if parent == here or not parent.startswith(excludes.folder.rstrip(os.sep) + os.sep):
            return False
        here = parent


def _search(folder: str, excludes_for: Callable[[str], Excludes]) -> list[str]:
    listed = _git_files(folder)
    if listed is None:
        return _walk(folder, excludes_for)
    kept = []
    for relative in listed:
        parts = relative.split("/")
        if not parts[-1].endswith(SUFFIXES) or any(p.startswith(".") for p in parts[:-1]):
            continue
        path = os.path.normpath(os.path.join(folder, *parts))
        if not os.path.isfile(path):  # tracked, but deleted in the work tree
            continue
        inner = [os.path.abspath(os.path.join(folder, *parts[:n])) for n in range(1, len(parts) + 1)]
        if not any(excludes_for(os.path.dirname(p)).matches(p) for p in inner):
            kept.append(path)
    return sorted(kept, key=lambda f: Path(f).parts)


def _walk(folder: str, excludes_for: Callable[[str], Excludes]) -> list[str]:
    found = []
    for here, subfolders, names in os.walk(folder):
        excludes = excludes_for(here)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".")
                               and not excludes.matches(os.path.abspath(os.path.join(here, d))))
        found += [os.path.normpath(os.path.join(here, n)) for n in sorted(names)
                  if n.endswith(SUFFIXES) and not excludes.matches(os.path.abspath(os.path.join(here, n)))]
    return sorted(found, key=lambda f: Path(f).parts)


def _git_files(folder: str) -> list[str] | None:
    """The files git lists under `folder` (tracked, and untracked but not ignored), as paths
    from it; None outside a work tree (found without starting git) or without git. The
    work tree's own config may not start a file-system monitor program (core.fsmonitor):
    a folder under review may come with a `.git` of its own."""
    absolute = Path(os.path.abspath(folder))
    if not any((candidate / ".git").exists() for candidate in (absolute, *absolute.parents)):
        return None
    import subprocess  # only to list a folder: a check of named files starts no process

    try:
        listed = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", folder, "ls-files", "-z", "--cached",
                                 "--others", "--exclude-standard"], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name})  # an unmerged file is listed once per stage
