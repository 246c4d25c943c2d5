"""The config is part of what is judged (issue 24, items 1, 2 and 8): nested configs inherit
the root's and may relax it only where the root allows it by name; every output names the
config files in effect and their sha256; a sign-off binds the effective settings, so a
relaxing config change makes it stale; folders and files a config names lie inside the
repository. Each through the command line; HWLINT_TODAY is 2026-11-30 (tests/conftest.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil

import pytest

from conftest import EXAMPLES, TEAM_RULE

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
ROLES = ("technical lead", "facilities", "finance")
ROOT_CONFIG = """\
policy: {power_headroom_pct: 22}
fail_on: warning
severity: {BUY009: error}
signoff:
  roles: [technical lead, facilities, finance]
  allowed_signers: keys/allowed_signers
  signers: {technical lead: [ada@example.com], facilities: [grace@example.com], finance: [carol@example.com]}
"""


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git work tree with a root config (signatures required, roles bound to signers) and
    a manifest in clusters/east; the run's current folder is the repository's root."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)  # a work tree as config.chain and discovery see one
    (root / "clusters" / "east").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "keys" / "allowed_signers").write_text("ada@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFake\n")
    (root / ".hwlint.yaml").write_text(ROOT_CONFIG)
    (root / "clusters" / "east" / "m.hw.yaml").write_bytes(GOOD.read_bytes())
    monkeypatch.chdir(root)
    return root


MANIFEST = "clusters/east/m.hw.yaml"


# --- C: nested configs inherit the root's -----------------------------------------------


def test_a_one_line_nested_config_keeps_the_roots_signatures_signers_and_roles(hwlint, repo):
    """On main the nearest config replaced the root's: `fail_on: error` alone dropped the
    required SSH signatures, so an unsigned sign-off was recorded."""
    (repo / "clusters" / ".hwlint.yaml").write_text("fail_on: warning\n")
    run = hwlint("signoff", MANIFEST, "--role", "finance", "--name", "Carol")
    assert run.code == 2 and "requires an SSH signature" in run.err, run.err
    assert "signoffs" not in (repo / MANIFEST).read_text()
    settings = hwlint("check", MANIFEST, "--show-settings").out
    assert f"config chain: .hwlint.yaml (sha256:{sha(repo / '.hwlint.yaml')}), then clusters/.hwlint.yaml " \
           f"(sha256:{sha(repo / 'clusters' / '.hwlint.yaml')})" in settings, settings
    assert "policy.power_headroom_pct=22 (.hwlint.yaml)" in settings
    assert "fail_on=warning (clusters/.hwlint.yaml)" in settings
    assert "signers.finance=[carol@example.com] (.hwlint.yaml)" in settings
    assert "require_signatures=true (.hwlint.yaml)" in settings
    assert "policy floors: power_headroom_pct=22" in settings


@pytest.mark.parametrize("nested, line, key, old, new", [
    ("policy: {power_headroom_pct: 20}\n", 1, "policy.power_headroom_pct", "22", "20"),
    ("fail_on: error\n", 1, "fail_on", "warning", "error"),
    ("severity: {BUY009: warning}\n", 1, "severity.BUY009", "error", "warning"),
    ("# team\nignore: [PWR001]\n", 2, "ignore", "[]", "[PWR001]"),
    ("select: [GPU]\n", 1, "select", "[]", "[GPU]"),
    ("signoff: {roles: [finance]}\n", 1, "signoff.roles", "[technical lead, facilities, finance]", "[finance]"),
    ("signoff:\n  signers: {finance: [carol@example.com, mallory@example.com]}\n", 2, "signoff.signers.finance",
     "[carol@example.com]", "[carol@example.com, mallory@example.com]"),
    ("signoff: {require_signatures: false}\n", 1, "signoff.require_signatures", "true", "false"),
    ("signoff: {roles_per_signer: 3}\n", 1, "signoff.roles_per_signer", "1", "3"),
    ("allow_relaxing: [power_headroom_pct]\n", 1, "allow_relaxing", "[]", "[power_headroom_pct]"),
    ("catalog: [parts]\n", 1, "catalog", "[]", "[clusters/parts]"),  # a team catalog may stand in for built-in parts
    ("waivers: {approvers: [mallory@example.com]}\n", 1, "waivers.approvers", "[]", "[mallory@example.com]"),
])
def test_a_nested_config_that_relaxes_the_roots_is_a_config_error(hwlint, repo, nested, line, key, old, new):
    if key == "waivers.approvers":  # the root names who may approve; a nested list with others in it relaxes that
        (repo / ".hwlint.yaml").write_text(ROOT_CONFIG + "waivers: {approvers: [cto@example.com]}\n")
        old = "[cto@example.com]"
    (repo / "clusters" / "parts").mkdir()
    (repo / "clusters" / ".hwlint.yaml").write_text(nested)
    run = hwlint("check", MANIFEST)
    assert run.code == 2, run.out + run.err
    assert re.search(rf"config error: clusters/\.hwlint\.yaml:{line}:\d+: {re.escape(key)}: {re.escape(new)} relaxes "
                     rf"{re.escape(old)}, (set in|inherited from) \.hwlint\.yaml; ", run.err), run.err
    assert "allow_nested_relaxing" in run.err
    assert run.out == ""


def test_a_nested_config_may_add_and_tighten(hwlint, repo):
    (repo / "clusters" / ".hwlint.yaml").write_text(
        "policy: {power_headroom_pct: 30}\nfail_on: info\nignore: []\n"
        "signoff: {roles: [technical lead, facilities, finance, legal], signers: {legal: [lee@example.com]}}\n")
    run = hwlint("check", MANIFEST)
    assert run.code == 1 and "PWR001 error" in run.out and "keeping 30% headroom" in run.out, run.out + run.err
    missing = hwlint("verify", MANIFEST)
    assert "sign-off by legal: missing" in missing.out


def test_the_root_may_let_nested_configs_relax_what_it_names(hwlint, repo):
    (repo / ".hwlint.yaml").write_text(ROOT_CONFIG + "allow_nested_relaxing: [power_headroom_pct]\n")
    (repo / "clusters" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 20}\n")
    settings = hwlint("check", MANIFEST, "--show-settings").out
    assert "policy floors: power_headroom_pct=20" in settings
    assert "policy.power_headroom_pct=20 (clusters/.hwlint.yaml)" in settings
    (repo / "clusters" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 20}\nsignoff: {roles: [finance]}\n")
    run = hwlint("check", MANIFEST)
    assert run.code == 2 and "signoff.roles: [finance] relaxes" in run.err  # only what the root names
    (repo / "clusters" / ".hwlint.yaml").write_text("allow_nested_relaxing: [roles]\n")
    run = hwlint("check", MANIFEST)
    assert run.code == 2 and "clusters/.hwlint.yaml:1:1: allow_nested_relaxing: only the root config (.hwlint.yaml)" in run.err, run.err


def test_one_run_reviews_team_folders_with_and_without_a_config_of_their_own(hwlint, repo):
    """One team folder with a .hwlint.yaml, another with none, and a manifest at the root:
    each under its own chain, each config's fail_on deciding for its own manifests."""
    (repo / ".hwlint.yaml").write_text("signoff: {roles: [technical lead, facilities, finance]}\n")
    (repo / "teams" / "a").mkdir(parents=True)
    (repo / "teams" / "b").mkdir(parents=True)
    shutil.copy(GOOD, repo / "teams" / "a" / "m.hw.yaml")
    shutil.copy(GOOD, repo / "teams" / "b" / "m.hw.yaml")
    (repo / "teams" / "a" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 30}\n")
    run = hwlint("check", ".")
    assert run.code == 1, run.out + run.err  # teams/a fails PWR001 under its own floor
    root = f".hwlint.yaml (sha256:{sha(repo / '.hwlint.yaml')[:12]})"
    summary = {line.split(":")[0]: line for line in run.out.splitlines() if "failing" in line}
    assert summary["teams/a/m.hw.yaml"].endswith(
        f"; configs {root}, then teams/a/.hwlint.yaml (sha256:{sha(repo / 'teams' / 'a' / '.hwlint.yaml')[:12]})")
    assert summary["teams/b/m.hw.yaml"].endswith(f"; config {root}")
    assert summary[MANIFEST].endswith(f"; config {root}")
    assert [line.split(":")[0] for line in run.out.splitlines() if " PWR001 " in line] == ["teams/a/m.hw.yaml"]
    assert hwlint("check", "teams/b", MANIFEST).code == 0


