"""Sign-offs bound to the manifest and the rule pack they approved.

`hwlint signoff` appends a record to the manifest's `signoffs:` section:

    signoffs:
      - role: facilities
        name: Grace Hopper
        date: 2026-11-30
        manifest_digest: sha256:...   # content_digest(): the manifest without `signoffs`
        rule_pack_digest: sha256:...  # rules.pack_digest(): the rules that reviewed it
        sections: {...}               # 12-hex digest per top-level section, to say what changed
        signature: |                  # optional: ssh-keygen -Y sign -n hwlint of statement()
          -----BEGIN SSH SIGNATURE-----

**What the digest covers.** The manifest digest is the sha256 of the manifest's *content*,
not its bytes: the loaded data without `signoffs`, as canonical JSON (keys sorted, no
whitespace, UTF-8). Comments, blank lines, key order, quoting and flow/block style do not
change it, so adding a sign-off (or reformatting) does not invalidate the others, while any
changed value, added key or removed key does. A key given with no value counts as absent,
and 8 and 8.0 are different content. `policy.signoff_roles` is content, so changing who
must sign invalidates every sign-off. (The checklist header quotes both this digest and the
sha256 of the file's bytes.)

**How the file is edited.** Only the lines of the `signoffs:` section are written (the
section is rendered by ruamel.yaml and spliced in; a new section goes at the end of the
file), so every other byte of the file stays as it was: comments, key order, indentation,
line endings. The result is parsed again and must hold exactly the same content plus the
new record before it replaces the original, through a temporary file in the same folder
and an atomic rename. Any failure leaves the original untouched.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linter.manifest.loader import Document, InputError, decode, load_text, read_bytes
from linter.results import Result

DEFAULT_ROLES = ("technical lead", "facilities", "finance")
NAMESPACE = "hwlint"
SECTION = "signoffs"


class SignoffError(Exception):
    """The sign-off could not be recorded or checked; the message is for the user."""


# --- what a sign-off is bound to --------------------------------------------------------


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def content(data: dict[str, Any]) -> dict[str, Any]:
    """The part of a manifest a sign-off approves: everything but the sign-offs."""
    return {k: v for k, v in data.items() if k != SECTION}


def content_digest(data: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(_canonical(content(data))).hexdigest()


def section_digests(data: dict[str, Any]) -> dict[str, str]:
    return {k: hashlib.sha256(_canonical(v)).hexdigest()[:12] for k, v in content(data).items()}


def required_roles(data: dict[str, Any]) -> list[str]:
    return list((data.get("policy") or {}).get("signoff_roles") or DEFAULT_ROLES)


def statement(record: dict[str, Any]) -> bytes:
    """The text an SSH signature covers: who approved what, under which rules."""
    return (
        "hwlint sign-off\n"
        f"role: {record['role']}\nname: {record['name']}\ndate: {record['date']}\n"
        f"manifest: {record['manifest_digest']}\nrule pack: {record['rule_pack_digest']}\n"
    ).encode("utf-8")


# --- checking recorded sign-offs --------------------------------------------------------


@dataclass
class Check:
    role: str
    name: str
    date: str
    state: str  # valid | stale | unsigned | bad signature
    why: list[str] = field(default_factory=list)
    line: int = 1
    required: bool = True

    @property
    def valid(self) -> bool:
        return self.state == "valid"


@dataclass
class Verdict:
    checks: list[Check]
    roles: list[str]
    missing: list[str]  # required roles with no valid sign-off
    blocking: list[Result]  # failing results that are not waived

    @property
    def ok(self) -> bool:
        return not self.missing and not self.blocking


def blocking(results: list[Result]) -> list[Result]:
    """Failing results that stop a sign-off from holding. Waiver warnings (expiring soon,
    expired, unused) are housekeeping: an expired waiver's rule counts as failing anyway."""
    return [r for r in results if r.status == "fail" and not (r.layer == "WVR" and r.severity != "error")]


def check(doc: Document, rule_pack: str, results: list[Result], allowed_signers: str | None = None) -> Verdict:
    data = doc.data
    roles = required_roles(data)
    now_digest, now_sections = content_digest(data), section_digests(data)
    checks = []
    for index, record in enumerate(data.get(SECTION) or []):
        item = Check(role=record["role"], name=record["name"], date=str(record["date"]), state="valid",
                     line=doc.position((SECTION, index))[0], required=record["role"] in roles)
        if record["manifest_digest"] != now_digest:
            item.why.append("the manifest changed since" + _changed(record.get("sections") or {}, now_sections))
        if record["rule_pack_digest"] != rule_pack:
            item.why.append(f"the rule pack changed since (signed under {record['rule_pack_digest'][:19]}…, "
                            f"now {rule_pack[:19]}…)")
        if item.why:
            item.state = "stale"
        elif allowed_signers:
            item.state, note = _verify_signature(record, allowed_signers)
            item.why.append(note)
        elif record.get("signature"):
            item.why.append("signed; give --allowed-signers to check the signature")
        checks.append(item)
    valid_roles = {c.role for c in checks if c.valid}
    return Verdict(checks, roles, [r for r in roles if r not in valid_roles], blocking(results))


