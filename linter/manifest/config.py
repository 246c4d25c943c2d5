"""Organisation settings that live outside the manifests: `.hwlint.yaml`, or `[tool.hwlint]`
in `pyproject.toml`, found by walking up from the manifest's folder to the repository root
(the nearest folder with a `.git`; the file system's root outside a repository). In each
folder `.hwlint.yaml` comes before `pyproject.toml`, and a `pyproject.toml` without
`[tool.hwlint]` is passed over. Every config found on the way is in effect, as a chain
(ruff's `extend`): the topmost (the root config) first, each nested one below it inheriting
every key above it; a nested config may add and tighten (its own `policy`, `severity`,
`fail_on`, `select` and `signoff` values replace the inherited ones, its `ignore`, `rules`
and `catalog` add to them), and it may relax or drop something inherited (a policy floor,
`allow_relaxing`, `select`, `ignore`, `severity`, `fail_on`, `signoff.roles`,
`signoff.allowed_signers`, `signoff.signers`, `signoff.roles_per_signer`,
`signoff.require_signatures`) only where the root config names it under
`allow_nested_relaxing`; otherwise that is a config error naming the nested file, line and
key, the inherited value and the nested one. `exclude`/`extend_exclude` are the nearest
config's own (paths from its folder). `--config FILE` names one file instead (no chain);
`--isolated` ignores every config. Every folder or file a config names (`rules`, `catalog`,
`signoff.allowed_signers`) must lie inside the repository (the config's folder outside
one), links resolved; one outside is a config error, and it is never read.

```yaml
policy:                      # floors: a manifest's policy may tighten these, never relax them
  power_headroom_pct: 25
allow_relaxing: [compute_efficiency]        # policy names (or signoff_roles) a manifest may relax after all
rules: [team-rules]          # extra rule folders, relative to this file
select: [PWR, STO]           # rule ids or prefixes; the command line's --select replaces it
ignore: [BUY005]             # added to the command line's --ignore
severity: {BUY009: warning}  # raise a rule's severity (never lower it: ignore a rule instead)
fail_on: warning             # the command line's --fail-on wins
catalog: [team-catalog]      # extra catalog folders, relative to this file
docs_url: https://github.com/acme/hwlint/blob/v0.1.0/docs/rules.md   # SARIF links each rule here (--docs-url wins)
exclude: [archive]           # what a folder's search skips, replacing the defaults (venv, build, dist, ...)
extend_exclude: [drafts/*.hw.yaml]   # added to the defaults (ruff's spelling extend-exclude too)
allow_nested_relaxing: [power_headroom_pct, roles]   # root config only: what a nested config may relax
waivers:
  approvers: [cto@example.com]   # who may approve a manifest's waiver (default: anyone); others are WVR009
signoff:
  roles: [technical lead, facilities, finance]   # required; a manifest may add roles, not drop them
  allowed_signers: keys/allowed_signers           # ssh-keygen's allowed-signers file (git's format)
  signers:                                        # who may sign each role (principals in that file)
    technical lead: [alice@example.com]
    finance: [carol@example.com]
  roles_per_signer: 1        # how many roles one principal may sign (default 1)
  require_signatures: true   # default: true when allowed_signers or signers is given
```

Which way is "tighter" is written per policy value in rules/policy.yaml (`stricter: higher`
or `lower`); a value marked `none` (or with no direction) may not be changed by a manifest at
all once the config sets it. Unknown keys are errors with a "did you mean"; so are wrong types. Nothing
here imports the engine: the command line hands the result down.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.digest import sha256
from linter.manifest.validate import suggest
from linter.paths import relative, repository_of
from linter.record import field, record

NAMES = (".hwlint.yaml", "pyproject.toml")
TOP_KEYS = ("policy", "allow_relaxing", "allow_nested_relaxing", "rules", "select", "ignore", "severity", "fail_on", "catalog",
            "docs_url", "signoff", "exclude", "extend_exclude", "extend-exclude", "waivers")
WAIVER_KEYS = ("approvers",)
SIGNOFF_KEYS = ("roles", "allowed_signers", "signers", "roles_per_signer", "require_signatures")
FAIL_ON = ("error", "warning", "info")
ROLES_KEY = "signoff_roles"
DEFAULT_ROLES = ("technical lead", "facilities", "finance")  # who signs when no config says
# what a nested config may relax when the root config names it under allow_nested_relaxing
# (besides every policy name); a settings() key is named by its first part
NESTED_RELAXABLE = ("allow_relaxing", "select", "ignore", "severity", "fail_on", "catalog", "waivers", "roles",
                    "allowed_signers", "signers", "roles_per_signer", "require_signatures")
_FULL_ID = re.compile(r"^[A-Z]{2,5}[0-9]{3}$")  # the manifest's policy key for its sign-off roles


class ConfigError(Exception):
    """The config file cannot be used; the message names the file, line and key."""


@record
class Config:
    path: str | None = None  # None: no config in effect
    policy: dict[str, float] = field(default_factory=dict)
    allow_relaxing: set[str] = field(default_factory=set)
    rules: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)  # rule id -> the severity it is raised to
    fail_on: str | None = None
    catalog: list[str] = field(default_factory=list)
    docs_url: str | None = None  # where docs/rules.md is published (SARIF's helpUri); None: not said
    exclude: list[str] | None = None  # glob patterns a folder's search skips; None: the defaults (linter.manifest.discovery)
    extend_exclude: list[str] = field(default_factory=list)  # patterns skipped besides those
    roles: list[str] = field(default_factory=list)
    allowed_signers: str | None = None
    signers: dict[str, list[str]] = field(default_factory=dict)
    roles_per_signer: int = 1
    require_signatures: bool = False
    # (line, column, file) of each select/ignore pattern, so a pattern naming no rule is reported there
    positions: dict[tuple[str, int], tuple[int, int, str]] = field(default_factory=dict)
    allow_nested_relaxing: set[str] = field(default_factory=set)  # the root config's: what nested ones may relax
    allowed_signers_digest: str | None = None  # sha256 of the allowed-signers file's bytes, when it exists
    chain: list[tuple[str, str]] = field(default_factory=list)  # (file, sha256 of its bytes), the root config first
    origin: dict[str, str] = field(default_factory=dict)  # settings() key -> the file that set it
    given: dict[str, tuple[int, int]] = field(default_factory=dict)  # settings() key -> (line, column) in this file
    waiver_approvers: list[str] = field(default_factory=list)  # waivers.approvers: who may approve a waiver ([]: anyone)

    @property
    def where(self) -> str:
        return f"the config {self.path}" if self.path else "no config"

    def position(self, key: str, i: int) -> tuple[int, int, str]:
        """(line, column, file) of entry `i` of select, ignore or severity: in a chain, the
        file that wrote it; the top of this config's file when it kept no position (TOML)."""
        return self.positions.get((key, i), (1, 1, str(self.path)))


