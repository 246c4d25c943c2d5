"""The hardware catalog (catalog/*.yaml) and how node pools inherit from it.

A node pool may name a `system` (a whole server) and its `gpu` may name a `model`; the
catalog entry supplies every value the manifest leaves out, and the manifest's own
values always win. Every entry carries `source` and `as_of` (the date printed on the
document; `read_on` is the day it was read); the review lists the entries it used, and which
of their values it inherited, so stale specs can be flagged and cleared by giving the values.

A team adds its own parts with `--catalog DIR`: a folder of `*.yaml` files in the same
schema (`source` and `as_of` required); a team entry with the name of a built-in one
replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from linter.manifest.loader import Document, plain_copy
from linter.paths import data_dir
from linter.results import Result, dotted, file_finding
from linter.manifest.validate import suggest

# Keys that describe the catalog entry itself, not the part.
_ENTRY_ONLY = {"name", "aliases", "source", "as_of", "read_on", "notes", "vendor", "memory_type", "kinds",
               "max_port_rate_gbps"}
KINDS = ("gpus", "nics", "switches", "systems")


class CatalogError(Exception):
    """A team catalog folder that cannot be used: each problem names file, line and field."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class CatalogRef:
    kind: str
    name: str
    as_of: str
    source: dict[str, Any]
    read_on: str = ""
    inherited: tuple[str, ...] = ()  # the values the review took from this entry (none: the manifest gave them all)
    origin: str = ""  # the catalog folder the entry came from


@dataclass
class Catalog:
    gpus: dict[str, dict] = field(default_factory=dict)
    nics: dict[str, dict] = field(default_factory=dict)
    switches: dict[str, dict] = field(default_factory=dict)
    systems: dict[str, dict] = field(default_factory=dict)
    _index: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, kind: str, entry: dict) -> None:
        getattr(self, kind)[entry["name"]] = entry
        index = self._index.setdefault(kind, {})
        for alias in [entry["name"], *entry.get("aliases", [])]:
            index[_norm(alias)] = entry["name"]

    def find(self, kind: str, name: str) -> dict | None:
        canonical = self._index.get(kind, {}).get(_norm(name))
        return getattr(self, kind)[canonical] if canonical else None

    def names(self, kind: str) -> list[str]:
        return sorted(getattr(self, kind))


