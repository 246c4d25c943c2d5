"""`hwlint checklist`: every rule one GitHub task, grouped by layer, in the source's words.

Golden files: tests/golden/<example>.checklist.md. Set HWLINT_UPDATE_GOLDEN=1 to rewrite
them and read the diff by eye. The rule-pack digest is replaced by a placeholder before the
comparison (it changes with any edit to any rule file; a test below checks it is right).
"""

from __future__ import annotations

import hashlib
import os
import re

import pytest

from conftest import EXAMPLES, ROOT

GOLDEN = ROOT / "tests" / "golden"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.hw.yaml"))
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
LAYERS = ["Compute cards", "Intra-node link", "Inter-node network", "Host memory and local disk", "Storage",
          "Power and cooling", "Operations", "Procurement"]
ITEM = re.compile(r"^- \[(?P<box>[ x])\] \*\*(?P<id>[A-Z]{3}\d{3})\*\* .*?: \*\*(?P<words>[a-z ]+)\*\*(?P<rest>.*)$")


def pack_digest() -> str:
    from linter.engine.rules import load_pack, pack_digest

    return pack_digest(load_pack())


def items(text: str) -> dict[str, tuple[str, re.Match, list[str]]]:
    """rule id -> (layer heading, item line match, its detail lines)."""
    out: dict[str, tuple[str, re.Match, list[str]]] = {}
    layer, current = "", None
    for line in text.splitlines():
        if line.startswith("## "):
            layer, current = line[3:], None
        elif match := ITEM.match(line):
            assert match["id"] not in out, f"{match['id']} listed twice"
            current = out[match["id"]] = (layer, match, [])
        elif line.startswith("  - ") and current:
            current[2].append(line[4:])
    return out


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_checklist_matches_golden(hwlint, example, monkeypatch):
    monkeypatch.chdir(ROOT)
    run = hwlint("checklist", example.relative_to(ROOT))
    assert run.code == 0, run.err
    text = run.out.replace(pack_digest(), "sha256:<rule pack>")
    golden = GOLDEN / (example.name.removesuffix(".hw.yaml") + ".checklist.md")
    if os.environ.get("HWLINT_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_rule_is_one_item_under_its_layer(hwlint, example):
    from linter.results import LAYERS as NAMES
    from linter.engine.rules import load_pack

    text = hwlint("checklist", example).out
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert headings[: len(LAYERS)] == LAYERS
    found = items(text)
    rules = load_pack().rules
    assert sorted(found) == sorted(r.id for r in rules)
    for rule in rules:
        assert found[rule.id][0] == NAMES[rule.layer]


def test_header_names_the_manifest_tier_digests_and_counts(hwlint):
    text = hwlint("checklist", FLAWED).out
    assert text.startswith("# Sign-off checklist: legacy-v100 30B pretraining\n")
    assert f"| File sha256 | sha256:{hashlib.sha256(FLAWED.read_bytes()).hexdigest()} |" in text
    assert re.search(r"\| Scale tier \| \*\*multi-node\*\*: inferred: .+ \|", text)
    assert f", {pack_digest()} |" in text
    counts = re.search(r"\| Items \| (\d+) confirmed, (\d+) to confirm, (\d+) not applicable, (\d+) failing, (\d+) waived \|", text)
    words = [m["words"] for _, m, _ in items(text).values()]
    assert [int(n) for n in counts.groups()] == [words.count(w) for w in ("confirmed", "to confirm", "not applicable", "failing", "waived")]
    assert f"| Open items | **{words.count('failing') + words.count('to confirm')}** |" in text


def test_each_status_in_the_sources_words_with_what_backs_it(hwlint, tmp_path):
    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text(re.sub(r"  it_capacity_kw: 60[^\n]*\n", "", FLAWED.read_text())
                        + "\nwaivers:\n  - {rule: GPU002, reason: fp16 instead, approver: Ada, expires: 2027-01-31}\n")
    found = items(hwlint("checklist", manifest, "--tier", "single-node").out)
    by_words = {}
    for _, match, details in found.values():
        by_words.setdefault(match["words"], []).append((match, details))
    assert set(by_words) == {"confirmed", "to confirm", "not applicable", "failing", "waived"}

    for match, details in by_words["confirmed"]:
        # the rule's own evidence, in words
        assert match["box"] == "x" and len(details) == 1 and details[0].startswith("Evidence: ") and "facts." not in details[0]
    assert any(re.search(r"\d+ (GB|TB|kW|Gb/s|days)\b", d) for _, ds in by_words["confirmed"] for d in ds)  # numbers with units
    for match, _ in by_words["not applicable"]:
        assert match["box"] == "x" and match["rest"].startswith(": applies ")
    for match, details in by_words["failing"]:
        assert match["box"] == " " and re.match(r" \((error|warning|info)\) at \S+, line \d+$", match["rest"])
        assert details[0].startswith("Gap: ") and details[1].startswith("Fix: ")
    waived, details = by_words["waived"][0]
    assert waived["id"] == "GPU002" and waived["box"] == "x" and waived["rest"] == " by Ada until 2027-01-31"
    assert details[0] == "Why: fp16 instead"

    power, details = found["PWR001"][1:]
    assert power["words"] == "to confirm" and power["box"] == " "
    assert details[0] == r"Missing: facility.it\_capacity\_kw"
    assert details[1].startswith("Action: ask the facility")


PRICE_RULE = """\
  - id: {id}
    title: The electricity price is known
    severity: info
    tiers: all
    require: "manifest.facility.electricity_price_per_kwh >= 0"
    message: "no price"
    fix: "Give the price."
    cite: [seed-hardware-layers]
    at: facility
"""
HINT = "    confirm: Ring the landlord for the tariff sheet.\n"
RULES = ("rules:\n" + PRICE_RULE.format(id="BUY901")
         + PRICE_RULE.format(id="BUY902").replace("electricity_price_per_kwh", "colocation_per_kw_month") + HINT
         + PRICE_RULE.format(id="BUY903").replace("electricity_price_per_kwh", "colocation_per_kw_month")
         + PRICE_RULE.format(id="BUY904") + HINT)
POWER_BILL = "compute the power bill: take the price per kWh from the utility tariff or the colocation contract"


def test_pending_actions_are_keyed_by_the_missing_field_not_by_the_rule(hwlint, tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "price.yaml").write_text(RULES)
    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text(re.sub(r"\n *electricity_price_per_kwh: .*", "", FLAWED.read_text()))
    found = items(hwlint("checklist", manifest, "--rules", tmp_path / "rules").out)
    derived, hinted, area, own = (found[f"BUY90{i}"][2] for i in (1, 2, 3, 4))
    assert derived == [r"Missing: facility.electricity\_price\_per\_kwh", f"Action: {POWER_BILL}"]
    # a field with its own action keeps it, whatever the rule's hint says; the hint covers fields without one
    assert own == derived
    assert hinted == [r"Missing: facility.colocation\_per\_kw\_month", "Action: Ring the landlord for the tariff sheet."]
    assert area == [r"Missing: facility.colocation\_per\_kw\_month",
                    "Action: ask the facility (data centre) for its power capacity, rack budgets, circuits and cooling"]


def test_every_field_action_names_a_manifest_field():
    import yaml

    from linter.manifest.model import Manifest

    schema = Manifest.model_json_schema()

    def exists(path: str) -> bool:
        node = schema
        for part in path.replace("[]", ".[]").split("."):
            while "$ref" in node or "anyOf" in node:
                node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else \
                    next((n for n in node["anyOf"] if "$ref" in n or n.get("type") in ("object", "array")), node["anyOf"][0])
            if part == "[]":
                node = node.get("items", {})
            else:
                node = node.get("properties", {}).get(part)
                if node is None:
                    return False
        return True

    data = yaml.safe_load((ROOT / "rules" / "actions.yaml").read_text())
    unknown = [e["field"] for kind in ("fields", "areas") for e in data[kind] if not exists(e["field"])]
    assert unknown == []


def test_every_rule_gives_its_evidence_in_words_and_no_checklist_shows_a_variable(hwlint, monkeypatch):
    from linter.engine.rules import load_pack

    assert [r.id for r in load_pack().rules if not (r.spec.evidence or "").strip()] == []
    monkeypatch.chdir(ROOT)
    for example in EXAMPLE_FILES:
        text = hwlint("checklist", example.relative_to(ROOT)).out
        assert "facts." not in text and "facts\\." not in text, example.name
        for rule_id, (_, match, details) in items(text).items():
            if match["words"] == "confirmed":
                assert len(details) == 1 and details[0].startswith("Evidence: ") and len(details[0]) > 30, (example.name, rule_id, details)


@pytest.mark.parametrize("role, layers, figures", [
    ("finance", ["Procurement"], ["Capex (purchases)", "Payback against renting"]),
    ("facilities", ["Power and cooling"], ["IT power at full load", "Usable facility power"]),
    ("technical-lead", ["Compute cards", "Intra-node link", "Inter-node network", "Host memory and local disk", "Storage",
                        "Operations"], ["GPUs", "Memory needed per GPU"]),
])
def test_checklist_role_puts_its_numbers_and_items_first(hwlint, role, layers, figures):
    plain = hwlint("checklist", FLAWED).out
    text = hwlint("checklist", FLAWED, "--role", role).out
    assert "the numbers and the open items first" not in plain
    section = text[text.index("## For "):text.index("| Layer | Confirmed")]
    assert text.index("## For ") < text.index("| Layer | Confirmed")  # before everything else the checklist lists
    for figure in figures:
        assert re.search(rf"^\| {re.escape(figure)} \| [\d,.]+ ", section, re.M), section
    opened = re.findall(r"^- \*\*([A-Z]+)\d{3}\*\* \(([^)]+)\)", section, re.M)
    assert opened and {layer for _, layer in opened} <= set(layers)
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ") and not line.startswith("## For ")]
    assert headings[:len(layers)] == layers
    assert items(text).keys() == items(plain).keys()  # the same items, reordered
    assert "Memory needed per GPU | 42.7 GB (estimate)" in hwlint("checklist", FLAWED, "--role", "technical-lead").out


def signoff_table(text: str) -> list[list[str]]:
    block = text[text.index("## Sign-off"):]
    rows = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[2:]]  # after the header and the --- row