# --- finding it ------------------------------------------------------------------------


_TABLE = re.compile(rb"^[ \t]*\[+[ \t]*([^\]\r\n]*?)[ \t]*\]+", re.M)  # a [table] or [[array]] header


def _may_define_tool_hwlint(raw: bytes) -> bool:
    """False only when no key of this TOML can be tool.hwlint: no line holds "hwlint" both as
    a key (not in a value, as in `name = "hwlint"`) and in or under the `tool` table, and no
    escape or multi-line string could hide one. Most projects' pyproject.toml (hwlint's own
    included) are answered so, without a TOML parser."""
    if b"\\u" in raw or b"\\U" in raw or b'"""' in raw or b"\'\'\'" in raw:
        return True
    table = b""
    for line in raw.splitlines():
        header = _TABLE.match(line)
        if header:
            table = header.group(1).replace(b" ", b"").replace(b'"', b"").replace(b"'", b"")
            if table == b"tool.hwlint" or table.startswith(b"tool.hwlint."):
                return True
            continue
        if b"hwlint" not in line or b"#" in line.split(b"hwlint", 1)[0]:
            continue  # nothing of hwlint, or only in a comment
        if table == b"tool" or b"tool" in line or b"=" not in line:
            return True  # under [tool], a dotted or inline tool key, or a line only the parser can read
    return False


def holds_tool_hwlint(raw: bytes) -> bool:
    """Whether a pyproject.toml's bytes (on disk, or at a git revision) hold [tool.hwlint]."""
    if not _may_define_tool_hwlint(raw):
        return False  # no TOML parser needed
    try:
        import tomllib

        return "hwlint" in (tomllib.loads(raw.decode("utf-8")).get("tool") or {})
    except Exception:  # noqa: BLE001 - a broken pyproject.toml (or no tomllib) that may be hwlint's is reported when read
        return True


def _has_tool_table(path: Path) -> bool:
    try:
        raw = path.read_bytes()
    except OSError:
        return True  # reported when it is read
    return holds_tool_hwlint(raw)


def _in_folder(here: Path) -> Path | None:
    """The config file of one folder, if it holds one."""
    for name in NAMES:
        candidate = here / name
        try:
            found = candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate))
        except OSError:
            found = False
        if found:
            return candidate
    return None


