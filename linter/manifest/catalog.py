"""The hardware catalog (catalog/*.yaml) and how node pools inherit from it.

A node pool may name a `system` (a whole server) and its `gpu` may name a `model`; the
catalog entry supplies every value the manifest leaves out, and the manifest's own
values always win. Every entry carries `source` and `as_of` (the date printed on the
document; `read_on` is the day it was read); the review lists the entries it used, and which
of their values it inherited, so stale specs can be flagged and cleared by giving the values.

A team adds its own parts with `--catalog DIR`: a folder of `*.yaml` files in the same
schema (`source` and `as_of` required). A team entry with the name of a built-in one
replaces it, and never silently: wherever a manifest names it, the review reports the
override (BUY010: each value with the built-in and the team's), lists those values with the
manifest's own overrides, and holds them to the built-in part's bounds (BUY008). A team name or
alias that would capture another part's name or alias (a built-in one, or another team
entry's) refuses the catalog (CatalogError, naming file, line, alias and the part).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.manifest.loader import Document, plain_copy
from linter.numbers import num
from linter.paths import data_dir
from linter.record import field, record
from linter.results import Result, dotted, file_finding, undotted
from linter.manifest.validate import suggest

# Keys that describe the catalog entry itself, not the part.
_ENTRY_ONLY = {"name", "aliases", "source", "as_of", "undated", "read_on", "notes", "vendor", "memory_type", "kinds",
               "max_port_rate_gbps"}
KINDS = ("gpus", "nics", "switches", "systems")


class CatalogError(Exception):
    """A team catalog folder that cannot be used: each problem names file, line and field."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@record(frozen=True)
class CatalogRef:
    kind: str
    name: str
    as_of: str
    source: dict[str, Any]
    read_on: str = ""
    inherited: tuple[str, ...] = ()  # the values the review took from this entry (none: the manifest gave them all)
    origin: str = ""  # the catalog folder the entry came from
    undated: str = ""  # why as_of is "" (the document prints no date)


@record
class Catalog:
    gpus: dict[str, dict] = field(default_factory=dict)
    nics: dict[str, dict] = field(default_factory=dict)
    switches: dict[str, dict] = field(default_factory=dict)
    systems: dict[str, dict] = field(default_factory=dict)
    bounds: list[dict] = field(default_factory=list)  # catalog/bounds.yaml: which manifest values a part bounds
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

    def bound_pairs(self, kind: str, entry: dict) -> list[tuple[tuple[str, ...], tuple[str, ...], dict]]:
        """Each (manifest keys, catalog keys, bound) of catalog/bounds.yaml for the part `entry`
        of `kind`, in the file's order (see _bound_pairs)."""
        # read once per entry; kept beside the fields (a pack pickled before this cache has none)
        cache = self.__dict__.setdefault("_bound_pairs", {})
        key = (kind, entry["name"])
        found = cache.get(key)
        if found is None:
            found = cache[key] = [(fields, theirs, bound) for bound in self.bounds if bound.get("part") == kind
                                  for fields, theirs in _bound_pairs(bound, entry)]
        return found


def _norm(name: str) -> str:
    return _norm_text(name if type(name) is str else str(name))


