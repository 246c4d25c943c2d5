"""A disk cache of loaded rule packs: a check should not parse and compile ~350 rule sources.

Loading a pack parses every rule file, checks it against the rule schema and translates
each expression and template into Python (linter.engine.compiler; the built-in ones come
translated in rules/compiled.json); that is most of a one-manifest check. The
loaded `RulePack` is pickled under a key that covers everything it is built from:

- the bytes of every file the loader reads from a repository's rule folders (`rules.pack_files`:
  regular files inside their folder, each within the rule-file size limit, so a link to
  /dev/zero or a 3 GB file beside the rules is never read) and from its team catalog folders
  (`*.yaml`, which the pack carries as checked): content, not mtime, since that is what a
  change under review edits,
- the size and mtime of what hwlint installs: each module of its code, its rule folder (with
  the table of compiled sources), `schemas/*.json` and the built-in catalog, as Python keys
  `__pycache__` (an install or a checkout rewrites them; reading the 1 MB they hold would be
  some 3 ms of every check),
- the rule and catalog folders as given and as resolved (their names appear in messages),
- the Python version, since the cached rules are compiled Python code, the installed Jinja2
  (its parser shaped them), and the installed pydantic (found, not imported: the pack holds
  no pydantic objects, but the models shaped what it holds).

Rules are stored as the Python code linter.engine.compiler made of them (`marshal`) and
rebuilt in the sandbox's namespace when first run (`sandbox.Deferred`), so a cached rule
runs exactly as a fresh one. Only
packs that loaded without errors are stored. Any cache that cannot be read, written or
unpickled is ignored and rebuilt.

Trust: the cache holds executable code, like `__pycache__`. It lives in `--cache-dir`, else
`$HWLINT_CACHE_DIR`, else the platform's folder for a user's caches as platformdirs names it
(`$XDG_CACHE_HOME/hwlint` or `~/.cache/hwlint` on Linux, `~/Library/Caches/hwlint` on macOS,
`%LOCALAPPDATA%\\hwlint\\Cache` on Windows); keep it no more writable than the Python
installation. `--no-cache` or `HWLINT_CACHE=off` disables it.
"""

from __future__ import annotations

import io
import marshal
import os
import pickle
import sys
from pathlib import Path

from linter.digest import sha256

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

# A rule file is checked against this size before it is parsed (the built-in ones are under
# 25 kB; a 4 MB one took half a minute and gigabytes to load).
MAX_RULE_BYTES = 500_000
DATA_FILES = ("references.yaml", "tiers.yaml", "policy.yaml", "conditions.yaml", "actions.yaml")  # in rules/, not rule files
# Cached packs kept; the least recently used go when a new one is written. Every checkout,
# version and --rules folder set has its own pack, so a few checkouts and team folders
# (or several people sharing one account) would otherwise keep evicting each other's.
KEEP = 32
_LINTER = Path(__file__).resolve().parents[1]  # the whole package: its code is in the key
# Packs this process has read or built, by cache file: configs that name the same folders (a
# team's config under the root's) share one pack instead of unpickling it again. The key is
# still computed each time, so a file changed between two loads is still seen.
_loaded: dict[Path, Any] = {}


class Choice:
    """What the command line says of the cache: `enabled` false (--no-cache), or `folder`
    (--cache-dir); either wins over the environment."""

    def __init__(self, enabled: bool = True, folder: str | None = None):
        self.enabled, self.folder = enabled, folder


def directory(choice: Choice | None = None) -> Path | None:
    """Where packs are cached; None: not at all."""
    if choice is not None and (not choice.enabled or choice.folder):
        return Path(choice.folder) if choice.enabled and choice.folder else None
    if os.environ.get("HWLINT_CACHE", "").lower() in ("0", "off", "no", "false"):
        return None
    if os.environ.get("HWLINT_CACHE_DIR"):
        return Path(os.environ["HWLINT_CACHE_DIR"])
    return platform_cache()