def chain(start: str, seen: dict[Path, Any] | None = None) -> list[Path]:
    """Every config in effect for a manifest at `start`, the root config first: one per
    folder from there up to the repository root (the file system's root outside one).
    `seen`: what each folder was found to hold, kept by the caller for one run."""
    folder = Path(os.path.abspath(start))
    try:
        folder = folder if folder.is_dir() else folder.parent
    except OSError:  # a name the system cannot even look up: the review reports it; search from its folder
        folder = folder.parent
    seen = {} if seen is None else seen
    found = []
    for here in (folder, *folder.parents):
        if here not in seen:
            seen[here] = (_in_folder(here), os.path.lexists(here / ".git"))
        config, top = seen[here]
        if config is not None:
            found.append(config)
        if top:
            break
    return found[::-1]


def find(start: str) -> Path | None:
    """The nearest config for a manifest at `start` (the last of its chain)."""
    found = chain(start)
    return found[-1] if found else None


def for_files(files: list[str] | tuple[str, ...], explicit: str | None, isolated: bool) -> Config:
    """The one config (chain) that governs `files` (all of them must share it)."""
    if isolated:
        return Config()
    if explicit:
        return load(Path(explicit))
    located = {tuple(chain(f)) for f in files} or {()}
    if len(located) > 1:
        named = ", ".join(sorted(str(c[-1]) if c else "(none)" for c in located))
        raise ConfigError(f"these manifests are governed by different configs ({named}); review them in "
                          "separate runs, or name one with --config")
    return load_chain(list(located.pop()))


def load_chain(paths: list[Path]) -> Config:
    """The effective config of a chain of files (the root config first); none: no config."""
    return _folded([load(path, final=False) for path in paths])


def chain_of(files: list[tuple[Path, bytes]]) -> Config:
    """The same for a chain given as (path, bytes), as a git revision held it."""
    return _folded([parse_bytes(raw, path, final=False) for path, raw in files])


def _folded(configs: list[Config]) -> Config:
    if not configs:
        return Config()
    config = configs[0]
    for child in configs[1:]:
        config = nested(config, child)
    _finish(config)
    return config


# --- reading it ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def policy_specs() -> dict[str, dict[str, Any]]:
    from linter.manifest.loader import load_file
    from linter.paths import data_dir

    return load_file(str(data_dir("rules") / "policy.yaml")).data


def load(path: Path, final: bool = True) -> Config:
    """One config file on its own (`final`: checked as the whole config in effect)."""
    from linter.manifest.loader import InputError, read_bytes

    path = Path(relative(path))  # as every message and report names it
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    try:
        raw = path.read_bytes() if path.name.endswith(".toml") else read_bytes(str(path))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except InputError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
    return parse_bytes(raw, path, final)


def parse_bytes(raw: bytes, path: Path, final: bool = True) -> Config:
    """A config from its bytes, named `path` (the file on disk, or a git revision's
    `.hwlint.yaml` or `pyproject.toml`, whose folders are relative to `path`'s folder)."""
    from linter.manifest.loader import InputError, load_bytes

    path = Path(relative(path))
    position: Callable[[tuple], tuple[int, int]]
    if path.name.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise ConfigError(f"{path}: reading pyproject.toml needs Python 3.11 or later; use .hwlint.yaml instead") from None
        try:
            data = (tomllib.loads(raw.decode("utf-8")).get("tool") or {}).get("hwlint")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: cannot read it: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        if data is None:
            raise ConfigError(f"{path}: has no [tool.hwlint] table")
        position = lambda _: (1, 1)  # noqa: E731 - tomllib keeps no positions
    else:
        try:
            doc = load_bytes(raw, str(path))
        except InputError as exc:
            raise ConfigError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
        data, position = (doc.data if doc.data is not None else {}), doc.position
    config = _parse(data, path, position)
    config.chain = [(str(path), sha256(raw))]
    config.origin = {key: str(path) for key in [*settings(config), *config.given]}
    if final:
        _finish(config)
    return config