def test_two_teams_rule_folders_that_share_a_rule_id_say_why_they_cannot_be_reviewed_together(hwlint, repo):
    """Each team's pack loads on its own, but one run's reports describe a rule by its id: the
    run stops (exit 2) naming both definitions, both configs, and the two ways out."""
    for team in ("a", "b"):
        (repo / "teams" / team / "rules").mkdir(parents=True)
        (repo / "teams" / team / "rules" / "ops.yaml").write_text(TEAM_RULE)
        (repo / "teams" / team / ".hwlint.yaml").write_text("rules: [rules]\n")
        shutil.copy(GOOD, repo / "teams" / team / "m.hw.yaml")
    assert hwlint("check", "teams/a").code != 2 and hwlint("check", "teams/b").code != 2  # each on its own runs
    run = hwlint("check", "teams")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    assert "teams/b/rules/ops.yaml:2:1: rule OPS901 is defined twice (first at teams/a/rules/ops.yaml:2)" in run.err
    assert "(teams/a/.hwlint.yaml, teams/b/.hwlint.yaml) must not define one twice: rename one, or check each " \
           "config's files in a run of its own" in run.err, run.err


# --- A: every output names the configs in effect ------------------------------------------


def test_every_output_names_the_config_files_and_their_digest(hwlint, repo, tmp_path):
    nested = repo / "clusters" / ".hwlint.yaml"
    nested.write_text("fail_on: warning\n")
    chain = [(".hwlint.yaml", sha(repo / ".hwlint.yaml")), ("clusters/.hwlint.yaml", sha(nested))]
    words = ", then ".join(f"{p} (sha256:{d[:12]})" for p, d in chain)
    out = tmp_path / "out"
    out.mkdir()
    hwlint("check", MANIFEST, "--format", f"text:{out}/t.txt", "--format", f"json:{out}/r.json", "--format",
           f"sarif:{out}/r.sarif", "--format", f"markdown:{out}/r.md", "--format", f"comment:{out}/c.md")
    assert (out / "t.txt").read_text().rstrip().endswith(f"; configs {words}")
    entry = json.loads((out / "r.json").read_text())["manifests"][0]
    assert entry["config"] == "clusters/.hwlint.yaml"
    assert entry["config_files"] == [{"path": p, "sha256": f"sha256:{d}"} for p, d in chain]
    run_properties = json.loads((out / "r.sarif").read_text())["runs"][0]["properties"]
    assert run_properties["configs"] == [{"files": [{"path": p, "sha256": f"sha256:{d}"} for p, d in chain],
                                          "description": "configs " + ", then ".join(f"{p} (sha256:{d})" for p, d in chain),
                                          "manifests": 1}]
    assert f"| Config | configs {words} |" in (out / "r.md").read_text().replace("\\", "")
    assert f"**Config:** configs {words}." in (out / "c.md").read_text().replace("\\", "")
    checklist = hwlint("checklist", MANIFEST).out.replace("\\", "")
    assert "| Config | configs " + ", then ".join(f"{p} (sha256:{d})" for p, d in chain) + " |" in checklist
    assert re.search(r"\| Config settings digest \(what sign-offs bind to\) \| sha256:[0-9a-f]{64} \|", checklist)
    verify = hwlint("verify", MANIFEST)
    assert verify.out.splitlines()[-2] == f"{MANIFEST}: judged under configs " + ", then ".join(
        f"{p} (sha256:{d})" for p, d in chain)


