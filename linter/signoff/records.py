"""Sign-offs bound to the manifest, the rule pack and the hwlint build they approved.

`hwlint signoff` appends a record to the manifest's `signoffs:` section:

    signoffs:
      - role: facilities
        name: Grace Hopper
        date: 2026-11-30
        manifest_digest: sha256:...   # content_digest(): the manifest without `signoffs`
        rule_pack_digest: sha256:...  # rules.pack_digest(): the rules that reviewed it
        tool: hwlint 0.1.0            # the build that judged it ...
        tool_digest: sha256:...       # ... and the digest of its code (tool_digest())
        sections: {...}               # 12-hex digest per top-level section, to say what changed
        snapshot: |                   # the signed content (zlib, base64), to list changed fields
          eJy...
        config_digest: sha256:...     # config.settings(): the effective config's settings ...
        config: |                     # ... themselves (zlib, base64), to tell a relaxation from a tightening
          eJy...
        signature: |                  # optional: ssh-keygen -Y sign -n hwlint of statement()
          -----BEGIN SSH SIGNATURE-----

**What the digest covers.** The manifest digest is the sha256 of the manifest's *content*,
not its bytes: the loaded data without `signoffs`, as canonical JSON (keys sorted, no
whitespace, UTF-8). Comments, blank lines, key order, quoting and flow/block style do not
change it, so adding a sign-off (or reformatting) does not invalidate the others, while any
changed value, added key or removed key does. A key given with no value counts as absent,
and 8 and 8.0 are different content. `policy.signoff_roles` is content, so changing who
must sign invalidates every sign-off. A different hwlint build (another version, or the
same version with changed code) makes a sign-off stale too, and says so. So does a config
change that relaxes anything the sign-off was made under (`config_state`: a policy floor
moved the loose way, a role, signer or required signature dropped, a rule ignored or
deselected, fail_on loosened, a raised severity removed), naming each key with its old and
new value; a change that only tightens keeps it valid and is named. A record from before
configs were bound (no `config_digest`) is stale: the safe side. The snapshot is
only trusted when it hashes to the signed manifest digest; then a stale sign-off lists
every field that changed since (`path: old → new`).

**How the file is edited.** Only the lines of the `signoffs:` section are written, so every
other byte of the file stays as it was: comments, key order, indentation, tabs, line
endings. Lines are counted by the file's own line breaks (CR, LF, CRLF), never by Unicode
line separators inside values: the section is found from the parser's character offsets.
A block-style file gets the section as block lines (at the indentation of its top-level
keys; a new section goes at the end); a flow-style file (`{...}`) gets it as one JSON flow
entry. The result is parsed again and must hold exactly the same content plus the new
record before it replaces the original, through a temporary file in the same folder and an
atomic rename. The whole read-modify-write holds an exclusive lock for the manifest
(`filelock`: on Linux, macOS and Windows), so concurrent sign-offs queue instead of losing
records. A sign-off that would make the file one hwlint then refuses to read (over the
5,000,000-byte limit) is refused, the file unchanged. Any failure, and any
signal the process can catch (SIGINT, SIGTERM, SIGHUP), leaves the original untouched and
removes the temporary file; temporary files a killed run left behind are removed by the
next sign-off, under the lock.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unicodedata
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from linter import __version__
from linter.digest import sha256
from linter.manifest.config import DEFAULT_ROLES, Config, described, settings
from linter.manifest.loader import MAX_BYTES, Document, InputError, decode, load_bytes, load_text, read_bytes
from linter.report.escape import path as escaped
from linter.results import Result, one_line

NAMESPACE = "hwlint"
SECTION = "signoffs"
LOCK_WAIT_SECONDS = 60
MAX_CHANGES_LISTED = 12


class SignoffError(Exception):
    """The sign-off could not be recorded or checked; the message is for the user."""


# --- what a sign-off is bound to --------------------------------------------------------


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def content(data: dict[str, Any]) -> dict[str, Any]:
    """The part of a manifest a sign-off approves: everything but the sign-offs."""
    return {k: v for k, v in data.items() if k != SECTION}


def content_digest(data: dict[str, Any]) -> str:
    return "sha256:" + sha256(_canonical(content(data)))


def section_digests(data: dict[str, Any]) -> dict[str, str]:
    return {k: sha256(_canonical(v))[:12] for k, v in content(data).items()}


def snapshot(data: dict[str, Any]) -> str:
    """The content a sign-off approved, compressed, as base64 lines of 76 characters."""
    packed = base64.b64encode(zlib.compress(_canonical(content(data)), 9)).decode("ascii")
    return "\n".join(packed[i:i + 76] for i in range(0, len(packed), 76)) + "\n"


def unpack_snapshot(text: str, digest: str) -> dict[str, Any] | None:
    """The signed content back, or None when it is unreadable or does not match `digest`."""
    try:
        raw = zlib.decompress(base64.b64decode("".join(str(text).split()), validate=True), bufsize=1 << 16)
        if len(raw) > 50_000_000 or "sha256:" + sha256(raw) != digest:
            return None
        value = json.loads(raw)
    except (ValueError, zlib.error, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@lru_cache(maxsize=1)
def tool_digest() -> str:
    """sha256 of hwlint's own code (every .py file and template), so a patched build differs."""
    from linter.paths import data_dir

    package = Path(__file__).resolve().parents[1]
    parts = []
    files = sorted(p for p in package.rglob("*.py") if "_data" not in p.relative_to(package).parts)
    files += sorted(data_dir("templates").glob("*"))
    for path in files:
        data = path.read_bytes()
        name = path.relative_to(package).as_posix() if path.is_relative_to(package) else "templates/" + path.name
        parts += [f"{name}\0{len(data)}\0".encode(), data]
    return "sha256:" + sha256(b"".join(parts))


