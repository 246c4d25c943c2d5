"""What a change does: `hwlint diff OLD NEW` and `hwlint check FILE --base REF`.

Findings are matched by rule and manifest path, so moving lines changes nothing; the budget
deltas come from the reviews' facts."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT
from test_formats import EXTRA_RULES

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"


def edited(tmp_path: Path, source: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = source.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    target = tmp_path / name
    target.write_text(text)
    return target


def changes_of(hwlint, *args) -> tuple[int, dict]:
    run = hwlint(*args, "--format", "json")
    assert run.err == "", run.err
    doc = json.loads(run.out)
    (manifest,) = doc["manifests"]
    return run.code, manifest["changes"]


def failing(hwlint, path: Path) -> set[str]:
    doc = json.loads(hwlint("check", path, "--format", "json").out)
    return {r["rule_id"] for r in doc["manifests"][0]["results"] if r["status"] == "fail"}


def test_moving_lines_changes_no_finding(hwlint, tmp_path):
    moved = edited(tmp_path, FLAWED, "moved.hw.yaml",
                   ("manifest_version: 1\n", "manifest_version: 1\n# a note\n\n# another\n"),
                   ("  precision: bf16", "  # reordered below\n  precision: bf16"))
    code, changes = changes_of(hwlint, "diff", FLAWED, moved)
    assert code == 0  # nothing introduced
    assert changes["introduced"] == [] and changes["resolved"] == []
    assert {f["rule_id"] for f in changes["still_open"]} == failing(hwlint, FLAWED)
    lines = {f["rule_id"]: f["line"] for f in changes["still_open"]}
    assert lines["GPU002"] == 1 + moved.read_text().splitlines().index("  precision: bf16            # V100 has no bf16 (ruleid: GPU002)")
    assert all(d["change"] == 0 for d in changes["budget"])


def test_fixing_a_finding_resolves_it(hwlint, tmp_path):
    fixed = edited(tmp_path, FLAWED, "fixed.hw.yaml", ("precision: bf16", "precision: fp16"))
    code, changes = changes_of(hwlint, "diff", FLAWED, fixed)
    assert [(f["rule_id"], f["status_now"]) for f in changes["resolved"]] == [("GPU002", "pass")]
    introduced = {f["rule_id"] for f in changes["introduced"]}
    assert introduced | {f["rule_id"] for f in changes["still_open"]} == failing(hwlint, fixed)
    assert code == (1 if any(f["severity"] == "error" for f in changes["introduced"]) else 0)


def test_a_broken_new_version_resolves_nothing(hwlint, tmp_path):
    broken = edited(tmp_path, FLAWED, "broken.hw.yaml", ("- name: row-a", "- name: row a!"))
    code, changes = changes_of(hwlint, "diff", FLAWED, broken)
    assert code == 1 and changes["reviewed"] is False
    assert changes["resolved"] == [] and [f["rule_id"] for f in changes["introduced"]] == ["SCHEMA"]


def test_breaking_the_budget_is_introduced_and_fails(hwlint, tmp_path):
    smaller = edited(tmp_path, GOOD, "smaller.hw.yaml", ("it_capacity_kw: 500", "it_capacity_kw: 300"))
    code, changes = changes_of(hwlint, "diff", GOOD, smaller)
    assert code == 1
    assert "PWR001" in {f["rule_id"] for f in changes["introduced"]}
    limit = next(d for d in changes["budget"] if d["key"] == "facility_limit_kw")
    assert (limit["old"], limit["new"], limit["change"]) == (400, 240, -160)
    text = hwlint("diff", GOOD, smaller)
    assert text.code == 1
    assert re.search(r"^  introduced: .*smaller\.hw\.yaml:\d+:\d+: PWR001 error ", text.out, re.M)
    assert "budget: Usable facility power: 400 kW -> 240 kW (-160 kW)" in text.out


def test_budget_deltas_for_gpus_power_ports_and_memory(hwlint, tmp_path):
    bigger = edited(tmp_path, FLAWED, "bigger.hw.yaml", ("    count: 16\n", "    count: 24\n"),
                    ("tensor: 16", "tensor: 8"))
    _, changes = changes_of(hwlint, "diff", FLAWED, bigger)
    delta = {d["key"]: d for d in changes["budget"]}
    assert (delta["gpus"]["old"], delta["gpus"]["new"], delta["gpus"]["change"]) == (128, 192, 64)
    assert delta["it_power_kw"]["change"] == pytest.approx(8 * 3.5)
    assert delta["switch_ports_needed"]["change"] > 0
    assert delta["memory_per_gpu_gb"]["change"] > 0  # tensor 16 -> 8 doubles each GPU's share
    assert "LNK002" in {f["rule_id"] for f in changes["resolved"]}


def test_markdown_diff_escapes_manifest_strings(hwlint, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "ops.yaml").write_text(EXTRA_RULES)  # OPS901 quotes the manifest's name
    hostile = edited(tmp_path, GOOD, "hostile.hw.yaml", ("\nname: ", '\nname: "<img src=x>|[a](b) @team" # '))
    run = hwlint("diff", GOOD, hostile, "--format", "markdown", "--rules", rules, "--select", "OPS901")
    assert run.code == 0  # a warning
    assert "<img" not in run.out and "&lt;img src=x&gt;\\|\\[a\\](b) `@`team" in run.out
    rows = [line for line in run.out.splitlines() if line.startswith("| ") and "OPS901" in line]
    assert len(rows) == 1 and rows[0].count(" | ") == 3  # the table is not broken


def test_diff_rejects_formats_it_cannot_write(hwlint):
    run = hwlint("diff", FLAWED, GOOD, "--format", "sarif")
    assert run.code == 2 and "not available here" in run.err


# --- --base REF: the base version comes from git --------------------------------------


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "clusters").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "clusters" / "a.hw.yaml").write_text(FLAWED.read_text())
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_base_ref_reads_the_committed_version(hwlint, repo, tmp_path, monkeypatch):
    manifest = repo / "clusters" / "a.hw.yaml"
    manifest.write_text(FLAWED.read_text().replace("precision: bf16", "precision: fp16"))
    monkeypatch.chdir(tmp_path)  # run from outside the repository, with a path into it
    code, changes = changes_of(hwlint, "check", manifest, "--base", "HEAD")
    assert code == 1  # the exit code still reflects every failure, as without --base
    assert changes["base"] == "HEAD" and changes["base_exists"] is True
    assert [f["rule_id"] for f in changes["resolved"]] == ["GPU002"]
    text = hwlint("check", manifest, "--base", "main")
    assert re.search(rf"^{re.escape(str(manifest))}: against main: \d+ introduced, 1 resolved", text.out, re.M)


def test_base_ref_where_the_manifest_is_new(hwlint, repo):
    new = repo / "clusters" / "b.hw.yaml"
    new.write_text(FLAWED.read_text())
    _, changes = changes_of(hwlint, "check", new, "--base", "HEAD")
    assert changes["base_exists"] is False and changes["resolved"] == [] and changes["still_open"] == []
    assert {f["rule_id"] for f in changes["introduced"]} == failing(hwlint, new)


def test_base_markdown_leads_with_the_change_and_fits_a_comment(hwlint, repo):
    manifest = repo / "clusters" / "a.hw.yaml"
    run = hwlint("check", manifest, "--base", "HEAD", "--format", "markdown")
    assert run.out.startswith("## What this change does:")
    assert "0 introduced, 0 resolved" in run.out and "# hwlint review:" in run.out
    assert len(run.out.encode("utf-16-le")) // 2 <= 65_536


@pytest.mark.parametrize("ref, message", [
    ("no-such-branch", "no such commit, branch or tag"),
    ("--output=/tmp/x", "is not a git revision"),
])
def test_bad_base_refs_are_clean_errors(hwlint, repo, ref, message):
    run = hwlint("check", repo / "clusters" / "a.hw.yaml", "--base", ref)
    assert run.code == 2 and message in run.err and run.out == ""


def test_base_outside_a_repository_is_a_clean_error(hwlint, tmp_path):
    manifest = tmp_path / "alone.hw.yaml"
    manifest.write_text(GOOD.read_text())
    if subprocess.run(["git", "-C", str(tmp_path), "rev-parse"], capture_output=True).returncode == 0:
        pytest.skip(f"{tmp_path} lies inside a git repository")
    run = hwlint("check", manifest, "--base", "HEAD")
    assert run.code == 2 and "not inside a git repository" in run.err


def test_base_reads_every_file_with_one_git_process(hwlint, repo, tmp_path, monkeypatch):
    """Many files against one ref: a single git process answers for all of them (a PATH
    wrapper logs each git start), and each file still gets its own base."""
    clusters = repo / "clusters"
    for i in range(5):
        (clusters / f"c{i}.hw.yaml").write_text(FLAWED.read_text())
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "more")
    (clusters / "c0.hw.yaml").write_text(FLAWED.read_text().replace("precision: bf16", "precision: fp16"))
    (clusters / "new.hw.yaml").write_text(FLAWED.read_text())
    real = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout.strip()
    wrapper, log = tmp_path / "bin", tmp_path / "git.log"
    wrapper.mkdir()
    (wrapper / "git").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    (wrapper / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}:{os.environ['PATH']}")
    files = sorted(clusters.glob("*.hw.yaml"))
    run = hwlint("check", *files, "--base", "HEAD", "--format", "json")
    assert run.err == "", run.err
    assert len(log.read_text().splitlines()) == 1, log.read_text()
    by_name = {Path(m["file"]).name: m["changes"] for m in json.loads(run.out)["manifests"]}
    assert [f["rule_id"] for f in by_name["c0.hw.yaml"]["resolved"]] == ["GPU002"]
    assert by_name["new.hw.yaml"]["base_exists"] is False
    assert all(by_name[f"c{i}.hw.yaml"]["introduced"] == [] for i in range(1, 5))
    assert by_name["a.hw.yaml"]["base_exists"] is True


def test_diff_json_validates_against_the_report_schema(hwlint, tmp_path):
    from jsonschema import Draft202012Validator

    fixed = edited(tmp_path, FLAWED, "fixed.hw.yaml", ("precision: bf16", "precision: fp16"))
    doc = json.loads(hwlint("diff", FLAWED, fixed, "--format", "json").out)
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    assert [e.message for e in Draft202012Validator(schema).iter_errors(doc)] == []
    assert doc["manifests"][0]["changes"]["resolved"]
    # the entry of NEW is check's: its passing rules say why in words
    checked = json.loads(hwlint("check", fixed, "--format", "json").out)["manifests"][0]
    evidence = {r["rule_id"]: r["evidence"] for r in doc["manifests"][0]["results"] if r["evidence"]}
    assert evidence and evidence == {r["rule_id"]: r["evidence"] for r in checked["results"] if r["evidence"]}


# --- what the reviewers changed: settings are not fixes ----------------------------------

WAIVER = "  - rule: {rule}\n    reason: re-checked with the vendor\n    approver: lead@example.com\n    expires: {expires}\n"


def test_a_relaxed_policy_is_a_setting_not_a_fix(hwlint, tmp_path):
    relaxed = edited(tmp_path, FLAWED, "relaxed.hw.yaml", ("\noperations:", "\npolicy:\n  power_headroom_pct: 0\noperations:"))
    code, changes = changes_of(hwlint, "diff", FLAWED, relaxed)
    assert code == 0 and changes["resolved"] == []
    assert [(f["rule_id"], f["status_now"]) for f in changes["not_fixed"]] == [("PWR001", "pass")]
    assert "because power_headroom_pct went from 20 to 0" in changes["not_fixed"][0]["why"]
    policy = [s for s in changes["settings"] if s["kind"] == "policy"]
    assert policy == [{"kind": "policy", "rules": ["PWR001"],
                       "text": "policy power_headroom_pct went from 20% (the default) to 0% (the manifest's)"}]
    limit = next(d for d in changes["budget"] if d["key"] == "facility_limit_kw")
    assert (limit["change"], limit["from_settings"]) == (12, 12)  # 60 kW less 20% -> 60 kW: no capacity was added
    text = hwlint("diff", FLAWED, relaxed).out
    assert "0 introduced, 0 resolved" in text and "1 no longer failing because of the settings" in text
    assert "  setting: policy power_headroom_pct went from 20% (the default) to 0% (the manifest's) (moves PWR001)" in text
    assert "  not fixed: PWR001 at facility.it_capacity_kw (now pass) because power_headroom_pct went from 20 to 0" in text
    assert "budget: Usable facility power: 48 kW -> 60 kW (+12 kW, all of it from the settings, not the hardware)" in text
    markdown = hwlint("diff", FLAWED, relaxed, "--format", "markdown").out
    assert "### What the reviewers changed (settings, not fixes)" in markdown
    assert "| PWR001 (error), now pass | facility.it\\_capacity\\_kw | because power\\_headroom\\_pct went from 20 to 0" in markdown


def test_a_real_fix_beside_a_policy_change_is_still_a_fix(hwlint, tmp_path):
    both = edited(tmp_path, FLAWED, "both.hw.yaml", ("\noperations:", "\npolicy:\n  power_headroom_pct: 0\noperations:"),
                  ("it_capacity_kw: 60", "it_capacity_kw: 200"), ("precision: bf16", "precision: fp16"))
    _, changes = changes_of(hwlint, "diff", FLAWED, both)
    assert {f["rule_id"] for f in changes["resolved"]} >= {"PWR001", "GPU002"}  # both pass with the old headroom too
    assert "PWR001" not in {f["rule_id"] for f in changes["not_fixed"]}
    limit = next(d for d in changes["budget"] if d["key"] == "facility_limit_kw")
    assert (limit["change"], limit["from_settings"]) == (152, 40)  # 48 -> 200 kW: 40 kW of it is the headroom


def test_a_tier_change_says_how_many_rules_no_longer_apply(hwlint, tmp_path):
    smaller = edited(tmp_path, FLAWED, "declared.hw.yaml", ("\noperations:", "\ntier: single-node\noperations:"))
    _, changes = changes_of(hwlint, "diff", FLAWED, smaller)
    (tier,) = [s for s in changes["settings"] if s["kind"] == "tier"]
    found = re.match(r"tier changed from multi-node to single-node \(declared in the manifest.*\): (\d+) rules no longer apply \((.*)\)$",
                     tier["text"])
    assert found, tier["text"]
    results = json.loads(hwlint("check", smaller, "--format", "json").out)["manifests"][0]["results"]
    by_tier = [r["rule_id"] for r in results if r["status"] == "skipped" and r["reason"].startswith("applies at")]
    assert int(found.group(1)) == len(by_tier) and found.group(2) == ", ".join(sorted(by_tier))
    assert changes["resolved"] == [] and changes["not_fixed"]
    assert all(f["status_now"] == "skipped" and "it does not apply at single-node" in f["why"] for f in changes["not_fixed"])
    assert set(tier["rules"]) == {f["rule_id"] for f in changes["not_fixed"]}


def test_new_extended_and_removed_waivers_are_settings_not_fixes(hwlint, tmp_path):
    expired = edited(tmp_path, FLAWED, "old.hw.yaml", ("\noperations:", "\nwaivers:\n" + WAIVER.format(rule="GPU001", expires="2026-11-01")
                                                       + WAIVER.format(rule="MEM001", expires="2027-01-31") + "operations:"))
    extended = edited(tmp_path, FLAWED, "new.hw.yaml", ("\noperations:", "\nwaivers:\n" + WAIVER.format(rule="GPU001", expires="2027-06-01")
                                                        + WAIVER.format(rule="LNK002", expires="2027-02-28") + "operations:"))
    _, changes = changes_of(hwlint, "diff", expired, extended)
    texts = sorted(s["text"] for s in changes["settings"] if s["kind"] == "waiver")
    assert texts == ["new waiver for LNK002 until 2027-02-28, approved by lead@example.com: re-checked with the vendor",
                     "waiver for GPU001 extended from 2026-11-01 to 2027-06-01",
                     "waiver for MEM001 removed (it ran until 2027-01-31)"]
    moved = {f["rule_id"]: (f["status_now"], f["why"]) for f in changes["not_fixed"]}
    assert moved == {"GPU001": ("waived", "waived until 2027-06-01"), "LNK002": ("waived", "waived until 2027-02-28")}
    assert "GPU001" not in {f["rule_id"] for f in changes["resolved"]}
    assert "MEM001" in {f["rule_id"] for f in changes["introduced"]}  # its waiver is gone, so it fails again


def test_deselected_rules_are_named_with_how(hwlint, tmp_path):
    (tmp_path / ".hwlint.yaml").write_text("ignore: [BUY005]\n")
    new = edited(tmp_path, FLAWED, "new.hw.yaml", ("precision: bf16", "precision: fp16"))
    old = edited(tmp_path, FLAWED, "old.hw.yaml")
    _, changes = changes_of(hwlint, "diff", old, new, "--ignore", "PWR")
    deselected = {s["text"].split(" (")[0]: s["rules"] for s in changes["settings"] if s["kind"] == "deselected"}
    (pwr,) = [v for k, v in deselected.items() if re.fullmatch(r"\d+ rules deselected by --ignore PWR", k)]
    assert len(pwr) == len(re.findall(r"^\s*- id: PWR\d+", (ROOT / "rules" / "pwr.yaml").read_text(), re.M))
    assert any(k.startswith("1 rule deselected by ignore BUY005 in ") for k in deselected), deselected
    assert not {f["rule_id"] for f in changes["resolved"] + changes["not_fixed"]} & set(pwr)
    assert "deselected by --ignore PWR" in hwlint("diff", old, new, "--ignore", "PWR").out
    assert "**deselected**: " in hwlint("diff", old, new, "--ignore", "PWR", "--format", "markdown").out


def test_base_ref_tells_a_policy_change_from_a_fix(hwlint, repo):
    manifest = repo / "clusters" / "a.hw.yaml"
    manifest.write_text(FLAWED.read_text().replace("\noperations:", "\npolicy:\n  power_headroom_pct: 0\noperations:"))
    _, changes = changes_of(hwlint, "check", manifest, "--base", "HEAD")
    assert changes["resolved"] == [] and [f["rule_id"] for f in changes["not_fixed"]] == ["PWR001"]
    assert "setting: policy power_headroom_pct went from 20% (the default) to 0%" in hwlint("check", manifest, "--base", "HEAD").out
