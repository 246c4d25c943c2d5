"""Which day it is: HWLINT_TODAY pins it for reproducible reviews, and anything but a real
YYYY-MM-DD date there is a usage error naming the variable, never an internal error."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, hwlint_process


@pytest.mark.parametrize("value", ["2026-13-45", "yesterday", "20261130", "2026-11-30T00:00", "2026-W48-1", " 2026-11-30"])
@pytest.mark.parametrize("command", [("check",), ("check", "--format", "json"), ("checklist",)])
def test_a_malformed_hwlint_today_is_a_usage_error(value, command):
    run = hwlint_process(*command, EXAMPLES / "single-gpu-experiment.hw.yaml", env={"HWLINT_TODAY": value})
    assert run.code == 2, run.out + run.err
    assert run.out == ""
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    assert run.err.splitlines() == [
        f"hwlint: the environment variable HWLINT_TODAY is {value!r}, which is not a date; set it to YYYY-MM-DD "
        "(for example 2026-11-30) to review as of that day, or unset it to review as of today"]


def test_a_well_formed_hwlint_today_is_the_day_of_the_review():
    manifest = EXAMPLES / "multi-node-pretrain.hw.yaml"
    run = hwlint_process("check", "--format", "json", manifest, env={"HWLINT_TODAY": "2026-11-30"})
    assert run.code in (0, 1) and "Traceback" not in run.err, run.err
