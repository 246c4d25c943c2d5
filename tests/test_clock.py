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


def test_a_waiver_expiry_is_judged_in_utc_whatever_the_machines_time_zone(tmp_path):
    """Without HWLINT_TODAY, "today" is the date in UTC: on a machine at UTC-12 or UTC+14 a
    waiver expiring on UTC's today still expires today, not yesterday or tomorrow."""
    import datetime as dt
    import os
    import subprocess
    import sys

    from conftest import ROOT

    path = tmp_path / "cluster.hw.yaml"
    env = {k: v for k, v in os.environ.items() if k != "HWLINT_TODAY"}
    for _ in range(3):  # a run that straddles midnight UTC is tried again
        utc_today = dt.datetime.now(dt.timezone.utc).date()
        path.write_text((EXAMPLES / "flawed-cluster.hw.yaml").read_text() + "\nwaivers:\n  - rule: GPU002\n"
                        f"    reason: fp16 instead\n    approver: Ada Lovelace\n    expires: {utc_today}\n")
        outputs = {}
        for zone in ("UTC", "Etc/GMT+12", "Etc/GMT-14"):
            proc = subprocess.run([sys.executable, "-m", "linter.cli", "check", "-v", "--select", "GPU002", str(path)],
                                  capture_output=True, text=True, cwd=ROOT, env={**env, "TZ": zone}, timeout=120)
            assert "Traceback" not in proc.stderr, proc.stderr
            outputs[zone] = (proc.returncode, proc.stdout)
        if dt.datetime.now(dt.timezone.utc).date() == utc_today:
            break
    assert outputs["UTC"] == outputs["Etc/GMT+12"] == outputs["Etc/GMT-14"], outputs
    code, out = outputs["UTC"]
    assert code == 0 and f"WVR005 warning The waiver for GPU002 expires on {utc_today}, today;" in out, out