@lru_cache(maxsize=4096)  # every manifest names the same few parts
def _norm_text(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


@lru_cache(maxsize=8)
def load_catalog(folders: tuple[str, ...] = ()) -> Catalog:
    """The built-in catalog, then each team folder in `folders` (validated: CatalogError)."""
    from linter.manifest.prebuilt import load_file  # the built-in files from catalog/loaded.json

    catalog = Catalog()
    builtin = data_dir("catalog")
    for folder in (builtin, *map(Path, folders)):
        problems: list[str] = []
        if folder != builtin and not folder.is_dir():
            raise CatalogError([f"{folder}: not a folder of catalog files"])
        for path in sorted(folder.glob("*.yaml")):
            try:
                doc = load_file(str(path))  # the manifest's own loader's Document: fast, same scalars
            except Exception as exc:  # noqa: BLE001 - any unreadable file is a catalog problem, not a crash
                where = f"{path}:{exc.line}:{exc.column}" if hasattr(exc, "line") else str(path)
                problems.append(f"{where}: {getattr(exc, 'what', exc)}")
                continue
            content = doc.data if isinstance(doc.data, dict) else {}
            if folder != builtin:
                problems += _check(path, doc, content)
            elif "bounds" in content:
                catalog.bounds = list(content["bounds"])
            for kind in KINDS:
                for i, entry in enumerate(content.get(kind, []) or []):
                    entry["as_of"] = str(entry.get("as_of", ""))
                    if "read_on" in entry:
                        entry["read_on"] = str(entry["read_on"])
                    entry["_origin"] = "built-in" if folder == builtin else str(folder)
                    if folder != builtin and not problems:
                        entry["_at"] = "{}:{}".format(path, doc.position((kind, i, "name"))[0])
                        captured = _captures(catalog, kind, entry, doc, path, i)
                        if captured:
                            problems += captured
                            continue
                    catalog.add(kind, entry)
        if problems:
            raise CatalogError(problems)
    return catalog


def _captures(catalog: Catalog, kind: str, entry: dict, doc: Document, path: Path, i: int) -> list[str]:
    """The names and aliases of team entry `entry` (of `kind`, item `i` of file `path`) that would
    capture another part: a built-in part's alias, or another team entry's name or alias. A name
    that is a built-in part's own name is an override, not a capture: the entry keeps that part
    as `_replaces`, and the review reports it wherever a manifest names it."""
    index = catalog._index.get(kind, {})
    parts = getattr(catalog, kind)
    out = []
    taken = index.get(_norm(entry["name"]))
    own = parts.get(taken) if taken else None
    if own is not None and own["_origin"] == "built-in" and _norm(taken) == _norm(entry["name"]):
        entry["_replaces"] = own  # the built-in part it overrides: its values and bounds stay known
        if taken != entry["name"]:
            del parts[taken]
    elif own is not None:
        line, col = doc.position((kind, i, "name"))
        whose = "the built-in part" if own["_origin"] == "built-in" else f"the team entry at {own.get('_at', own['_origin'])}"
        out.append(f'{path}:{line}:{col}: {kind}[{i}] name "{entry["name"]}" is already a name or alias of {whose} '
                   f'{taken}: a manifest naming it would get this entry instead. Name the entry {taken} to override '
                   f"that part (the review reports the override), or choose a name of its own")
        own = None
    replaced = entry.get("_replaces", {}).get("name")
    for k, alias in enumerate(entry.get("aliases", []) or []):
        taken = index.get(_norm(alias))
        if taken is None or taken == replaced or taken == entry["name"]:
            continue
        other = parts[taken]
        whose = "the built-in part" if other["_origin"] == "built-in" else f"the team entry at {other.get('_at', other['_origin'])}"
        line, col = doc.position((kind, i, "aliases", k))
        out.append(f'{path}:{line}:{col}: {kind}[{i}] ({entry["name"]}) alias "{alias}" would capture {whose} {taken}: '
                   f'a manifest naming "{alias}" would get this entry instead of {taken}. Drop the alias, or name the '
                   f"entry {taken} to override that part openly")
    return out


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


@record
class Resolved:
    """The manifest's data with catalog values filled in."""

    data: dict[str, Any]
    refs: list[CatalogRef]
    findings: list[Result]
    # every value the manifest gives that differs from the named part's own:
    # {path, manifest, catalog, kind, entry, as_of, source}
    overrides: list[dict[str, Any]] = field(default_factory=list)
    # the values beyond what the named part can do (catalog/bounds.yaml): the same keys plus what, fields
    exceeded: list[dict[str, Any]] = field(default_factory=list)
    bounds_checked: int = 0  # bounds judged (the manifest gave a bounded value of a named part)
    # each place the manifest names a team entry that overrides a built-in part (BUY010): path (the
    # name's), kind, entry, at (the team file:line), sources and dates, values [{field, team, builtin}]
    replaced: list[dict[str, Any]] = field(default_factory=list)


def resolve(doc: Document, catalog: Catalog | None = None) -> Resolved:
    catalog = catalog or load_catalog()
    # resolving edits only node_pools and network: those are copied, the rest is shared
    data = {key: plain_copy(value) if key in ("node_pools", "network") else value for key, value in doc.data.items()} \
        if isinstance(doc.data, dict) else plain_copy(doc.data)
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
                fix="use a catalog name (`hwlint catalog list` shows them) or drop the name and give the values yourself",
            ))
            return None
        if "_replaces" in entry:
            replaced.append(_replacement(kind, entry, path))
            builtin = entry["_replaces"]
            parent = path[:-1]  # the values sit beside the name: a GPU's beside its model, a pool's beside its system
            overrides.extend({"path": dotted(parent + undotted(v["field"])), "manifest": v["team"], "catalog": v["builtin"],
                              "kind": kind, "entry": entry["name"], "as_of": builtin["as_of"],
                              "source": builtin.get("source", {}), "by": f"team catalog {entry['_at']}"}
                             for v in replaced[-1]["values"])
        inherited.setdefault((kind, entry["name"]), set())
        refs[(kind, entry["name"])] = CatalogRef(kind, entry["name"], entry["as_of"], entry.get("source", {}),
                                                 entry.get("read_on", ""), origin=entry.get("_origin", ""),
                                                 undated=entry.get("undated", ""))
        return entry

    overrides: list[dict[str, Any]] = []
    exceeded: list[dict[str, Any]] = []
    replaced: list[dict[str, Any]] = []
    checked = [0]

    def took(kind: str, entry: dict, base: dict, given: dict, prefix: str = "", at: tuple | None = None) -> None:
        """Record what the review takes from `entry`; with `at` (the manifest item's path, when
        `given` is the manifest's own), also what the manifest sets over it."""
        inherited[(kind, entry["name"])].update(f"{prefix}{leaf}" for leaf in _leaves_not_given(base, given))
        if at is None:
            return
        about = {"kind": kind, "entry": entry["name"], "as_of": entry["as_of"], "source": entry.get("source", {})}
        for leaf, mine, theirs in _leaves_differing(base, given):
            overrides.append({"path": dotted(at + undotted(prefix + leaf)), "manifest": mine, "catalog": theirs, **about})

    def bounded(kind: str, entry: dict, given: Any, at: tuple) -> None:
        """The manifest's own values against the bounds catalog/bounds.yaml declares for `kind`;
        for a team entry that overrides a built-in part, also the team's values (under the
        manifest's) against the built-in part's bounds."""
        if not isinstance(given, dict):
            return
        _bounded(kind, entry, given, at, given)
        builtin = entry.get("_replaces")
        if builtin is not None:
            _bounded(kind, builtin, _merge(_spec(entry), given), at, given, entry)

    def _bounded(kind: str, entry: dict, given: dict, at: tuple, own: dict, team: dict | None = None) -> None:
        for fields, theirs, bound in catalog.bound_pairs(kind, entry):
            mine = [_at(given, f) for f in fields]
            if all(v is _NONE for v in mine):
                continue  # the manifest gives none of them: the part's own values
            merged = [v if v is not _NONE else _at(entry, c) for v, c in zip(mine, theirs)]
            limit = [_at(entry, c) for c in theirs]
            mine_v, limit_v = _product(merged), _product(limit)
            if mine_v is None or limit_v is None:
                continue
            checked[0] += 1
            if mine_v > limit_v:
                first = next(f for f, v in zip(fields, mine) if v is not _NONE)
                by, where = "", at + undotted(first)
                if team is not None and all(_at(own, f) is _NONE for f in fields):
                    # the team's value, not the manifest's: at the name that brings it in
                    by, where = f"the team catalog entry at {team['_at']}", at + ("system" if kind == "systems" else "model",)
                exceeded.append({
                    "path": dotted(where), "manifest": mine_v, "catalog": limit_v, "by": by,
                    "manifest_text": _shown(merged, mine_v), "catalog_text": _shown(limit, limit_v),
                    "what": bound.get("what", " x ".join(fields)), "fields": " * ".join(fields),
                    "catalog_fields": " * ".join(theirs), "kind": kind, "entry": entry["name"],
                    "as_of": entry["as_of"], "source": entry.get("source", {}),
                })

    given_pools = doc.data.get("node_pools", []) if isinstance(doc.data, dict) else []
    for i, pool in enumerate(data.get("node_pools", [])):
        own = given_pools[i] if i < len(given_pools) and isinstance(given_pools[i], dict) else {}
        if "system" in pool and (system := lookup("systems", pool["system"], ("node_pools", i, "system"))):
            spec = _spec(system)
            # the system's GPU is counted against its own entry below, all but its count
            took("systems", system, {k: v for k, v in spec.items() if k != "gpu"}, pool, at=("node_pools", i))
            if "gpu" in spec and "gpu" in pool:
                took("systems", system, {k: v for k, v in spec["gpu"].items() if k == "count"}, pool["gpu"], "gpu.",
                     at=("node_pools", i))
            bounded("systems", system, own, ("node_pools", i))
            pool.update(_merge(spec, pool))
            pool["system"] = system["name"]
        gpu = pool.get("gpu")
        if gpu and "model" in gpu and (entry := lookup("gpus", gpu["model"], ("node_pools", i, "gpu", "model"))):
            took("gpus", entry, _spec(entry), own.get("gpu") or {}, at=("node_pools", i, "gpu"))
            bounded("gpus", entry, own.get("gpu") or {}, ("node_pools", i, "gpu"))
            pool["gpu"] = _merge(_spec(entry), gpu)
            pool["gpu"]["model"] = entry["name"]
        for j, nic in enumerate(pool.get("nics", [])):
            if "model" in nic and (entry := lookup("nics", nic["model"], ("node_pools", i, "nics", j, "model"))):
                values = {"gpudirect_rdma": entry.get("gpudirect_rdma"), "rate_gbps": entry.get("max_port_rate_gbps")}
                values = {k: v for k, v in values.items() if v is not None}
                # a NIC the pool lists itself is the manifest's; one from the system's entry is the catalog's
                mine = "nics" in own and isinstance(own["nics"], list) and j < len(own["nics"])
                took("nics", entry, values, nic, at=("node_pools", i, "nics", j) if mine else None)
                if mine:
                    bounded("nics", entry, own["nics"][j], ("node_pools", i, "nics", j))
                pool["nics"][j] = _merge(values, nic)
    for i, fabric in enumerate(data.get("network", {}).get("fabrics", [])):
        for j, switch in enumerate(fabric.get("switches", [])):
            if "model" in switch and (entry := lookup("switches", switch["model"], ("network", "fabrics", i, "switches", j, "model"))):
                values = {k: entry[k] for k in ("ports", "port_rate_gbps", "max_power_w") if k in entry}
                took("switches", entry, values, switch, at=("network", "fabrics", i, "switches", j))
                bounded("switches", entry, switch, ("network", "fabrics", i, "switches", j))
                fabric["switches"][j] = _merge(values, switch)
                fabric.setdefault("kind", entry.get("kind"))
    _fill_model(doc, data, findings)
    out = [CatalogRef(r.kind, r.name, r.as_of, r.source, r.read_on, tuple(sorted(inherited[key])), r.origin, r.undated)
           for key, r in refs.items()]
    return Resolved(data=data, refs=sorted(out, key=lambda r: (r.kind, r.name)), findings=findings,
                    overrides=overrides, exceeded=exceeded, bounds_checked=checked[0], replaced=replaced)