def _parse(data: Any, path: Path, position: Callable[[tuple], tuple[int, int]]) -> Config:
    def fail(where: tuple, message: str) -> ConfigError:
        line, column = position(where)
        key = ".".join(str(p) for p in where)
        return ConfigError(f"{path}:{line}:{column}: {key + ': ' if key else ''}{message}")

    if not isinstance(data, dict):
        raise fail((), "the config must be a mapping of settings (policy, rules, select, ignore, ...)")
    _known(data, TOP_KEYS, (), fail)
    folder = path.resolve().parent
    config = Config(path=str(path))
    specs = policy_specs()
    inside = _boundary(folder)

    def confined(given: str, where: tuple) -> str:
        """`given` (relative to the config's folder) as a path, if it lies inside the
        repository (links resolved); else a config error that names it and reads nothing."""
        resolved = os.path.realpath(folder / given)
        if os.path.commonpath([inside, resolved]) != inside:
            bound = "the repository" if repository_of(folder) else "the config file's folder"
            raise fail(where, f"{given} resolves to {resolved}, outside {bound} {inside}; a config may name only "
                       "folders and files inside it (copy them in)")
        return relative(folder / given)

    def given(key: str, where: tuple) -> None:
        config.given[key] = position(where)

    policy = data.get("policy") or {}
    if not isinstance(policy, dict):
        raise fail(("policy",), "give a mapping of policy names to values, e.g. power_headroom_pct: 20")
    _known(policy, [k for k in specs], ("policy",), fail, extra=f" ({ROLES_KEY} goes under signoff.roles)")
    for name, value in policy.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(("policy", name), f"must be a number in {specs[name].get('unit') or 'its unit'}")
        config.policy[name] = value
        given(f"policy.{name}", ("policy", name))

    relax = data.get("allow_relaxing") or []
    for i, name in enumerate(_strings(relax, ("allow_relaxing",), fail)):
        if name not in specs and name != ROLES_KEY:
            raise fail(("allow_relaxing", i), f'"{name}" is not a policy name' + suggest(name, [*specs, ROLES_KEY]))
        config.allow_relaxing.add(name)
    if "allow_relaxing" in data:
        given("allow_relaxing", ("allow_relaxing",))
    nested_ok = data.get("allow_nested_relaxing") or []
    for i, name in enumerate(_strings(nested_ok, ("allow_nested_relaxing",), fail)):
        if name not in specs and name not in NESTED_RELAXABLE:
            raise fail(("allow_nested_relaxing", i), f'"{name}" is neither a policy name nor one of '
                       f'{", ".join(NESTED_RELAXABLE)}' + suggest(name, [*specs, *NESTED_RELAXABLE]))
        config.allow_nested_relaxing.add(name)
    if "allow_nested_relaxing" in data:
        given("allow_nested_relaxing", ("allow_nested_relaxing",))

    for key in ("rules", "catalog"):
        entries = data.get(key) or []
        named = _strings(entries, (key,), fail)
        setattr(config, key, [confined(p, (key, i) if isinstance(entries, list) else (key,)) for i, p in enumerate(named)])
        if key in data:
            given(key, (key,))
    for key in ("select", "ignore"):
        listed = data.get(key)
        patterns = [s.strip().upper() for s in _ids(listed, (key,), fail)]
        setattr(config, key, patterns)
        for i in range(len(patterns)):  # "PWR, STO" as one text is one key; a list has one position per item
            config.positions[(key, i)] = (*position((key, i) if isinstance(listed, list) else (key,)), str(path))
        if key in data:
            given(key, (key,))
    severity = data.get("severity") or {}
    if not isinstance(severity, dict):
        raise fail(("severity",), "give a mapping of rule ids to severities, e.g. BUY009: warning")
    for rule_id, level in severity.items():
        if level not in FAIL_ON:
            raise fail(("severity", rule_id), f"must be one of {', '.join(FAIL_ON)}" + suggest(str(level), list(FAIL_ON)))
        config.severity[str(rule_id).strip().upper()] = level
        config.positions[("severity", len(config.severity) - 1)] = (*position(("severity", rule_id)), str(path))
        given(f"severity.{str(rule_id).strip().upper()}", ("severity", rule_id))
    fail_on = data.get("fail_on")
    if fail_on is not None:
        if fail_on not in FAIL_ON:
            raise fail(("fail_on",), f"must be one of {', '.join(FAIL_ON)}" + suggest(str(fail_on), list(FAIL_ON)))
        config.fail_on = fail_on
        given("fail_on", ("fail_on",))
    docs_url = data.get("docs_url")
    if docs_url is not None:
        if not isinstance(docs_url, str) or not re.fullmatch(r"https?://[^\s/#]+[^\s#]*", docs_url.strip()):
            raise fail(("docs_url",), "give the absolute http(s) address of docs/rules.md, without a #fragment, "
                       "e.g. https://github.com/ORG/hwlint/blob/v0.1.0/docs/rules.md")
        config.docs_url = docs_url.strip()
        given("docs_url", ("docs_url",))
    if "extend_exclude" in data and "extend-exclude" in data:
        raise fail(("extend-exclude",), "give extend_exclude or extend-exclude, not both (they are one setting)")
    if data.get("exclude") is not None:
        config.exclude = _strings(data["exclude"], ("exclude",), fail)
    spelt = "extend_exclude" if "extend_exclude" in data else "extend-exclude"
    config.extend_exclude = _strings(data.get(spelt) or [], (spelt,), fail)

    signoff = data.get("signoff") or {}
    if not isinstance(signoff, dict):
        raise fail(("signoff",), "give a mapping (roles, allowed_signers, signers, ...)")
    _known(signoff, SIGNOFF_KEYS, ("signoff",), fail)
    config.roles = _strings(signoff.get("roles") or [], ("signoff", "roles"), fail)
    if len(set(config.roles)) != len(config.roles):
        raise fail(("signoff", "roles"), "names a role twice")
    if "roles" in signoff:
        given("roles", ("signoff", "roles"))
    signers = signoff.get("signers") or {}
    if not isinstance(signers, dict):
        raise fail(("signoff", "signers"), "give a mapping of role to a list of principals")
    for role, principals in signers.items():
        if config.roles and role not in config.roles:
            raise fail(("signoff", "signers", role), "is not one of signoff.roles" + suggest(str(role), config.roles))
        config.signers[str(role)] = _strings(principals, ("signoff", "signers", role), fail)
        given(f"signers.{role}", ("signoff", "signers", role))
    if signoff.get("allowed_signers") is not None:
        named = signoff["allowed_signers"]
        if not isinstance(named, str) or not named.strip():
            raise fail(("signoff", "allowed_signers"), "give the path of an allowed-signers file")
        config.allowed_signers = confined(named.strip(), ("signoff", "allowed_signers"))
        given("allowed_signers", ("signoff", "allowed_signers"))
        try:
            config.allowed_signers_digest = sha256(Path(config.allowed_signers).read_bytes())
        except OSError:
            config.allowed_signers_digest = None  # verify says the file cannot be read
    per = signoff.get("roles_per_signer", 1)
    if isinstance(per, bool) or not isinstance(per, int) or per < 1:
        raise fail(("signoff", "roles_per_signer"), "must be a whole number, 1 or more")
    config.roles_per_signer = per
    if "roles_per_signer" in signoff:
        given("roles_per_signer", ("signoff", "roles_per_signer"))
    required = signoff.get("require_signatures")
    if required is not None and not isinstance(required, bool):
        raise fail(("signoff", "require_signatures"), "must be true or false")
    config.require_signatures = required if required is not None else bool(config.signers or config.allowed_signers)
    if required is not None or config.require_signatures:
        given("require_signatures", ("signoff", "require_signatures") if required is not None else ("signoff",))

    waivers = data.get("waivers") or {}
    if not isinstance(waivers, dict):
        raise fail(("waivers",), "give a mapping, e.g. approvers: [cto@example.com]")
    _known(waivers, WAIVER_KEYS, ("waivers",), fail)
    config.waiver_approvers = _strings(waivers.get("approvers") or [], ("waivers", "approvers"), fail)
    if "approvers" in waivers:
        given("waivers.approvers", ("waivers", "approvers"))
    return config


