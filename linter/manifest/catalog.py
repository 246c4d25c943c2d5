"""The hardware catalog (catalog/*.yaml) and how node pools inherit from it.

A node pool may name a `system` (a whole server) and its `gpu` may name a `model`; the
catalog entry supplies every value the manifest leaves out, and the manifest's own
values always win. Every entry carries `source` and `as_of`; the review lists the entries
it used so stale specs can be flagged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from linter.manifest.loader import Document, plain_copy
from linter.paths import data_dir
from linter.results import Result, dotted, file_finding
from linter.manifest.validate import suggest

# Keys that describe the catalog entry itself, not the part.
_ENTRY_ONLY = {"name", "aliases", "source", "as_of", "notes", "vendor", "memory_type", "kinds", "max_port_rate_gbps"}


@dataclass(frozen=True)
class CatalogRef:
    kind: str
    name: str
    as_of: str
    source: dict[str, Any]


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


@lru_cache(maxsize=4)
def load_catalog(folders: tuple[str, ...] = ()) -> Catalog:
    """The built-in catalog plus the folders a config names (`catalog:`), later folders last."""
    from pathlib import Path

    from linter.manifest.loader import load_file

    catalog = Catalog()
    paths = [p for folder in (data_dir("catalog"), *map(Path, folders)) for p in sorted(folder.glob("*.yaml"))]
    for path in paths:
        content = load_file(str(path)).data  # the manifest's own loader: fast, same scalars
        for kind in ("gpus", "nics", "switches", "systems"):
            for entry in content.get(kind, []):
                entry["as_of"] = str(entry.get("as_of", ""))
                catalog.add(kind, entry)
    return catalog


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
                fix=f"use a catalog name ({', '.join(catalog.names(kind))}) or drop the name and give the values yourself",
            ))
            return None
        refs[(kind, entry["name"])] = CatalogRef(kind, entry["name"], entry["as_of"], entry.get("source", {}))
        return entry

    for i, pool in enumerate(data.get("node_pools", [])):
        if "system" in pool and (system := lookup("systems", pool["system"], ("node_pools", i, "system"))):
            pool.update(_merge(_spec(system), pool))
            pool["system"] = system["name"]
        gpu = pool.get("gpu")
        if gpu and "model" in gpu and (entry := lookup("gpus", gpu["model"], ("node_pools", i, "gpu", "model"))):
            pool["gpu"] = _merge(_spec(entry), gpu)
            pool["gpu"]["model"] = entry["name"]
        for j, nic in enumerate(pool.get("nics", [])):
            if "model" in nic and (entry := lookup("nics", nic["model"], ("node_pools", i, "nics", j, "model"))):
                inherited = {"gpudirect_rdma": entry.get("gpudirect_rdma"), "rate_gbps": entry.get("max_port_rate_gbps")}
                pool["nics"][j] = _merge({k: v for k, v in inherited.items() if v is not None}, nic)
    for i, fabric in enumerate(data.get("network", {}).get("fabrics", [])):
        for j, switch in enumerate(fabric.get("switches", [])):
            if "model" in switch and (entry := lookup("switches", switch["model"], ("network", "fabrics", i, "switches", j, "model"))):
                fabric["switches"][j] = _merge(
                    {k: entry[k] for k in ("ports", "port_rate_gbps", "max_power_w") if k in entry}, switch
                )
                fabric.setdefault("kind", entry.get("kind"))
    return Resolved(data=data, refs=sorted(refs.values(), key=lambda r: (r.kind, r.name)), findings=findings)


def _spec(entry: dict) -> dict:
    return {k: plain_copy(v) for k, v in entry.items() if k not in _ENTRY_ONLY}


def _merge(base: dict, override: dict) -> dict:
    """Deep-merge mappings; the override wins, lists are replaced whole."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out
