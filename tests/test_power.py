"""The power model through the command line: NVIDIA's DGX SuperPOD H100 design passes, and
the same design broken in the ways facilities engineers refuse fails at the right key."""

from __future__ import annotations

import json

from conftest import EXAMPLES

SUPERPOD = (EXAMPLES / "superpod-h100.hw.yaml").read_text(encoding="utf-8")


def _check(hwlint, tmp_path, text: str, fmt: str = "text"):
    path = tmp_path / "m.hw.yaml"
    path.write_text(text, encoding="utf-8")
    return hwlint("check", "--format", fmt, path)


def _line_of(text: str, key: str) -> int:
    """1-based line of the first line that sets KEY (so a line added above it moves the expectation too)."""
    return next(n for n, l in enumerate(text.splitlines(), 1) if l.strip().startswith(key + ":"))


def _status(run) -> dict[str, str]:
    return {r["rule_id"]: r["status"] for r in json.loads(run.out)["manifests"][0]["results"]}


def test_superpod_passes_the_power_link_and_fabric_rules(hwlint, tmp_path):
    run = _check(hwlint, tmp_path, SUPERPOD, "json")
    assert run.code == 0, run.out
    status = _status(run)
    for rule in ("PWR001", "PWR002", "PWR003", "PWR004", "PWR006", "PWR009", "PWR010",
                 "LNK001", "NET001", "NET002", "NET003", "NET004", "NET009", "NET010"):
        assert status.get(rule) == "pass", (rule, status.get(rule))


def test_five_dgx_per_rack_breaks_budget_and_circuits(hwlint, tmp_path):
    broken = SUPERPOD.replace("count: 32\n      contents: [{pool: dgx, nodes: 4}]", "count: 26\n      contents: [{pool: dgx, nodes: 5}]")
    run = _check(hwlint, tmp_path, broken)
    assert run.code == 1
    assert "PWR002 error A rack of dgx-rack draws 51 kW at full load, over its power budget of 45 kW" in run.out
    assert " PWR003 " not in run.out  # 51 kW still fits 3 x 23 kVA x 80% = 55.2 kW per feed


def test_circuits_are_judged_per_feed_when_the_facility_has_two(hwlint, tmp_path):
    broken = SUPERPOD.replace("circuits: {count: 6,", "circuits: {count: 4,")  # 2 + 2 circuits: 36.8 kW per feed
    run = _check(hwlint, tmp_path, broken)
    assert run.code == 1
    line = next(l for l in run.out.splitlines() if " PWR003 " in l)
    assert "draws 40.8 kW continuously, but its circuits, judged per feed (assumed from facility.ab_feeds: true" in line
    assert "may carry 36.8 kW" in line and "rated for at least 51 kW on each feed" in line


def test_watts_typed_as_kilowatts_are_named_at_the_key(hwlint, tmp_path):
    broken = SUPERPOD.replace("    psu: {count: 6", "    max_power_kw: 10200\n    psu: {count: 6")
    run = _check(hwlint, tmp_path, broken)
    assert run.code == 1
    line = next(l for l in run.out.splitlines() if " PWR010 " in l)
    assert f":{_line_of(broken, 'max_power_kw')}:5: PWR010 error node_pools[0].max_power_kw is 10,200 kW" in line and "did you write W as kW?" in line


def test_node_power_below_its_gpus_is_an_error_at_that_key(hwlint, tmp_path):
    broken = SUPERPOD.replace("    psu: {count: 6", "    max_power_kw: 4.0\n    psu: {count: 6")
    run = _check(hwlint, tmp_path, broken)
    assert run.code == 1
    assert f":{_line_of(broken, 'max_power_kw')}:5: PWR009 error dgx is given 4 kW per node, less than its GPUs alone draw (8 x 700 W = 5.6 kW)" in run.out


def test_hot_spares_are_powered_and_cabled_but_left_out_of_the_layout(hwlint, tmp_path):
    pool = "    count: 128\n"
    assert pool in SUPERPOD
    more = SUPERPOD.replace(pool, "    count: 130\n", 1)
    spared = SUPERPOD.replace(pool, "    count: 130\n    spares: 2\n", 1)
    idle = json.loads(_check(hwlint, tmp_path, more, "json").out)["manifests"][0]
    kept = json.loads(_check(hwlint, tmp_path, spared, "json").out)["manifests"][0]
    idle_r, kept_r = ({r["rule_id"]: r for r in m["results"]} for m in (idle, kept))
    assert idle_r["GPU005"]["status"] == "fail" and kept_r["GPU005"]["status"] == "pass"
    assert "1,040" in idle_r["GPU005"]["message"] or "1040" in idle_r["GPU005"]["message"]
    # the spares draw power and take ports and budget like any node
    assert idle["budget"] == kept["budget"]
    assert idle_r["PWR001"]["facts"] == kept_r["PWR001"]["facts"]
    assert idle_r["NET002"]["facts"] == kept_r["NET002"]["facts"]