def _finish(config: Config) -> None:
    """What the whole config in effect (one file, or a chain) must hold together."""
    if config.require_signatures and not config.allowed_signers:
        line, column = config.given.get("require_signatures", (1, 1))
        raise ConfigError(f"{config.origin.get('require_signatures', config.path)}:{line}:{column}: signoff: signatures "
                          "are required, so name the allowed-signers file (allowed_signers: PATH)")


def _boundary(folder: Path) -> str:
    """What a config in `folder` may name: its repository, else its own folder (links resolved)."""
    return os.path.realpath(repository_of(folder) or folder)


def _known(mapping: dict, keys: Any, where: tuple, fail: Callable[..., ConfigError], extra: str = "") -> None:
    for key in mapping:
        if key not in keys:
            hint = suggest(str(key), list(keys))
            raise fail((*where, key), f"unknown setting{hint or '; the settings are: ' + ', '.join(keys)}{extra if not hint else ''}")


def _strings(value: Any, where: tuple, fail: Callable[..., ConfigError]) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(where, "give a list of names")
    return [v.strip() for v in value]


def _ids(value: Any, where: tuple, fail: Callable[..., ConfigError]) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    return [v for v in _strings(value, where, fail) if v]


def check_patterns(config: Config, ids: list[str], layers: list[str]) -> None:
    """ConfigError, naming the file, line and key with the closest name, for a select or
    ignore pattern of the config that names no rule of the pack (`ids`; `layers` are their
    prefixes): a typo there must not check nothing, as on the command line."""
    for key in ("select", "ignore"):
        for i, pattern in enumerate(getattr(config, key)):
            if any(Selection.matches(rule_id, pattern) for rule_id in ids):
                continue
            line, column, where = config.position(key, i)
            hint = suggest(pattern, ids + layers, cutoff=0.5) or f"; rules are named {', '.join(layers)} and three digits"
            raise ConfigError(f'{where}:{line}:{column}: {key}: no rule is named "{pattern}"{hint} '
                              "(`hwlint rules list` shows them all)")


