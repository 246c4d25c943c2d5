"""The wheel carries rules, schemas, templates and catalog: install it into a fresh venv and
review an example from another folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import EXAMPLES, ROOT, TODAY


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