def test_signoff_block_lists_default_or_configured_roles_and_fills_in_signatures(hwlint, tmp_path):
    assert signoff_table(hwlint("checklist", FLAWED).out) == [
        ["technical lead", "", "", ""], ["facilities", "", "", ""], ["finance", "", "", ""]]
    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text(FLAWED.read_text() + "\npolicy:\n  signoff_roles: [CTO, site owner]\n")
    assert hwlint("signoff", manifest, "--role", "site owner", "--name", "Grace Hopper").code == 0
    # a manifest adds roles to the defaults; it cannot drop one (that takes the config)
    assert signoff_table(hwlint("checklist", manifest).out) == [
        ["technical lead", "", "", ""], ["facilities", "", "", ""], ["finance", "", "", ""],
        ["CTO", "", "", ""], ["site owner", "Grace Hopper", "2026-11-30", "valid"]]
    manifest.write_text(manifest.read_text().replace("count: 16", "count: 12", 1))
    row = signoff_table(hwlint("checklist", manifest).out)[4]
    assert row[3].startswith("stale: the manifest changed since (changed: node\\_pools")


def test_manifest_text_is_escaped(hwlint, tmp_path):
    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text(FLAWED.read_text().replace("name: legacy-v100 30B pretraining", 'name: "<img src=x> [a](http://x) | @team"')
                        + "\nwaivers:\n  - {rule: GPU002, reason: '<script>alert(1)</script>', approver: '[me](http://y)', expires: 2027-01-31}\n")
    text = hwlint("checklist", manifest).out
    assert "<img" not in text and "<script>" not in text and "[a](http" not in text and "[me](http" not in text
    assert "@team" not in text
    assert text.startswith(r"# Sign-off checklist: &lt;img src=x&gt; \[a\](http&#58;//x) \| `@`team")


