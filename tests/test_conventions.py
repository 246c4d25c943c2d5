"""Command-line conventions ruff and yamllint users expect: folders, standard input,
--exit-zero, --quiet, --statistics, colour, progress, checked --select/--ignore ids, findings
in file and line order, and a team's own rule prefixes."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, TODAY

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FINDING = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]{2,5}\d{3}) (?P<sev>error|warning|info) ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

ORG_RULE = """\
rules:
  - id: {id}
    title: The manifest names an owner
    severity: error
    tiers: all
    require: "manifest.owner is defined"
    message: "No owner is named: nobody answers for this purchase."
    fix: "Add `owner:` with a name or e-mail."
    cite: [seed-gear-check]
    at: "name"
    tests:
      - {{name: names an owner, base: ../examples/single-node-finetune.hw.yaml, expect: pass}}
      - {{name: no owner, base: ../examples/single-node-finetune.hw.yaml, unset: [owner], expect: fail}}
"""


def test_a_folder_is_searched_for_manifests(hwlint, tmp_path):
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    shutil.copy(FLAWED, tmp_path / "a" / "deep" / "x.hw.yaml")
    shutil.copy(GOOD, tmp_path / "b.hw.yaml")
    shutil.copy(FLAWED, tmp_path / ".hidden" / "skip.hw.yaml")
    (tmp_path / "a" / "other.yaml").write_text("not: a manifest\n")
    run = hwlint("check", tmp_path)
    assert run.code == 1, run.err
    summaries = [line.split(": ")[0] for line in run.out.splitlines() if " failing" in line and not FINDING.match(line)]
    assert summaries == [str(tmp_path / "a" / "deep" / "x.hw.yaml"), str(tmp_path / "b.hw.yaml")]


def test_a_folder_without_manifests_adds_none_and_nothing_to_review_exits_0(hwlint, tmp_path):
    run = hwlint("check", tmp_path, GOOD)
    assert run.code == 0 and run.out.splitlines()[-1].startswith(f"{GOOD}: 0 failing"), run.err
    empty = hwlint("check", tmp_path)  # as ruff: a note, no failure
    assert empty.code == 0 and empty.out == ""
    assert empty.err == f"hwlint: no manifests (*.hw.yaml, *.hw.yml) in {tmp_path}; nothing to review\n"
    assert hwlint("check", tmp_path, "-q").err == ""


def test_dash_reads_standard_input_named_by_stdin_filename(hwlint, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FLAWED.read_bytes())))
    run = hwlint("check", "-", "--stdin-filename", "clusters/legacy.hw.yaml")
    assert run.code == 1
    lines = run.out.splitlines()
    assert lines[0].startswith("clusters/legacy.hw.yaml:17:3: GPU002 error")
    assert lines[-1].startswith("clusters/legacy.hw.yaml: 28 failing")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"plan: [\n")))
    broken = hwlint("check", "-")
    assert broken.code == 2 and broken.out.startswith("-:")


def test_exit_zero_quiet_and_statistics(hwlint, tmp_path):
    assert hwlint("check", FLAWED, "--exit-zero").code == 0
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("plan: [\n")
    assert hwlint("check", broken, "--exit-zero").code == 2  # a review that could not be done is not a pass
    full = hwlint("check", FLAWED).out.splitlines()
    quiet = hwlint("check", FLAWED, "-q")
    assert quiet.code == 1 and quiet.out.splitlines() == full[:-1] and all(map(FINDING.match, quiet.out.splitlines()))
    assert hwlint("check", GOOD, "-q").out == ""  # a waiver and a summary are not findings
    stats = hwlint("check", FLAWED, GOOD, "--statistics")
    lines = stats.out.splitlines()
    assert not any(FINDING.match(line) for line in lines)
    rows = [line.split("\t") for line in lines if "\t" in line]
    assert all(len(row) == 4 and row[2] in ("error", "warning", "info") for row in rows)  # tab-separated, as ruff's
    counts = {rule_id: int(n) for n, rule_id, _, _ in rows}
    expected = {}
    for m in filter(None, map(FINDING.match, full)):
        expected[m["id"]] = expected.get(m["id"], 0) + 1
    assert counts == expected and sum(counts.values()) == 28
    twice = tmp_path / "flawed-again.hw.yaml"  # a second failing manifest, so that counts differ from 1
    twice.write_text(FLAWED.read_text())
    stats = hwlint("check", *sorted(FLAWED.parent.glob("*.hw.yaml")), twice, "--statistics").out.splitlines()
    ordered = [(-int(row[0]), row[1]) for row in (line.split("\t") for line in stats) if len(row) == 4]
    assert ordered == sorted(ordered) and ordered[0][0] < -1  # most frequent first, then by id


def test_text_findings_are_in_file_and_line_order(hwlint):
    lines = [m for m in map(FINDING.match, hwlint("check", FLAWED).out.splitlines()) if m]
    positions = [(int(m["line"]), int(m["col"])) for m in lines]
    assert positions == sorted(positions) and len(set(m["id"] for m in lines)) > 10


def test_colour_only_when_asked_or_on_a_terminal(hwlint, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert not ANSI.search(hwlint("check", FLAWED).out)  # not a terminal
    coloured = hwlint("check", FLAWED, "--color", "always").out
    assert ANSI.search(coloured) and ANSI.sub("", coloured) == hwlint("check", FLAWED).out
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ANSI.search(hwlint("check", FLAWED).out)
    assert not ANSI.search(hwlint("check", FLAWED, "--format", "markdown").out)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not ANSI.search(hwlint("check", FLAWED).out)
    assert not ANSI.search(hwlint("check", FLAWED, "--color", "never").out)


@pytest.mark.parametrize("env, coloured", [
    ({"FORCE_COLOR": "0"}, True),  # force-color.org: set and not empty, whatever the value
    ({"FORCE_COLOR": ""}, False),
    ({"CLICOLOR_FORCE": "1"}, True),  # bixense.com/clicolors
    ({"CLICOLOR_FORCE": "0"}, False),
    ({"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, False),  # no-color.org comes first
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
])
def test_colour_follows_the_forcing_conventions_when_piped(hwlint, monkeypatch, env, coloured):
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert bool(ANSI.search(hwlint("check", FLAWED).out)) is coloured
    assert not ANSI.search(hwlint("check", FLAWED, "--color", "never").out)


def test_output_format_is_rufs_name_for_format(hwlint, tmp_path):
    assert hwlint("check", FLAWED, "--output-format", "json").out == hwlint("check", FLAWED, "--format", "json").out
    out = tmp_path / "r.sarif"
    assert hwlint("check", FLAWED, "--output-format", f"sarif:{out}").code == 1 and out.read_text().startswith("{")


def test_extend_select_and_extend_ignore_add_to_the_selection(hwlint, tmp_path):
    def failing(*args: str) -> set[str]:
        return {m["id"] for m in map(FINDING.match, hwlint("check", *args).out.splitlines()) if m}

    assert failing(FLAWED, "--select", "GPU", "--extend-select", "PWR001") == failing(FLAWED, "--select", "GPU,PWR001")
    assert failing(FLAWED, "--extend-ignore", "PWR") == failing(FLAWED, "--ignore", "PWR")
    assert failing(FLAWED, "--extend-select", "PWR001") == failing(FLAWED)  # no select in effect: every rule runs
    manifest = tmp_path / "a.hw.yaml"
    shutil.copy(FLAWED, manifest)
    (tmp_path / ".hwlint.yaml").write_text("select: [STO]\n")
    assert failing(manifest, "--extend-select", "GPU002") == failing(manifest, "--select", "STO,GPU002")
    run = hwlint("check", FLAWED, "--extend-select", "GPUX01")
    assert run.code == 2 and '--extend-select: no rule is named "GPUX01"' in run.err


@pytest.mark.parametrize("xdg", ["", "  ", "/somewhere/cache"])
def test_the_cache_folder_is_the_one_platformdirs_names(monkeypatch, xdg):
    import platformdirs

    from linter.engine.packcache import platform_cache

    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert platform_cache() == Path(platformdirs.user_cache_dir("hwlint", appauthor=False))


def test_the_pack_cache_lives_where_the_platform_keeps_caches(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HWLINT_CACHE", "HWLINT_CACHE_DIR")}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home"), "HWLINT_TODAY": TODAY}
    assert subprocess.run([sys.executable, "-m", "linter.cli", "check", str(GOOD)], env=env, capture_output=True,
                          timeout=120).returncode == 0
    expected = Path(subprocess.run([sys.executable, "-c", "import platformdirs; print(platformdirs.user_cache_dir("
                                    "'hwlint', appauthor=False))"], env=env, capture_output=True, text=True).stdout.strip())
    assert list(expected.glob("pack-*.pickle")) and expected == tmp_path / "xdg" / "hwlint"
    chosen = tmp_path / "chosen"
    env["HWLINT_CACHE_DIR"] = str(tmp_path / "from-env")
    run = subprocess.run([sys.executable, "-m", "linter.cli", "check", str(GOOD), "--cache-dir", str(chosen)], env=env,
                         capture_output=True, timeout=120)
    assert run.returncode == 0 and list(chosen.glob("pack-*.pickle")) and not (tmp_path / "from-env").exists()
    run = subprocess.run([sys.executable, "-m", "linter.cli", "check", str(GOOD), "--no-cache"], env=env,
                         capture_output=True, timeout=120)
    assert run.returncode == 0 and not (tmp_path / "from-env").exists()


def on_a_terminal(args: list[str], env: dict, stream: str) -> tuple[str, str]:
    """Run hwlint with `stream` (stdout or stderr) on a pseudo-terminal: (terminal text, the other stream)."""
    leader, follower = pty.openpty()
    kinds = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: follower}
    proc = subprocess.Popen([sys.executable, "-m", "linter.cli", *args], cwd=ROOT, env=env, **kinds)
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: hwlint has exited
            break
        if not chunk:
            break
        seen += chunk
    other = (proc.stderr if stream == "stdout" else proc.stdout).read().decode()
    proc.wait(timeout=120)
    os.close(leader)
    return seen.decode(errors="replace"), other


def test_colour_and_progress_on_a_real_terminal(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | {"HWLINT_TODAY": TODAY, "TERM": "xterm"}
    shown, _ = on_a_terminal(["check", str(FLAWED)], env, "stdout")
    assert ANSI.search(shown) and "GPU002" in shown
    shown, _ = on_a_terminal(["check", str(FLAWED)], env | {"NO_COLOR": "1"}, "stdout")
    assert not ANSI.search(shown) and "GPU002" in shown
    for i in range(25):
        shutil.copy(GOOD, tmp_path / f"m{i:02}.hw.yaml")
    progress, out = on_a_terminal(["check", str(tmp_path)], env, "stderr")
    assert "reviewed 25/25 files" in progress and out.count(" failing") == 25
    assert "reviewed" not in out  # the report itself stays clean
    quiet, _ = on_a_terminal(["check", "-q", str(tmp_path)], env, "stderr")
    assert "reviewed" not in quiet
    piped = subprocess.run([sys.executable, "-m", "linter.cli", "check", str(tmp_path)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert piped.stderr == ""  # no progress when standard error is not a terminal


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_rule_ids_are_a_usage_error_with_a_suggestion(hwlint, option):
    run = hwlint("check", FLAWED, option, "NOPE999")
    assert run.code == 2 and 'no rule is named "NOPE999"' in run.err and "rules list" in run.err
    typo = hwlint("check", FLAWED, option, "PWR001,GUP")
    assert typo.code == 2 and 'did you mean "GPU"' in typo.err
    assert hwlint("check", FLAWED, option, "pwr,GPU001").code in (0, 1)


def test_a_team_rule_may_use_its_own_prefix(hwlint, tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    shutil.copy(EXAMPLES / "single-node-finetune.hw.yaml", folder)  # case bases stay inside the rule folder
    (folder / "org.yaml").write_text(ORG_RULE.format(id="ORG001").replace("../examples/", ""))
    no_owner = tmp_path / "x.hw.yaml"
    no_owner.write_text(FLAWED.read_text().replace("owner: platform@example.com\n", ""))
    run = hwlint("check", no_owner, "--rules", folder, "--select", "ORG")
    assert run.code == 1 and re.search(r"^.*x\.hw\.yaml:\d+:\d+: ORG001 error No owner is named", run.out, re.M), run.out + run.err
    markdown = hwlint("check", no_owner, "--rules", folder, "--select", "ORG001", "--format", "markdown").out
    assert "Team rules (ORG)" in markdown
    assert hwlint("rules", "test", folder).code == 0
    for bad, why in (("WVR001", "reserved"), ("X001", "does not match"), ("ABCDEF001", "does not match")):
        (folder / "org.yaml").write_text(ORG_RULE.format(id=bad))
        refused = hwlint("rules", "list", "--rules", folder)
        assert refused.code == 2 and why in refused.err, refused.err
