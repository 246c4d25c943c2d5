"""NVIDIA's reference rooms, as published, pass; each with one documented limit broken fails at
that limit and nowhere else.

The rooms are bundled examples (examples/superpod-h100, superpod-b200, gb200-nvl72-su); the
variants are overlays on them, written to a temporary file and checked through the command line.
"""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from conftest import EXAMPLES
from linter.engine.casetest import edit
from linter.engine.rules import Spec

ROOMS = ["superpod-h100.hw.yaml", "superpod-b200.hw.yaml", "gb200-nvl72-su.hw.yaml"]

# (room, the documented limit, the overlay that breaks it, the rule that must fail)
VARIANTS = [
    ("superpod-h100.hw.yaml", "4 DGX H100 (40.8 kW) need circuits rated for 51 kW per feed (NEC 80% rule)",
     {"facility.racks[0].circuits.count": 4}, "PWR003"),
    ("superpod-b200.hw.yaml", "2 DGX B200 draw 28.6 kW: more than the 25 kW rack of the RA's example layout",
     {"facility.racks[0].power_budget_kw": 25}, "PWR002"),
    ("gb200-nvl72-su.hw.yaml", "GB200 compute trays cool their CPUs and GPUs on liquid cold plates",
     {"facility.racks[0].cooling": "rear-door"}, "PWR011"),
    # the room around the rack grows with it (budget, cooling, circuits, hall, UPS) so that only the bound breaks
    ("gb200-nvl72-su.hw.yaml", "the rack's power shelves deliver 264 kW (8 x 33 kW)",
     {"node_pools[0].max_power_kw": 280, "facility.racks[0].power_budget_kw": 300,
      "facility.racks[0].liquid_cooling_kw": 150, "facility.racks[0].air_cooling_kw": 300,
      "facility.racks[0].circuits.breaker_a": 250, "facility.it_capacity_kw": 3500,
      "facility.ups.capacity_kva": 3500}, "BUY008"),
]


def review(hwlint, path) -> dict[str, dict]:
    run = hwlint("check", "--format", "json", path)
    assert "Traceback" not in run.err, run.err
    return {r["rule_id"]: r for r in json.loads(run.out)["manifests"][0]["results"]}


def failing(results: dict[str, dict]) -> set[str]:
    return {rule for rule, r in results.items() if r["status"] == "fail"}


@pytest.mark.parametrize("room", ROOMS)
def test_a_reference_room_as_published_passes(hwlint, room):
    results = review(hwlint, EXAMPLES / room)
    errors = {rule for rule, r in results.items() if r["status"] == "fail" and r["severity"] == "error"}
    assert not errors, errors
    assert hwlint("check", EXAMPLES / room).code == 0


@pytest.mark.parametrize("room, limit, overlay, rule", VARIANTS, ids=[f"{v[0]}: {v[3]}" for v in VARIANTS])
def test_a_documented_limit_broken_fails_at_that_limit(hwlint, tmp_path, room, limit, overlay, rule):
    yaml = YAML(typ="safe", pure=True)
    data = yaml.load((EXAMPLES / room).read_text(encoding="utf-8"))
    variant = tmp_path / room
    with variant.open("w", encoding="utf-8") as out:
        yaml.dump(edit(data, Spec({"set": overlay, "unset": []})), out)
    before, after = failing(review(hwlint, EXAMPLES / room)), review(hwlint, variant)
    assert failing(after) - before == {rule}, (limit, failing(after) - before)
    assert after[rule]["message"], limit
