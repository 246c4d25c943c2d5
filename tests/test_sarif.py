"""SARIF for GitHub code scanning: valid against the OASIS SARIF 2.1.0 schema (from the shared
specs folder) and within the subset and limits GitHub documents for uploads ("SARIF support
for code scanning"), as written down in `github_problems` below. Help without template syntax,
links to the rule's section of docs/rules.md, end positions, execution status, and alerts that
stay the same alert when a value on their line is edited."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT

SARIF_SCHEMA = ROOT.parent / "shared" / "specs" / "sarif-schema-2.1.0.json"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
DOCS = "https://github.com/acme/hwlint/blob/v0.1.0/docs/rules.md"  # where a team publishes its copy
TEMPLATE = re.compile(r"\{\{|\{%|%\}|\{#")  # "}}" alone closes nested YAML flow mappings in examples


def github_problems(doc: dict) -> list[str]:
    """What GitHub's upload checks and alert pages need, beyond the schema."""
    problems = []
    runs = doc.get("runs", [])
    if doc.get("version") != "2.1.0" or len(runs) != 1:
        problems.append("one run of SARIF 2.1.0 per upload")
    for run in runs:
        driver = run["tool"]["driver"]
        if not driver.get("name"):
            problems.append("tool.driver.name is required")
        if "automationDetails" in run and not str(run["automationDetails"].get("id", "")).strip():
            problems.append("automationDetails.id, when given, names the category")
        rules = driver.get("rules", [])
        if len(rules) > 25_000 or len(run["results"]) > 25_000:
            problems.append("at most 25,000 rules and results per run")
        ids = [r["id"] for r in rules]
        if len(ids) != len(set(ids)):
            problems.append("rule ids are unique")
        for rule in rules:
            where = f"rule {rule['id']}"
            for field in ("shortDescription", "fullDescription"):
                if not rule.get(field, {}).get("text"):
                    problems.append(f"{where}: {field}.text is shown at the top of the alert")
            help_ = rule.get("help", {})
            if not help_.get("text") or not help_.get("markdown"):
                problems.append(f"{where}: help.text and help.markdown")
            for value in (help_.get("text", ""), help_.get("markdown", ""), rule.get("fullDescription", {}).get("text", "")):
                if TEMPLATE.search(value):
                    problems.append(f"{where}: template syntax in the help: {TEMPLATE.search(value)[0]}")
            if "helpUri" in rule and not str(rule["helpUri"]).startswith("https://"):
                problems.append(f"{where}: helpUri, when given, is an https address")
            if len(rule.get("properties", {}).get("tags", [])) > 20:
                problems.append(f"{where}: at most 20 tags")
            if rule.get("defaultConfiguration", {}).get("level") not in ("error", "warning", "note", "none"):
                problems.append(f"{where}: level")
        for result in run["results"]:
            where = f"result {result.get('ruleId')}"
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}: message.text is required")
            if rules[result["ruleIndex"]]["id"] != result["ruleId"]:
                problems.append(f"{where}: ruleIndex points at its rule")
            locations = result.get("locations", [])
            if not 1 <= len(locations) <= 20:
                problems.append(f"{where}: one to 20 locations")
            for location in locations:
                physical = location["physicalLocation"]
                uri = physical["artifactLocation"]["uri"]
                if re.match(r"^[a-z]+:|^/", uri) or physical["artifactLocation"].get("uriBaseId") != "%SRCROOT%":
                    problems.append(f"{where}: uri {uri} relative to %SRCROOT%")
                region = physical["region"]
                if region.get("startLine", 0) < 1:
                    problems.append(f"{where}: startLine")
                if "endLine" in region and (region["endLine"] < region["startLine"] or
                                            (region["endLine"] == region["startLine"] and region["endColumn"] <= region["startColumn"])):
                    problems.append(f"{where}: the region ends after it starts")
            if "primaryLocationLineHash" in result.get("partialFingerprints", {}):
                problems.append(f"{where}: primaryLocationLineHash is the upload action's to compute")
    return problems


def sarif(hwlint, *args: object, code: tuple = (0, 1)) -> dict:
    run = hwlint("check", *args, "--format", "sarif")
    assert run.code in code, run.err
    return json.loads(run.out)


def validate(doc: dict) -> list[str]:
    if not SARIF_SCHEMA.exists():
        pytest.skip(f"{SARIF_SCHEMA} is not here (it comes with the shared specs folder)")
    from jsonschema import Draft4Validator

    validator = Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(doc)] + github_problems(doc)


