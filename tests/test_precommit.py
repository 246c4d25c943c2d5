"""The pre-commit hook, run by the real pre-commit (`pre-commit try-repo`) in a throwaway
repository that holds a good manifest, bad ones, and YAML files that are not manifests.

try-repo clones the hook repository at HEAD (plus uncommitted changes of tracked files), so
the test first copies the files that make up hwlint into a fresh git repository and commits
them: it then tests exactly this working tree, in a developer's checkout or a CI clone alike.
pre-commit installs that copy with pip into its own environment, as for any user.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from conftest import EXAMPLES, ROOT, TODAY

pytestmark = pytest.mark.slow  # installs packages or starts outside tools: left out by -m "not slow"

HOOKS = ROOT / ".pre-commit-hooks.yaml"
PACKAGE = ["pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "linter", "rules", "schemas", "templates", "catalog", "models", "examples"]
NOT_MANIFESTS = {
    ".pre-commit-config.yaml": "repos: []\n",
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    "k8s/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
    "notes.hw.yaml.bak": "not: a manifest\n",
}
FINDING = re.compile(r"^(?P<file>[^\s:]+\.hw\.yaml):\d+:\d+: (?P<id>[A-Z]{3}\d{3}) (?P<severity>error|warning|info) ", re.M)


def hook() -> dict:
    (entry,) = YAML(typ="safe").load(HOOKS.read_text())
    return entry


def test_hook_definition_is_valid_for_pre_commit():
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
    from pre_commit.clientlib import load_manifest

    (loaded,) = load_manifest(str(HOOKS))  # pre-commit's own schema check
    assert loaded["id"] == "hwlint" and loaded["entry"] == "hwlint check --force-exclude" and loaded["language"] == "python"


@pytest.mark.parametrize("name, matches", [
    ("cluster.hw.yaml", True),
    ("clusters/eu/prod.hw.yml", True),
    ("examples/flawed-cluster.hw.yaml", True),
    (".pre-commit-config.yaml", False),
    (".github/workflows/ci.yml", False),
    ("k8s/deployment.yaml", False),
    ("hw.yaml", False),
    ("notes.hw.yaml.bak", False),
    ("values.yaml", False),
])
def test_default_file_pattern_catches_only_manifests(name, matches):
    assert bool(re.search(hook()["files"], name)) is matches


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def hook_repository(target: Path) -> Path:
    """This working tree's hwlint, committed in a repository of its own."""
    target.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_data")
    for name in PACKAGE:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    git(target, "init", "-q")
    git(target, "add", ".")
    git(target, "commit", "-q", "-m", "hwlint under test")
    return target


@pytest.fixture(scope="module")
def hooks(tmp_path_factory) -> Path:
    """This working tree's hwlint as a hook repository, made once for the tests here."""
    return hook_repository(tmp_path_factory.mktemp("hooks") / "hwlint")


def try_repo(hooks: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HWLINT_TODAY": TODAY, "PRE_COMMIT_HOME": str(hooks.parent / "pre-commit-home"),
           "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "hwlint", *args],
        cwd=project, capture_output=True, text=True, env=env, timeout=900,
    )


def test_pre_commit_try_repo_fails_bad_manifests_and_passes_good_ones(tmp_path, hwlint, hooks):
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
    good_source = EXAMPLES / "multi-node-pretrain.hw.yaml"
    assert hwlint("check", good_source).code == 0, "the good example must pass for this test"
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    shutil.copy(good_source, project / "good.hw.yaml")
    # enough bad manifests that pre-commit splits them over several hwlint runs
    bad = [f"clusters/bad-{i}.hw.yaml" for i in range(10)]
    (project / "clusters").mkdir()
    for name in bad:
        shutil.copy(EXAMPLES / "flawed-cluster.hw.yaml", project / name)
    for name, text in NOT_MANIFESTS.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    git(project, "add", ".")

    everything = try_repo(hooks, project, "--all-files")
    output = everything.stdout + everything.stderr
    assert everything.returncode == 1, output
    assert re.search(r"^hwlint \(GPU-cluster manifest review\)\.+Failed$", output, re.M), output
    errors = {m["file"] for m in FINDING.finditer(output) if m["severity"] == "error"}
    assert errors == set(bad), output  # each bad manifest reported, whichever run it fell in
    assert "GPU002" in {m["id"] for m in FINDING.finditer(output)}
    for name in NOT_MANIFESTS:
        assert name not in output  # never handed to hwlint

    good_only = try_repo(hooks, project, "--files", "good.hw.yaml", *NOT_MANIFESTS)
    output = good_only.stdout + good_only.stderr
    assert good_only.returncode == 0, output
    assert re.search(r"^hwlint \(GPU-cluster manifest review\)\.+Passed$", output, re.M), output