def tool_name() -> str:
    return f"hwlint {__version__}"


def required_roles(data: dict[str, Any], config: Any = None) -> list[str]:
    """Who must sign: the config's roles (or the defaults) plus any the manifest adds."""
    from linter.manifest.config import Config
    from linter.manifest.config import required_roles as combine

    return combine(config or Config(), (data.get("policy") or {}).get("signoff_roles"), DEFAULT_ROLES)


def statement(record: dict[str, Any]) -> bytes:
    """The text an SSH signature covers: who approved what, under which rules and build."""
    tool = f"tool: {record['tool']} {record['tool_digest']}\n" if record.get("tool_digest") else ""
    config = f"config: {record['config_digest']}\n" if record.get("config_digest") else ""
    return (
        "hwlint sign-off\n"
        f"role: {record['role']}\nname: {record['name']}\ndate: {record['date']}\n"
        f"manifest: {record['manifest_digest']}\nrule pack: {record['rule_pack_digest']}\n{tool}{config}"
    ).encode("utf-8")


# --- checking recorded sign-offs --------------------------------------------------------


@dataclass
class Check:
    role: str
    name: str
    date: str
    state: str  # valid | stale | unsigned | bad signature | refused
    why: list[str] = field(default_factory=list)
    line: int = 1
    required: bool = True
    principal: str = ""
    changes: list[str] = field(default_factory=list)  # "path: old → new", for a changed manifest

    @property
    def valid(self) -> bool:
        return self.state == "valid"


@dataclass
class Verdict:
    checks: list[Check]
    roles: list[str]
    missing: list[str]  # required roles with no valid sign-off
    blocking: list[Result]  # failing results that are not waived
    pending: list[Result] = field(default_factory=list)  # pending results verify refuses on
    allowed_pending: list[Result] = field(default_factory=list)  # pending, let through by --allow-pending
    deselected: list[dict[str, Any]] = field(default_factory=list)  # deselected rules verify refuses on
    stale_since: list[str] = field(default_factory=list)  # with --as-of: what changed between then and today
    as_of: str = ""
    allow_pending: bool = False  # --allow-pending was given (the output says so)
    config: str = ""  # the configs in effect, in words (linter.manifest.config.described)
    rule_errors: list[str] = field(default_factory=list)  # rules that failed to run: nothing is vouched for
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (role, how) required when signed, not now

    @property
    def ok(self) -> bool:
        return not (self.missing or self.blocking or self.pending or self.deselected or self.rule_errors or self.dropped)


def blocking(results: list[Result]) -> list[Result]:
    """Failing results that stop a sign-off from holding. Waiver warnings (expiring soon,
    expired, unused) are housekeeping: an expired waiver's rule counts as failing anyway."""
    return [r for r in results if r.status == "fail" and not (r.layer == "WVR" and r.severity != "error")]


@dataclass
class Rules:
    """What verify asks of the rules: which may never be skipped, and whether --allow-pending."""

    never_skip: set[str] = field(default_factory=set)
    deselected: list[dict[str, Any]] = field(default_factory=list)
    allow_pending: bool = False