def test_outputs_say_no_config_when_none_is_in_effect(hwlint, repo, tmp_path):
    run = hwlint("check", MANIFEST, "--isolated", "--format", "text", "--format", f"json:{tmp_path}/r.json",
                 "--format", f"sarif:{tmp_path}/r.sarif", "--format", f"markdown:{tmp_path}/r.md")
    assert run.out.rstrip().endswith("; no config")
    assert json.loads((tmp_path / "r.json").read_text())["manifests"][0]["config_files"] == []
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    assert sarif["runs"][0]["properties"]["configs"] == [{"files": [], "description": "no config", "manifests": 1}]
    assert "| Config | no config |" in (tmp_path / "r.md").read_text()
    assert hwlint("verify", MANIFEST, "--isolated").out.splitlines()[-2] == f"{MANIFEST}: judged under no config"


# --- B: a sign-off binds the effective config ----------------------------------------------


@pytest.fixture
def signed(hwlint, repo):
    """The manifest signed off by every role under a config without signatures."""
    (repo / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 21}\nfail_on: error\n"
                                       "signoff: {roles: [technical lead, facilities, finance]}\n")
    for role in ROLES:
        assert hwlint("signoff", MANIFEST, "--role", role, "--name", f"N {role}").code == 0
    run = hwlint("verify", MANIFEST)
    assert run.code == 0, run.out
    return repo


def states(run) -> dict[str, str]:
    return {m["role"]: m["state"] for m in re.finditer(r": sign-off by (?P<role>[^(:]+?) \([^)]*\): (?P<state>.*)$",
                                                       run.out, re.M)}


