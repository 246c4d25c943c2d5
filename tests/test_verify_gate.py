"""`hwlint verify` as the last gate: a rule that failed to run, a sign-off dated after
--as-of, a role dropped since it was signed, a signer outside their role and a waiver
approved by someone the config does not allow each stop verification, in words.
HWLINT_TODAY is 2026-11-30 (tests/conftest.py)."""

from __future__ import annotations

import re

import pytest

from conftest import EXAMPLES

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
ROLES = ("technical lead", "facilities", "finance")
FAILING = re.compile(r"^[^:]+:\d+:\d+: (?P<id>[A-Z]{3}\d{3}) (error|warning|info) ")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    return work


def waived(hwlint, path, approver="ml-infra-lead@example.com", expires="2027-05-31", extra=""):
    """The multi-node example (its one waiver, of BUY004, approved by `approver` until `expires`)."""
    text = GOOD.read_text()
    for old, new in (("approver: ml-infra-lead@example.com", f"approver: {approver}"),
                     ("expires: 2027-05-31", f"expires: {expires}")):
        assert old in text
        text = text.replace(old, new, 1)
    path.write_text(text + extra)
    assert hwlint("check", path).code == 0
    return path


def sign_all(hwlint, path, roles=ROLES, *extra):
    for role in roles:
        run = hwlint("signoff", path, "--role", role, "--name", f"{role.replace(' ', '-')}@example.com", *extra)
        assert run.code == 0, run.err


def test_verify_fails_on_a_rule_error(hwlint, folder):
    rules = folder / "rules"
    rules.mkdir()
    (rules / "broken.yaml").write_text(
        "rules:\n  - id: OPS990\n    title: A rule that cannot run\n    severity: info\n    tiers: all\n"
        '    require: "range(10**9) | length > 0"\n    message: "never"\n    fix: nothing\n'
        "    cite: [seed-hardware-layers]\n    at: plan.goal\n")
    manifest = waived(hwlint, folder / "cluster.hw.yaml")
    sign_all(hwlint, manifest, ROLES, "--rules", str(rules))
    assert hwlint("check", manifest, "--rules", rules).code == 2
    run = hwlint("verify", manifest, "--rules", rules)
    assert run.code == 2, run.out
    assert re.search(r"cluster\.hw\.yaml: rule error: .*broken\.yaml:\d+: rule OPS990: rule error: .*; verify vouches "
                     r"only for a review whose rules all ran$", run.out, re.M), run.out
    assert "not verified: 3 of 3 required roles hold a valid sign-off; 1 rule failed to run" in run.out


def test_as_of_refuses_signoffs_dated_after_it(hwlint, folder, monkeypatch):
    monkeypatch.setenv("HWLINT_TODAY", "2026-11-10")
    manifest = waived(hwlint, folder / "cluster.hw.yaml", expires="2026-11-20")
    sign_all(hwlint, manifest)
    monkeypatch.setenv("HWLINT_TODAY", "2026-11-30")
    assert hwlint("verify", manifest).code == 1  # the waivers have expired today
    held = hwlint("verify", manifest, "--as-of", "2026-11-15")  # after the sign-offs: judged then
    assert held.code == 0, held.out
    assert "gone stale since 2026-11-15" in held.out
    early = hwlint("verify", manifest, "--as-of", "2026-11-05")  # before them: they cannot vouch for it
    assert early.code == 1
    assert early.out.count("refused: dated 2026-11-10, after --as-of 2026-11-05") == 3
    assert "not verified: 0 of 3 required roles hold a valid sign-off (missing: technical lead, facilities, finance)" in early.out


def test_a_role_dropped_from_the_config_since_signing_is_named(hwlint, folder):
    manifest = waived(hwlint, folder / "cluster.hw.yaml")
    config = folder / ".hwlint.yaml"
    config.write_text("signoff:\n  roles: [technical lead, facilities, finance, security]\n")
    sign_all(hwlint, manifest, (*ROLES, "security"))
    assert hwlint("verify", manifest).code == 0
    config.write_text("signoff:\n  roles: [technical lead, facilities, finance]\n")
    run = hwlint("verify", manifest)
    assert run.code == 1
    assert ("cluster.hw.yaml: role security dropped: signed by security@example.com on 2026-11-30, no longer a "
            "required role (the sign-off roles are now technical lead, facilities, finance)") in run.out
    assert "1 role required when signed is no longer required" in run.out


def test_a_role_dropped_from_the_manifest_since_signing_is_named(hwlint, folder):
    manifest = waived(hwlint, folder / "cluster.hw.yaml",
                      extra="\npolicy:\n  signoff_roles: [technical lead, facilities, finance, safety]\n")
    sign_all(hwlint, manifest, ROLES)  # safety has not signed yet
    manifest.write_text(manifest.read_text().replace(", safety]", "]"))
    run = hwlint("verify", manifest)
    assert run.code == 1
    assert "role safety dropped: required when technical lead signed on 2026-11-30, no longer required" in run.out


def test_a_signer_outside_their_role_is_named(hwlint, folder):
    manifest = waived(hwlint, folder / "cluster.hw.yaml")
    (folder / ".hwlint.yaml").write_text(
        "signoff:\n  require_signatures: false\n  signers:\n"
        "    technical lead: [technical-lead@example.com]\n    facilities: [facilities@example.com]\n"
        "    finance: [carol@example.com]\n")
    sign_all(hwlint, manifest)
    run = hwlint("verify", manifest)
    assert run.code == 1
    assert ("sign-off by finance (finance@example.com, 2026-11-30): refused: finance@example.com may not sign as "
            "finance (signoff.signers in") in run.out and "allows: carol@example.com)" in run.out
    assert "not verified: 2 of 3 required roles hold a valid sign-off (missing: finance)" in run.out


def test_waiver_approvers_come_from_the_config(hwlint, folder):
    manifest = waived(hwlint, folder / "cluster.hw.yaml", approver="QA")
    ok = waived(hwlint, folder / "ok.hw.yaml", approver="CTO@example.com")  # the same person, however capitalised
    (folder / ".hwlint.yaml").write_text("waivers:\n  approvers: [cto@example.com]\n")
    check = hwlint("check", manifest)
    assert check.code == 1
    assert re.search(r"cluster\.hw\.yaml:\d+:\d+: WVR009 error The waiver for \w+ is approved by QA, who is not among "
                     r"those the config lets approve a waiver \(cto@example\.com\), so it does not apply\.", check.out), check.out
    sign_all(hwlint, manifest)
    run = hwlint("verify", manifest)
    assert run.code == 1 and "WVR009 error The waiver for" in run.out and "(not waived)" in run.out
    assert "WVR009" not in hwlint("check", ok, "--fail-on", "info").out


def test_waiver_approvers_must_be_a_list_of_names(hwlint, folder):
    manifest = waived(hwlint, folder / "cluster.hw.yaml")
    (folder / ".hwlint.yaml").write_text("waivers:\n  approver: [cto@example.com]\n")
    run = hwlint("check", manifest)
    assert run.code == 2 and ".hwlint.yaml:2:3: waivers.approver: unknown setting; did you mean \"approvers\"?" in run.err