def _replacement(kind: str, entry: dict, path: tuple) -> dict[str, Any]:
    """Where the manifest names (`path`) team entry `entry`, which overrides a built-in part: every
    value that differs from the built-in's (changed, added or dropped), each as the team and the
    built-in part give it, with both documents."""
    builtin = entry["_replaces"]
    mine, theirs = _spec(entry), _spec(builtin)
    values = [(f, t, b) for f, t, b in _leaves_differing(theirs, mine)]
    values += [(f, plain_copy(_at(mine, f)), None) for f in _leaves_not_given(mine, theirs)]
    values += [(f, None, plain_copy(_at(theirs, f))) for f in _leaves_not_given(theirs, mine)]
    return {
        "path": dotted(path), "kind": kind, "entry": entry["name"], "at": entry["_at"], "folder": entry["_origin"],
        "team_source": entry.get("source", {}), "team_as_of": entry["as_of"],
        "builtin_source": builtin.get("source", {}), "builtin_as_of": builtin["as_of"],
        "values": [{"field": f, "team": t, "builtin": b, "team_text": _text(t), "builtin_text": _text(b)}
                   for f, t, b in values],
    }


def _text(value: Any) -> str:
    """A catalog value in a message: numbers as `num` writes them, lists and mappings spelled out."""
    if value is None or value is _NONE:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return num(value)
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _fill_model(doc: Document, data: dict, findings: list[Result]) -> None:
    """plan.model.name (models/) and plan.model.hf_config (a Hugging Face config.json beside
    the manifest) fill the model keys the manifest leaves out; the manifest's own keys win."""
    from linter.manifest import models

    plan = data.get("plan")
    model = plan.get("model") if isinstance(plan, dict) else None
    if not isinstance(model, dict) or not (model.get("name") or model.get("hf_config")):
        return
    filled: dict[str, Any] = {}
    if model.get("name"):
        entry = models.find(str(model["name"]))
        if entry is None:
            line, column = doc.position(("plan", "model", "name"))
            findings.append(file_finding(
                "CATALOG", f'plan.model.name names "{model["name"]}", which is not in models/'
                           f'{suggest(str(model["name"]), models.names(), cutoff=0.4)}',
                doc.path, line, column, "plan.model.name",
                fix="use a name `hwlint models list` shows, or give the shape keys (layers, hidden_size, ...) yourself"))
            return
        filled.update(models.shape_of(entry))
    if model.get("hf_config"):
        where = Path(doc.path).parent / str(model["hf_config"]) if doc.path and not doc.path.startswith("<") \
            else Path(str(model["hf_config"]))
        boundary = None  # a manifest names a config.json inside its own repository (its folder outside one)
        if doc.path and not doc.path.startswith("<"):
            from linter.paths import repository_of

            here = Path(doc.path).resolve().parent
            boundary = str(repository_of(here) or here)
        try:
            shape, _ = models.read_hf_config(str(where), boundary)
        except models.ModelError as exc:
            line, column = doc.position(("plan", "model", "hf_config"))
            findings.append(file_finding("CATALOG", f"plan.model.hf_config: {exc}", doc.path, line, column,
                                         "plan.model.hf_config",
                                         fix="give the path of a Hugging Face config.json relative to this manifest"))
            return
        shape.pop("context_length", None)
        filled.update(shape)
    data["plan"] = {**plan, "model": {**filled, **{k: v for k, v in model.items() if v is not None}}}


