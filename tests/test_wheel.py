"""The wheel carries rules, schemas, templates and catalog: install it into a fresh venv and
review an example from another folder."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import EXAMPLES, ROOT, TODAY

pytestmark = pytest.mark.slow  # installs packages or starts outside tools: left out by -m "not slow"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    return next(out.glob("hwlint-*.whl"))


def test_wheel_contains_the_data_folders(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for folder in ("rules", "schemas", "templates", "catalog"):
        assert any(n.startswith(f"linter/_data/{folder}/") for n in names), folder
    assert "linter/_data/rules/references.yaml" in names


def test_installed_wheel_reviews_from_another_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(EXAMPLES / "flawed-cluster.hw.yaml", work / "cluster.hw.yaml")
    run = subprocess.run([str(venv / "bin" / "hwlint"), "check", "--format", "markdown", "cluster.hw.yaml"],
                         capture_output=True, text=True, cwd=work, timeout=120, env={"HWLINT_TODAY": TODAY, "PATH": "/usr/bin:/bin"})
    assert run.returncode == 1, run.stderr
    assert "# hwlint review: legacy-v100 30B pretraining" in run.stdout and "V100-SXM2-32GB" in run.stdout


def installed(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr
    return venv / "bin" / "hwlint"


def test_rules_test_passes_from_the_wheel_and_tests_a_users_folder(wheel, tmp_path):
    hwlint = installed(wheel, tmp_path)
    env = {"HWLINT_TODAY": TODAY, "PATH": "/usr/bin:/bin"}
    work = tmp_path / "team-rules"
    work.mkdir()
    run = subprocess.run([str(hwlint), "rules", "test"], capture_output=True, text=True, cwd=work, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    passed = int(re.search(r"^(\d+) passed, 0 failed$", run.stdout, re.M)[1])
    assert passed >= 100  # every built-in rule's cases, their base manifests shipped in the wheel
    # a team's own folder: its rule (any id prefix), a base manifest kept beside it
    shutil.copy(EXAMPLES / "single-node-finetune.hw.yaml", work / "base.hw.yaml")
    (work / "org.yaml").write_text(ORG_RULE)
    run = subprocess.run([str(hwlint), "rules", "test", str(work)], capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "ok   ORG001 names an owner" in run.stdout and "ok   ORG001 no owner" in run.stdout
    assert run.stdout.strip().splitlines()[-1].startswith("2 passed, 0 failed")
    (work / "org.yaml").write_text(ORG_RULE.replace("expect: fail", "expect: pass"))
    run = subprocess.run([str(hwlint), "rules", "test", str(work)], capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
    assert run.returncode == 1 and "FAIL ORG001 no owner" in run.stdout


ORG_RULE = """\
rules:
  - id: ORG001
    title: The manifest names an owner
    severity: warning
    tiers: all
    require: "manifest.owner is defined"
    message: "No owner is named: nobody answers for this purchase."
    fix: "Add `owner:` with a name or e-mail."
    cite: [seed-gear-check]
    at: "owner"
    tests:
      - {name: names an owner, base: base.hw.yaml, expect: pass}
      - {name: no owner, base: base.hw.yaml, unset: [owner], expect: fail}
"""