def _norm(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


@lru_cache(maxsize=8)
def load_catalog(folders: tuple[str, ...] = ()) -> Catalog:
    """The built-in catalog, then each team folder in `folders` (validated: CatalogError)."""
    from linter.manifest.loader import load_file

    catalog = Catalog()
    builtin = data_dir("catalog")
    for folder in (builtin, *map(Path, folders)):
        problems: list[str] = []
        if folder != builtin and not folder.is_dir():
            raise CatalogError([f"{folder}: not a folder of catalog files"])
        for path in sorted(folder.glob("*.yaml")):
            try:
                doc = load_file(str(path))  # the manifest's own loader: fast, same scalars
            except Exception as exc:  # noqa: BLE001 - any unreadable file is a catalog problem, not a crash
                problems.append(f"{path}: {getattr(exc, 'message', exc)}")
                continue
            content = doc.data if isinstance(doc.data, dict) else {}
            if folder != builtin:
                problems += _check(path, doc, content)
            for kind in KINDS:
                for entry in content.get(kind, []) or []:
                    entry["as_of"] = str(entry.get("as_of", ""))
                    if "read_on" in entry:
                        entry["read_on"] = str(entry["read_on"])
                    entry["_origin"] = "built-in" if folder == builtin else str(folder)
                    catalog.add(kind, entry)
        if problems:
            raise CatalogError(problems)
    return catalog


def _check(path: Path, doc: Document, content: Any) -> list[str]:
    """A team file's entries against the catalog models: same schema as the built-in ones."""
    from pydantic import ValidationError

    from linter.manifest.model import CatalogGpu, CatalogNic, CatalogSwitch, CatalogSystem

    models = {"gpus": CatalogGpu, "nics": CatalogNic, "switches": CatalogSwitch, "systems": CatalogSystem}
    if not isinstance(content, dict) or not content:
        return [f"{path}:1:1: a catalog file is a mapping with gpus, nics, switches or systems lists"]
    out = []
    for kind, items in content.items():
        if kind not in models:
            line, col = doc.position((kind,))
            out.append(f"{path}:{line}:{col}: {kind}: not a catalog section{suggest(str(kind), list(models))}")
            continue
        for i, item in enumerate(items or []):
            try:
                models[kind].model_validate(item)
            except ValidationError as exc:
                for error in exc.errors():
                    where = (kind, i, *[p for p in error["loc"] if isinstance(p, (str, int))])
                    line, col = doc.position(where)
                    name = item.get("name", f"entry {i + 1}") if isinstance(item, dict) else f"entry {i + 1}"
                    out.append(f"{path}:{line}:{col}: {kind}[{i}] ({name}) {dotted(where[2:])}: {error['msg']}")
    return out


@dataclass
class Resolved:
    """The manifest's data with catalog values filled in."""

    data: dict[str, Any]
    refs: list[CatalogRef]
    findings: list[Result]


def resolve(doc: Document, catalog: Catalog | None = None) -> Resolved:
    catalog = catalog or load_catalog()
    data = plain_copy(doc.data)
    refs: dict[tuple[str, str], CatalogRef] = {}
    inherited: dict[tuple[str, str], set[str]] = {}
    findings: list[Result] = []

    def lookup(kind: str, name: str, path: tuple) -> dict | None:
        entry = catalog.find(kind, name)
        if entry is None:
            line, column = doc.position(path)
            hint = suggest(name, catalog.names(kind), cutoff=0.4)  # part names differ more than keys do
            findings.append(file_finding(
                "CATALOG",
                f'{dotted(path)} names "{name}", which is not in the catalog{hint}',
                doc.path, line, column, dotted(path),
                fix=f"use a catalog name (`hwlint catalog list` shows them) or drop the name and give the values yourself",
            ))
            return None
        inherited.setdefault((kind, entry["name"]), set())
        refs[(kind, entry["name"])] = CatalogRef(kind, entry["name"], entry["as_of"], entry.get("source", {}),
                                                 entry.get("read_on", ""), origin=entry.get("_origin", ""))
        return entry

    def took(kind: str, entry: dict, base: dict, given: dict, prefix: str = "") -> None:
        inherited[(kind, entry["name"])].update(f"{prefix}{leaf}" for leaf in _leaves_not_given(base, given))

    for i, pool in enumerate(data.get("node_pools", [])):
        if "system" in pool and (system := lookup("systems", pool["system"], ("node_pools", i, "system"))):
            spec = _spec(system)
            # the system's GPU is counted against its own entry below, all but its count
            took("systems", system, {k: v for k, v in spec.items() if k != "gpu"}, pool)
            if "gpu" in spec and "gpu" in pool:
                took("systems", system, {k: v for k, v in spec["gpu"].items() if k == "count"}, pool["gpu"], "gpu.")
            pool.update(_merge(spec, pool))
            pool["system"] = system["name"]
        gpu = pool.get("gpu")
        if gpu and "model" in gpu and (entry := lookup("gpus", gpu["model"], ("node_pools", i, "gpu", "model"))):
            took("gpus", entry, _spec(entry), doc.data["node_pools"][i].get("gpu") or {})
            pool["gpu"] = _merge(_spec(entry), gpu)
            pool["gpu"]["model"] = entry["name"]
        for j, nic in enumerate(pool.get("nics", [])):
            if "model" in nic and (entry := lookup("nics", nic["model"], ("node_pools", i, "nics", j, "model"))):
                values = {"gpudirect_rdma": entry.get("gpudirect_rdma"), "rate_gbps": entry.get("max_port_rate_gbps")}
                values = {k: v for k, v in values.items() if v is not None}
                took("nics", entry, values, nic)
                pool["nics"][j] = _merge(values, nic)
    for i, fabric in enumerate(data.get("network", {}).get("fabrics", [])):
        for j, switch in enumerate(fabric.get("switches", [])):
            if "model" in switch and (entry := lookup("switches", switch["model"], ("network", "fabrics", i, "switches", j, "model"))):
                values = {k: entry[k] for k in ("ports", "port_rate_gbps", "max_power_w") if k in entry}
                took("switches", entry, values, switch)
                fabric["switches"][j] = _merge(values, switch)
                fabric.setdefault("kind", entry.get("kind"))
    out = [CatalogRef(r.kind, r.name, r.as_of, r.source, r.read_on, tuple(sorted(inherited[key])), r.origin)
           for key, r in refs.items()]
    return Resolved(data=data, refs=sorted(out, key=lambda r: (r.kind, r.name)), findings=findings)


def _leaves_not_given(base: dict, given: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the values in `base` that `given` does not set (the ones inherited)."""
    out = []
    given = given if isinstance(given, dict) else {}
    for key, value in base.items():
        if key.startswith("_"):
            continue
        if key not in given:
            out.append(prefix + key)
        elif isinstance(value, dict) and isinstance(given[key], dict):
            out += _leaves_not_given(value, given[key], f"{prefix}{key}.")
    return out


def _spec(entry: dict) -> dict:
    return {k: plain_copy(v) for k, v in entry.items() if k not in _ENTRY_ONLY and not k.startswith("_")}


def _merge(base: dict, override: dict) -> dict:
    """Deep-merge mappings; the override wins, lists are replaced whole."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out