def platform_cache() -> Path:
    """The folder the platform keeps a user's caches in, as platformdirs names it. Where that
    is the XDG rule (every system platformdirs treats as Unix, Android aside), the rule is
    applied here: importing platformdirs would add some 5 ms to every check."""
    if sys.platform not in ("win32", "darwin") and not os.environ.get("ANDROID_DATA"):
        return Path(os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")) / "hwlint"
    import platformdirs

    return Path(platformdirs.user_cache_dir("hwlint", appauthor=False))


def cached(build: Callable[[], Any], folders: list[Path], schemas: Path, catalogs: list[Path] | None = None,
           choice: Choice | None = None) -> Any:
    """`build()`'s pack, from the cache when nothing it depends on has changed."""
    where = directory(choice)
    if where is None:
        return build()
    try:
        path = where / f"pack-{_key(folders, schemas, catalogs or [])}.pickle"
    except Exception:  # noqa: BLE001 - a file refused or unreadable: let build() report it
        return build()
    pack = _loaded.get(path) or _read(path)
    if pack is None:
        pack = build()
        _write(path, pack)
    _loaded[path] = pack
    return pack


def _installed(package: str) -> str:
    """Where `package` is installed and its `__init__.py`'s size and mtime (an upgrade rewrites
    it), found on sys.path as an import would find it, without importing it (or importlib.util)."""
    for entry in sys.path:
        origin = os.path.join(entry or os.curdir, package, "__init__.py")
        try:
            stat = os.stat(origin)
        except OSError:
            continue
        return f"{origin}\0{stat.st_size}\0{stat.st_mtime_ns}"
    return f"{package}: not installed"


def _listed(folder: Path, suffix: str) -> list[Path]:
    """The files of `folder` whose names end in `suffix`, sorted by name (a plain listing: no
    glob pattern to compile); none when the folder cannot be read."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(suffix))
    except OSError:
        return []
    return [folder / name for name in names]


def _modules(root: Path) -> list[tuple[str, os.stat_result]]:
    """Every *.py under `root` with its stat, sorted by path."""
    out, stack = [], [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    out.append((entry.path, entry.stat()))
    return sorted(out, key=lambda item: item[0])


def _key(folders: list[Path], schemas: Path, catalogs: list[Path]) -> str:
    from linter.paths import data_dir

    parts = [repr((sys.version, _installed("jinja2"), _installed("pydantic"))).encode()]
    for folder in folders:
        parts.append(f"folder\0{folder}\0{folder.resolve()}\n".encode())
    for folder in catalogs:  # entries name their folder as given
        parts.append(f"catalog\0{folder}\0{folder.resolve()}\n".encode())
    rules, catalog = data_dir("rules"), data_dir("catalog")
    # what hwlint installs by size and mtime, what a repository brings by content (the docstring says why)
    shipped = [*_modules(_LINTER), *_stats([p for _, p in pack_files([rules])] + [rules / "compiled.json"]),
               *_stats(_listed(schemas, ".json")), *_stats(_listed(catalog, ".yaml"))]
    parts += (f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode() for path, stat in shipped)
    teams = [(folder, p) for folder in folders if folder != rules and folder.is_dir() for p in rule_files(folder)]
    teams += [(folder, p) for folder in catalogs if folder != catalog for p in _listed(folder, ".yaml")]
    for folder, item in teams:
        content = read_pack_file(folder, item)
        parts.append(f"{folder}\0{item.name}\0{len(content)}\0".encode() + content)
    return sha256(b"".join(parts))[:32]


def _stats(files: list[Path]) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of each of `files` that is there."""
    out = []
    for path in files:
        try:
            out.append((str(path), os.stat(path)))
        except OSError:
            continue
    return out


def rule_files(folder: Path) -> list[Path]:
    """The rule files the loader reads in `folder`, sorted by name."""
    # data files, and manifests kept beside the rules as test bases, are not rule files
    return [p for p in _listed(folder, ".yaml") if p.name not in DATA_FILES and not p.name.endswith(".hw.yaml")]


def pack_files(folders: list[Path]) -> list[tuple[Path, Path]]:
    """(folder, file) for every file a pack built from `folders` reads: the rule files of each
    folder, and the references, tiers and policy of the built-in folder."""
    from linter.paths import data_dir

    base = data_dir("rules")
    out = []
    for folder in folders:
        names = _listed(folder, ".yaml") if folder == base else rule_files(folder)
        out.extend((folder, p) for p in names)
    return out


def read_pack_file(folder: Path, path: Path) -> bytes:
    """A rule-pack file's bytes: a regular file inside its folder, within MAX_RULE_BYTES."""
    from linter.manifest.loader import read_bytes

    return read_bytes(str(path), str(folder), MAX_RULE_BYTES, "rule files")


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        kind = getattr(obj, "hwlint_kind", None)
        if kind is None:
            return None
        source = obj.unbuilt_source() if hasattr(obj, "unbuilt_source") else None
        if source is not None:  # not compiled yet: kept as the source, compiled when first run
            return ("rule-source", kind, source)
        return ("rule", kind, marshal.dumps(obj.hwlint_code))


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        from linter.engine.sandbox import Deferred

        tag, kind, payload = pid
        if tag not in ("rule", "rule-source") or kind not in ("expr", "tmpl"):
            raise pickle.UnpicklingError(f"unknown object {tag!r}")
        if tag == "rule-source":
            return Deferred(None, kind, payload)  # compiled when first run
        return Deferred(payload, kind)  # rebuilt from its code when first run


def _read(path: Path) -> Any:
    try:
        with path.open("rb") as handle:
            pack = _Unpickler(handle).load()
        try:
            os.utime(path)  # used now: eviction goes by last use, not by when it was written
        except OSError:
            pass
        return pack
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a stale or damaged cache is only rebuilt
        return None


def _write(path: Path, pack: Any) -> None:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(pack)
    except Exception:  # noqa: BLE001 - something in the pack cannot be stored: no cache
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_bytes(buffer.getvalue())
        os.replace(temporary, path)
        old = sorted(path.parent.glob("pack-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in old[KEEP:]:
            stale.unlink(missing_ok=True)
    except OSError:
        return