def check_severities(config: Config, severities: dict[str, str]) -> None:
    """ConfigError for a `severity:` entry naming no rule of the pack (`severities`: id -> the
    rule's own), or lowering one: an organisation drops a rule with `ignore`, in the open."""
    for i, (rule_id, level) in enumerate(config.severity.items()):
        line, column, path = config.position("severity", i)
        where = f"{path}:{line}:{column}: severity.{rule_id}"
        if rule_id not in severities:
            raise ConfigError(f'{where}: no rule is named "{rule_id}"' + suggest(rule_id, list(severities), cutoff=0.5)
                              + " (`hwlint rules list` shows them all)")
        if FAIL_ON.index(level) > FAIL_ON.index(severities[rule_id]):
            raise ConfigError(f"{where}: {level} is lower than the rule's own severity ({severities[rule_id]}); a config "
                              f"may only raise a severity (to drop the rule, add it to ignore:)")


# --- the settings in effect, and which way a change moves them --------------------------


def settings(config: Config) -> dict[str, Any]:
    """What the config asks of a review and a sign-off, compact and deterministic (JSON
    types, only what differs from no config): `policy.NAME`, `allow_relaxing`, `select`,
    `ignore`, `severity.ID`, `fail_on`, `rules` and `catalog` (the folders), `waivers.approvers`,
    `roles`, `allowed_signers` (the file's sha256), `signers.ROLE`, `roles_per_signer`,
    `require_signatures`. A sign-off records it, so that a later config can be told to relax or
    tighten it (`compare`); `hwlint check --base` lists the same keys. The exclusions are left
    out: they are each folder's own, and a file they leave out is not reviewed at all."""
    out: dict[str, Any] = {f"policy.{k}": v for k, v in sorted(config.policy.items())}
    if config.allow_relaxing:
        out["allow_relaxing"] = sorted(config.allow_relaxing)
    if config.rules:
        out["rules"] = list(config.rules)
    if config.catalog:
        out["catalog"] = list(config.catalog)
    if config.waiver_approvers:
        out["waivers.approvers"] = sorted(config.waiver_approvers)
    if config.select:
        out["select"] = list(dict.fromkeys(config.select))
    if config.ignore:
        out["ignore"] = sorted(set(config.ignore))
    out.update({f"severity.{k}": v for k, v in sorted(config.severity.items())})
    if config.fail_on:
        out["fail_on"] = config.fail_on
    if config.roles:
        out["roles"] = list(config.roles)
    if config.allowed_signers:
        out["allowed_signers"] = f"sha256:{config.allowed_signers_digest}" if config.allowed_signers_digest else "(unreadable)"
    out.update({f"signers.{k}": sorted(v) for k, v in sorted(config.signers.items())})
    if config.roles_per_signer != 1:
        out["roles_per_signer"] = config.roles_per_signer
    if config.require_signatures:
        out["require_signatures"] = True
    return out


_UNSET = {"fail_on": "error", "roles": list(DEFAULT_ROLES), "roles_per_signer": 1, "require_signatures": False,
          "allow_relaxing": [], "select": [], "ignore": [], "rules": [], "catalog": [], "waivers.approvers": []}  # a settings() key left out means this


def _covers(pattern: str, rule: str) -> bool:
    return pattern == rule or (not _FULL_ID.match(pattern) and rule.startswith(pattern))


def _loosens(key: str, old: Any, new: Any) -> bool:
    """Whether settings key `key` moving from `old` to `new` (None: not set) relaxes the review or the sign-off."""
    kind, _, name = key.partition(".")
    if kind == "policy":
        return old is not None and (new is None or relaxes(name, old, new))
    if kind in ("allow_relaxing", "ignore"):
        return bool(set(new) - set(old))  # more a manifest may relax, more rules left out
    if kind == "rules":  # a team rule folder dropped: its rules no longer run
        return bool(set(old or []) - set(new or []))
    if kind == "catalog":  # any change: a team entry may stand in for a built-in part, or stop being checked
        return True
    if kind == "waivers":  # none listed: anyone may approve a waiver
        return bool(old) and (not new or bool(set(new) - set(old)))
    if kind == "select":  # a narrower selection leaves rules out; none selects every rule
        return bool(new) and (not old or any(not any(_covers(n, o) for n in new) for o in old))
    if kind == "severity":
        return old is not None and (new is None or FAIL_ON.index(new) > FAIL_ON.index(old))
    if kind == "fail_on":
        return FAIL_ON.index(new) < FAIL_ON.index(old)
    if kind == "roles":
        return bool(set(old) - set(new))
    if kind == "allowed_signers":
        return old is not None  # other keys (or none) where a file was named
    if kind == "signers":
        return old is not None and (new is None or bool(set(new) - set(old)))
    if kind == "roles_per_signer":
        return new > old
    if kind == "require_signatures":
        return old and not new
    return True  # a key this build does not know: the safe side