def check(doc: Document, rule_pack: str, results: list[Result], allowed_signers: str | None = None,
          config: Any = None, rules: Rules | None = None, as_of: dt.date | None = None) -> Verdict:
    """The verdict on `doc`'s sign-offs. `as_of` (verify --as-of): a sign-off dated after it is
    refused, since the review it vouches for is judged as of that earlier day."""
    from linter.manifest.config import Config

    config = config or Config()
    rules = rules or Rules()
    data = doc.data
    roles = required_roles(data, config)
    now_digest, now_sections = content_digest(data), section_digests(data)
    signers = allowed_signers or config.allowed_signers
    checks = []
    for index, record in enumerate(data.get(SECTION) or []):
        item = Check(role=record["role"], name=record["name"], date=str(record["date"]), state="valid",
                     line=doc.position((SECTION, index))[0], required=record["role"] in roles)
        if record["manifest_digest"] != now_digest:
            then = unpack_snapshot(record["snapshot"], record["manifest_digest"]) if record.get("snapshot") else None
            item.why.append("the manifest changed since" + _changed(record.get("sections") or {}, now_sections))
            if then is not None:
                item.changes = changed_fields(then, content(data))
        if record["rule_pack_digest"] != rule_pack:
            item.why.append(f"the rule pack changed since (signed under {record['rule_pack_digest'][:19]}…, "
                            f"now {rule_pack[:19]}…)")
        if not record.get("tool_digest"):
            item.why.append(f"signed by a hwlint build that did not record itself; {tool_name()} must judge it again")
        elif record["tool_digest"] != tool_digest():
            item.why.append(f"hwlint changed since (signed with {record.get('tool') or 'hwlint'} {record['tool_digest'][:19]}…, "
                            f"now {tool_name()} {tool_digest()[:19]}…)")
        relaxed, tightened = config_state(record, config)
        item.why += relaxed
        if item.why:
            item.state = "stale"
        elif signers and (config.require_signatures or allowed_signers):
            item.state, note, item.principal = _verify_signature(
                record, signers, config.signers, "--allowed-signers" if allowed_signers else config.path)
            item.why.append(note)
        elif config.signers and item.name not in config.signers.get(item.role, []):
            listed = config.signers.get(item.role)
            item.state = "refused"
            item.why.append(f"{item.name} may not sign as {item.role} (signoff.signers in {config.path} allows: "
                            f"{', '.join(listed) if listed else 'nobody'})")
        elif record.get("signature"):
            item.why.append("signed; give --allowed-signers to check the signature")
        item.why += tightened
        if as_of is not None and item.date > as_of.isoformat():
            item.state = "refused"
            item.why = [f"dated {item.date}, after --as-of {as_of.isoformat()}: a sign-off cannot vouch for a review "
                        "judged as of a day before it was given"]
        checks.append(item)
    _one_role_each(checks, config.roles_per_signer)
    valid_roles = {c.role for c in checks if c.valid}
    pending = [r for r in results if r.status == "pending" and (r.rule_id in rules.never_skip or r.severity == "error")]
    allowed = [r for r in pending if rules.allow_pending and r.rule_id not in rules.never_skip]
    refused = [d for d in rules.deselected if d.get("never_skip") or d.get("severity") == "error"]
    return Verdict(checks, roles, [r for r in roles if r not in valid_roles], blocking(results),
                   [r for r in pending if r not in allowed], allowed, refused,
                   config=described(config.chain), dropped=dropped_roles(data, roles, config))


def config_state(record: dict[str, Any], config: Any) -> tuple[list[str], list[str]]:
    """What the config in effect now does to a sign-off made under the settings it recorded:
    (reasons it is stale: a relaxation, or no settings recorded; notes that keep it valid:
    tightenings), each naming the key, the old and the new value."""
    from linter.manifest.config import compare, settings

    now = settings(config)
    if not record.get("config_digest"):
        return ["signed before configs were bound to sign-offs, so no one can say what the config was then; "
                "sign again under the config in effect"], []
    if record["config_digest"] == content_digest(now):
        return [], []
    then = unpack_snapshot(record["config"], record["config_digest"]) if record.get("config") else None
    if then is None:
        return [f"the config changed since (signed under settings {record['config_digest'][:19]}…, now "
                f"{content_digest(now)[:19]}…) and the record does not hold the settings it was signed under"], []
    changes = compare(then, now)
    relaxed = [str(c) for c in changes if c.relaxes]
    tightened = [str(c) for c in changes if not c.relaxes]
    return ([f"the config relaxed since: {'; '.join(relaxed)}"] if relaxed else [],
            [f"the config tightened since (still valid): {'; '.join(tightened)}"] if tightened else [])