@pytest.mark.parametrize("config, change", [
    ("policy: {power_headroom_pct: 20}\nfail_on: error\nsignoff: {roles: [technical lead, facilities, finance]}\n",
     "policy.power_headroom_pct: 21 → 20 (relaxes)"),
    ("policy: {power_headroom_pct: 21}\nfail_on: error\nignore: [OPS]\nsignoff: {roles: [technical lead, facilities, finance]}\n",
     "ignore: [] → [OPS] (relaxes)"),
    ("policy: {power_headroom_pct: 21}\nfail_on: error\n", None),  # the roles now the defaults: the same three
    ("policy: {power_headroom_pct: 21}\nfail_on: error\nsignoff: {roles: [technical lead, facilities, finance]}\n"
     "catalog: [parts]\n", "catalog: [] → [parts] (relaxes)"),
])
def test_a_config_change_that_relaxes_makes_every_signoff_stale(hwlint, signed, config, change):
    (signed / "parts").mkdir()
    (signed / ".hwlint.yaml").write_text(config)
    run = hwlint("verify", MANIFEST)
    if change is None:
        assert run.code == 0, run.out
        return
    assert run.code == 1, run.out
    for role, state in states(run).items():
        assert state.startswith("stale: the config relaxed since: ") and change in state, (role, state)


def test_a_nested_config_or_isolated_run_that_relaxes_makes_the_signoff_stale(hwlint, signed):
    (signed / ".hwlint.yaml").write_text((signed / ".hwlint.yaml").read_text() + "allow_nested_relaxing: [power_headroom_pct]\n")
    (signed / "clusters" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 10}\n")
    run = hwlint("verify", MANIFEST)
    assert run.code == 1 and "policy.power_headroom_pct: 21 → 10 (relaxes)" in run.out, run.out
    (signed / "clusters" / ".hwlint.yaml").unlink()
    isolated = hwlint("verify", MANIFEST, "--isolated")
    assert isolated.code == 1 and "policy.power_headroom_pct: 21 → (not set) (relaxes)" in isolated.out


def test_a_tightening_config_change_keeps_signoffs_valid_and_names_it(hwlint, signed):
    (signed / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 21.5}\nfail_on: error\n"
                                         "signoff: {roles: [technical lead, facilities, finance]}\n")
    run = hwlint("verify", MANIFEST)
    assert run.code == 0, run.out
    for state in states(run).values():
        assert state == "valid: the config tightened since (still valid): policy.power_headroom_pct: 21 → 21.5 (tightens)"


def test_a_signoff_recorded_before_configs_were_bound_is_stale(hwlint, signed):
    path = signed / MANIFEST
    text = path.read_text()
    old = re.sub(r"    config_digest: sha256:[0-9a-f]{64}\n    config: \|\n(      \S+\n)+", "", text)
    assert old != text and "config_digest" not in old
    path.write_text(old)
    run = hwlint("verify", MANIFEST)
    assert run.code == 1
    assert all(s.startswith("stale: signed before configs were bound to sign-offs") for s in states(run).values()), run.out


# --- D: what a config names lies inside the repository ------------------------------------


@pytest.mark.parametrize("text, line, key", [
    ("rules: [../outside]\n", 1, "rules.0"),
    ("catalog:\n  - team-catalog\n  - ../outside\n", 3, "catalog.1"),
    ("signoff: {allowed_signers: ../outside/allowed_signers}\n", 1, "signoff.allowed_signers"),
])
def test_a_config_may_not_name_a_folder_or_file_outside_the_repository(hwlint, repo, text, line, key):
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("rules: [{id: SECRET-TOKEN-123}]\n")
    (outside / "allowed_signers").write_text("SECRET-TOKEN-123 ssh-ed25519 AAAA\n")
    (repo / "team-catalog").mkdir()
    (repo / ".hwlint.yaml").write_text(text)
    run = hwlint("check", MANIFEST)
    assert run.code == 2, run.out + run.err
    assert f"config error: .hwlint.yaml:{line}:" in run.err and f" {key}: " in run.err, run.err
    assert f"resolves to {os.path.realpath(outside)}" in run.err and f"outside the repository {os.path.realpath(repo)}" in run.err
    assert "SECRET-TOKEN-123" not in run.out + run.err


def test_a_link_out_of_the_repository_is_refused_and_outside_a_repository_the_configs_folder_bounds(hwlint, repo):
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "r.yaml").write_text("rules: []\n")
    os.symlink(outside, repo / "team-rules")
    (repo / ".hwlint.yaml").write_text("rules: [team-rules]\n")
    run = hwlint("check", MANIFEST)
    assert run.code == 2 and f"rules.0: team-rules resolves to {os.path.realpath(outside)}, outside the repository" in run.err
    shutil.rmtree(repo / ".git")
    (repo / ".hwlint.yaml").write_text("rules: [../outside]\n")
    run = hwlint("check", MANIFEST)
    assert run.code == 2 and "outside the config file's folder" in run.err, run.err