@record
class Change:
    key: str  # a settings() key
    old: Any  # None: not set
    new: Any
    relaxes: bool

    def __str__(self) -> str:
        return f"{self.key}: {shown(self.old)} → {shown(self.new)} ({'relaxes' if self.relaxes else 'tightens'})"


def shown(value: Any) -> str:
    """A settings value in words."""
    if value is None:
        return "(not set)"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Each settings key that differs between two settings(), and whether it relaxes."""
    out = []
    for key in sorted({*old, *new}):
        then, now = old.get(key, _UNSET.get(key)), new.get(key, _UNSET.get(key))
        if then != now:
            out.append(Change(key, then, now, bool(_loosens(key, then, now))))
    return out


def described(files: list[dict[str, str]] | list[tuple[str, str]], short: bool = False) -> str:
    """The configs in effect in words: "no config", or each file (the root first) with the
    sha256 of its bytes (`short`: its first 12 hex digits)."""
    pairs = [(f["path"], f["sha256"]) if isinstance(f, dict) else f for f in files]
    if not pairs:
        return "no config"
    return ("config " if len(pairs) == 1 else "configs ") + ", then ".join(
        f"{p} (sha256:{d[:12] if short else d})" for p, d in pairs)


def settings_digest(values: dict[str, Any]) -> str:
    """sha256 of settings() as canonical JSON (keys sorted, no whitespace)."""
    import json

    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(text.encode("utf-8"))


def config_key(key: str) -> str:
    """The config file's spelling of a settings() key."""
    kind, _, name = key.partition(".")
    if kind in ("roles", "allowed_signers", "roles_per_signer", "require_signatures"):
        return f"signoff.{kind}"
    if kind == "signers":
        return f"signoff.signers.{name}"
    return key


def nested(parent: Config, child: Config) -> Config:
    """`child` (a config in a folder below `parent`'s) on top of the `parent` chain: it
    inherits every key, adds and tightens; a relaxation the root config does not allow by
    name under allow_nested_relaxing is a ConfigError naming the child's file, line and key."""
    root = parent.chain[0][0] if parent.chain else parent.path
    if child.allow_nested_relaxing:
        line, column = child.given["allow_nested_relaxing"]
        raise ConfigError(f"{child.path}:{line}:{column}: allow_nested_relaxing: only the root config ({root}) may say "
                          "what nested configs may relax; remove it here")
    merged = Config(
        path=child.path,
        policy={**parent.policy, **child.policy},
        allow_relaxing=parent.allow_relaxing | child.allow_relaxing,
        rules=[*parent.rules, *(r for r in child.rules if r not in parent.rules)],
        select=child.select if "select" in child.given else list(parent.select),
        ignore=[*parent.ignore, *(p for p in child.ignore if p not in parent.ignore)],
        severity={**parent.severity, **child.severity},
        fail_on=child.fail_on or parent.fail_on,
        catalog=[*parent.catalog, *(c for c in child.catalog if c not in parent.catalog)],
        docs_url=child.docs_url or parent.docs_url,
        exclude=child.exclude, extend_exclude=list(child.extend_exclude),  # the nearest config's own
        waiver_approvers=list(child.waiver_approvers) if "waivers.approvers" in child.given else list(parent.waiver_approvers),
        roles=list(child.roles) if "roles" in child.given else list(parent.roles),
        allowed_signers=child.allowed_signers or parent.allowed_signers,
        allowed_signers_digest=child.allowed_signers_digest if child.allowed_signers else parent.allowed_signers_digest,
        signers={**parent.signers, **child.signers},
        roles_per_signer=child.roles_per_signer if "roles_per_signer" in child.given else parent.roles_per_signer,
        require_signatures=child.require_signatures if "require_signatures" in child.given else parent.require_signatures,
        allow_nested_relaxing=set(parent.allow_nested_relaxing),
        chain=[*parent.chain, *child.chain],
        origin={**parent.origin, **{k: str(child.path) for k in child.given}},
        given={**parent.given, **child.given},
    )
    if "select" in child.given or "ignore" in child.given:  # the patterns, each where it was written
        merged.positions = {k: v for k, v in parent.positions.items() if k[0] == "severity"}
        for key in ("select", "ignore"):
            for i, pattern in enumerate(getattr(merged, key)):
                mine = key in child.given and pattern in getattr(child, key)
                source = child if mine else parent
                at = getattr(source, key).index(pattern)
                merged.positions[(key, i)] = source.position(key, at)
    else:
        merged.positions = {k: v for k, v in parent.positions.items() if k[0] != "severity"}
    for i, rule_id in enumerate(merged.severity):
        source = child if rule_id in child.severity else parent
        at = list(source.severity).index(rule_id)
        merged.positions[("severity", i)] = source.position("severity", at)
    for change in compare(settings(parent), settings(merged)):
        allowance = change.key.split(".", 1)[1] if change.key.startswith("policy.") else change.key.split(".")[0]
        if not change.relaxes or allowance in parent.allow_nested_relaxing:
            continue
        line, column = child.given.get(change.key, (1, 1))
        raise ConfigError(
            f"{child.path}:{line}:{column}: {config_key(change.key)}: {shown(change.new)} relaxes "
            f"{shown(change.old)}" + (f", set in {parent.origin[change.key]}" if change.key in parent.origin else
                                       f", inherited from {root}") + "; a nested config may add and tighten "
            f"only (to let nested configs relax it, the root config {root} lists {allowance} under allow_nested_relaxing)")
    if merged.roles:  # a role dropped (as the root allows) takes its signers with it; a nested binding needs its role
        for role in list(merged.signers):
            if role in merged.roles:
                continue
            if role not in child.signers:
                del merged.signers[role]
                continue
            line, column = child.given.get(f"signers.{role}", (1, 1))
            raise ConfigError(f"{child.path}:{line}:{column}: signoff.signers.{role}: is not one of signoff.roles "
                              f"({', '.join(merged.roles)})" + suggest(role, merged.roles))
    return merged