def dropped_roles(data: dict[str, Any], roles: list[str], config: Any) -> list[tuple[str, str]]:
    """(role, how) for each role that was required when a sign-off was recorded and is not
    now: a recorded role (`hwlint signoff` records only required ones), or one the manifest's
    own policy.signoff_roles required in a signed snapshot."""
    out: dict[str, str] = {}
    for record in data.get(SECTION) or []:
        if record["role"] not in roles:
            out.setdefault(record["role"], f"signed by {record['name']} on {record['date']}, no longer a required role")
        then = unpack_snapshot(record["snapshot"], record["manifest_digest"]) if record.get("snapshot") else None
        if isinstance(then, dict):
            for role in required_roles(then, config):
                if role not in roles:
                    out.setdefault(role, f"required when {record['role']} signed on {record['date']}, no longer required")
    return list(out.items())


def _one_role_each(checks: list[Check], per_signer: int) -> None:
    """One principal signs at most `per_signer` roles; later records beyond that are refused."""
    signed: dict[str, list[str]] = {}
    for c in checks:
        if not (c.valid and c.principal):
            continue
        roles = signed.setdefault(c.principal, [])
        if len(roles) >= per_signer:
            c.state = "refused"
            c.why = [f"{c.principal} already signs {', '.join(roles)}; the config lets one principal sign "
                     f"{per_signer} role{'s' if per_signer != 1 else ''} (signoff.roles_per_signer)"]
            continue
        roles.append(c.role)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=True, sort_keys=True) if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 80 else text[:77] + "…"


_ABSENT = object()


def changed_fields(then: Any, now: Any, path: str = "") -> list[str]:
    """Every leaf that differs between two contents, as `path: old → new`."""
    if isinstance(then, dict) and isinstance(now, dict):
        out = []
        for key in [*then, *(k for k in now if k not in then)]:
            sub = f"{path}.{key}" if path else str(key)
            out += changed_fields(then.get(key, _ABSENT), now.get(key, _ABSENT), sub)
        return out
    if isinstance(then, list) and isinstance(now, list) and len(then) == len(now):
        return [line for i, (a, b) in enumerate(zip(then, now)) for line in changed_fields(a, b, f"{path}[{i}]")]
    if then == now and type(then) is type(now):
        return []
    return [f"{path}: {_shown(then)} → {_shown(now)}"]


