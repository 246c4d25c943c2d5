"""Organisation config (.hwlint.yaml, [tool.hwlint]) and a `verify` that means it: floors a
manifest cannot relax, deselection on record in every format, never-skip rules, roles bound
to principals. HWLINT_TODAY is 2026-11-30 (tests/conftest.py)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import EXAMPLES, ROOT
from test_signoff import keypair, needs_ssh, verify_lines

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
ROLES = ("technical lead", "facilities", "finance")


@pytest.fixture
def repo(tmp_path):
    """A repository folder with a manifest two folders down."""
    (tmp_path / "clusters" / "east").mkdir(parents=True)
    manifest = tmp_path / "clusters" / "east" / "m.hw.yaml"
    manifest.write_bytes(GOOD.read_bytes())
    return tmp_path, manifest


def test_the_config_is_found_by_walking_up_from_the_manifest(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("ignore: [BUY]\n")
    run = hwlint("check", manifest)
    buy_rules = len(re.findall(r"^\s*- id: BUY\d+", (ROOT / "rules" / "buy.yaml").read_text(), re.M))
    found = re.search(r"(\d+) deselected \(ignore BUY in \S+\.hwlint\.yaml", run.out)
    assert found and int(found.group(1)) == buy_rules, run.out
    assert "deselected" not in hwlint("check", manifest, "--isolated").out
    elsewhere = root / "other.yaml"
    elsewhere.write_text("ignore: [GPU001]\n")
    assert "--" not in hwlint("check", manifest, "--config", elsewhere).out.split("deselected")[1][:3]
    assert "ignore GPU001 in" in hwlint("check", manifest, "--config", elsewhere).out


def test_pyproject_tool_table_is_a_config_and_one_without_it_is_passed_over(hwlint, repo):
    root, manifest = repo
    (root / "pyproject.toml").write_text('[tool.hwlint]\nignore = ["OPS"]\nfail_on = "warning"\n')
    (root / "clusters" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    run = hwlint("check", manifest)
    assert "ignore OPS in" in run.out and "pyproject.toml" in run.out


def test_a_broken_pyproject_is_reported_only_when_it_may_hold_hwlints_table(hwlint, repo):
    """A pyproject.toml is read for its [tool.hwlint] table; one that never spells hwlint (no
    such key, no escape that could make one) cannot hold it and is passed over unparsed, broken
    or not; a broken one that may hold it is reported."""
    root, manifest = repo
    (root / "clusters" / "pyproject.toml").write_text('[project\nname = "x"\n')
    assert hwlint("check", manifest).code == 0
    # hwlint as a project name and a script is not a table of hwlint's, broken TOML or not
    (root / "clusters" / "pyproject.toml").write_text('[project]\nname = "hwlint"\n[project.scripts]\n'
                                                       'hwlint = "linter.cli:main"\nbroken = \n')
    assert hwlint("check", manifest).code == 0
    (root / "clusters" / "pyproject.toml").write_text('tool = {hwlint = {ignore = ["OPS"]}}\n')
    assert "ignore OPS in" in hwlint("check", manifest).out
    for text in ('[tool.hwlint\nignore = ["OPS"]\n', '[tool."\\u0068wlint"\nignore = 1\n'):
        (root / "clusters" / "pyproject.toml").write_text(text)
        run = hwlint("check", manifest)
        assert run.code == 2 and "not valid TOML" in run.err, run.err


@pytest.mark.parametrize("text, message", [
    ("polcy: {power_headroom_pct: 25}\n", 'polcy: unknown setting; did you mean "policy"?'),
    ("policy: {power_headroom: 25}\n", 'policy.power_headroom: unknown setting; did you mean "power_headroom_pct"?'),
    ("signoff: {roles: [finance], signer: {}}\n", 'signoff.signer: unknown setting; did you mean "signers"?'),
    ("fail_on: warnings\n", 'fail_on: must be one of error, warning, info; did you mean "warning"?'),
    ("policy: {compute_efficiency: high}\n", "policy.compute_efficiency: must be a number"),
])
def test_unknown_or_wrong_settings_are_errors_with_did_you_mean(hwlint, repo, text, message):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text(text)
    run = hwlint("check", manifest)
    assert run.code == 2 and message in run.err and "Traceback" not in run.err, run.err
    assert re.search(r"\.hwlint\.yaml:1:\d+: ", run.err)


def test_a_manifest_may_tighten_a_floor_but_not_relax_it(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\n")
    text = manifest.read_text()
    manifest.write_text(text + "\npolicy:\n  power_headroom_pct: 25\n")
    assert hwlint("check", manifest).code in (0, 1)
    manifest.write_text(text + "\npolicy:\n  power_headroom_pct: 10\n")
    run = hwlint("check", manifest)
    assert run.code == 1
    assert re.search(r"m\.hw\.yaml:\d+:\d+: POLICY error policy\.power_headroom_pct is 10, which relaxes the "
                     r"organisation's floor of 20 set in \S+; a manifest may only tighten it", run.out)
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 20\nallow_relaxing: [power_headroom_pct]\n")
    assert "POLICY" not in hwlint("check", manifest).out


def test_every_policy_value_says_which_way_is_stricter():
    from linter.manifest.config import policy_specs

    assert {name: spec.get("stricter") for name, spec in policy_specs().items()
            if spec.get("stricter") not in ("higher", "lower", "none")} == {}


def test_the_configs_floor_is_the_value_used_and_the_review_says_where_from(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("policy:\n  power_headroom_pct: 30\n")
    doc = json.loads(hwlint("check", manifest, "--format", "json").out)["manifests"][0]
    assert doc["config"].endswith(".hwlint.yaml")
    review = hwlint("check", manifest, "--format", "markdown").out
    assert re.search(r"\| power\\_headroom\\_pct \| 30 ?% \| config \(\S+hwlint\\?\.yaml\) \|", review), review


def test_required_roles_come_from_the_config_and_a_manifest_cannot_drop_one(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("signoff:\n  roles: [technical lead, facilities, finance, security]\n")
    manifest.write_text(manifest.read_text() + "\npolicy:\n  signoff_roles: [technical lead]\n")
    for role in ROLES:
        assert hwlint("signoff", manifest, "--role", role, "--name", "X").code == 0
    run = hwlint("verify", manifest)
    assert run.code == 1 and "missing: security" in run.out


def test_every_format_records_deselected_rules_and_how(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("ignore: [BUY005]\n")
    args = ("check", manifest, "--ignore", "PWR008")
    text = hwlint(*args).out
    assert "2 deselected (ignore BUY005 in " in text and "--ignore PWR008: PWR008" in text
    doc = json.loads(hwlint(*args, "--format", "json").out)["manifests"][0]
    assert {(d["rule_id"], d["how"].split(" in ")[0]) for d in doc["deselected"]} == {("BUY005", "ignore BUY005"), ("PWR008", "--ignore PWR008")}
    md = hwlint(*args, "--format", "markdown").out
    assert "## Not run (deselected)" in md and "\\-\\-ignore PWR008" in md.replace("--ignore", "\\-\\-ignore")
    sarif = json.loads(hwlint(*args, "--format", "sarif").out)
    overrides = sarif["runs"][0]["invocations"][0]["ruleConfigurationOverrides"]
    assert {o["descriptor"]["id"]: o["configuration"]["enabled"] for o in overrides} == {"BUY005": False, "PWR008": False}
    assert "::notice " in hwlint(*args, "--format", "github").out
    checklist = hwlint("checklist", manifest).out
    assert "BUY005" in checklist and "deselected" in checklist


def test_fail_on_from_the_config_and_the_command_line_wins(hwlint, repo):
    root, manifest = repo
    manifest.write_bytes(FLAWED.read_bytes())
    (root / ".hwlint.yaml").write_text("fail_on: info\nselect: [GPU007]\n")
    code = hwlint("check", manifest).code
    assert hwlint("check", manifest, "--fail-on", "error").code == 0
    assert code in (0, 1)


# --- verify ------------------------------------------------------------------------------


def _signed(hwlint, path):
    for role in ROLES:
        assert hwlint("signoff", path, "--role", role, "--name", f"P {role}").code == 0


def test_verify_refuses_while_a_never_skip_or_error_rule_is_pending(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    text = GOOD.read_text()
    assert "it_capacity_kw: 500" in text
    path.write_text(text.replace("  it_capacity_kw: 500\n", ""))
    _signed(hwlint, path)
    run = hwlint("verify", path)
    assert run.code == 1
    assert re.search(r"PWR001 to confirm: .*needs facility\.it_capacity_kw; PWR001 is an error-severity rule", run.out)
    assert "still to confirm" in run.out.splitlines()[-1]
    allowed = hwlint("verify", path, "--allow-pending")
    assert "--allow-pending" in allowed.out.splitlines()[0]
    assert "PWR001 to confirm" in allowed.out  # a never-skip rule is not let through


def test_verify_refuses_when_a_config_deselects_a_never_skip_rule(hwlint, repo):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text("ignore: [STO006]\n")
    _signed(hwlint, manifest)
    run = hwlint("verify", manifest)
    assert run.code == 1 and "STO006 deselected (ignore STO006 in " in run.out
    assert "1 rule that must run is deselected" in run.out


def test_never_skip_rules_cannot_be_waived(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_text(FLAWED.read_text() + "\nwaivers:\n  - {rule: STO003, reason: later, approver: cto, expires: 2027-06-30}\n")
    run = hwlint("check", path)
    assert "WVR003 error The waiver for STO003" not in run.out
    assert re.search(r"WVR003 error STO003 \(.*\) cannot be waived: the rule is one of the checks that may never be skipped", run.out)
    assert re.search(r"STO003 error", run.out)


def test_verify_as_of_the_signing_date(hwlint, tmp_path, monkeypatch):
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    _signed(hwlint, path)
    monkeypatch.setenv("HWLINT_TODAY", "2027-06-30")  # months later: quotes and specs have aged
    later = hwlint("verify", path)
    assert later.code == 1 and "BUY003" in later.out
    run = hwlint("verify", path, "--as-of", "2026-11-30")
    assert run.code == 0, run.out
    assert "judged as of 2026-11-30" in run.out and "gone stale since 2026-11-30: BUY003" in run.out
    assert hwlint("verify", path, "--as-of", "2028-01-01").code == 2
    assert hwlint("verify", path, "--as-of", "soon").code == 2


@needs_ssh
def test_roles_are_bound_to_the_principals_the_config_lists(hwlint, repo):
    root, manifest = repo
    keys = {who: keypair(root, f"{who}@example.com") for who in ("ada", "grace", "carol")}
    (root / "allowed_signers").write_text("".join(line for _, line in keys.values()))
    (root / ".hwlint.yaml").write_text(
        "signoff:\n  allowed_signers: allowed_signers\n  signers:\n"
        "    technical lead: [ada@example.com]\n    facilities: [grace@example.com]\n    finance: [carol@example.com]\n")
    run = hwlint("signoff", manifest, "--role", "finance", "--name", "Carol")
    assert run.code == 2 and "requires an SSH signature" in run.err
    for role, who in (("technical lead", "ada"), ("facilities", "grace"), ("finance", "ada")):
        assert hwlint("signoff", manifest, "--role", role, "--name", who, "--sign-key", keys[who][0]).code == 0
    run = hwlint("verify", manifest)
    states = verify_lines(run)
    assert run.code == 1
    assert states["finance"].startswith("refused: signed by ada@example.com, who may not sign as finance")
    assert states["facilities"] == "valid: signature good, by grace@example.com"
    assert hwlint("signoff", manifest, "--role", "finance", "--name", "Carol", "--sign-key", keys["carol"][0]).code == 0
    assert hwlint("verify", manifest).code == 0


def test_catalog_folders_in_the_config_are_loaded(hwlint, repo):
    root, manifest = repo
    (root / "team-catalog").mkdir()
    (root / ".hwlint.yaml").write_text("catalog: [team-catalog]\n")
    assert hwlint("check", manifest).code in (0, 1)
    (root / ".hwlint.yaml").write_text("catalog: [missing-folder]\n")
    assert "Traceback" not in hwlint("check", manifest).err


def test_config_and_isolated_contradict(hwlint, repo, tmp_path):
    _, manifest = repo
    config = tmp_path / "c.yaml"
    config.write_text("ignore: [GPU001]\n")
    run = hwlint("check", manifest, "--config", config, "--isolated")
    assert run.code == 2 and "contradict" in run.err
    assert shutil.which("true") is None or True


@pytest.mark.parametrize("text, where, message", [
    ("select: [PWR, STOO]\n", ":1:15: select", 'no rule is named "STOO"; did you mean "STO"?'),
    ("ignore:\n  - BUY\n  - GPX001\n", ":3:5: ignore", 'no rule is named "GPX001"; did you mean "GPU001"?'),
    ("ignore: PWR,XYZ\n", ":1:1: ignore", 'no rule is named "XYZ"; rules are named BUY, GPU'),
])
def test_the_configs_own_select_and_ignore_name_real_rules(hwlint, repo, text, where, message):
    root, manifest = repo
    (root / ".hwlint.yaml").write_text(text)
    for command in (("check", manifest), ("diff", manifest, manifest), ("checklist", manifest)):
        run = hwlint(*command)
        assert run.code == 2 and f".hwlint.yaml{where}: {message}" in run.err and "Traceback" not in run.err, run.err
    (root / ".hwlint.yaml").unlink()
    (root / "pyproject.toml").write_text('[tool.hwlint]\nselect = ["PWR01"]\nignore = ["PWQ001"]\n')
    run = hwlint("check", manifest)
    assert run.code == 2 and 'pyproject.toml:1:1: ignore: no rule is named "PWQ001"; did you mean "PWR001"?' in run.err


def test_a_config_pattern_may_name_a_rule_of_the_configs_own_rule_folder(hwlint, repo):
    from test_conventions import ORG_RULE

    root, manifest = repo
    (root / "team").mkdir()
    shutil.copy(EXAMPLES / "single-node-finetune.hw.yaml", root / "team")
    (root / "team" / "org.yaml").write_text(ORG_RULE.format(id="ORG001").replace("../examples/", ""))
    (root / ".hwlint.yaml").write_text("rules: [team]\nselect: [ORG]\n")
    run = hwlint("check", manifest)
    assert run.code in (0, 1) and "not selected by select ORG in" in hwlint("check", manifest, "--format", "json").out
    (root / ".hwlint.yaml").write_text("select: [ORG]\n")  # without the folder, ORG names nothing
    run = hwlint("check", manifest)
    assert run.code == 2 and 'select: no rule is named "ORG"' in run.err


def test_every_format_records_rules_left_out_by_select(hwlint, repo, tmp_path):
    root, manifest = repo
    args = ("check", manifest, "--select", "GPU")
    left_out = {d["rule_id"]: d["how"] for d in json.loads(hwlint(*args, "--format", "json").out)["manifests"][0]["deselected"]}
    assert left_out and not any(r.startswith("GPU") for r in left_out) and set(left_out.values()) == {"not selected by --select GPU"}
    assert f"{len(left_out)} deselected (not selected by --select GPU" in hwlint(*args).out
    assert f"{len(left_out)} deselected (not selected by --select GPU" in hwlint(*args, "--statistics").out
    md = hwlint(*args, "--format", "markdown").out
    assert "## Not run (deselected)" in md and "not selected by \\-\\-select GPU" in md.replace("--select", "\\-\\-select")
    sarif = json.loads(hwlint(*args, "--format", "sarif").out)
    overrides = sarif["runs"][0]["invocations"][0]["ruleConfigurationOverrides"]
    assert {o["descriptor"]["id"] for o in overrides} == set(left_out)
    assert {o["properties"]["deselectedBy"] for o in overrides} == {"not selected by --select GPU"}
    assert f"{len(left_out)} rules did not run (not selected by --select GPU" in hwlint(*args, "--format", "github").out
    other = tmp_path / "other.hw.yaml"
    other.write_bytes(manifest.read_bytes())
    diff = json.loads(hwlint("diff", manifest, other, "--select", "GPU", "--format", "json").out)["manifests"][0]
    (setting,) = [s for s in diff["changes"]["settings"] if s["kind"] == "deselected"]
    assert set(setting["rules"]) == set(left_out) and "deselected by not selected by --select GPU" not in setting["text"]
