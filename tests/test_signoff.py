"""`hwlint signoff` and `hwlint verify`: sign-offs bound to the manifest's content and the
rule pack, written without disturbing the rest of the file, checked (optionally) with SSH
signatures. HWLINT_TODAY is 2026-11-30 (tests/conftest.py)."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, hwlint_process

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
ROLES = ("technical lead", "facilities", "finance")
FAILING = re.compile(r"^[^:]+:\d+:\d+: (?P<id>[A-Z]{3}\d{3}) (error|warning|info) ")


@pytest.fixture
def good(tmp_path, hwlint):
    """The multi-node example with a waiver for whatever it fails today, so that only the
    sign-offs decide whether it verifies."""
    path = tmp_path / "cluster.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    failing = {m["id"] for m in map(FAILING.match, hwlint("check", path, "--fail-on", "info").out.splitlines()) if m}
    if failing:
        path.write_text(GOOD.read_text() + "\nwaivers:\n" + "".join(
            f"  - {{rule: {rule}, reason: accepted for the test, approver: QA, expires: 2027-06-30}}\n" for rule in sorted(failing)))
    return path


def sign_all(hwlint, path, roles=ROLES, *extra):
    for role in roles:
        run = hwlint("signoff", path, "--role", role, "--name", f"Person {role}", *extra)
        assert run.code == 0, run.err


def inserted_only(old: bytes, new: bytes) -> list[bytes]:
    """The lines `new` adds to `old`; fails if any line of `old` changed or went missing."""
    a, b = old.splitlines(), new.splitlines()
    added = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        assert op in ("equal", "insert"), (op, a[i1:i2], b[j1:j2])
        added += b[j1:j2] if op == "insert" else []
    return added


# --- recording --------------------------------------------------------------------------

TRICKY = """\
# A manifest written by hand: comments, flow style, odd spacing and quoting.
manifest_version: 1
name:   'support-bot 13B fine-tune'   # quoted, padded
owner: applied-ml@example.com
date: 2026-11-10

plan:
    goal: finetune          # four-space indent here
    model: {parameters_billion: 13, layers: 40, hidden_size: 5120, attention_heads: 40, sequence_length: 4096}
    micro_batch_size: 1
    global_batch_size: 64
    precision: "bf16"
    optimizer: adamw
    parallelism:
        data: 8
        zero_stage: 3
        activation_recompute: full
    training_tokens_billion: 2
    target_duration_days: 3

node_pools:
- name: dgx                 # sequence not indented
  role: compute
  count: 1
  system: DGX-H100

facility:
  it_capacity_kw: 17
  racks:
    - {name: colo, count: 1, contents: [{pool: dgx, nodes: 1}], power_budget_kw: 15, cooling: air, cooling_capacity_kw: 15,
       circuits: {count: 4, voltage_v: 208, phases: 3, breaker_a: 30, ab_redundant: true}}
# trailing comment, kept"""


@pytest.mark.parametrize("newline, final", [("\n", "\n"), ("\r\n", "\r\n"), ("\n", "")], ids=["lf", "crlf", "no-final-newline"])
def test_signoff_adds_lines_and_changes_no_other_byte(hwlint, tmp_path, newline, final):
    path = tmp_path / "m.hw.yaml"
    original = (TRICKY.replace("\n", newline) + final).encode()
    path.write_bytes(original)
    run = hwlint("signoff", path, "--role", "facilities", "--name", "Grace Hopper")
    assert run.code == 0, run.err
    assert "recorded the facilities sign-off by Grace Hopper on 2026-11-30" in run.out
    after_first = path.read_bytes()
    assert after_first.startswith(original)  # every byte kept, the section appended
    text = b"\n".join(inserted_only(original, after_first)).decode()
    assert "signoffs:" in text and "role: facilities" in text and "name: Grace Hopper" in text
    assert after_first.count(b"\n") == after_first.count(newline.encode())  # the file's own line endings
    # a second role signs: again only added lines, and the first record is untouched
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    inserted_only(after_first, path.read_bytes())
    assert hwlint("verify", path).out.count(": valid") == 2