def report(path: str, verdict: Verdict) -> str:
    """Plain text, one line per sign-off, missing role and blocking result, then the verdict.
    `path` comes escaped for one line (linter.report.escape.path); the results' file names
    are escaped here, and manifest text is kept to one line, so no line is forged."""
    lines = []
    if verdict.allow_pending:
        lines.append(f"{path}: --allow-pending: error-severity rules still to confirm do not stop verification")
    if verdict.as_of:
        lines.append(f"{path}: judged as of {verdict.as_of} (--as-of); date-dependent rules use that date")
    for c in verdict.checks:
        note = "" if c.required else " (not a required role)"
        why = f": {'; '.join(c.why)}" if c.why else ""
        lines.append(f"{path}:{c.line}: sign-off by {one_line(c.role)} ({one_line(c.name)}, {one_line(c.date)}){note}: "
                     f"{c.state}{one_line(why)}")
        shown = c.changes[:MAX_CHANGES_LISTED]
        lines += [f"  changed: {one_line(change)}" for change in shown]
        if len(c.changes) > len(shown):
            lines.append(f"  and {len(c.changes) - len(shown)} more changed fields")
    lines += [f"{path}: sign-off by {one_line(role)}: missing" for role in verdict.missing if role not in {c.role for c in verdict.checks}]
    lines += [f"{escaped(r.file)}:{r.line}:{r.column}: {r.rule_id} {r.severity} {one_line(r.message)} (not waived)" for r in verdict.blocking]
    for r in verdict.pending:
        kind = "may never be skipped" if r.severity != "error" else "is an error-severity rule"
        lines.append(f"{escaped(r.file)}:{r.line}:{r.column}: {r.rule_id} to confirm: {r.title}; needs "
                     f"{', '.join(r.missing) or r.reason}; {r.rule_id} {kind}, so verify waits for it")
    for r in verdict.allowed_pending:
        lines.append(f"{escaped(r.file)}:{r.line}:{r.column}: {r.rule_id} to confirm: {r.title}; let through by --allow-pending")
    for d in verdict.deselected:
        lines.append(f"{path}: {d['rule_id']} deselected ({d['how']}): {d['title']}; verify needs every "
                     "error-severity and never-skip rule to run")
    lines += [f"{path}: gone stale since {verdict.as_of}: {line}" for line in verdict.stale_since]
    lines += [f"{path}: rule error: {one_line(e)}; verify vouches only for a review whose rules all ran"
              for e in verdict.rule_errors]
    lines += [f"{path}: role {one_line(role)} dropped: {one_line(how)} (the sign-off roles are now "
              f"{', '.join(verdict.roles)}); put it back in signoff.roles or policy.signoff_roles, or sign again"
              for role, how in verdict.dropped]
    if verdict.config:
        lines.append(f"{path}: judged under {verdict.config}")
    signed = len(verdict.roles) - len(verdict.missing)
    allowed = (f"; {len(verdict.allowed_pending)} pending result{'s' if len(verdict.allowed_pending) != 1 else ''} "
               "let through by --allow-pending") if verdict.allowed_pending else ""
    if verdict.ok:
        lines.append(f"{path}: verified: all {len(verdict.roles)} required roles hold a valid sign-off "
                     f"and no failing result remains unwaived{allowed}")
    else:
        problems = [f"{signed} of {len(verdict.roles)} required roles hold a valid sign-off"
                    + (f" (missing: {', '.join(verdict.missing)})" if verdict.missing else "")]
        for items, words in ((verdict.blocking, "failing result{s} {are} not waived"),
                             (verdict.pending, "rule{s} that must be confirmed {are} still to confirm"),
                             (verdict.deselected, "rule{s} that must run {are} deselected"),
                             (verdict.rule_errors, "rule{s} failed to run"),
                             (verdict.dropped, "role{s} required when signed {are} no longer required")):
            if items:
                n = len(items)
                problems.append(f"{n} " + words.format(s="s" if n != 1 else "", are="are" if n != 1 else "is"))
        lines.append(f"{path}: not verified: " + "; ".join(problems) + allowed)
    return "\n".join(lines) + "\n"


def _changed(then: dict[str, str], now: dict[str, str]) -> str:
    if not then:
        return ""
    parts = []
    for words, names in (
        ("changed", [k for k in now if k in then and then[k] != now[k]]),
        ("added", [k for k in now if k not in then]),
        ("removed", [k for k in then if k not in now]),
    ):
        if names:
            parts.append(f"{words}: {', '.join(names)}")
    return f" ({'; '.join(parts)})" if parts else ""


# --- SSH signatures ---------------------------------------------------------------------


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SignoffError("SSH signatures need OpenSSH's ssh-keygen (8.2 or later) on PATH, and it was not found; "
                           "install OpenSSH, or sign off without --sign-key")
    return found