def test_output_file_and_unreviewable_input(hwlint, tmp_path):
    out = tmp_path / "checklist.md"
    run = hwlint("checklist", FLAWED, "--output", out)
    assert run.code == 0 and run.out == "" and out.read_text().startswith("# Sign-off checklist:")
    broken = tmp_path / "broken.hw.yaml"
    broken.write_text(FLAWED.read_text().replace("  precision: bf16", "  precision: [bf16"))
    run = hwlint("checklist", broken)
    assert run.code == 2 and run.out == "" and "not valid YAML" in run.err and "Traceback" not in run.err
    invalid = tmp_path / "invalid.hw.yaml"
    invalid.write_text(FLAWED.read_text().replace("  precision: bf16", "  precision: bf17"))
    run = hwlint("checklist", invalid)
    assert run.code == 2 and "plan.precision" in run.err and "cannot be reviewed" in run.err


def test_waivers_table_says_which_apply(hwlint, tmp_path):
    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text(FLAWED.read_text() + "\nwaivers:\n"
                        "  - {rule: GPU002, reason: fp16 instead, approver: Ada, expires: 2027-01-31}\n"
                        "  - {rule: LNK002, reason: trial, approver: Ada, expires: 2026-12-03}\n"
                        "  - {rule: PWR001, reason: later, approver: Ada, expires: 2027-01-31}\n")
    text = hwlint("checklist", manifest).out
    rows = text[text.index("## Waivers"):text.index("## Sign-off")].splitlines()
    assert "| GPU002 | any | Ada | 2027-01-31 | fp16 instead | applies |" in rows
    assert any(r.startswith("| LNK002 |") and "applies; " in r and "in 3 days" in r for r in rows)
    assert any(r.startswith("| PWR001 |") and "cannot be waived" in r for r in rows)


def test_the_json_report_carries_the_evidence_in_words(hwlint):
    import json

    doc = json.loads(hwlint("check", EXAMPLES / "superpod-h100.hw.yaml", "--format", "json").out)
    passed = [r for r in doc["manifests"][0]["results"] if r["status"] == "pass"]
    assert passed and all(r["evidence"] and "facts." not in r["evidence"] for r in passed)
    assert any(r["rule_id"] == "STO002" and re.search(r"A checkpoint of [\d,]+ GB writes in", r["evidence"]) for r in passed)
