"""Waivers through the command line: applied, incomplete, expired, due soon, unused, refused.

HWLINT_TODAY is 2026-11-30 (tests/conftest.py). The flawed example fails GPU002 (bf16 on a
V100), NET002 (leaf ports) and PWR001 (power headroom, not waivable); it passes NET001.
"""

from __future__ import annotations

import re

import pytest

from conftest import EXAMPLES

FLAWED = (EXAMPLES / "flawed-cluster.hw.yaml").read_text()
LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<id>[A-Z]{3}\d{3}) (?P<status>\w+) (?P<text>.*)$")


def waiver(rule: str, reason: str | None = "fp16 with loss scaling instead; plan update follows",
           approver: str | None = "Ada Lovelace", expires: str | None = "2027-03-01", path: str | None = None) -> str:
    lines = [f"  - rule: {rule}"]
    for key, value in (("path", path), ("reason", reason), ("approver", approver), ("expires", expires)):
        if value is not None:
            lines.append(f"    {key}: {value}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def manifest(tmp_path):
    def write(*waivers: str) -> str:
        path = tmp_path / "cluster.hw.yaml"
        path.write_text(FLAWED + "\nwaivers:\n" + "".join(waivers))
        return str(path)

    return write


def lines(run) -> dict[str, list[re.Match]]:
    out: dict[str, list[re.Match]] = {}
    for match in filter(None, map(LINE.match, run.out.splitlines())):
        out.setdefault(match["id"], []).append(match)
    return out


def source_line(path: str, match: re.Match) -> str:
    return open(path).read().splitlines()[int(match["line"]) - 1]


def test_a_valid_waiver_turns_the_failure_into_waived_and_clears_the_exit_code(hwlint, manifest):
    plain = manifest()
    assert hwlint("check", plain, "--select", "GPU002").code == 1
    waived = manifest(waiver("GPU002"))
    run = hwlint("check", waived, "--select", "GPU002")
    assert run.code == 0, run.out
    assert "1 waived" in run.out.splitlines()[-1]
    shown = lines(hwlint("check", waived, "--select", "GPU002", "-v"))["GPU002"][0]
    assert shown["status"] == "waived"
    assert "Ada Lovelace" in shown["text"] and "2027-03-01" in shown["text"] and "loss scaling" in shown["text"]


def test_the_markdown_review_shows_the_waiver_with_its_reason(hwlint, manifest):
    run = hwlint("check", manifest(waiver("GPU002", reason="<b>ok</b> per [memo](http://x)")), "--format", "markdown")
    block = run.out[run.out.index("**GPU002**"):]
    block = block[: block.index("\n- ")]
    assert "(waived)" in block and "Ada Lovelace" in block and "2027-03-01" in block
    assert "&lt;b&gt;ok&lt;/b&gt;" in block and "<b>" not in block and "[memo](http" not in block


@pytest.mark.parametrize("missing", ["reason", "approver", "expires"])
def test_a_waiver_missing_a_required_field_is_a_finding_at_its_line_and_does_not_apply(hwlint, manifest, missing):
    path = manifest(waiver("GPU002", **{missing: None}))
    found = lines(hwlint("check", path, "-v"))
    assert found["GPU002"][0]["status"] == "error"  # still failing
    problem = found["WVR001"][0]
    assert problem["status"] == "error"
    assert {"reason": "reason", "approver": "approver", "expires": "expiry date"}[missing] in problem["text"]
    assert source_line(path, problem).strip() == "- rule: GPU002"


def test_an_expired_waiver_stops_applying_and_the_finding_says_when(hwlint, manifest):
    path = manifest(waiver("GPU002", expires="2026-10-01"))
    run = hwlint("check", path, "--select", "GPU002")
    assert run.code == 1
    found = lines(run)
    assert "expired on 2026-10-01" in found["GPU002"][0]["text"]
    expired = found["WVR004"][0]
    assert expired["status"] == "warning" and "expired on 2026-10-01" in expired["text"]
    assert source_line(path, expired).strip() == "expires: 2026-10-01"


@pytest.mark.parametrize("expires, warned, words", [
    ("2026-11-30", True, "today"),
    ("2026-12-01", True, "in 1 day;"),
    ("2026-12-14", True, "in 14 days"),
    ("2026-12-15", False, ""),
])
def test_a_waiver_due_within_14_days_still_applies_but_warns(hwlint, manifest, expires, warned, words):
    run = hwlint("check", manifest(waiver("GPU002", expires=expires)), "--select", "GPU002", "-v")
    found = lines(run)
    assert found["GPU002"][0]["status"] == "waived"
    assert ("WVR005" in found) is warned
    if warned:
        assert f"expires on {expires}, {words}" in found["WVR005"][0]["text"]
        assert found["WVR005"][0]["status"] == "warning"


def test_a_waiver_that_matches_no_failure_is_reported_as_unused(hwlint, manifest):
    found = lines(hwlint("check", manifest(waiver("NET001"), waiver("GPU002", path="plan.optimizer")), "-v"))
    unused = {m["text"] for m in found["WVR006"]}
    assert any("NET001" in t and "the rule passes" in t for t in unused)
    assert any("GPU002" in t and "fails at plan.precision, not under plan.optimizer" in t for t in unused)
    assert found["GPU002"][0]["status"] == "error"


def test_a_second_waiver_for_the_same_failure_is_unused(hwlint, manifest):
    found = lines(hwlint("check", manifest(waiver("GPU002"), waiver("GPU002", approver="Bob")), "-v"))
    assert found["GPU002"][0]["status"] == "waived" and "Ada Lovelace" in found["GPU002"][0]["text"]
    assert "another waiver already covers it" in found["WVR006"][0]["text"]


def test_a_waiver_path_covers_the_paths_under_it(hwlint, manifest):
    found = lines(hwlint("check", manifest(waiver("NET002", path="network.fabrics[0]")), "-v"))
    assert found["NET002"][0]["status"] == "waived"
    assert "WVR006" not in found


def test_a_waiver_of_a_rule_that_was_not_run_is_not_called_unused(hwlint, manifest):
    found = lines(hwlint("check", manifest(waiver("NET002")), "--select", "GPU", "-v"))
    assert "WVR006" not in found and "NET002" not in found


def test_a_not_waivable_rule_rejects_its_waiver_clearly(hwlint, manifest):
    path = manifest(waiver("PWR001", reason="facility upgrade in January"))
    run = hwlint("check", path, "--select", "PWR001")
    assert run.code == 1
    found = lines(run)
    assert found["PWR001"][0]["status"] == "error"
    rejected = found["WVR003"][0]
    assert rejected["status"] == "error" and "PWR001" in rejected["text"] and "cannot be waived" in rejected["text"]
    assert source_line(path, rejected).strip() == "- rule: PWR001"


def test_a_waiver_of_an_unknown_rule_suggests_the_closest(hwlint, manifest):
    found = lines(hwlint("check", manifest(waiver("GPX002"))))
    assert "GPX002" in found["WVR002"][0]["text"] and "did you mean GPU002?" in found["WVR002"][0]["text"]


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif", "github"])
def test_a_waived_failure_is_shown_with_its_reason_in_every_format(hwlint, manifest, fmt):
    run = hwlint("check", manifest(waiver("GPU002", reason="fp16 with loss scaling, by memo 7")), "--select", "GPU002",
                 "--format", fmt)
    assert run.code == 0, run.err
    assert "GPU002" in run.out and "loss scaling, by memo 7" in run.out and "Ada Lovelace" in run.out


@pytest.mark.parametrize("key, value, shown", [
    ("approver", '"   "', "3 characters: U+0020"),
    ("approver", '"\\u200b"', "1 character: U+200B"),
    ("reason", '"\\t \\u200b\\u2028"', "4 characters: U+0009, U+0020, U+200B, U+2028"),
    ("reason", '"\\u0301\\u200d"', "2 characters: U+0301, U+200D"),
])
def test_a_waiver_whose_approver_or_reason_shows_nothing_is_refused_at_that_key(hwlint, manifest, key, value, shown):
    path = manifest(waiver("GPU002", **{key: value}))
    run = hwlint("check", path, "--select", "GPU002")
    assert run.code == 1, run.out
    found = lines(run)
    assert found["GPU002"][0]["status"] == "error"  # the waiver does not apply
    problem = found["WVR001"][0]
    assert source_line(path, problem).strip().startswith(f"{key}:")
    words = {"approver": "an approver", "reason": "a reason"}[key]
    assert f"The waiver for GPU002 gives {words} with no visible text ({shown}), so it does not apply." in problem["text"]


def test_a_waiver_with_visible_text_among_spaces_applies(hwlint, manifest):
    run = hwlint("check", manifest(waiver("GPU002", approver='"\\u200b Ada \\u200b"', reason='"  ok  "')), "--select", "GPU002")
    assert run.code == 0, run.out


@pytest.mark.parametrize("expires, what", [
    ("2027-03-01T00:00:00+14:00", "with a time and the time zone +14:00"),
    ("2027-03-01T00:00:00Z", "with a time and the time zone +00:00"),
    ("2027-03-01T00:00:00-05:30", "with a time and the time zone -05:30"),
    ("2027-03-01T00:00:00", "with a time;"),
])
def test_an_expiry_with_a_time_or_a_time_zone_is_an_error_and_the_waiver_does_not_apply(hwlint, manifest, expires, what):
    path = manifest(waiver("GPU002", expires=expires))
    run = hwlint("check", path, "--select", "GPU002")
    assert run.code == 1, run.out
    found = lines(run)
    assert found["GPU002"][0]["status"] == "error"
    problem = found["WVR007"][0]
    assert problem["status"] == "error" and source_line(path, problem).strip().startswith("expires:")
    assert what in problem["text"] and "an expiry is a date (YYYY-MM-DD)" in problem["text"], problem["text"]


@pytest.mark.parametrize("expires, applies", [("2028-11-28", True), ("2028-11-29", True), ("2028-11-30", False),
                                              ("9999-12-31", False)])
def test_an_expiry_beyond_the_policy_maximum_is_an_error_and_the_waiver_does_not_apply(hwlint, manifest, expires, applies):
    path = manifest(waiver("GPU002", expires=expires))  # today is 2026-11-30; 730 days on is 2028-11-29
    run = hwlint("check", path, "--select", "GPU002", "-v")
    found = lines(run)
    if applies:
        assert run.code == 0 and "WVR008" not in found, run.out
        return
    assert run.code == 1 and found["GPU002"][0]["status"] == "error", run.out
    problem = found["WVR008"][0]
    assert source_line(path, problem).strip() == f"expires: {expires}"
    assert "a waiver may run at most 730 days (policy waiver_max_days)" in problem["text"]
    assert "Fix: Set an expiry no later than 2028-11-29" in problem["text"]


def test_the_waiver_maximum_is_a_policy_value_a_manifest_may_tighten(hwlint, manifest, tmp_path):
    path = manifest(waiver("GPU002", expires="2027-03-01"))
    text = open(path).read().replace("\nwaivers:", "\npolicy:\n  waiver_max_days: 30\nwaivers:")
    open(path, "w").write(text)
    run = hwlint("check", path, "--select", "GPU002")
    assert run.code == 1 and "a waiver may run at most 30 days" in lines(run)["WVR008"][0]["text"], run.out
