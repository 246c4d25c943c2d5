"""Machine-readable outputs through the real command line: JSON (against its schema), SARIF
(against the SARIF 2.1.0 schema), GitHub workflow commands, the Markdown comment limit, and
several formats in one run. Untrusted manifest strings must stay inert in every format."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, hwlint_process

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FINETUNE = EXAMPLES / "single-node-finetune.hw.yaml"
SARIF_SCHEMA = ROOT.parent / "shared" / "specs" / "sarif-schema-2.1.0.json"
TEXT_LINE = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]+\d*) (?P<sev>error|warning|info) ")

# Rules whose messages quote manifest strings, and that fail with warning / info severity.
EXTRA_RULES = """\
rules:
  - id: OPS901
    title: "Test rule: the cluster name is short"
    severity: warning
    tiers: all
    require: "manifest.name | length <= 5"
    message: "The name {{ manifest.name }} is long."
    fix: "Shorten {{ manifest.name }}."
    cite: [zero-2020]
    at: "name"
  - id: OPS902
    title: "Test rule: informational"
    severity: info
    tiers: all
    require: "false"
    message: "Owner {{ manifest.owner }}."
    fix: "Nothing to do."
    cite: [zero-2020]
    at: "owner"
"""
HOSTILE = '100% [pwn](https://evil.example) <b>x</b>, a:b "q" ::error::'


@pytest.fixture
def extra_rules(tmp_path: Path) -> Path:
    folder = tmp_path / "extra-rules"
    folder.mkdir()
    (folder / "ops-test.yaml").write_text(EXTRA_RULES)
    return folder


def with_name(tmp_path: Path, name: str, source: Path = FLAWED, filename: str = "hostile.hw.yaml") -> Path:
    """A copy of `source` whose `name:` is `name` (written as a YAML double-quoted string)."""
    text = re.sub(r"(?m)^name: .*$", lambda _: "name: " + json.dumps(name), source.read_text(), count=1)
    target = tmp_path / filename
    target.write_text(text)
    return target


def as_json(hwlint, *args) -> tuple[int, dict]:
    run = hwlint("check", *args, "--format", "json")
    assert run.err == "", run.err
    return run.code, json.loads(run.out)


# --- JSON ------------------------------------------------------------------------------


def report_validator():
    from jsonschema import Draft202012Validator

    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_json_validates_against_its_schema_for_every_example(hwlint, tmp_path):
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("name: [unclosed\n")
    files = sorted(EXAMPLES.glob("*.hw.yaml")) + [broken, tmp_path / "missing.hw.yaml"]
    code, doc = as_json(hwlint, *files)
    assert code == 2  # unreadable input
    errors = [f"{list(e.path)}: {e.message}" for e in report_validator().iter_errors(doc)]
    assert errors == []
    assert [m["file"] for m in doc["manifests"]] == [str(f) for f in files]


def test_schema_rejects_a_report_missing_what_it_promises(hwlint):
    _, doc = as_json(hwlint, FLAWED)
    del doc["manifests"][0]["results"][0]["facts"]
    doc["rule_pack"]["digest"] = "md5:abc"
    messages = " ".join(e.message for e in report_validator().iter_errors(doc))
    assert "'facts' is a required property" in messages and "does not match" in messages


def test_json_names_tool_pack_manifest_and_tier(hwlint):
    from linter import __version__

    code, doc = as_json(hwlint, FLAWED, FINETUNE)
    assert code == 1
    assert doc["tool"] == {"name": "hwlint", "version": __version__}
    assert doc["rule_pack"]["version"] == __version__ and doc["rule_pack"]["rules"] > 0
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", doc["rule_pack"]["digest"])
    flawed, finetune = doc["manifests"]
    assert flawed["digest"] == "sha256:" + hashlib.sha256(FLAWED.read_bytes()).hexdigest()
    assert flawed["tier"] == "multi-node" and flawed["tier_reason"].startswith("inferred")
    assert finetune["tier"] == "single-node"
    assert flawed["tier_inferred"] == "multi-node"
    assert doc["summary"]["manifests"] == 2
    assert doc["summary"]["fail"] == flawed["counts"]["fail"] + finetune["counts"]["fail"]


def test_a_declared_tier_below_the_counts_fails_at_tier_and_both_tiers_are_shown(hwlint, tmp_path):
    text = GOOD.read_text()
    assert "\ntier:" not in text
    low = tmp_path / "low.hw.yaml"
    low.write_text("tier: single-node\n" + text)
    high = tmp_path / "high.hw.yaml"
    high.write_text("tier: large-cluster\n" + text)
    code, doc = as_json(hwlint, low, high)
    assert code == 1
    low_m, high_m = doc["manifests"]
    assert (low_m["tier"], low_m["tier_inferred"]) == ("single-node", "multi-node")
    assert (high_m["tier"], high_m["tier_inferred"]) == ("large-cluster", "multi-node")
    ops = {m["file"]: next(r for r in m["results"] if r["rule_id"] == "OPS006") for m in (low_m, high_m)}
    failing = ops[str(low)]
    assert failing["status"] == "fail" and failing["path"] == "tier" and failing["line"] == 1
    assert "declares tier single-node" in failing["message"] and "imply multi-node" in failing["message"]
    assert ops[str(high)]["status"] == "pass"
    run = hwlint("check", low)
    assert "tier single-node (declared in the manifest (tier:); the counts imply multi-node" in run.out


def test_json_lists_every_result_with_every_field(hwlint):
    _, doc = as_json(hwlint, FINETUNE)
    results = doc["manifests"][0]["results"]
    statuses = {r["status"] for r in results}
    assert {"pass", "skipped"} <= statuses  # not only failures
    _, flawed = as_json(hwlint, FLAWED)
    memory = next(r for r in flawed["manifests"][0]["results"] if r["rule_id"] == "GPU001")
    assert memory["status"] == "fail" and memory["severity"] == "error" and memory["layer"] == "GPU"
    assert memory["fix"] and memory["message"].startswith("Each GPU needs")
    assert memory["facts"]["facts.memory.total_gb"] > memory["facts"]["facts.memory.usable_gb"]
    assert memory["citations"][0]["key"] and memory["citations"][0]["url"].startswith("https://")
    line = FLAWED.read_text().splitlines()[memory["line"] - 1]
    assert line[memory["column"] - 1:].startswith("gpu: {model:") or "model" in line[memory["column"] - 1:]


def test_rule_pack_digest_is_stable_and_changes_with_the_pack(hwlint, extra_rules):
    _, first = as_json(hwlint, GOOD)
    _, second = as_json(hwlint, GOOD)
    _, extended = as_json(hwlint, GOOD, "--rules", extra_rules)
    assert first["rule_pack"]["digest"] == second["rule_pack"]["digest"]
    assert extended["rule_pack"]["digest"] != first["rule_pack"]["digest"]
    assert extended["rule_pack"]["folders"] == ["(built-in)", str(extra_rules)]


def test_json_keeps_hostile_strings_exact(hwlint, tmp_path, extra_rules):
    name = HOSTILE + "\u2028\t end"
    _, doc = as_json(hwlint, with_name(tmp_path, name), "--rules", extra_rules)
    manifest = doc["manifests"][0]
    assert manifest["name"] == name
    long_name = next(r for r in manifest["results"] if r["rule_id"] == "OPS901")
    assert HOSTILE in long_name["message"]


# --- SARIF -----------------------------------------------------------------------------


def sarif(hwlint, *args) -> dict:
    run = hwlint("check", *args, "--format", "sarif")
    assert run.err == "", run.err
    return json.loads(run.out)


def test_sarif_validates_against_the_sarif_2_1_0_schema(hwlint, tmp_path, extra_rules):
    if not SARIF_SCHEMA.exists():
        pytest.skip(f"{SARIF_SCHEMA} is not here (it comes with the shared specs folder)")
    from jsonschema import Draft4Validator

    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("name: [unclosed\n")
    doc = sarif(hwlint, FLAWED, FINETUNE, broken, with_name(tmp_path, HOSTILE), "--rules", extra_rules)
    validator = Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    assert [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(doc)] == []
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1


def test_sarif_rules_describe_the_pack(hwlint):
    driver = sarif(hwlint, FLAWED, "--docs-url", "https://github.com/acme/hwlint/blob/v0.1.0/docs/rules.md")["runs"][0]["tool"]["driver"]
    listed = hwlint("rules", "list").out.split("\n")
    ids = [line.split()[0] for line in listed if line.strip()]
    descriptors = {d["id"]: d for d in driver["rules"]}
    assert list(descriptors) == ids
    for rule_id in ids:
        d = descriptors[rule_id]
        shown = json.loads(hwlint("check", FLAWED, "--format", "json", "--select", rule_id).out)
        result = shown["manifests"][0]["results"][0]
        assert d["shortDescription"]["text"] == result["title"]
        assert d["name"] and " " not in d["name"] and d["fullDescription"]["text"]
        assert d["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[result["severity"]]
        # the alert links to the rule's own section of docs/rules.md (test_sarif.py checks the anchor)
        assert d["helpUri"].endswith(f"/docs/rules.md#{rule_id.lower()}")


def located(hwlint, path: Path) -> set[tuple[str, str, int, int]]:
    """(rule, severity, line, column) of each failure the text output prints, and for a finding
    that names several failing items, of each item (SARIF and annotations get one per item)."""
    text = hwlint("check", path)
    places = {(m["id"], m["sev"], int(m["line"]), int(m["col"])) for m in map(TEXT_LINE.match, text.out.splitlines()) if m}
    report = json.loads(hwlint("check", path, "--format", "json").out)
    for r in report["manifests"][0]["results"]:
        places |= {(r["rule_id"], r["severity"], i["line"], i["column"]) for i in r["items"] if r["status"] == "fail"}
    return places


def test_sarif_results_point_at_the_yaml_key_from_the_repository_root(hwlint, tmp_path):
    level = {"error": "error", "warning": "warning", "info": "note"}
    expected = {(rule, level[sev], line, col) for rule, sev, line, col in located(hwlint, FLAWED)}
    # run from another folder with an absolute path: the uri is still relative to the repository
    run = hwlint_process("check", FLAWED.resolve(), "--format", "sarif", cwd=tmp_path)
    run_ = json.loads(run.out)["runs"][0]
    got = set()
    for r in run_["results"]:
        where = r["locations"][0]["physicalLocation"]
        assert where["artifactLocation"]["uri"] == "examples/flawed-cluster.hw.yaml"
        assert r["message"]["text"]
        assert run_["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        got.add((r["ruleId"], r["level"], where["region"]["startLine"], where["region"]["startColumn"]))
    assert got == expected and got


def test_sarif_fingerprints_survive_moving_lines(hwlint, tmp_path):
    moved = tmp_path / "moved.hw.yaml"
    moved.write_text("# a comment\n# another\n\n" + FLAWED.read_text().replace("\nplan:", "\n# the plan\nplan:"))

    def prints(path: Path) -> dict[str, tuple[str, int]]:
        results = sarif(hwlint, path)["runs"][0]["results"]
        return {r["ruleId"]: (r["partialFingerprints"]["hwlintFinding/v1"],
                              r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}

    before, after = prints(FLAWED), prints(moved)
    assert before.keys() == after.keys()
    assert all(before[k][0] == after[k][0] for k in before)
    assert all(after[k][1] > before[k][1] for k in before)  # the lines did move
    assert len({v[0] for v in before.values()}) == len(before)  # one finding, one fingerprint


def test_sarif_escapes_links_in_manifest_strings(hwlint, tmp_path, extra_rules):
    doc = sarif(hwlint, with_name(tmp_path, HOSTILE), "--rules", extra_rules, "--select", "OPS901")
    (result,) = doc["runs"][0]["results"]
    assert result["ruleId"] == "OPS901" and result["level"] == "warning"
    text = result["message"]["text"]
    assert r"\[pwn\](https://evil.example)" in text and "[pwn]" not in text.replace(r"\[pwn\]", "")


def test_sarif_marks_waived_findings_as_suppressed(hwlint, tmp_path):
    waived = tmp_path / "waived.hw.yaml"
    waived.write_text(FLAWED.read_text() + (
        "\nwaivers:\n  - {rule: GPU002, reason: fp16 with loss scaling instead, approver: cto@example.com,"
        " expires: 2027-06-30}\n"))
    results = sarif(hwlint, waived)["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["GPU002"]["suppressions"][0]["kind"] == "inSource"
    assert "suppressions" not in by_rule["GPU001"]


# --- GitHub workflow commands ----------------------------------------------------------

COMMAND = re.compile(r"^::(?P<kind>error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)$")


def unescape(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def annotations(out: str) -> list[dict]:
    found = []
    for line in out.splitlines():
        m = COMMAND.match(line)
        assert m, line
        props = dict(p.split("=", 1) for p in m["props"].split(","))
        found.append({"kind": m["kind"], **{k: unescape(v) for k, v in props.items()}, "message": unescape(m["data"])})
    return found


def test_github_annotations_match_the_failures_with_position(hwlint):
    expected = located(hwlint, FLAWED)
    run = hwlint("check", FLAWED, "--format", "github")
    assert run.code == 1
    got = [a for a in annotations(run.out) if "file" in a]  # not the "N more" counts (test_annotations.py)
    assert 0 < len(got) < len(expected)
    kind = {"error": "error", "warning": "warning", "info": "notice"}
    for a in got:
        rule_id, sev = re.match(r"^hwlint (\S+) \((\w+)\)$", a["title"]).groups()
        # the file is named from the repository root, as GitHub wants it
        assert a["kind"] == kind[sev] and a["file"] == "examples/flawed-cluster.hw.yaml"
        assert (rule_id, sev, int(a["line"]), int(a["col"])) in expected, a
        assert "\n\nFix: " in a["message"]


def test_github_levels_and_escaping(hwlint, tmp_path, extra_rules):
    folder = tmp_path / "odd, dir: x"
    folder.mkdir()
    manifest = with_name(folder, HOSTILE, source=GOOD, filename="a,b.hw.yaml")
    run = hwlint("check", manifest, "--rules", extra_rules, "--select", "OPS", "--format", "github")
    assert run.code == 0  # warnings and infos do not fail at --fail-on error
    assert run.out.count("\n") == 3  # one line each: the Fix's line breaks are escaped
    assert run.out.splitlines()[-1].startswith("::notice file=") and "rules did not run (not selected by --select OPS (" in run.out
    warning, notice, _ = annotations(run.out)
    assert (warning["kind"], notice["kind"]) == ("warning", "notice")
    assert warning["file"] == str(manifest) and "%2C" in run.out and "%3A" in run.out
    assert HOSTILE in warning["message"] and "100%25" in run.out.splitlines()[0]


# --- Markdown fits a GitHub comment ----------------------------------------------------


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def copies(tmp_path: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        target = tmp_path / f"cluster-{i:02}.hw.yaml"
        target.write_text(FLAWED.read_text())
        out.append(target)
    return out


def test_short_review_is_not_cut(hwlint):
    run = hwlint("check", FLAWED, "--format", "markdown")
    assert "Shortened to fit" not in run.out and "## Confirmed" in run.out


FAILURE_BULLET = re.compile(r"^- (❌|⚠️|ℹ️) \*\*[A-Z]{3}\d{3}\*\*", re.M)


def test_long_review_keeps_summaries_and_failures(hwlint, tmp_path):
    single = hwlint("check", FLAWED, "--format", "markdown").out
    counts = json.loads(hwlint("check", FLAWED, "--format", "json").out)["manifests"][0]["counts"]
    total, failing = sum(counts.values()), counts["fail"]
    n = 65_536 // utf16(single) + 1
    # just too long in full (the copies share one list of sources, so n x one review is not the length)
    while utf16(hwlint("check", *copies(tmp_path, n), "--format", "markdown", "--max-chars", "0").out) <= 65_536:
        n += 1
    run = hwlint("check", *copies(tmp_path, n), "--format", "markdown")
    assert utf16(run.out) <= 65_536
    assert run.out.count("**Verdict:") == n and run.out.count("| Results |") == n
    assert len(FAILURE_BULLET.findall(run.out)) == n * failing  # every failure kept
    assert "## Confirmed" not in run.out and "## Assumptions" not in run.out
    assert run.out.count(f"{total - failing} of {total} results are not shown") == n


def test_very_long_review_cuts_failures_and_counts_them(hwlint, tmp_path):
    failing = json.loads(hwlint("check", FLAWED, "--format", "json").out)["manifests"][0]["counts"]["fail"]
    run = hwlint("check", *copies(tmp_path, 30), "--format", "markdown")
    assert utf16(run.out) <= 65_536
    assert run.out.count("**Verdict:") == 30  # every summary stays
    shown = len(FAILURE_BULLET.findall(run.out))
    omitted = sum(int(n) for n in re.findall(r"\((\d+) failing", run.out))
    assert shown > 0 and omitted > 0 and shown + omitted == 30 * failing
    assert "❌ **GPU001**" in run.out  # errors go before warnings


def test_summaries_alone_too_long_are_cut_at_a_line(hwlint, tmp_path):
    run = hwlint("check", *copies(tmp_path, 120), "--format", "markdown")
    assert utf16(run.out) <= 65_536
    assert run.out.rstrip().endswith("review fewer manifests at a time to see their findings.")
    assert "summaries of all 120 manifests do not fit" in run.out


# --- several formats in one run --------------------------------------------------------


def test_several_formats_in_one_run(hwlint, tmp_path):
    s, m, j = tmp_path / "r.sarif", tmp_path / "review.md", tmp_path / "r.json"
    run = hwlint("check", FLAWED, "--format", f"sarif:{s}", "--format", f"markdown:{m}", "--format", f"json:{j}",
                 "--format", "text")
    assert run.code == 1 and run.err == ""
    assert TEXT_LINE.match(run.out.splitlines()[0])  # text went to stdout
    assert json.loads(s.read_text())["version"] == "2.1.0"
    assert m.read_text().startswith("# hwlint review:")
    assert json.loads(j.read_text())["format"] == "hwlint-report"


def test_bare_format_goes_to_output_and_dash_is_stdout(hwlint, tmp_path):
    out = tmp_path / "report.json"
    run = hwlint("check", GOOD, "--format", "json", "--output", out, "--format", "github:-")
    assert run.code == 0 and "::error" not in run.out
    summary = json.loads(out.read_text())["summary"]
    assert len(annotations(run.out)) == summary["fail"] + summary["waived"]  # one per failure or waived failure


@pytest.mark.parametrize("formats, message", [
    (["json", "sarif"], "would all go to standard output"),
    (["yaml"], "unknown format 'yaml'"),
    (["sarif:"], "give a file after the colon"),
])
def test_bad_format_values_are_usage_errors(hwlint, formats, message):
    run = hwlint("check", GOOD, *[a for f in formats for a in ("--format", f)])
    assert run.code == 2 and message in run.err and "Traceback" not in run.err + run.out


def test_unwritable_output_is_a_clean_error(tmp_path):
    run = hwlint_process("check", GOOD, "--format", f"json:{tmp_path / 'no' / 'such' / 'dir.json'}")
    assert run.code == 2 and "cannot write" in run.err and "Traceback" not in run.err
    assert run.err.endswith("dir.json: No such file or directory; give a file in a folder that exists, can be written "
                            "and has room\n"), run.err
