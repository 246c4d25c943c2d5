"""Where the data folders are: inside the wheel (linter/_data) or at the repository root."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder `name` (rules, schemas, templates, catalog, models)."""
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def manifest_schema_path() -> Path:
    return data_dir("schemas") / "manifest.schema.json"


@lru_cache(maxsize=1)
def manifest_schema_json() -> dict[str, Any]:
    """The committed manifest schema, read once per process (validation, the quick check and
    the rule loader's field check all use it)."""
    return json.loads(manifest_schema_path().read_text(encoding="utf-8"))


def repository_of(folder: str | os.PathLike[str]) -> Path | None:
    """The git work tree that holds `folder`: the nearest folder up with a `.git` (a folder,
    or the file a linked work tree or submodule has), found without starting git."""
    here = Path(folder)
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def relative(path: str | os.PathLike[str]) -> str:
    """`path` as reports show it: relative to the working folder, as a user types it. An
    absolute path in a review shows the machine's layout (/home/runner/work/...), which is not
    the reviewer's business; one with no relative way there (another drive) stays as it is."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