def test_every_example_and_broken_input_passes_the_schema_and_githubs_rules(hwlint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # outside a repository, paths are taken from the current folder
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("name: [unclosed\n")
    waived = tmp_path / "waived.hw.yaml"
    waived.write_text(FLAWED.read_text() + "\nwaivers:\n  - {rule: GPU002, reason: x}\n  - {rule: NOPE001, reason: y, approver: z, expires: 2027-01-01}\n")
    doc = sarif(hwlint, *sorted(EXAMPLES.glob("*.hw.yaml")), broken.name, waived.name, "--docs-url", DOCS, code=(2,))
    assert validate(doc) == []
    assert all(rule["helpUri"].startswith(DOCS + "#") for rule in doc["runs"][0]["tool"]["driver"]["rules"])
    ids = {r["ruleId"] for r in doc["runs"][0]["results"]}
    assert {"YAML", "WVR001", "WVR002"} <= ids  # the pseudo-rules are described too


def test_help_is_the_rule_reference_without_templates(hwlint):
    doc = sarif(hwlint, FLAWED, "--docs-url", DOCS)
    docs = (ROOT / "docs" / "rules.md").read_text()
    for rule in doc["runs"][0]["tool"]["driver"]["rules"]:
        anchor = rule["helpUri"].split("#", 1)[1]
        assert rule["helpUri"].split("#")[0].endswith("/docs/rules.md") and f'<a id="{anchor}"></a>' in docs, rule["id"]
        assert f"### {rule['id']}: " in rule["help"]["markdown"] and "Fix" in rule["help"]["text"]
        assert "seed article" not in json.dumps(rule).lower()
    by_id = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert "<" in by_id["BUY001"]["help"]["text"]  # the fix's template values shown as <placeholders>


def test_execution_is_unsuccessful_when_input_or_pack_fails(hwlint, tmp_path):
    ok = sarif(hwlint, FLAWED)["runs"][0]["invocations"][0]
    assert ok["executionSuccessful"] is True and ok["toolExecutionNotifications"] == []
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("name: [unclosed\n")
    failed = sarif(hwlint, FLAWED, broken, code=(2,))["runs"][0]["invocations"][0]
    assert failed["executionSuccessful"] is False
    assert "broken.hw.yaml" in failed["toolExecutionNotifications"][0]["message"]["text"]
    pack = tmp_path / "rules"
    pack.mkdir()
    (pack / "bad.yaml").write_text("rules: [{id: ORG001}]\n")
    out = tmp_path / "out.sarif"
    run = hwlint("check", FLAWED, "--rules", pack, "--format", f"sarif:{out}")
    assert run.code == 2
    doc = json.loads(out.read_text())
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False and doc["runs"][0]["results"] == []
    assert validate(doc) == [] or all("rule " in p for p in validate(doc))  # no rules to describe


def lines_of(doc: dict) -> dict[str, dict]:
    return {r["ruleId"]: r for r in doc["runs"][0]["results"]}


def test_end_positions_cover_the_key(hwlint):
    text = FLAWED.read_text().splitlines()
    for result in sarif(hwlint, FLAWED)["runs"][0]["results"]:
        region = result["locations"][0]["physicalLocation"]["region"]
        if "endColumn" in region:
            key = text[region["startLine"] - 1][region["startColumn"] - 1:region["endColumn"] - 1]
            assert key == result["properties"]["manifestPath"].rsplit(".", 1)[-1], (result["ruleId"], key)


def test_an_edited_value_keeps_its_alert(hwlint, tmp_path):
    # GPU001 points at the GPU memory line: a different (still too small) value, and lines added above
    edited = tmp_path / "flawed.hw.yaml"
    source = FLAWED.read_text()
    assert "it_capacity_kw: 60" in source
    edited.write_text("# moved\n" + source.replace("it_capacity_kw: 60", "it_capacity_kw: 58"))
    before, after = lines_of(sarif(hwlint, FLAWED)), lines_of(sarif(hwlint, edited))
    assert before.keys() == after.keys()
    for rule_id in before:
        assert before[rule_id]["partialFingerprints"] == after[rule_id]["partialFingerprints"], rule_id
    assert before["PWR001"]["message"] != after["PWR001"]["message"]  # the value did change
    prints = [r["partialFingerprints"]["hwlintFinding/v1"] for r in before.values()]
    assert len(set(prints)) == len(prints)


def test_without_a_docs_address_there_is_no_made_up_one(hwlint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no config above
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text("name: [unclosed\n")
    doc = sarif(hwlint, FLAWED, broken.name, code=(2,))
    driver = doc["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and not [r for r in driver["rules"] if "helpUri" in r]
    text = json.dumps(doc)
    assert "your-org" not in text and "](#ref-" not in text  # no placeholder, no link to nowhere
    assert validate(doc) == []
    by_id = {r["id"]: r for r in driver["rules"]}
    assert "**Sources:** " in by_id["GPU001"]["help"]["markdown"]  # the reference is in the help itself


def test_the_docs_address_comes_from_the_config_and_the_command_line_wins(hwlint, tmp_path):
    (tmp_path / ".hwlint.yaml").write_text("docs_url: https://docs.example.com/hwlint/rules.md\n")
    manifest = tmp_path / "a.hw.yaml"
    manifest.write_text(FLAWED.read_text())
    driver = sarif(hwlint, manifest)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.com/hwlint/rules.md"
    assert driver["rules"][0]["helpUri"] == f"https://docs.example.com/hwlint/rules.md#{driver['rules'][0]['id'].lower()}"
    driver = sarif(hwlint, manifest, "--docs-url", DOCS)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == DOCS


@pytest.mark.parametrize("where, value", [("--docs-url", "docs/rules.md"), ("--docs-url", "https://x.example/r.md#top"),
                                          ("config", "file:///usr/share/doc/rules.md")])
def test_a_docs_address_that_is_not_absolute_http_is_refused(hwlint, tmp_path, where, value):
    manifest = tmp_path / "a.hw.yaml"
    manifest.write_text(FLAWED.read_text())
    if where == "config":
        (tmp_path / ".hwlint.yaml").write_text(f"docs_url: {value}\n")
        run = hwlint("check", manifest, "--format", "sarif")
    else:
        run = hwlint("check", manifest, "--format", "sarif", "--docs-url", value)
    assert run.code == 2 and run.out == "" and "docs_url" in run.err.replace("--docs-url", "docs_url")
    assert "absolute http(s) address" in run.err


# --- GitHub's upload action and code scanning, as the action's source documents them -------
#
# github/codeql-action/upload-sarif, before it sends a log: `populateRunAutomationDetails`
# (src/upload-lib.ts) gives a run without automationDetails the id made of the `category`
# input with a slash appended, and leaves a run that has one as it is; `addFingerprints`
# (src/fingerprints.ts) computes primaryLocationLineHash from the text of each result's first
# line and, where the log already holds a different value, keeps that and logs "Calculated
# fingerprint of ... but found existing inconsistent fingerprint value ..." for the result.
# Code scanning then keeps one analysis per tool and category: a new upload replaces the
# alerts of the last one of its category only.


def line_hashes(text: str) -> dict[int, str]:
    """GitHub's primaryLocationLineHash of each line (fingerprints.ts `hash`): a rolling hash
    of the next 100 UTF-16 units that are not spaces or tabs, from the line's first one on
    (CR and CRLF read as LF, the end of the file as 65535 and then zeros), in 64-bit
    arithmetic; a hash met again is numbered :2, :3 ..."""
    block, mod, mask = 100, 37, (1 << 64) - 1
    first_mod = pow(mod, block, 1 << 64)
    window, starts = [0] * block, [-1] * block
    state = {"hash": 0, "index": 0, "line": 0, "start": True, "cr": False}
    seen: dict[str, int] = {}
    out: dict[int, str] = {}

    def emit() -> None:
        at = state["index"]
        value = format(state["hash"], "x")
        seen[value] = seen.get(value, 0) + 1
        out[starts[at]] = f"{value}:{seen[value]}"
        starts[at] = -1

    def update(unit: int) -> None:
        at = state["index"]
        old, window[at] = window[at], unit
        state["hash"] = (mod * state["hash"] + unit - first_mod * old) & mask
        state["index"] = (at + 1) % block

    def feed(unit: int) -> None:
        if unit in (32, 9) or (state["cr"] and unit == 10):
            state["cr"] = False
            return
        state["cr"] = unit == 13
        unit = 10 if unit == 13 else unit
        if starts[state["index"]] != -1:
            emit()
        if state["start"]:
            state["start"], state["line"] = False, state["line"] + 1
            starts[state["index"]] = state["line"]
        if unit == 10:
            state["start"] = True
        update(unit)

    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        feed(int.from_bytes(data[i:i + 2], "little"))
    feed(65535)
    for _ in range(block):
        if starts[state["index"]] != -1:
            emit()
        update(0)
    return out


def upload(log: dict, category: str | None, checkout: Path) -> tuple[dict, list[str]]:
    """The log as upload-sarif sends it, and the warnings it logs on the way."""
    import copy
    from urllib.parse import unquote

    log, warnings = copy.deepcopy(log), []
    for run in log["runs"]:
        if category is not None and "automationDetails" not in run:
            run["automationDetails"] = {"id": category if category.endswith("/") else category + "/"}
        for result in run["results"]:
            location = result["locations"][0]["physicalLocation"]
            uri, line = unquote(location["artifactLocation"]["uri"]), location["region"]["startLine"]
            computed = line_hashes((checkout / uri).read_text(encoding="utf-8"))[line]
            given = result.setdefault("partialFingerprints", {}).get("primaryLocationLineHash")
            if given is None:
                result["partialFingerprints"]["primaryLocationLineHash"] = computed
            elif given != computed:
                warnings.append(f"Calculated fingerprint of {computed} for file {uri} line {line}, but found "
                                f"existing inconsistent fingerprint value {given}")
    return log, warnings


class CodeScanning:
    """Open alerts: the last analysis of each (tool, category) holds its alerts."""

    def __init__(self) -> None:
        self.analyses: dict[tuple[str, str], set[tuple[str, str]]] = {}

    def receive(self, log: dict) -> None:
        for run in log["runs"]:
            category = run.get("automationDetails", {}).get("id", "").rsplit("/", 1)[0]
            alerts = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in run["results"]}
            self.analyses[(run["tool"]["driver"]["name"], category)] = alerts

    def open(self) -> set[tuple[str, str]]:
        return set().union(*self.analyses.values())


@pytest.fixture
def two_teams(tmp_path, monkeypatch):
    """A checkout with two team folders, each with a failing manifest of its own."""
    (tmp_path / ".git").mkdir()
    for team in ("eu", "us"):
        (tmp_path / "teams" / team).mkdir(parents=True)
        (tmp_path / "teams" / team / "cluster.hw.yaml").write_text(FLAWED.read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_category_given_is_the_one_the_upload_keeps(hwlint, two_teams):
    plain = sarif(hwlint, "teams/eu")
    assert "automationDetails" not in plain["runs"][0]  # so the upload action's category input applies
    sent, _ = upload(plain, "hwlint-eu", two_teams)
    assert sent["runs"][0]["automationDetails"] == {"id": "hwlint-eu/"}
    given = sarif(hwlint, "teams/eu", "--sarif-category", "hwlint/eu")
    assert given["runs"][0]["automationDetails"] == {"id": "hwlint/eu/"}
    assert upload(given, "something-else", two_teams)[0]["runs"][0]["automationDetails"] == {"id": "hwlint/eu/"}
    assert validate(given) == []


def test_two_uploads_with_their_own_categories_keep_their_own_alerts(hwlint, two_teams):
    scanning = CodeScanning()
    for team in ("eu", "us"):  # two jobs of a matrix, or two workflows
        scanning.receive(upload(sarif(hwlint, f"teams/{team}", "--sarif-category", f"hwlint-{team}"), None, two_teams)[0])
    files = {uri for _, uri in scanning.open()}
    assert files == {"teams/eu/cluster.hw.yaml", "teams/us/cluster.hw.yaml"}
    # the same two uploads in one category: the second closes the first one's alerts
    scanning = CodeScanning()
    for team in ("eu", "us"):
        log = sarif(hwlint, f"teams/{team}")
        log["runs"][0]["automationDetails"] = {"id": "hwlint/"}
        scanning.receive(upload(log, None, two_teams)[0])
    assert {uri for _, uri in scanning.open()} == {"teams/us/cluster.hw.yaml"}


def test_the_upload_action_computes_the_line_hash_and_warns_about_none(hwlint, two_teams):
    log = sarif(hwlint, "teams/eu")
    sent, warnings = upload(log, "hwlint", two_teams)
    assert log["runs"][0]["results"] and warnings == []
    assert all(re.fullmatch(r"[0-9a-f]+:\d+", r["partialFingerprints"]["primaryLocationLineHash"])
               for r in sent["runs"][0]["results"])
    assert all(r["partialFingerprints"]["hwlintFinding/v1"] for r in sent["runs"][0]["results"])
    # a line hash of hwlint's own, as it wrote before, is warned about once per result
    for result in log["runs"][0]["results"]:
        result["partialFingerprints"]["primaryLocationLineHash"] = "0123456789abcdef:1"
    assert len(upload(log, "hwlint", two_teams)[1]) == len(log["runs"][0]["results"])


def test_githubs_line_hash_follows_the_text_so_hwlints_own_key_is_what_stays():
    # fingerprints.ts ignores spaces and tabs and reads CRLF as LF, but an edited value (or the
    # text just after the line) changes the hash: hwlintFinding/v1 is what keeps the alert
    assert line_hashes("x:\t1\r\ny: 2\n") == line_hashes("x:1\ny:2\n")
    assert line_hashes("it_capacity_kw: 60\n")[1] != line_hashes("it_capacity_kw: 58\n")[1]
