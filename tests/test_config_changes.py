"""A change is judged against what governed its base: `check --base` reviews the base version
under the config it had at the base revision, lists a changed config key by key (relaxes or
tightens), and reports a finding that passes only because a setting was relaxed as
introduced-by-relaxation (exit 1, never "ready for sign-off"); `hwlint diff` does the same for
the manifest's own settings, lists the field changes and attributes the budget's moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXAMPLES, TEAM_RULE, hwlint_process
from test_diff import git

B200 = EXAMPLES / "superpod-b200.hw.yaml"  # fails PWR001 (error) and PWR006 at 25% headroom, passes at 20%
PRETRAIN = EXAMPLES / "multi-node-pretrain.hw.yaml"


@pytest.fixture
def governed(tmp_path: Path) -> Path:
    """A repository whose one manifest is governed by `.hwlint.yaml` with 25% power headroom."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.hw.yaml").write_text(B200.read_text())
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 25\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def changes(hwlint, *args) -> tuple[int, dict]:
    run = hwlint(*args, "--format", "json")
    assert run.err == "", run.err
    (manifest,) = json.loads(run.out)["manifests"]
    return run.code, manifest["changes"]


def test_relaxing_only_the_config_is_introduced_by_relaxation(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert code == 1  # as an introduced error fails the run
    relaxed = {f["rule_id"]: f for f in found["introduced_by_relaxation"]}
    assert set(relaxed) == {"PWR001", "PWR006"} and found["resolved"] == [] and found["still_open"] == []
    assert relaxed["PWR001"]["status_now"] == "pass"
    assert "policy.power_headroom_pct 25 -> 20" in relaxed["PWR001"]["why"]
    assert "keeping 25% headroom leaves 1,875 kW" in relaxed["PWR001"]["message"]  # the base config's numbers
    assert found["config"] == {"base": ".hwlint.yaml", "new": ".hwlint.yaml", "changes": [
        {"key": "policy.power_headroom_pct", "old": 25, "new": 20, "direction": "relaxes"}]}
    text = hwlint("check", "a.hw.yaml", "--base", "main")
    assert text.code == 1
    assert "a.hw.yaml: against main: 0 introduced, 2 introduced-by-relaxation, 0 resolved, 0 still open" in text.out
    assert "  config: policy.power_headroom_pct: 25 -> 20 (relaxes)" in text.out
    assert "introduced-by-relaxation: a.hw.yaml:" in text.out and "PWR001 error (now pass)" in text.out


def test_the_comment_does_not_read_ready_for_signoff(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    before = hwlint("check", "a.hw.yaml", "--base", "main", "--format", "comment")
    assert "1 unchanged" in before.out and before.code == 1  # same bytes, same config: unchanged, failing
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    run = hwlint("check", "a.hw.yaml", "--base", "main", "--format", "comment")
    assert run.code == 1
    assert "ready for sign-off" not in run.out and "1 unchanged" not in run.out
    assert "## hwlint: ❌ changes needed: passes only because a setting was relaxed" in run.out
    assert "0 introduced, 2 introduced-by-relaxation, 0 resolved, config relaxed" in run.out
    assert "### What the config change does" in run.out
    assert "| policy.power\\_headroom\\_pct | 25 | 20 | relaxes |" in run.out
    markdown = hwlint("check", "a.hw.yaml", "--base", "main", "--format", "markdown").out
    assert "🔓 introduced-by-relaxation" in markdown and "| policy.power\\_headroom\\_pct | 25 | 20 | relaxes |" in markdown


def test_tightening_the_config_introduces_what_now_fails(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    git(governed, "commit", "-q", "-am", "relaxed")
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 25\n")
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert code == 1
    assert {f["rule_id"] for f in found["introduced"]} == {"PWR001", "PWR006"}  # the base passed under its 20%
    assert found["introduced_by_relaxation"] == []
    assert found["config"]["changes"] == [{"key": "policy.power_headroom_pct", "old": 20, "new": 25, "direction": "tightens"}]


def test_ignoring_a_rule_in_the_config_is_a_relaxation(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 25\nignore: [PWR001]\n")
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert code == 1
    assert [(f["rule_id"], f["status_now"]) for f in found["introduced_by_relaxation"]] == [("PWR001", "gone")]
    assert found["config"]["changes"] == [{"key": "ignore", "old": [], "new": ["PWR001"], "direction": "relaxes"}]


def test_a_config_that_appears_or_goes_is_compared_with_none(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    (governed / ".hwlint.yaml").unlink()
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert code == 1 and found["config"]["base"] == ".hwlint.yaml" and found["config"]["new"] is None
    assert {f["rule_id"] for f in found["introduced_by_relaxation"]} == {"PWR001", "PWR006"}
    assert found["config"]["changes"][0]["direction"] == "relaxes"


def test_relaxing_fail_on_in_the_config_does_not_pass_the_run(hwlint, tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.hw.yaml").write_text(PRETRAIN.read_text())  # fails PWR006 (a warning) at 25% headroom
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 25\nfail_on: warning\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    assert hwlint("check", "a.hw.yaml", "--base", "main").code == 1
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 25\n")
    assert hwlint("check", "a.hw.yaml").code == 0  # on its own, today's config lets the warning through
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert code == 1 and [f["rule_id"] for f in found["still_open"]] == ["PWR006"]
    assert found["config"]["changes"] == [{"key": "fail_on", "old": "warning", "new": "error", "direction": "relaxes"}]
    assert hwlint("check", "a.hw.yaml", "--base", "main", "--fail-on", "error").code == 0  # the command line wins


def test_a_new_manifest_under_a_relaxed_config(hwlint, governed, monkeypatch):
    monkeypatch.chdir(governed)
    (governed / "b.hw.yaml").write_text(B200.read_text())
    (governed / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    code, found = changes(hwlint, "check", "b.hw.yaml", "--base", "main")
    assert code == 1 and found["base_exists"] is False
    assert {f["rule_id"] for f in found["introduced_by_relaxation"]} == {"PWR001", "PWR006"}


@pytest.mark.parametrize("base, head, key, direction", [
    ("signoff: {roles: [a, b, c]}", "signoff: {roles: [a, b]}", "signoff.roles", "relaxes"),
    ("signoff: {roles: [a, b]}", "signoff: {roles: [a, b, c]}", "signoff.roles", "tightens"),
    ("fail_on: warning", "fail_on: error", "fail_on", "relaxes"),
    ("select: [PWR]", "select: [PWR, STO]", "select", "tightens"),
    ("select: [PWR, STO]", "select: [PWR]", "select", "relaxes"),
    ("severity: {BUY009: error}", "{}", "severity.BUY009", "relaxes"),
    ("allow_relaxing: []", "allow_relaxing: [compute_efficiency]", "allow_relaxing", "relaxes"),
    ("docs_url: https://a.example/rules.md", "docs_url: https://b.example/rules.md", "docs_url", "neutral"),
])
def test_each_config_key_is_marked(hwlint, governed, monkeypatch, base, head, key, direction):
    monkeypatch.chdir(governed)
    (governed / ".hwlint.yaml").write_text(base + "\n")
    git(governed, "commit", "-q", "-am", "config")
    (governed / ".hwlint.yaml").write_text(head + "\n")
    run = hwlint("check", "a.hw.yaml", "--base", "main", "--format", "json", "--exit-zero")
    (manifest,) = json.loads(run.out)["manifests"]
    assert [(c["key"], c["direction"]) for c in manifest["changes"]["config"]["changes"]] == [(key, direction)]


# --- hwlint diff: what the manifest's own settings mask, field by field -----------------


def edited(tmp_path: Path, name: str, *edits: tuple[str, str], extra: str = "") -> Path:
    text = PRETRAIN.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    target = tmp_path / name
    target.write_text(text + extra)
    return target


SLOW = ("read_gb_s: 120, write_gb_s: 60}", "read_gb_s: 120, write_gb_s: 0.5}")
RELAXED = "policy:\n  checkpoint_write_minutes: 60\n"


def test_diff_names_what_a_relaxation_masks(hwlint, tmp_path):
    new = edited(tmp_path, "new.hw.yaml", SLOW, extra=RELAXED)
    code, found = changes(hwlint, "diff", PRETRAIN, new)
    assert code == 0  # STO002 is a warning
    (masked,) = found["introduced_by_relaxation"]
    assert masked["rule_id"] == "STO002" and masked["status_now"] == "pass"
    assert "checkpoint_write_minutes went from 10 to 60" in masked["why"]
    assert "at 0.5 GB/s the scratch tier takes 32.7 minutes" in masked["message"]
    assert hwlint("diff", PRETRAIN, new, "--fail-on", "warning").code == 1  # as an introduced warning would
    text = hwlint("diff", PRETRAIN, new).out
    assert ": 0 introduced, 1 introduced-by-relaxation, 0 resolved, 0 still open" in text
    assert "  field: storage.tiers[0].write_gb_s: 60 -> 0.5" in text


def test_diff_lists_field_changes_and_attributes_the_budget(hwlint, tmp_path):
    new = edited(tmp_path, "new.hw.yaml", SLOW, ("lead_time_weeks: 12, pool: dgx", "lead_time_weeks: 14, pool: dgx"))
    _, found = changes(hwlint, "diff", PRETRAIN, new)
    fields = {f["path"]: f for f in found["fields"]}
    assert set(fields) == {"procurement.quotes[0].lead_time_weeks", "storage.tiers[0].write_gb_s"}
    assert fields["procurement.quotes[0].lead_time_weeks"] == {
        "path": "procurement.quotes[0].lead_time_weeks", "old": 12, "new": 14, "budget": {"ready_date": 14}}
    assert fields["storage.tiers[0].write_gb_s"]["budget"] == {}
    text = hwlint("diff", PRETRAIN, new).out
    assert ("budget: Ready to train (delivery, installation, burn-in): 2027-02-25 -> 2027-03-11 (+14 days; by field: "
            "procurement.quotes[0].lead_time_weeks 12 -> 14: +14 days)") in text
    markdown = hwlint("diff", PRETRAIN, new, "--format", "markdown").out
    assert "| storage.tiers\\[0\\].write\\_gb\\_s | 60 | 0.5 |" in markdown


def test_a_base_config_whose_rule_folder_is_gone_is_judged_with_the_folder_as_it_was(hwlint, tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "team").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.hw.yaml").write_text(PRETRAIN.read_text())
    (root / "team" / "r.yaml").write_text(TEAM_RULE)
    (root / ".hwlint.yaml").write_text("rules: [team]\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    (root / ".hwlint.yaml").unlink()
    (root / "team" / "r.yaml").unlink()
    (root / "team").rmdir()
    monkeypatch.chdir(root)
    run = hwlint("check", "a.hw.yaml", "--base", "main")
    assert run.code in (0, 1) and "Traceback" not in run.err, run.err  # the base's own rules, read from git, ran
    assert "  config: rules: [team] -> [] (relaxes)" in run.out
    assert "  config: rules folder team: as at the base -> changed: r.yaml (gone) (relaxes)" in run.out


def team_repo(tmp_path: Path, monkeypatch, manifest: Path, root_config: str, team_config: str) -> Path:
    """A repository (the current folder) with a root config and team/a.hw.yaml under a team
    config of its own, committed on main."""
    root = tmp_path / "repo"
    (root / "team").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "team" / "a.hw.yaml").write_text(manifest.read_text())
    (root / ".hwlint.yaml").write_text(root_config)
    (root / "team" / ".hwlint.yaml").write_text(team_config)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


def test_the_base_is_judged_under_its_whole_config_chain(hwlint, tmp_path, monkeypatch):
    """A manifest under a team config inherits the root's: relaxing the root's floor is a
    relaxation for it too, and the team config's own edit is the only other key listed (the
    base read as its nearest config alone had no floor, so 25 -> 20 read as a floor added)."""
    root = team_repo(tmp_path, monkeypatch, B200, "policy:\n  power_headroom_pct: 25\n", "fail_on: warning\n")
    code, found = changes(hwlint, "check", "team/a.hw.yaml", "--base", "main")
    assert code == 1 and found["config"]["changes"] == [] and found["introduced_by_relaxation"] == []
    (root / "team" / ".hwlint.yaml").write_text("fail_on: info\n")
    code, found = changes(hwlint, "check", "team/a.hw.yaml", "--base", "main")
    assert found["config"]["changes"] == [{"key": "fail_on", "old": "warning", "new": "info", "direction": "tightens"}]
    assert found["introduced_by_relaxation"] == []
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    code, found = changes(hwlint, "check", "team/a.hw.yaml", "--base", "main")
    assert code == 1
    assert {"key": "policy.power_headroom_pct", "old": 25, "new": 20, "direction": "relaxes"} in found["config"]["changes"]
    assert {f["rule_id"] for f in found["introduced_by_relaxation"]} >= {"PWR001"}


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_a_root_config_edit_under_a_team_config_names_the_root_file(hwlint, tmp_path, monkeypatch, output):
    """The root's edit is named as the root's: the summary said "team/.hwlint.yaml, changed" and
    "ignore BUY in team/.hwlint.yaml" when only the root config had changed, sending the reviewer
    to the wrong file; and the rules it deselects ran on the base, which the summary now says."""
    root = team_repo(tmp_path, monkeypatch, PRETRAIN, "fail_on: warning\n", "severity: {BUY009: error}\n")
    (root / ".hwlint.yaml").write_text("fail_on: warning\nignore: [PWR]\n")
    out = hwlint("check", "team/a.hw.yaml", "--base", "main", "--format", output).out
    assert ".hwlint.yaml changed (team/.hwlint.yaml unchanged)" in out, out
    assert "ignore PWR in .hwlint.yaml" in out and "in team/.hwlint.yaml" not in out, out
    assert "not run on this version; the base version ran them" in out and "either version" not in out, out


def test_a_team_catalog_entry_added_in_the_change_is_judged_with_the_base_catalog(hwlint, tmp_path, monkeypatch):
    """The config is unchanged; the pull request edits only the team catalog folder it names,
    adding a V100 with 200 GB: the base is judged with the catalog as it was, so what the
    override lets pass is introduced-by-relaxation and the folder is listed as changed."""
    team = (EXAMPLES / "team-catalog" / "gpus.yaml").read_text()
    own_part_only = "gpus:\n" + team[team.index("  - name: ACME-X1-96GB"):]
    root = tmp_path / "repo"
    (root / "team").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "a.hw.yaml").write_text((EXAMPLES / "flawed-cluster.hw.yaml").read_text())
    (root / ".hwlint.yaml").write_text("catalog: [team]\n")
    (root / "team" / "gpus.yaml").write_text(own_part_only)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    code, found = changes(hwlint, "check", "a.hw.yaml", "--base", "main")
    assert found["config"]["changes"] == [] and found["introduced_by_relaxation"] == []
    (root / "team" / "gpus.yaml").write_text(team)
    run = hwlint_process("check", "a.hw.yaml", "--base", "main", "--format", "json", cwd=root)  # a fresh process:
    code, found = run.code, json.loads(run.out)["manifests"][0]["changes"]  # the in-process catalog is read once
    assert code == 1
    assert found["config"]["changes"] == [{"key": "catalog folder team", "old": "as at the base",
                                           "new": "changed: gpus.yaml", "direction": "relaxes"}]
    assert "BUY010" in {f["rule_id"] for f in found["introduced"]}
    relaxed = {f["rule_id"] for f in found["introduced_by_relaxation"]}
    assert "GPU001" in relaxed, found