def report(path: str, verdict: Verdict) -> str:
    """Plain text, one line per sign-off, missing role and blocking result, then the verdict."""
    lines = []
    for c in verdict.checks:
        note = "" if c.required else " (not a required role)"
        why = f": {'; '.join(c.why)}" if c.why else ""
        lines.append(f"{path}:{c.line}: sign-off by {c.role} ({c.name}, {c.date}){note}: {c.state}{why}")
    lines += [f"{path}: sign-off by {role}: missing" for role in verdict.missing if role not in {c.role for c in verdict.checks}]
    lines += [f"{r.file}:{r.line}:{r.column}: {r.rule_id} {r.severity} {r.message} (not waived)" for r in verdict.blocking]
    signed = len(verdict.roles) - len(verdict.missing)
    if verdict.ok:
        lines.append(f"{path}: verified: all {len(verdict.roles)} required roles hold a valid sign-off "
                     "and no failing result remains unwaived")
    else:
        problems = [f"{signed} of {len(verdict.roles)} required roles hold a valid sign-off"
                    + (f" (missing: {', '.join(verdict.missing)})" if verdict.missing else "")]
        if verdict.blocking:
            n = len(verdict.blocking)
            problems.append(f"{n} failing result{'s are' if n != 1 else ' is'} not waived")
        lines.append(f"{path}: not verified: " + "; ".join(problems))
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


def _verify_signature(record: dict[str, Any], allowed_signers: str) -> tuple[str, str]:
    if not record.get("signature"):
        return "unsigned", "no signature, and --allowed-signers asks for one"
    with tempfile.TemporaryDirectory(prefix="hwlint-") as folder:
        signature = Path(folder) / "signoff.sig"
        signature.write_text(record["signature"], encoding="ascii", errors="replace")
        found = _run(["-Y", "find-principals", "-s", str(signature), "-f", allowed_signers], b"")
        principals = found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
        if not principals:
            return "bad signature", f"the signing key is not in {allowed_signers}"
        for principal in principals:
            done = _run(["-Y", "verify", "-f", allowed_signers, "-I", principal, "-n", NAMESPACE, "-s", str(signature)],
                        statement(record))
            if done.returncode == 0:
                return "valid", f"signature good, by {principal}"
        return "bad signature", f"the signature does not match this sign-off ({_first_line(done.stderr)})"


# --- recording a sign-off ---------------------------------------------------------------


def record_signoff(path: str, role: str, name: str, rule_pack: str, today: dt.date, key: str | None = None) -> dict[str, Any]:
    """Add (or replace) `role`'s sign-off in the manifest at `path`; return the record."""
    for label, value in (("role", role), ("name", name)):
        if not value.strip() or len(value) > 500 or any(ord(c) < 32 for c in value):
            raise SignoffError(f"the {label} must be one line of 1 to 500 characters")
    raw = read_bytes(path)
    text = decode(raw)
    doc = load_text(text, path)
    roles = required_roles(doc.data)
    if role not in roles:
        raise SignoffError(f'"{role}" is not a sign-off role of this manifest; the roles are: {", ".join(roles)} '
                           "(set them in policy.signoff_roles)")
    record: dict[str, Any] = {
        "role": role, "name": name, "date": today,
        "manifest_digest": content_digest(doc.data), "rule_pack_digest": rule_pack,
        "sections": section_digests(doc.data),
    }
    if key:
        record["signature"] = sign(record, key)
    records = [_as_written(r) for r in doc.data.get(SECTION) or []]
    at = next((i for i, r in enumerate(records) if r["role"] == role), None)
    if at is None:
        records.append(record)
    else:
        records[at] = record
    updated = splice(text, records)
    try:
        after = load_text(updated, path).data
    except InputError:
        after = {}
    _same_content(doc.data, after, records)
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    atomic_write(path, (bom + updated).encode("utf-8"))
    return record


def _as_written(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["date"] = dt.date.fromisoformat(str(out["date"]))
    return out


def splice(text: str, records: list[dict[str, Any]]) -> str:
    """`text` with its `signoffs:` section replaced by `records` (or added at the end)."""
    from ruamel.yaml import YAML

    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    tree = YAML(typ="rt", pure=True).load(text)
    if not hasattr(tree, "lc") or not isinstance(tree, dict) or tree.fa.flow_style():
        raise SignoffError("the manifest is not a block-style mapping (`key: value` lines), so the sign-off "
                           "cannot be added without rewriting it")
    if any(tree.lc.key(k)[1] != 0 for k in tree):
        raise SignoffError("the manifest's top-level keys are indented; start them at the beginning of the line")
    block = _render(records).replace("\n", newline)
    if SECTION in tree:
        start = tree.lc.key(SECTION)[0]
        end = min((tree.lc.key(k)[0] for k in tree if tree.lc.key(k)[0] > start), default=len(lines))
        while end > start + 1 and _outside(lines[end - 1]):
            end -= 1
        return "".join(lines[:start]) + block + "".join(lines[end:])
    end = next((i for i, line in enumerate(lines) if line.rstrip("\r\n") == "..."), len(lines))  # document end
    head = "".join(lines[:end])
    if not head.endswith(("\n", "\r")):
        head += newline
    if lines[:end] and lines[end - 1].strip():
        head += newline
    return head + block + "".join(lines[end:])


def _outside(line: str) -> bool:
    """Blank lines, column-0 comments and document markers after a section belong to what follows."""
    return not line.strip() or line.startswith("#") or line.strip() == "..."


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
        if item.get("signature"):
            item["signature"] = LiteralScalarString(item["signature"])
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


def atomic_write(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over `path`."""
    target = Path(os.path.realpath(path))  # through a symlink: replace the file, keep the link
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent) or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise

