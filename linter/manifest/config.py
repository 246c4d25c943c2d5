"""Organisation settings that live outside the manifests: `.hwlint.yaml`, or `[tool.hwlint]`
in `pyproject.toml`, found by walking up from the manifest's folder (as ruff and yamllint
do). The first folder that holds either wins; `.hwlint.yaml` before `pyproject.toml`, and a
`pyproject.toml` without `[tool.hwlint]` is passed over. `--config FILE` names the file
instead; `--isolated` ignores every config.

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

from linter.manifest.validate import suggest
from linter.paths import relative
from linter.record import field, record

NAMES = (".hwlint.yaml", "pyproject.toml")
TOP_KEYS = ("policy", "allow_relaxing", "rules", "select", "ignore", "severity", "fail_on", "catalog", "docs_url",
            "signoff", "exclude", "extend_exclude", "extend-exclude", "waivers")
WAIVER_KEYS = ("approvers",)
SIGNOFF_KEYS = ("roles", "allowed_signers", "signers", "roles_per_signer", "require_signatures")
FAIL_ON = ("error", "warning", "info")
ROLES_KEY = "signoff_roles"
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
    waiver_approvers: list[str] = field(default_factory=list)  # waivers.approvers: who may approve a waiver ([]: anyone)
    # (line, column) of each select/ignore pattern, so a pattern naming no rule is reported there
    positions: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"the config {self.path}" if self.path else "no config"


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


def _has_tool_table(path: Path) -> bool:
    try:
        raw = path.read_bytes()
    except OSError:
        return True  # reported when it is read
    if not _may_define_tool_hwlint(raw):
        return False  # no TOML parser needed
    try:
        return "hwlint" in (_toml(path).get("tool") or {})
    except ConfigError:
        return True  # a broken pyproject.toml that may be hwlint's is reported when it is read


def find(start: str) -> Path | None:
    """The config for a manifest at `start`: the nearest folder up that holds one."""
    folder = Path(os.path.abspath(start))
    try:
        folder = folder if folder.is_dir() else folder.parent
    except OSError:  # a name the system cannot even look up: the review reports it; search from its folder
        folder = folder.parent
    for here in (folder, *folder.parents):
        for name in NAMES:
            candidate = here / name
            try:
                found = candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate))
            except OSError:
                found = False
            if found:
                return candidate
    return None


def for_files(files: list[str] | tuple[str, ...], explicit: str | None, isolated: bool) -> Config:
    """The one config that governs `files` (all of them must share it)."""
    if isolated:
        return Config()
    if explicit:
        return load(Path(explicit))
    located = [find(f) for f in files]
    found = {str(p) if p else None for p in located} or {None}
    if len(found) > 1:
        named = ", ".join(sorted(p or "(none)" for p in found))
        raise ConfigError(f"these manifests are governed by different configs ({named}); review them in "
                          "separate runs, or name one with --config")
    only = found.pop()
    return load(Path(only)) if only else Config()


# --- reading it ------------------------------------------------------------------------


def _toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise ConfigError(f"{path}: reading pyproject.toml needs Python 3.11 or later; use .hwlint.yaml instead") from None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


@lru_cache(maxsize=1)
def policy_specs() -> dict[str, dict[str, Any]]:
    from linter.manifest.loader import load_file
    from linter.paths import data_dir

    return load_file(str(data_dir("rules") / "policy.yaml")).data


def load(path: Path) -> Config:
    from linter.manifest.loader import InputError, load_file

    path = Path(relative(path))  # as every message and report names it
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    position: Callable[[tuple], tuple[int, int]]
    if path.name.endswith(".toml"):
        data = (_toml(path).get("tool") or {}).get("hwlint")
        if data is None:
            raise ConfigError(f"{path}: has no [tool.hwlint] table")
        position = lambda _: (1, 1)  # noqa: E731 - tomllib keeps no positions
    else:
        try:
            doc = load_file(str(path))
        except InputError as exc:
            raise ConfigError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
        data = doc.data if doc.data is not None else {}
        position = doc.position
    return _parse(data, path, position)


def parse_bytes(raw: bytes, path: Path) -> Config:
    """A config from its bytes as they were elsewhere (a git revision's `.hwlint.yaml` or
    `pyproject.toml`), read as `load` reads the file at `path`; its folders are relative to
    `path`'s folder. ConfigError as `load`'s."""
    from linter.manifest.loader import InputError, load_bytes

    path = Path(relative(path))
    position: Callable[[tuple], tuple[int, int]]
    if path.name.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise ConfigError(f"{path}: reading pyproject.toml needs Python 3.11 or later") from None
        try:
            data = (tomllib.loads(raw.decode("utf-8")).get("tool") or {}).get("hwlint")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
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
    return _parse(data, path, position)


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

    policy = data.get("policy") or {}
    if not isinstance(policy, dict):
        raise fail(("policy",), "give a mapping of policy names to values, e.g. power_headroom_pct: 20")
    _known(policy, [k for k in specs], ("policy",), fail, extra=f" ({ROLES_KEY} goes under signoff.roles)")
    for name, value in policy.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(("policy", name), f"must be a number in {specs[name].get('unit') or 'its unit'}")
        config.policy[name] = value

    relax = data.get("allow_relaxing") or []
    for i, name in enumerate(_strings(relax, ("allow_relaxing",), fail)):
        if name not in specs and name != ROLES_KEY:
            raise fail(("allow_relaxing", i), f'"{name}" is not a policy name' + suggest(name, [*specs, ROLES_KEY]))
        config.allow_relaxing.add(name)

    config.rules = [relative(folder / p) for p in _strings(data.get("rules") or [], ("rules",), fail)]
    config.catalog = [relative(folder / p) for p in _strings(data.get("catalog") or [], ("catalog",), fail)]
    for key in ("select", "ignore"):
        given = data.get(key)
        patterns = [s.strip().upper() for s in _ids(given, (key,), fail)]
        setattr(config, key, patterns)
        for i in range(len(patterns)):  # "PWR, STO" as one text is one key; a list has one position per item
            config.positions[(key, i)] = position((key, i) if isinstance(given, list) else (key,))
    severity = data.get("severity") or {}
    if not isinstance(severity, dict):
        raise fail(("severity",), "give a mapping of rule ids to severities, e.g. BUY009: warning")
    for rule_id, level in severity.items():
        if level not in FAIL_ON:
            raise fail(("severity", rule_id), f"must be one of {', '.join(FAIL_ON)}" + suggest(str(level), list(FAIL_ON)))
        config.severity[str(rule_id).strip().upper()] = level
        config.positions[("severity", len(config.severity) - 1)] = position(("severity", rule_id))
    fail_on = data.get("fail_on")
    if fail_on is not None:
        if fail_on not in FAIL_ON:
            raise fail(("fail_on",), f"must be one of {', '.join(FAIL_ON)}" + suggest(str(fail_on), list(FAIL_ON)))
        config.fail_on = fail_on
    docs_url = data.get("docs_url")
    if docs_url is not None:
        if not isinstance(docs_url, str) or not re.fullmatch(r"https?://[^\s/#]+[^\s#]*", docs_url.strip()):
            raise fail(("docs_url",), "give the absolute http(s) address of docs/rules.md, without a #fragment, "
                       "e.g. https://github.com/ORG/hwlint/blob/v0.1.0/docs/rules.md")
        config.docs_url = docs_url.strip()
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
    signers = signoff.get("signers") or {}
    if not isinstance(signers, dict):
        raise fail(("signoff", "signers"), "give a mapping of role to a list of principals")
    for role, principals in signers.items():
        if config.roles and role not in config.roles:
            raise fail(("signoff", "signers", role), "is not one of signoff.roles" + suggest(str(role), config.roles))
        config.signers[str(role)] = _strings(principals, ("signoff", "signers", role), fail)
    if signoff.get("allowed_signers") is not None:
        given = signoff["allowed_signers"]
        if not isinstance(given, str) or not given.strip():
            raise fail(("signoff", "allowed_signers"), "give the path of an allowed-signers file")
        config.allowed_signers = relative(folder / given)
    per = signoff.get("roles_per_signer", 1)
    if isinstance(per, bool) or not isinstance(per, int) or per < 1:
        raise fail(("signoff", "roles_per_signer"), "must be a whole number, 1 or more")
    config.roles_per_signer = per
    required = signoff.get("require_signatures")
    if required is not None and not isinstance(required, bool):
        raise fail(("signoff", "require_signatures"), "must be true or false")
    config.require_signatures = required if required is not None else bool(config.signers or config.allowed_signers)
    if config.require_signatures and not config.allowed_signers:
        raise fail(("signoff",), "signatures are required, so name the allowed-signers file (allowed_signers: PATH)")

    waivers = data.get("waivers") or {}
    if not isinstance(waivers, dict):
        raise fail(("waivers",), "give a mapping, e.g. approvers: [cto@example.com]")
    _known(waivers, WAIVER_KEYS, ("waivers",), fail)
    config.waiver_approvers = _strings(waivers.get("approvers") or [], ("waivers", "approvers"), fail)
    return config


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
            line, column = config.positions.get((key, i), (1, 1))
            hint = suggest(pattern, ids + layers, cutoff=0.5) or f"; rules are named {', '.join(layers)} and three digits"
            raise ConfigError(f'{config.path}:{line}:{column}: {key}: no rule is named "{pattern}"{hint} '
                              "(`hwlint rules list` shows them all)")


def check_severities(config: Config, severities: dict[str, str]) -> None:
    """ConfigError for a `severity:` entry naming no rule of the pack (`severities`: id -> the
    rule's own), or lowering one: an organisation drops a rule with `ignore`, in the open."""
    for i, (rule_id, level) in enumerate(config.severity.items()):
        line, column = config.positions.get(("severity", i), (1, 1))
        where = f"{config.path}:{line}:{column}: severity.{rule_id}"
        if rule_id not in severities:
            raise ConfigError(f'{where}: no rule is named "{rule_id}"' + suggest(rule_id, list(severities), cutoff=0.5)
                              + " (`hwlint rules list` shows them all)")
        if FAIL_ON.index(level) > FAIL_ON.index(severities[rule_id]):
            raise ConfigError(f"{where}: {level} is lower than the rule's own severity ({severities[rule_id]}); a config "
                              f"may only raise a severity (to drop the rule, add it to ignore:)")


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
        return self.dropped(rule_id) is None


def selection(config: Config, select: str | None, ignore: str | None) -> Selection:
    """The command line's --select replaces the config's select; --ignore adds to its ignore."""
    def split(value: str | None) -> list[str]:
        return [v.strip().upper() for v in (value or "").split(",") if v.strip()]

    in_config = f" in {config.path}"
    chosen = [(p, "--select {p}") for p in split(select)] or [(p, "select {p}" + in_config) for p in config.select]
    dropped = [(p, "ignore {p}" + in_config) for p in config.ignore] + [(p, "--ignore {p}") for p in split(ignore)]
    return Selection(chosen, dropped)