def test_pre_commit_in_a_repository_whose_teams_keep_a_config_each(tmp_path, hooks):
    """Two team folders with a .hwlint.yaml each (one ignores the rules that fail, one fails on
    warnings and excludes its drafts), and a vendored copy under venv/: one hook run reviews
    each manifest under its own team's config and skips what the configs exclude."""
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
    project = tmp_path / "project"
    (project / "teams" / "research").mkdir(parents=True)
    (project / "teams" / "platform" / "drafts").mkdir(parents=True)
    (project / "venv" / "lib").mkdir(parents=True)
    git(project, "init", "-q")
    flawed = EXAMPLES / "flawed-cluster.hw.yaml"
    shutil.copy(flawed, project / "teams" / "research" / "cluster.hw.yaml")
    # the clean single-GPU example with its one backup copy kept on-site: a warning (STO007)
    onsite = (EXAMPLES / "single-gpu-experiment.hw.yaml").read_text(encoding="utf-8")
    assert "offsite: true}" in onsite
    (project / "teams" / "platform" / "cluster.hw.yaml").write_text(onsite.replace("offsite: true}", "offsite: false}"),
                                                                     encoding="utf-8")
    shutil.copy(flawed, project / "teams" / "platform" / "drafts" / "wip.hw.yaml")
    shutil.copy(flawed, project / "venv" / "lib" / "vendored.hw.yaml")
    (project / "teams" / "research" / ".hwlint.yaml").write_text(
        "ignore: [GPU, LNK, NET, STO, PWR, BUY, MEM, OPS]\n")  # every layer that fails in the flawed example
    (project / "teams" / "platform" / ".hwlint.yaml").write_text("fail_on: warning\nextend_exclude: [drafts]\n")
    git(project, "add", ".")

    run = try_repo(hooks, project, "--all-files")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output  # the platform team fails on its warning (STO007)
    found = {(m["file"], m["id"]) for m in FINDING.finditer(output)}
    assert found == {("teams/platform/cluster.hw.yaml", "STO007")}, output
    assert "wip.hw.yaml" not in output and "vendored.hw.yaml" not in output
    (project / "teams" / "platform" / ".hwlint.yaml").write_text("extend_exclude: [drafts]\n")
    git(project, "add", ".")
    assert try_repo(hooks, project, "--all-files").returncode == 0


def test_pre_commit_under_a_root_config_that_team_configs_inherit(tmp_path, hooks):
    """A root .hwlint.yaml raises the power headroom floor to 30% (the good example then
    fails PWR001); one team's one-line config (fail_on: warning) inherits that floor, another
    team has no config: one hook run fails both on PWR001. A team config that lowers the
    floor is a config error naming its file, line and key, unless the root allows it."""
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
    project = tmp_path / "project"
    for team in ("a", "b"):
        (project / "teams" / team).mkdir(parents=True)
        shutil.copy(EXAMPLES / "multi-node-pretrain.hw.yaml", project / "teams" / team / "cluster.hw.yaml")
    git(project, "init", "-q")
    (project / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 30}\n")
    (project / "teams" / "a" / ".hwlint.yaml").write_text("fail_on: warning\n")
    git(project, "add", ".")

    run = try_repo(hooks, project, "--all-files")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    pwr = {m["file"] for m in FINDING.finditer(output) if m["id"] == "PWR001"}
    assert pwr == {"teams/a/cluster.hw.yaml", "teams/b/cluster.hw.yaml"}, output
    assert "configs .hwlint.yaml (sha256:" in output and "then teams/a/.hwlint.yaml (sha256:" in output

    (project / "teams" / "a" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 20}\n")
    git(project, "add", ".")
    run = try_repo(hooks, project, "--all-files")
    output = run.stdout + run.stderr
    assert run.returncode == 1 and "Failed" in output, output  # pre-commit's own code for a failing hook
    assert "hwlint: config error: teams/a/.hwlint.yaml:1:10: policy.power_headroom_pct: 20 relaxes 30, set in .hwlint.yaml" in output, output

    (project / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 30}\nallow_nested_relaxing: [power_headroom_pct]\n")
    git(project, "add", ".")
    run = try_repo(hooks, project, "--all-files")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output  # team b still fails under the root's floor; team a is relaxed
    assert {m["file"] for m in FINDING.finditer(output) if m["id"] == "PWR001"} == {"teams/b/cluster.hw.yaml"}, output
