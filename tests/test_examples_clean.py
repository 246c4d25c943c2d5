"""The bundled examples are the first thing a user copies: every one but the flawed one is
clean as shipped (no failing result that is not waived with its reason), and once each
required role signs it, it verifies."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import ROOT

EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.hw.yaml") if p.name != "flawed-cluster.hw.yaml")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_example_has_no_failing_result_and_verifies_once_signed(hwlint, tmp_path, example):
    path = tmp_path / example.name
    shutil.copy(example, path)
    run = hwlint("check", path, "--fail-on", "info", "--format", "json")
    assert run.code == 0, run.out[-2000:] + run.err
    results = json.loads(run.out)["manifests"][0]["results"]
    assert not [r["rule_id"] for r in results if r["status"] == "fail"]
    waived = [r for r in results if r["status"] == "waived"]
    text = example.read_text(encoding="utf-8")
    assert all(re.search(rf"rule: {r['rule_id']}\b", text) for r in waived)  # each waiver is written out, with its reason

    missing = re.search(r"missing: ([^)]*)\)", hwlint("verify", path).out)
    assert missing, "an unsigned example cannot verify"
    for role in missing.group(1).split(", "):
        signed = hwlint("signoff", path, "--role", role, "--name", f"Person {role}")
        assert signed.code == 0, signed.err
    verified = hwlint("verify", path)
    assert verified.code == 0, verified.out + verified.err


def test_every_flaw_of_the_flawed_example_is_named_where_it_is(hwlint):
    """Its comments carry `ruleid: ID` (as semgrep's annotations do) on the line each failing
    rule reports, and every such annotation fails there: the example says what is wrong with it."""
    flawed = ROOT / "examples" / "flawed-cluster.hw.yaml"
    results = json.loads(hwlint("check", flawed, "--format", "json").out)["manifests"][0]["results"]
    failing = {(r["line"], r["rule_id"]) for r in results if r["status"] == "fail"}
    annotated = {(number, rule) for number, line in enumerate(flawed.read_text(encoding="utf-8").splitlines(), 1)
                 for ids in re.findall(r"ruleid: ([A-Z0-9, ]+)", line) for rule in ids.replace(",", " ").split()}
    assert failing and annotated == failing, (sorted(failing - annotated), sorted(annotated - failing))
