"""A valid rule pack is built without jsonschema or pydantic (linter.engine.rules.quick_specs);
a rule file the quick check does not plainly accept goes the slow way, so each kind of schema
error in a rule file keeps the message jsonschema words for it."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, ROOT, TEAM_RULE

GOOD = TEAM_RULE + """\
    tests:
      - name: a goal
        base: base.hw.yaml
        expect: pass
      - name: no goal to speak of
        base: base.hw.yaml
        set: {"plan.goal": experiment}
        expect: fail
"""
CASE = "        base: base.hw.yaml\n"

# (edits to GOOD, the messages a check prints: the same as before the quick check existed)
SCHEMA_ERRORS = {
    "enum": ([("severity: info", "severity: fatal")],
             ['4:5: rules[0].severity is the text "fatal"; expected one of: error, warning, info']),
    "required": ([('    fix: "name a goal"\n', "")], ['2:5: rules[0] is missing the required key "fix"']),
    "unknown key": ([("severity: info", "sevrity: info")],
                    ['2:5: rules[0] is missing the required key "severity"',
                     '4:5: unknown key "sevrity" in rules[0]; did you mean "severity"?']),
    "text expected": ([("title: The plan names a goal", "title: 5")], ["3:5: rules[0].title must be text, not 5"]),
    "boolean expected": ([("tiers: all", "tiers: all\n    waivable: 'no'")],
                         ['6:5: rules[0].waivable must be true or false, not the text "no"']),
    "pattern": ([("id: OPS901", "id: ops901")],
                ['2:5: rules[0].id is the text "ops901", which does not match the expected form ^[A-Z]{2,5}[0-9]{3}$']),
    "pattern, a final line break": ([("id: OPS901", 'id: "OPS901\\n"')],
                                   ['2:5: rules[0].id is the text "OPS901\\x0a", which does not match the expected form '
                                    '^[A-Z]{2,5}[0-9]{3}$; it ends in a line break: remove it (a | or > block keeps one)']),
    "minLength": ([('fix: "name a goal"', 'fix: ""')], ["8:5: rules[0].fix has 0 characters; it must have at least 1"]),
    "maxLength": ([("title: The plan names a goal", "title: " + "x" * 121)],
                  ["3:5: rules[0].title has 121 characters; it must have at most 120"]),
    "minItems": ([("cite: [seed-hardware-layers]", "cite: []")], ["9:5: rules[0].cite has 0 items; it must have at least 1"]),
    "anyOf, list": ([("tiers: all", "tiers: [multi-nodes]")],
                    ["5:5: rules[0].tiers: ['multi-nodes'] is not valid under any of the given schemas"]),
    "anyOf, const": ([("tiers: all", "tiers: everything")],
                     ["5:5: rules[0].tiers: 'everything' is not valid under any of the given schemas"]),
    "case enum": ([("expect: pass", "expect: passes")],
                  ['14:9: rules[0].tests[0].expect is the text "passes"; expected one of: pass, fail, pending, skipped, '
                   'waived; did you mean "pass"?']),
    "case required": ([(CASE, "")], ['12:9: rules[0].tests[0] is missing the required key "base"']),
    "case unknown key": ([("expect: pass", "expect: pass\n        tire: multi-node")],
                         ['15:9: unknown key "tire" in rules[0].tests[0]; did you mean "tier"?']),
    "case optional enum": ([("expect: pass", "expect: pass\n        tier: huge")],
                           ['15:9: rules[0].tests[0].tier is the text "huge"; expected one of: single-gpu, single-node, '
                            'multi-node, large-cluster']),
    "case mapping expected": ([("expect: pass", "expect: pass\n        set: [a]")],
                              ["15:9: rules[0].tests[0].set must be a mapping (key: value lines), not a list"]),
    "list expected": ([(GOOD[GOOD.index("    tests:"):], "    tests: 3\n")],
                      ["11:5: rules[0].tests must be a list, not 3"]),
    "rules a mapping": ([("rules:\n  - id", "rules:\n  x:\n    id")], ["1:1: rules must be a list, not a mapping"]),
    "record not a mapping": ([("rules:\n", "rules:\n  - hello\n")],
                             ['2:5: rules[0] must be a mapping (key: value lines), not the text "hello"']),
    "no rules key": ([("rules:", "rulez:")], ['1:1: the top level is missing the required key "rules"',
                                             '1:1: unknown key "rulez" in the top level; did you mean "rules"?']),
    "top level a list": ([(GOOD, "- a\n- b\n")], ["1:1: the top level is a list; expected a mapping"]),
    "top level text": ([(GOOD, "hello\n")], ["1:1: the top level is text; expected a mapping"]),
    "two errors": ([("severity: info", "severity: fatal"), ("cite: [seed-hardware-layers]", "cite: []")],
                   ['4:5: rules[0].severity is the text "fatal"; expected one of: error, warning, info',
                    "9:5: rules[0].cite has 0 items; it must have at least 1"]),
}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))


def rule_folder(tmp_path, edits):
    text = GOOD
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "ops.yaml").write_text(text)
    shutil.copy(EXAMPLES / "single-node-finetune.hw.yaml", folder / "base.hw.yaml")
    return folder


@pytest.mark.parametrize("command", ["check", "rules test"])
@pytest.mark.parametrize("case", SCHEMA_ERRORS, ids=list(SCHEMA_ERRORS))
def test_each_kind_of_schema_error_keeps_its_message(hwlint, tmp_path, case, command):
    edits, messages = SCHEMA_ERRORS[case]
    folder = rule_folder(tmp_path, edits)
    if command == "check":
        run = hwlint("check", "--rules", folder, EXAMPLES / "single-node-finetune.hw.yaml")
    else:
        run = hwlint("rules", "test", folder)
    assert run.code == 2
    assert run.err == "".join(f"hwlint: rule error: {folder / 'ops.yaml'}:{m}\n" for m in messages)


@pytest.mark.parametrize("edits, runs", [
    ([], "1 passed"),
    ([("tiers: all", "tiers: all\n    when:")], "1 passed"),  # a blank key: the default, "true"
    ([("expect: pass", "expect: pass\n        tier: null")], "1 passed"),
    ([("tiers: all", "tiers: all\n    when: \"manifest.plan.goal != 'pretrain'\"")], "1 passed"),
    ([("tiers: all", "tiers: [single-node]\n    waivable: false")], "1 passed"),
])
def test_a_valid_team_rule_file_loads_and_its_cases_pass(hwlint, tmp_path, edits, runs):
    folder = rule_folder(tmp_path, edits)
    run = hwlint("check", "-v", "--rules", folder, "--select", "OPS901", EXAMPLES / "single-node-finetune.hw.yaml")
    assert run.code == 0 and runs in run.out, run.err
    assert hwlint("rules", "test", folder).code == 0


# --- the quick path gives exactly what jsonschema and pydantic give --------------------------


def loaded(path):
    from linter.manifest.loader import load_file

    return load_file(str(path)).data


def slow(data):
    """What the loader did before the quick check: jsonschema's verdict, then pydantic's records
    (None where either refuses)."""
    from pydantic import ValidationError

    from linter.engine.rules import _rule_validator, plain_spec

    if any(True for _ in _rule_validator().iter_errors(data)):
        return None
    try:
        return [plain_spec(raw) for raw in data["rules"]]
    except ValidationError:
        return None


def same_specs(quick, slow_specs):
    assert quick == slow_specs
    for a, b in zip(quick, slow_specs):
        assert sorted(vars(a)) == sorted(vars(b))
        assert {k: type(v) for k, v in vars(a).items()} == {k: type(v) for k, v in vars(b).items()}
        assert a.tests == b.tests


BUILT_IN = sorted(p for p in (ROOT / "rules").glob("*.yaml") if p.name not in (
    "references.yaml", "tiers.yaml", "policy.yaml", "conditions.yaml", "actions.yaml"))


@pytest.mark.parametrize("path", BUILT_IN, ids=lambda p: p.name)
def test_every_built_in_rule_file_takes_the_quick_path_to_pydantics_records(path):
    from linter.engine.rules import quick_specs

    data = loaded(path)
    quick = quick_specs(data)
    assert quick is not None
    same_specs(quick, slow(data))


def test_an_id_with_a_final_newline_goes_the_slow_way():
    """Python's `re` lets "OPS901\\n" match ...$, pydantic's engine does not: the quick path
    leaves it to the slow one, whose jsonschema reads `$` as pydantic does and refuses it."""
    from linter.engine.rules import quick_specs

    data = loaded(BUILT_IN[0])
    assert quick_specs(data) is not None
    data["rules"][0]["id"] += "\n"
    assert quick_specs(data) is None and slow(data) is None


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 200), st.floats(allow_nan=False), st.text(max_size=130),
                   st.sampled_from(["all", "pass", "info", "single-node", "OPS901", "ABC12", "true", "", "x\n"]),
                   st.lists(st.sampled_from(["single-gpu", "multi-node", "seed-hardware-layers", "", 3]), max_size=3),
                   st.dictionaries(st.sampled_from(["name", "base", "expect", "tier", "set", "x"]),
                                   st.sampled_from(["pass", "a", "", 1, [], {}]), max_size=4))
KEYS = st.sampled_from(["id", "title", "severity", "tiers", "when", "applies_when", "require", "message", "fix", "cite",
                        "at", "waivable", "not_applicable_when", "never_skip", "evidence", "confirm", "why",
                        "example_fail", "example_pass", "tests", "tset", "Title"])
CASE_KEYS = st.sampled_from(["name", "base", "set", "unset", "expect", "tier", "expects"])


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_quick_path_never_accepts_what_the_slow_path_refuses(data):
    """Built-in records with keys dropped, added or given other values: the quick path answers
    None, or exactly the records the slow path gives."""
    from linter.engine.rules import quick_specs

    content = json.loads(json.dumps(loaded(data.draw(st.sampled_from(BUILT_IN)))))
    records = content["rules"]
    for _ in range(data.draw(st.integers(1, 3))):
        record = records[data.draw(st.integers(0, len(records) - 1))]
        action = data.draw(st.sampled_from(["set", "drop", "case set", "case drop"]))
        cases = record.get("tests") or []
        if action.startswith("case") and cases:
            case = cases[data.draw(st.integers(0, len(cases) - 1))]
            key = data.draw(CASE_KEYS)
            if action == "case drop":
                case.pop(key, None)
            else:
                case[key] = data.draw(VALUES)
        elif action == "drop":
            record.pop(data.draw(KEYS), None)
        else:
            record[data.draw(KEYS)] = data.draw(VALUES)
    quick = quick_specs(content)
    if quick is not None:
        same_specs(quick, slow(content))
