"""The command line as users run it: output shape, options and exit codes."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, hwlint_process

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]{3}\d{3}) (?P<sev>error|warning|info) .+")


def test_failing_manifest_lists_findings_and_exits_1(hwlint):
    run = hwlint("check", FLAWED)
    assert run.code == 1
    lines = run.out.strip().splitlines()
    findings = [FINDING.match(line) for line in lines[:-1]]
    assert all(findings), lines
    assert {"GPU001", "GPU002", "LNK002", "NET002", "PWR001", "PWR003"} <= {m["id"] for m in findings}
    precision = next(m for m in findings if m["id"] == "GPU002")
    assert FLAWED.read_text().splitlines()[int(precision["line"]) - 1].strip().startswith("precision: bf16")
    assert "bf16" in precision.string and "fp16" in precision.string
    assert lines[-1].startswith(f"{FLAWED}: ") and "failing" in lines[-1] and "tier multi-node" in lines[-1]


def test_passing_manifest_exits_0(hwlint):
    run = hwlint("check", GOOD)
    assert run.code == 0, run.out
    *findings, summary = run.out.splitlines()
    assert "0 failing" in summary
    assert all(" waived " in line for line in findings), findings  # the example's one waiver is shown


def test_several_files_one_summary_each(hwlint):
    run = hwlint("check", GOOD, FLAWED)
    assert run.code == 1
    assert sum(line.startswith(f"{GOOD}: ") for line in run.out.splitlines()) == 1


def test_select_and_ignore(hwlint):
    only_power = hwlint("check", FLAWED, "--select", "PWR")
    ids = {m["id"] for m in map(FINDING.match, only_power.out.splitlines()) if m}
    assert ids and all(i.startswith("PWR") for i in ids)
    rest = hwlint("check", FLAWED, "--ignore", "GPU,LNK,NET,PWR,MEM,STO,OPS,BUY")
    assert rest.code == 0 and "0 failing" in rest.out


def test_fail_on_threshold(hwlint, tmp_path):
    # Only power rules fail here, all errors: --fail-on error exits 1; with them ignored, 0.
    assert hwlint("check", FLAWED, "--select", "PWR001", "--fail-on", "error").code == 1
    assert hwlint("check", GOOD, "--fail-on", "info").code in (0, 1)


def test_tier_override_changes_what_applies(hwlint):
    run = hwlint("check", GOOD, "--tier", "single-node", "--format", "markdown")
    assert "**single-node**: set on the command line" in run.out
    assert "| NET001 |" in run.out  # now not applicable


def test_output_file(hwlint, tmp_path):
    out = tmp_path / "review.md"
    run = hwlint("check", FLAWED, "--format", "markdown", "--output", out)
    assert run.code == 1 and run.out == ""
    assert out.read_text().startswith("# hwlint review: legacy-v100 30B pretraining")


def test_missing_file_is_exit_2_one_line(hwlint, tmp_path):
    run = hwlint("check", tmp_path / "nope.hw.yaml")
    assert run.code == 2
    assert "no such file" in run.out and "Traceback" not in run.out + run.err


def test_usage_error_exit_2(hwlint):
    run = hwlint("check", GOOD, "--format", "pdf")
    assert run.code == 2 and "Traceback" not in run.err


def test_rules_list_and_show(hwlint):
    listing = hwlint("rules", "list")
    assert listing.code == 0 and re.search(r"^PWR001\s+error\s+all tiers", listing.out, re.M)
    shown = hwlint("rules", "show", "lnk001")
    assert shown.code == 0
    for section in ("Why it matters:", "Fails:", "Passes:", "Fix:", "Sources:", "Narayanan"):
        assert section in shown.out
    unknown = hwlint("rules", "show", "LNK010")
    assert unknown.code == 2 and "did you mean" in unknown.err


def test_schema_command_prints_the_committed_schema(hwlint):
    run = hwlint("schema")
    schema = json.loads(run.out)
    assert schema["title"] == "Manifest" and "node_pools" in schema["properties"]


def test_init_writes_a_starter_that_reviews_cleanly(hwlint, tmp_path):
    target = tmp_path / "new.hw.yaml"
    assert hwlint("init", target).code == 0
    run = hwlint("check", target)
    # nothing fails in the starter: what it cannot know is left blank, "to confirm"
    assert run.code == 0, run.out
    summary = run.out.strip().splitlines()[-1]
    assert " 0 failing, " in summary and "to confirm" in summary, summary
    assert "SCHEMA" not in run.out and "CATALOG" not in run.out
    assert hwlint("init", target).code == 2  # never overwrites silently


def test_init_writes_the_schema_beside_and_creates_folders(hwlint, tmp_path):
    target = tmp_path / "sub" / "dir" / "x.hw.yaml"
    run = hwlint("init", target)
    assert run.code == 0, run.err
    assert target.read_text().startswith("# yaml-language-server: $schema=hwlint.schema.json\n")
    beside = target.parent / "hwlint.schema.json"
    assert beside.read_text() == hwlint("schema").out
    assert json.loads(beside.read_text())["$id"] == "hwlint.schema.json"


def test_init_leaves_a_foreign_schema_file_alone(hwlint, tmp_path):
    (tmp_path / "hwlint.schema.json").write_text('{"mine": true}')
    run = hwlint("init", tmp_path / "a.hw.yaml")
    assert run.code == 0 and "not hwlint's schema" in run.err
    assert (tmp_path / "hwlint.schema.json").read_text() == '{"mine": true}'


def test_init_dash_writes_standard_output(hwlint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = hwlint("init", "-")
    assert run.code == 0 and run.out.startswith("# yaml-language-server:") and "node_pools:" in run.out
    assert list(tmp_path.iterdir()) == []


def test_init_into_a_file_path_is_a_clear_error(hwlint, tmp_path):
    (tmp_path / "afile").write_text("x")
    run = hwlint("init", tmp_path / "afile" / "x.hw.yaml")
    assert run.code == 2 and "cannot write" in run.err and "internal error" not in run.err


def test_console_script_in_a_subprocess():
    run = hwlint_process("check", "--format", "markdown", FLAWED)
    assert run.code == 1 and "## Findings" in run.out and run.err == ""


def test_the_plain_path_and_click_give_the_same_output(capsys, tmp_path):
    """A plain `check FILE...` and `rules list` skip click (linter.cli); click's own run of
    the same command line (linter.commands.run) must print and exit exactly alike."""
    from linter.cli import main
    from linter.commands import run

    missing = tmp_path / "nowhere.hw.yaml"
    command_lines = [
        ["check", GOOD], ["check", FLAWED, "-v"], ["check", FLAWED, GOOD, "--statistics"], ["check", "-q", FLAWED],
        ["check", FLAWED, "--exit-zero"], ["check", missing], ["check", EXAMPLES], ["check", tmp_path], ["rules", "list"],
    ]
    for args in command_lines:
        args = [str(a) for a in args]
        plain_code = main(args)
        plain = capsys.readouterr()
        click_code = run(args)
        clicked = capsys.readouterr()
        assert (plain_code, plain.out, plain.err) == (click_code, clicked.out, clicked.err), args
        assert plain.out or plain.err, args


# words of a command line: the plain path's flags, files of every kind, and what it leaves to click
WORDS = ["-q", "--quiet", "-v", "--verbose", "--exit-zero", "--statistics", str(GOOD), str(FLAWED), str(EXAMPLES),
         "/nonexistent.hw.yaml", "README.md", "", " ", "-", "--", "-qv", "--quiet=1", "check", "rules", "list", "--help",
         "--format", "json", "--bogus"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.lists(st.sampled_from(WORDS), max_size=4).map(lambda words: ["check", *words]),
                 st.lists(st.sampled_from(WORDS), max_size=3)))
def test_any_command_line_runs_on_the_plain_path_as_click_runs_it(capsys, args):
    """The plain path stands in for click only where it gives click's output and exit code:
    any mix of its flags and files, and anything it leaves to click, prints and exits alike."""
    from linter.cli import main
    from linter.commands import run

    codes = []
    for entry in (main, run):
        try:
            codes.append(entry(list(args)))
        except SystemExit as done:  # click's own --help and usage errors, outside run()'s handling
            codes.append(("exit", done.code))
        codes.append(capsys.readouterr())
    assert (codes[0], codes[1].out, codes[1].err) == (codes[2], codes[3].out, codes[3].err), args