_NONE = object()


def _at(node: Any, dotted_key: str) -> Any:
    """The value at a dotted key below `node`, or _NONE."""
    for part in dotted_key.split("."):
        if not isinstance(node, dict) or part not in node or node[part] is None:
            return _NONE
        node = node[part]
    return node


def _shown(values: list[Any], total: float) -> str:
    """`64 x 200 = 12,800` for a product, `400` for one value."""
    return num(total) if len(values) == 1 else " x ".join(num(v) for v in values) + " = " + num(total)


def _product(values: list[Any]) -> float | None:
    """The product of numbers (booleans are not numbers here), or None when one is not a number."""
    out = 1
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        out *= v
    return out


def _bound_pairs(bound: dict, entry: dict) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(manifest keys, catalog keys) a bound compares; a trailing `.*` stands for every key the
    entry gives under that mapping."""
    mine = tuple(k.strip() for k in str(bound.get("manifest", "")).split("*") if k.strip(" ."))
    theirs = tuple(k.strip() for k in str(bound.get("catalog", "")).split("*") if k.strip(" ."))
    raw_m, raw_c = str(bound.get("manifest", "")), str(bound.get("catalog", ""))
    if raw_m.endswith(".*") and raw_c.endswith(".*"):
        m_base, c_base = raw_m[:-2], raw_c[:-2]
        under = _at(entry, c_base)
        return [((f"{m_base}.{k}",), (f"{c_base}.{k}",)) for k in (under if isinstance(under, dict) else {})]
    return [(mine, theirs)] if mine and len(mine) == len(theirs) else []


def _leaves_differing(base: dict, given: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted path, manifest value, catalog value) of each value `given` sets differently from `base`."""
    out: list[tuple[str, Any, Any]] = []
    if not isinstance(given, dict):
        return out
    for key, value in base.items():
        if key.startswith("_") or key not in given or given[key] is None:
            continue
        mine = given[key]
        if isinstance(value, dict) and isinstance(mine, dict):
            out += _leaves_differing(value, mine, f"{prefix}{key}.")
        elif isinstance(value, list) and isinstance(mine, list) and len(value) == len(mine):
            # item by item (a system's NICs): what the manifest adds to an item is not an override
            out += _leaves_differing({f"[{n}]": v for n, v in enumerate(value)},
                                     {f"[{n}]": v for n, v in enumerate(mine)}, f"{prefix}{key}")
        elif mine != value and not (isinstance(mine, (int, float)) and isinstance(value, (int, float))
                                    and not isinstance(mine, bool) and float(mine) == float(value)):
            out.append((prefix + key, plain_copy(mine), plain_copy(value)))
    return out


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