def _run(args: list[str], data: bytes) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([_ssh_keygen(), *args], input=data, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SignoffError(f"ssh-keygen could not run: {exc}") from None


def _first_line(raw: bytes) -> str:
    lines = [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no message"


def sign(record: dict[str, Any], key: str) -> str:
    if not Path(key).is_file():
        raise SignoffError(f"no such key file: {key}")
    done = _run(["-Y", "sign", "-f", key, "-n", NAMESPACE], statement(record))
    if done.returncode != 0 or b"BEGIN SSH SIGNATURE" not in done.stdout:
        raise SignoffError(f"ssh-keygen could not sign with {key}: {_first_line(done.stderr)}")
    return done.stdout.decode("ascii")


def _verify_signature(record: dict[str, Any], allowed_signers: str, signers: dict[str, list[str]] | None = None,
                      asker: str | None = "--allowed-signers") -> tuple[str, str, str]:
    """(state, note, principal): the signature must verify for a principal allowed to sign
    this role (the config's signoff.signers; anyone in the allowed-signers file when the
    config lists no signers)."""
    if not record.get("signature"):
        return "unsigned", f"no signature, and {asker} asks for one", ""
    if not Path(allowed_signers).is_file():
        raise SignoffError(f"no such allowed-signers file: {allowed_signers}")
    listed = (signers or {}).get(record["role"])
    if signers and listed is None:
        return "refused", f"the config lists no principal who may sign as {record['role']} (signoff.signers)", ""
    with tempfile.TemporaryDirectory(prefix="hwlint-") as folder:
        signature = Path(folder) / "signoff.sig"
        signature.write_text(record["signature"], encoding="ascii", errors="replace")
        found = _run(["-Y", "find-principals", "-s", str(signature), "-f", allowed_signers], b"")
        principals = found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
        if not principals:
            return "bad signature", f"the signing key is not in {allowed_signers}", ""
        done = None
        for principal in principals:
            done = _run(["-Y", "verify", "-f", allowed_signers, "-I", principal, "-n", NAMESPACE, "-s", str(signature)],
                        statement(record))
            if done.returncode != 0:
                continue
            if listed is not None and principal not in listed:
                return ("refused", f"signed by {principal}, who may not sign as {record['role']} "
                        f"(the config allows: {', '.join(listed) or 'nobody'})", "")
            return "valid", f"signature good, by {principal}", principal
        return "bad signature", f"the signature does not match this sign-off ({_first_line(done.stderr if done else b'')})", ""


# --- recording a sign-off ---------------------------------------------------------------


def _one_line_text(label: str, value: str) -> None:
    bad = any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value)
    if not value.strip() or len(value) > 500 or bad:
        raise SignoffError(f"the {label} must be one line of 1 to 500 visible characters (no control characters "
                           "or line separators)")


def record_signoff(path: str, role: str, name: str, rule_pack: str, today: dt.date, key: str | None = None,
                   config: Any = None) -> dict[str, Any]:
    """Add (or replace) `role`'s sign-off in the manifest at `path`; return the record.
    Everything from reading the file to replacing it happens under the manifest's lock."""
    _one_line_text("role", role)
    _one_line_text("name", name)
    with locked(path):
        raw = read_bytes(path)
        text = decode(raw)
        doc = load_text(text, path)
        if not isinstance(doc.data, dict):
            raise SignoffError("the manifest is not a mapping of sections, so there is nowhere to record a sign-off")
        roles = required_roles(doc.data, config)
        if role not in roles:
            where = f"signoff.roles in {config.path}, or " if config is not None and config.path else ""
            raise SignoffError(f'"{role}" is not a sign-off role of this manifest; the roles are: {", ".join(roles)} '
                               f"(set them in {where}policy.signoff_roles)")
        if config is not None and config.require_signatures and not key:
            raise SignoffError(f"{config.path} requires an SSH signature on every sign-off; give --sign-key KEY")
        record: dict[str, Any] = {
            "role": role, "name": name, "date": today,
            "manifest_digest": content_digest(doc.data), "rule_pack_digest": rule_pack,
            "tool": tool_name(), "tool_digest": tool_digest(),
            "sections": section_digests(doc.data),
            "snapshot": snapshot(doc.data),
        }
        bound = settings(config or Config())
        record["config_digest"], record["config"] = content_digest(bound), snapshot(bound)
        if key:
            record["signature"] = sign(record, key)
        records = [_as_written(r) for r in doc.data.get(SECTION) or []]
        at = next((i for i, r in enumerate(records) if r["role"] == role), None)
        if at is None:
            records.append(record)
        else:
            records[at] = record
        updated = splice(text, records)
        bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
        written = (bom + updated).encode("utf-8")
        after = _readable(written, path, record)
        _same_content(doc.data, after, records)
        atomic_write(path, written)
    return record


def _readable(raw: bytes, path: str, record: dict[str, Any]) -> dict[str, Any]:
    """The manifest `raw` as check, verify and signoff will read it; a SignoffError when they
    would refuse it, so that a sign-off never makes its manifest unreadable."""
    if len(raw) > MAX_BYTES:
        raise SignoffError(f"with this sign-off the manifest would be {len(raw):,} bytes, and hwlint reads manifests of at "
                           f"most {MAX_BYTES:,} bytes: check, verify and signoff would refuse it. Each sign-off holds a "
                           f"compressed copy of the manifest, here {len(record.get('snapshot', '')):,} bytes: make the "
                           "manifest smaller (a rack group or pool with a count, instead of an entry for each)")
    try:
        return load_bytes(raw, path).data
    except InputError as exc:
        raise SignoffError(f"with this sign-off hwlint could not read the manifest back ({exc.message}, at line "
                           f"{exc.line})") from None


def _as_written(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["date"] = dt.date.fromisoformat(str(out["date"]))
    return out


# --- the splice -------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")  # YAML's line breaks in a file; U+2028, U+2029, U+0085 are not


@dataclass
class _Top:
    """The top-level mapping as the parser saw it, in character offsets into the text."""

    flow: bool
    keys: list[tuple[str, int, int, int]]  # (key, start offset, column, end offset of its value)
    end: int  # offset of the mapping's end (a flow mapping's closing brace)


def _top_level(text: str) -> _Top:
    import yaml

    from linter.manifest.loader import _parser

    parser = _parser(text)
    ev = yaml.events
    parser.get_event()  # stream start
    parser.get_event()  # document start
    start = parser.get_event()
    if not isinstance(start, ev.MappingStartEvent):
        raise SignoffError("the manifest is not a mapping of sections, so there is nowhere to record a sign-off")
    keys = []
    while not parser.check_event(ev.MappingEndEvent):
        key = parser.get_event()
        name = key.value if isinstance(key, ev.ScalarEvent) else None
        depth, value_end = 0, key.end_mark.index
        while True:  # the value: one node, however deep
            event = parser.get_event()
            if isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
                depth += 1
            elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
                depth -= 1
            value_end = event.end_mark.index
            if depth == 0:
                break
        if name is None and isinstance(key, (ev.MappingStartEvent, ev.SequenceStartEvent)):
            raise SignoffError("the manifest has a complex top-level key; sign-offs need plain keys")
        keys.append((name, key.start_mark.index, key.start_mark.column, value_end))
    end = parser.get_event().start_mark.index
    return _Top(flow=bool(start.flow_style), keys=keys, end=end)


def _lines(text: str) -> list[str]:
    """The file's lines, each with its own line break, split at CR, LF and CRLF only."""
    out, at = [], 0
    for match in _BREAK.finditer(text):
        out.append(text[at:match.end()])
        at = match.end()
    if at < len(text):
        out.append(text[at:])
    return out


def splice(text: str, records: list[dict[str, Any]]) -> str:
    """`text` with its `signoffs:` section replaced by `records` (or added)."""
    top = _top_level(text)
    first_break = _BREAK.search(text)
    newline = first_break.group() if first_break else "\n"
    if top.flow:
        return _splice_flow(text, top, records)
    lines = _lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    line_of = lambda offset: bisect.bisect_right(starts, offset) - 1  # noqa: E731
    columns = {column for _, _, column, _ in top.keys}
    indent = min(columns) if columns else 0
    for name, offset, column, _ in top.keys:
        before = text[starts[line_of(offset)]:offset]
        if before.strip(" "):  # e.g. `--- key:` on the marker line
            raise SignoffError(f"the top-level key {name!r} does not start its own line, so the sign-off section "
                               "cannot be placed beside it; put it on a line of its own")
    block = "".join((" " * indent + line if line.strip() else line) for line in _render(records).splitlines(True))
    block = block.replace("\n", newline)
    names = [name for name, _, _, _ in top.keys]
    if SECTION in names:
        i = names.index(SECTION)
        start = line_of(top.keys[i][1])
        end = line_of(top.keys[i + 1][1]) if i + 1 < len(top.keys) else len(lines)
        while end > start + 1 and _outside(lines[end - 1], indent):
            end -= 1
        return "".join(lines[:start]) + block + "".join(lines[end:])
    after_map = line_of(top.keys[-1][1]) + 1 if top.keys else 0
    end = next((i for i in range(after_map, len(lines)) if lines[i].rstrip("\r\n") == "..."), len(lines))  # document end
    head = "".join(lines[:end])
    if head and not head.endswith(("\n", "\r")):
        head += newline
    if lines[:end] and lines[end - 1].strip():
        head += newline
    return head + block + "".join(lines[end:])


def _splice_flow(text: str, top: _Top, records: list[dict[str, Any]]) -> str:
    """A flow-style manifest (`{...}`) gets the section as one JSON entry, in place."""
    entry = f"{SECTION}: " + json.dumps(
        [{k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in r.items()} for r in records], ensure_ascii=True)
    names = [name for name, _, _, _ in top.keys]
    if SECTION in names:
        _, start, _, end = top.keys[names.index(SECTION)]
        return text[:start] + entry + text[end:]
    last_end = top.keys[-1][3] if top.keys else top.end
    between = text[last_end:top.end]
    joiner = " " if "," in between or not top.keys else ", "
    return text[:last_end] + between.rstrip() + joiner + entry + between[len(between.rstrip()):] + text[top.end:]


def _outside(line: str, indent: int = 0) -> bool:
    """Blank lines, comments at the keys' indentation or left of it, and document markers
    after a section belong to what follows."""
    stripped = line.lstrip(" \t")
    return not line.strip() or (stripped.startswith("#") and len(line) - len(stripped) <= indent) or line.strip() == "..."


def _render(records: list[dict[str, Any]]) -> str:
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import LiteralScalarString

    yaml = YAML(typ="rt", pure=True)
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    items = []
    for record in records:
        item = CommentedMap(record)
        if isinstance(item.get("sections"), dict):  # one line: a diagnostic, not for reading
            item["sections"] = CommentedMap(item["sections"])
            item["sections"].fa.set_flow_style()
        for key in ("snapshot", "config", "signature"):
            if item.get(key):
                item[key] = LiteralScalarString(item[key])
        items.append(item)
    out = io.StringIO()
    yaml.dump(CommentedMap({SECTION: items}), out)
    return out.getvalue()


def _same_content(before: dict[str, Any], after: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """The rewritten file must say exactly what the old one said, plus the new records."""
    expected = [{k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in r.items()} for r in records]
    if content(before) != content(after) or after.get(SECTION) != expected:
        raise SignoffError("the sign-off could not be added without changing the rest of the manifest; "
                           "nothing was written (please report this)")


# --- the lock and the write -------------------------------------------------------------


class locked:
    """An exclusive lock for a manifest's read-modify-write, from `filelock` (flock on Linux
    and macOS, LockFileEx on Windows), on `.NAME.hwlint-lock` beside the manifest. The holder
    removes that file before letting go, so none is left in the work tree; a waiter that
    took the lock of a file removed so (or replaced) tries again on the one now there."""

    def __init__(self, path: str):
        self.target = os.path.realpath(path)
        folder, name = os.path.split(self.target)
        self.path = os.path.join(folder, f".{name}.hwlint-lock")
        self.lock: Any = None

    def _same_file(self, fd: int) -> None:
        """filelock's on_acquired: the lock taken must be that of the file now at the path."""
        try:
            here, mine = os.stat(self.path), os.fstat(fd)
        except FileNotFoundError:
            raise _Replaced() from None
        if (here.st_dev, here.st_ino) != (mine.st_dev, mine.st_ino):
            raise _Replaced()

    def __enter__(self) -> "locked":
        from filelock import FileLock, Timeout

        if not os.path.isfile(self.target):
            return self  # read_bytes says why the file cannot be read
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            self.lock = FileLock(self.path, timeout=max(deadline - time.monotonic(), 0), on_acquired=self._same_file)
            try:
                self.lock.acquire()
            except _Replaced:
                continue
            except Timeout:
                raise SignoffError(f"another hwlint signoff has held {self.target} for {LOCK_WAIT_SECONDS} s; "
                                   "try again when it is done") from None
            _remove_leftovers(Path(self.target))
            return self

    def __exit__(self, *exc: Any) -> None:
        if self.lock is not None:
            with contextlib.suppress(OSError):  # Windows removes it itself once it is let go
                os.unlink(self.path)
            self.lock.release()


class _Replaced(Exception):
    """The lock file was removed or replaced while this process took its lock."""


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.hwlint-"


def _remove_leftovers(target: Path) -> None:
    """Temporary files of an earlier sign-off that was killed outright (kill -9, power loss).
    Only called under the lock, so no running sign-off owns them."""
    try:
        for leftover in target.parent.glob(_temp_prefix(target) + "*.tmp"):
            if leftover.is_file() and not leftover.is_symlink():
                leftover.unlink(missing_ok=True)
    except OSError:
        pass


class _Interrupted(BaseException):
    pass


def atomic_write(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over `path`. A signal
    the process can catch while writing removes the temporary file, then ends the process
    as the signal would."""
    target = Path(os.path.realpath(path))  # through a symlink: replace the file, keep the link
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    caught: list[int] = []

    def interrupted(signum: int, _frame: Any) -> None:
        caught.append(signum)
        raise _Interrupted()

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            try:
                previous[signum] = signal.signal(signum, interrupted)
            except (ValueError, OSError):  # not the main thread
                pass
    temp = ""
    try:
        fd, temp = tempfile.mkstemp(prefix=_temp_prefix(target), suffix=".tmp", dir=str(target.parent) or ".")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        if temp:
            Path(temp).unlink(missing_ok=True)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:  # the file is untouched and the temporary file gone: now end as the signal asked
            if caught[0] != signal.SIGINT:
                signal.signal(caught[0], signal.SIG_DFL)
                os.kill(os.getpid(), caught[0])
            raise SignoffError("interrupted while writing")  # noqa: B012 - replaces _Interrupted on purpose