def test_signoff_section_in_the_middle_is_rewritten_in_place(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_text(TRICKY + "\n")
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    head, block = path.read_text().split("signoffs:\n")
    tail = "\n# operations follow: this comment belongs to them\noperations: {monitoring: true}\n"
    path.write_text(head + "signoffs:\n" + block + tail)
    assert hwlint("signoff", path, "--role", "facilities", "--name", "Grace").code == 0
    after = path.read_text()
    assert after.startswith(head + "signoffs:\n" + block) and after.endswith(tail)
    middle = after[len(head + "signoffs:\n" + block): -len(tail)]
    assert middle.startswith("  - role: facilities\n    name: Grace\n")
    assert after.count("signoffs:") == 1 and after.count("- role: ") == 2


def test_the_section_goes_before_a_document_end_marker(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_text("---\n" + TRICKY + "\n...\n# notes after the document\n")
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    text = path.read_text()
    assert text.endswith("\n...\n# notes after the document\n") and text.index("signoffs:") < text.index("\n...\n")
    assert verify_lines(hwlint("verify", path))["finance"] == "valid"


def test_signing_through_a_symlink_keeps_the_link(hwlint, good):
    link = good.parent / "link.hw.yaml"
    link.symlink_to(good.name)
    assert hwlint("signoff", link, "--role", "finance", "--name", "Ada").code == 0
    assert link.is_symlink() and "role: finance" in good.read_text()


def test_indented_top_level_keys_get_the_section_at_their_indentation(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_text("".join("  " + line for line in TRICKY.splitlines(keepends=True)) + "\n")
    before = path.read_bytes()
    run = hwlint("signoff", path, "--role", "finance", "--name", "Ada")
    assert run.code == 0, run.err
    added = inserted_only(before, path.read_bytes())
    assert b"  signoffs:" in added and all(line.startswith(b"  ") for line in added if line.strip())
    assert hwlint("signoff", path, "--role", "facilities", "--name", "Grace").code == 0
    states = verify_lines(hwlint("verify", path))
    assert states["finance"] == states["facilities"] == "valid"


def test_signing_again_replaces_that_roles_record(hwlint, good):
    sign_all(hwlint, good, ("finance",))
    assert hwlint("signoff", good, "--role", "finance", "--name", "Someone Else").code == 0
    text = good.read_text()
    assert text.count("role: finance") == 1 and "Someone Else" in text and "Person finance" not in text


def test_records_role_name_date_and_both_digests(hwlint, good):
    from linter.engine.rules import load_pack, pack_digest

    checklist = hwlint("checklist", good).out
    content = re.search(r"\| Content digest \(what sign-offs bind to\) \| (sha256:[0-9a-f]{64}) \|", checklist)[1]
    assert hwlint("signoff", good, "--role", "technical lead", "--name", "Ada Lovelace").code == 0
    record = good.read_text().split("signoffs:\n")[1]
    assert "  - role: technical lead\n    name: Ada Lovelace\n    date: 2026-11-30\n" in record
    assert f"    manifest_digest: {content}\n" in record
    assert f"    rule_pack_digest: {pack_digest(load_pack())}\n" in record
    assert re.search(r"    sections: \{manifest_version: [0-9a-f]{12}, name: [0-9a-f]{12},", record)


def test_unknown_role_is_refused_and_the_file_unchanged(hwlint, good):
    before = good.read_bytes()
    run = hwlint("signoff", good, "--role", "cfo", "--name", "Ada")
    assert run.code == 2
    assert '"cfo" is not a sign-off role' in run.err and "technical lead, facilities, finance" in run.err
    assert good.read_bytes() == before


@pytest.mark.parametrize("name", ["", "   ", "two\nlines"])
def test_blank_or_multiline_names_are_refused(hwlint, good, name):
    before = good.read_bytes()
    run = hwlint("signoff", good, "--role", "finance", "--name", name)
    assert run.code == 2 and "one line" in run.err and good.read_bytes() == before


def test_an_unreviewable_manifest_is_not_signed(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_text(GOOD.read_text().replace("goal: pretrain", "goal: pretrian"))
    run = hwlint("signoff", path, "--role", "finance", "--name", "Ada")
    assert run.code == 2 and "plan.goal" in run.err and "signoffs" not in path.read_text()
    run = hwlint("verify", tmp_path / "missing.hw.yaml")
    assert run.code == 2 and "no such file" in run.err and "Traceback" not in run.err


def test_a_flow_style_manifest_gets_one_flow_entry_and_keeps_its_bytes(hwlint, tmp_path):
    import json

    from linter.manifest.loader import load_file

    path = tmp_path / "m.hw.yaml"
    path.write_text(json.dumps(load_file(str(GOOD)).data, indent=1) + "\n# after the mapping\n")
    before = path.read_text()
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    once = path.read_text()
    close = before.rindex("}")
    assert once.startswith(before[:close].rstrip()) and once.endswith(before[close:])
    assert hwlint("signoff", path, "--role", "facilities", "--name", "Grace").code == 0
    twice = path.read_text()
    assert twice.startswith(before[:close].rstrip()) and twice.endswith(before[close:])
    states = verify_lines(hwlint("verify", path))
    assert states["finance"] == states["facilities"] == "valid"


def test_a_failed_write_leaves_the_original_untouched(hwlint, good, monkeypatch):
    before = good.read_bytes()

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    run = hwlint("signoff", good, "--role", "finance", "--name", "Ada")
    assert run.code == 2
    assert "No space left on device" in run.err and "is unchanged" in run.err
    assert good.read_bytes() == before
    assert sorted(p.name for p in good.parent.iterdir()) == [good.name]  # no temporary file left behind


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only folder")
def test_a_read_only_folder_leaves_the_original_untouched(hwlint, good):
    before = good.read_bytes()
    good.parent.chmod(0o555)
    try:
        run = hwlint("signoff", good, "--role", "finance", "--name", "Ada")
    finally:
        good.parent.chmod(0o755)
    assert run.code == 2 and "cannot write" in run.err and good.read_bytes() == before


# --- verifying --------------------------------------------------------------------------


def verify_lines(run) -> dict[str, str]:
    """role -> what verify says about it."""
    out = {}
    for line in run.out.splitlines():
        if m := re.search(r": sign-off by (?P<role>[^(:]+?)(?: \((?P<who>[^)]*)\))?(?: \(not a required role\))?: (?P<state>.*)$", line):
            out[m["role"]] = m["state"]
    return out


def test_verify_passes_only_with_every_required_role_signed(hwlint, good):
    sign_all(hwlint, good, ROLES[:2])
    run = hwlint("verify", good)
    assert run.code == 1
    assert verify_lines(run) == {"technical lead": "valid", "facilities": "valid", "finance": "missing"}
    assert run.out.splitlines()[-1].endswith("not verified: 2 of 3 required roles hold a valid sign-off (missing: finance)")
    sign_all(hwlint, good, ROLES[2:])
    run = hwlint("verify", good)
    assert run.code == 0, run.out
    assert run.out.splitlines()[-1].endswith("verified: all 3 required roles hold a valid sign-off and no failing result remains unwaived")


def test_verify_fails_while_a_failing_result_is_not_waived(hwlint, tmp_path):
    path = tmp_path / "flawed.hw.yaml"
    path.write_bytes(FLAWED.read_bytes())
    sign_all(hwlint, path)
    run = hwlint("verify", path)
    assert run.code == 1
    assert set(verify_lines(run).values()) == {"valid"}
    assert re.search(r"^\S+:\d+:\d+: GPU002 error .* \(not waived\)$", run.out, re.M)
    assert re.search(r"not verified: 3 of 3 required roles hold a valid sign-off; \d+ failing results are not waived(;|$)", run.out)


def test_formatting_and_comments_do_not_stale_a_signoff_but_values_do(hwlint, good):
    sign_all(hwlint, good)
    text = good.read_text()
    good.write_text("# reviewed in the Tuesday meeting\n" + text.replace("name: ", "name:   ", 1))
    assert hwlint("verify", good).code == 0
    good.write_text(text.replace("it_capacity_kw: 500", "it_capacity_kw: 520").replace("count: 32", "count: 30", 1))
    run = hwlint("verify", good)
    assert run.code == 1
    states = verify_lines(run)
    assert states["finance"] == "stale: the manifest changed since (changed: node_pools, facility)"
    assert "missing: technical lead, facilities, finance" in run.out


def test_a_new_section_is_named_as_added(hwlint, good):
    sign_all(hwlint, good)
    good.write_text(good.read_text() + "\npolicy:\n  compute_efficiency: 0.35\n")
    assert verify_lines(hwlint("verify", good))["facilities"] == "stale: the manifest changed since (added: policy)"


def test_changing_the_required_roles_stales_every_signoff(hwlint, good):
    sign_all(hwlint, good)
    good.write_text(good.read_text() + "\npolicy:\n  signoff_roles: [technical lead, facilities, finance, security]\n")
    run = hwlint("verify", good)
    assert run.code == 1 and all(s.startswith("stale") for r, s in verify_lines(run).items() if r != "security")
    assert verify_lines(run)["security"] == "missing"


def test_a_changed_rule_pack_stales_the_signoff(hwlint, good, tmp_path):
    sign_all(hwlint, good)
    extra = tmp_path / "house-rules"
    extra.mkdir()
    (extra / "house.yaml").write_text(
        "rules:\n  - {id: OPS901, title: Monitoring is planned, severity: info, tiers: all,"
        " require: 'true', message: x, fix: x, cite: [seed-hardware-layers], at: operations}\n")
    run = hwlint("verify", good, "--rules", extra)
    assert run.code == 1
    assert all(s.startswith("stale: the rule pack changed since (signed under sha256:") for s in verify_lines(run).values())
    assert "manifest changed" not in run.out


# --- SSH signatures ---------------------------------------------------------------------

needs_ssh = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen (OpenSSH) is not installed")


def keypair(folder, principal):
    key = folder / principal
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", str(key)], check=True)
    return key, f"{principal} {' '.join(key.parent.joinpath(key.name + '.pub').read_text().split()[:2])}\n"


@needs_ssh
def test_ssh_signed_signoffs_verify_against_allowed_signers(hwlint, good, tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    key, line = keypair(keys, "ada@example.com")
    other, _ = keypair(keys, "mallory@example.com")
    allowed = keys / "allowed_signers"
    allowed.write_text(line)
    run = hwlint("signoff", good, "--role", "technical lead", "--name", "Ada", "--sign-key", key)
    assert run.code == 0 and "with an SSH signature" in run.out, run.err
    assert "-----BEGIN SSH SIGNATURE-----" in good.read_text()
    sign_all(hwlint, good, ("facilities",), "--sign-key", key)
    assert hwlint("signoff", good, "--role", "finance", "--name", "Mallory", "--sign-key", other).code == 0

    run = hwlint("verify", good, "--allowed-signers", allowed)
    states = verify_lines(run)
    assert states["technical lead"] == "valid: signature good, by ada@example.com"
    assert states["finance"] == f"bad signature: the signing key is not in {allowed}"
    assert run.code == 1
    # without --allowed-signers the signatures are not checked, and say so
    assert verify_lines(hwlint("verify", good))["finance"] == "valid: signed; give --allowed-signers to check the signature"

    # a record edited after signing no longer matches its signature
    good.write_text(good.read_text().replace("name: Ada\n", "name: Ada L.\n"))
    states = verify_lines(hwlint("verify", good, "--allowed-signers", allowed))
    assert states["technical lead"].startswith("bad signature: the signature does not match this sign-off")
    assert states["facilities"] == "valid: signature good, by ada@example.com"


@needs_ssh
def test_allowed_signers_requires_every_signoff_to_be_signed(hwlint, good, tmp_path):
    keys = {role: keypair(tmp_path, f"{role.replace(' ', '-')}@example.com") for role in ROLES}
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("".join(line for _, line in keys.values()))
    for role in ROLES[:2]:
        sign_all(hwlint, good, (role,), "--sign-key", keys[role][0])
    sign_all(hwlint, good, ROLES[2:])
    run = hwlint("verify", good, "--allowed-signers", allowed)
    assert run.code == 1
    assert verify_lines(run)["finance"] == "unsigned: no signature, and --allowed-signers asks for one"
    sign_all(hwlint, good, ROLES[2:], "--sign-key", keys["finance"][0])
    assert hwlint("verify", good, "--allowed-signers", allowed).code == 0


@needs_ssh
def test_one_key_signs_one_role(hwlint, good, tmp_path):
    key, line = keypair(tmp_path, "ada@example.com")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(line)
    sign_all(hwlint, good, ROLES, "--sign-key", key)
    run = hwlint("verify", good, "--allowed-signers", allowed)
    states = verify_lines(run)
    assert run.code == 1 and states["technical lead"] == "valid: signature good, by ada@example.com"
    assert states["finance"] == ("refused: ada@example.com already signs technical lead; the config lets one "
                                 "principal sign 1 role (signoff.roles_per_signer)")


def test_a_missing_ssh_keygen_is_named_clearly(good, tmp_path):
    (tmp_path / "key").write_text("not really a key\n")
    empty = tmp_path / "empty-path"
    empty.mkdir()
    before = good.read_bytes()
    run = hwlint_process("signoff", good, "--role", "finance", "--name", "Ada", "--sign-key", tmp_path / "key",
                         env={"PATH": str(empty)})
    assert run.code == 2
    assert "ssh-keygen" in run.err and "was not found" in run.err and "Traceback" not in run.err
    assert good.read_bytes() == before