# --- what it means for one manifest ------------------------------------------------------


def relaxes(name: str, floor: Any, given: Any) -> bool:
    """Does a manifest's `given` value loosen the config's `floor` for policy `name`?"""
    direction = policy_specs().get(name, {}).get("stricter")
    if given == floor:
        return False
    if direction == "higher":
        return given < floor
    if direction == "lower":
        return given > floor
    return True  # no direction: any change moves the organisation's value


def required_roles(config: Config, manifest_roles: list[str] | None, defaults: tuple[str, ...]) -> list[str]:
    """The organisation's roles (or the defaults) plus any the manifest adds; the manifest
    replaces them only when the config allows relaxing signoff_roles."""
    base = list(config.roles or defaults)
    if manifest_roles and ROLES_KEY in config.allow_relaxing:
        return list(manifest_roles)
    return base + [r for r in manifest_roles or [] if r not in base]


@record
class Selection:
    """Which rules run, and for each rule left out, how it was left out (every report says so)."""

    select: list[tuple[str, str]] = field(default_factory=list)  # (pattern, how)
    ignore: list[tuple[str, str]] = field(default_factory=list)

    @staticmethod
    def matches(rule_id: str, pattern: str) -> bool:
        """An exact id, or a prefix (`PWR`, `PWR00`) of one; a full id is never a prefix."""
        return rule_id == pattern or (not _FULL_ID.match(pattern) and rule_id.startswith(pattern))

    def dropped(self, rule_id: str) -> str | None:
        """None when the rule runs, else how it was deselected ("--ignore PWR", ...)."""
        if self.select and not any(self.matches(rule_id, p) for p, _ in self.select):
            hows = sorted({how for _, how in self.select})
            return "not selected by " + " and ".join(
                how.format(p=",".join(p for p, h in self.select if h == how)) for how in hows)
        for pattern, how in self.ignore:
            if self.matches(rule_id, pattern):
                return how.format(p=pattern)
        return None

    def __call__(self, rule_id: str) -> bool:
        return not (self.select or self.ignore) or self.dropped(rule_id) is None  # most runs pick every rule


def selection(config: Config, select: str | None, ignore: str | None) -> Selection:
    """The command line's --select replaces the config's select; --ignore adds to its ignore."""
    def split(value: str | None) -> list[str]:
        return [v.strip().upper() for v in (value or "").split(",") if v.strip()]

    def written(key: str, i: int) -> str:  # the config file that wrote the pattern: in a chain, maybe the root's
        where = config.position(key, i)[2]
        return " in " + where.replace("{", "{{").replace("}", "}}")  # the text is a format string

    chosen = [(p, "--select {p}") for p in split(select)] or [
        (p, "select {p}" + written("select", i)) for i, p in enumerate(config.select)]
    dropped = [(p, "ignore {p}" + written("ignore", i)) for i, p in enumerate(config.ignore)] + [
        (p, "--ignore {p}") for p in split(ignore)]
    return Selection(chosen, dropped)
