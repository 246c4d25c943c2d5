"""Which files `hwlint check` reviews, as ruff finds Python files: git's ignore files, the
default and configured exclusions, no path meaning the current folder, nothing to review
exiting 0, each file once, --show-files and --show-settings; and a repository whose team
folders each have a config of their own, reviewed in one run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, hwlint_process

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=GIT_ENV)


def put(root: Path, *names: str, source: Path = GOOD) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / name)


def shown_files(root: Path, *args: str) -> list[str]:
    run = hwlint_process("check", "--show-files", *args, cwd=root)
    assert run.code == 0, run.err
    return run.out.splitlines()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository with manifests where a team keeps them, and copies where no one reviews
    them: a virtual environment (hwlint's bundled examples in site-packages), build output,
    node_modules, a git-ignored folder."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    put(root, "clusters/a.hw.yaml", "clusters/eu/b.hw.yml", "venv/lib/python3.12/site-packages/linter/_data/examples/x.hw.yaml",
        "build/lib/y.hw.yaml", "dist/z.hw.yaml", "web/node_modules/pkg/n.hw.yaml", "scratch/tmp.hw.yaml",
        ".cache/c.hw.yaml")
    (root / ".gitignore").write_text("scratch/\n")
    git(root, "init", "-q")
    git(root, "add", "clusters", ".gitignore")
    git(root, "commit", "-q", "-m", "base")
    put(root, "clusters/new.hw.yaml")  # untracked, not ignored: reviewed
    return root


def test_no_path_means_the_current_folder_and_only_the_teams_manifests_are_found(repository):
    assert shown_files(repository) == ["clusters/a.hw.yaml", "clusters/eu/b.hw.yml", "clusters/new.hw.yaml"]
    assert shown_files(repository, ".") == shown_files(repository)
    run = hwlint_process("check", cwd=repository)  # the bundled examples in venv/ would fail the run
    assert run.code == 0, run.out + run.err
    assert [line.split(": ")[0] for line in run.out.splitlines() if " failing" in line] == shown_files(repository)


def test_gitignore_is_gits_own_a_tracked_file_stays_and_a_deleted_one_goes(repository):
    (repository / ".gitignore").write_text("scratch/\nclusters/a.hw.yaml\n*.draft.hw.yaml\n")
    put(repository, "clusters/c.draft.hw.yaml")
    assert "clusters/c.draft.hw.yaml" not in shown_files(repository)
    assert "clusters/a.hw.yaml" in shown_files(repository)  # tracked: git does not ignore it
    (repository / "clusters" / "a.hw.yaml").unlink()  # still in the index
    assert "clusters/a.hw.yaml" not in shown_files(repository)
    info = repository / ".git" / "info" / "exclude"
    info.write_text("new.hw.yaml\n")
    assert shown_files(repository) == ["clusters/eu/b.hw.yml"]


def test_outside_a_repository_the_folder_is_walked_with_the_same_exclusions(tmp_path):
    put(tmp_path, "a.hw.yaml", "venv/v.hw.yaml", "node_modules/n.hw.yaml", "x/site-packages/s.hw.yaml", ".hidden/h.hw.yaml")
    assert shown_files(tmp_path) == ["a.hw.yaml"]


def test_the_configs_exclude_replaces_the_defaults_and_extend_exclude_adds(repository):
    config = repository / ".hwlint.yaml"
    config.write_text("extend_exclude: [eu, 'clusters/new.*']\n")
    assert shown_files(repository) == ["clusters/a.hw.yaml"]
    config.write_text("extend-exclude: ['**/b.hw.yml']\n")  # ruff's spelling
    assert shown_files(repository) == ["clusters/a.hw.yaml", "clusters/new.hw.yaml"]
    config.write_text("exclude: []\n")  # nothing excluded: venv, build and the rest come back (git-ignored stays out)
    found = shown_files(repository)
    assert "venv/lib/python3.12/site-packages/linter/_data/examples/x.hw.yaml" in found and "dist/z.hw.yaml" in found
    assert "scratch/tmp.hw.yaml" not in found and ".cache/c.hw.yaml" not in found
    settings = hwlint_process("check", "--show-settings", cwd=repository)
    assert settings.code == 0 and "  exclude: nothing" in settings.out.splitlines()


@pytest.mark.parametrize("text, message", [
    ("exclude: venv\nextend_exclude: [1]\n", "extend_exclude: give a list of names"),
    ("extend_exclude: [a]\nextend-exclude: [b]\n", "give extend_exclude or extend-exclude, not both"),
    ("exlude: [venv]\n", "did you mean"),
])
def test_a_wrong_exclusion_setting_names_the_file_line_and_key(tmp_path, text, message):
    (tmp_path / ".hwlint.yaml").write_text(text)
    put(tmp_path, "a.hw.yaml")
    run = hwlint_process("check", cwd=tmp_path)
    assert run.code == 2 and message in run.err and ".hwlint.yaml:" in run.err, run.err


def test_a_file_named_is_reviewed_unless_force_exclude_says_otherwise(repository):
    bundled = "venv/lib/python3.12/site-packages/linter/_data/examples/x.hw.yaml"
    assert shown_files(repository, bundled) == [bundled]
    assert shown_files(repository, "--force-exclude", bundled, "clusters/a.hw.yaml") == ["clusters/a.hw.yaml"]
    (repository / ".hwlint.yaml").write_text("extend_exclude: [clusters/eu]\n")
    assert shown_files(repository, "--force-exclude", "clusters/eu/b.hw.yml", "clusters/a.hw.yaml") == ["clusters/a.hw.yaml"]
    run = hwlint_process("check", "--force-exclude", bundled, cwd=repository)  # the plain path takes the flag too
    assert run.code == 0 and "nothing to review" in run.err


def test_a_file_reached_twice_is_reviewed_once(repository):
    os.symlink(repository / "clusters" / "a.hw.yaml", repository / "link.hw.yaml")
    run = hwlint_process("check", "clusters/a.hw.yaml", "./clusters/a.hw.yaml", "clusters", "link.hw.yaml",
                         "--format", "json", cwd=repository)
    assert run.code == 0, run.err
    files = [m["file"] for m in json.loads(run.out)["manifests"]]
    assert files == ["clusters/a.hw.yaml", "clusters/eu/b.hw.yml", "clusters/new.hw.yaml"]


def test_show_settings_says_what_each_manifest_is_reviewed_with(repository):
    run = hwlint_process("check", "--show-settings", "--select", "PWR", "--no-cache", "--format", "sarif:out.sarif",
                         cwd=repository)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "Settings for clusters/a.hw.yaml and 2 more:"
    assert "  config: none" in lines and "  cache: off" in lines and "  reports: sarif to out.sarif" in lines
    assert "  select: PWR (--select PWR)" in lines
    assert not (repository / "out.sarif").exists()  # nothing was reviewed or written


# --- a repository whose teams keep a config each ------------------------------------------


@pytest.fixture
def teams(tmp_path: Path) -> Path:
    """Two team folders, each with its own .hwlint.yaml and the same failing manifest, and a
    root manifest under no config."""
    root = tmp_path / "org"
    put(root, "teams/research/cluster.hw.yaml", "teams/platform/cluster.hw.yaml", source=FLAWED)
    put(root, "shared.hw.yaml")
    (root / "teams/research/.hwlint.yaml").write_text("ignore: [PWR, STO]\nfail_on: error\nextend_exclude: [old]\n")
    (root / "teams/platform/.hwlint.yaml").write_text("select: [GPU]\nexclude: [drafts]\n")
    put(root, "teams/research/old/a.hw.yaml", "teams/platform/drafts/b.hw.yaml", "teams/research/drafts/c.hw.yaml",
        source=FLAWED)
    return root


def test_each_team_folder_is_reviewed_under_its_own_config_in_one_run(teams):
    assert shown_files(teams) == ["shared.hw.yaml", "teams/platform/cluster.hw.yaml",
                                  "teams/research/cluster.hw.yaml", "teams/research/drafts/c.hw.yaml"]
    run = hwlint_process("check", "--format", "json", cwd=teams)
    assert run.code == 1, run.err
    by_file = {m["file"]: m for m in json.loads(run.out)["manifests"]}
    failing = {f: {r["rule_id"] for r in m["results"] if r["status"] == "fail"} for f, m in by_file.items()}
    assert failing["shared.hw.yaml"] == set()
    assert failing["teams/platform/cluster.hw.yaml"] and all(r.startswith("GPU") for r in failing["teams/platform/cluster.hw.yaml"])
    research = failing["teams/research/cluster.hw.yaml"]
    assert research and not any(r.startswith(("PWR", "STO")) for r in research) and any(r.startswith("NET") for r in research)
    assert failing["teams/research/drafts/c.hw.yaml"] == research  # the research config governs its sub-folders
    text = hwlint_process("check", cwd=teams).out
    assert "ignore PWR in " in text and "not selected by select GPU in " in text


def test_each_config_decides_its_own_fail_on(teams):
    (teams / "teams/platform/.hwlint.yaml").write_text("select: [BUY003]\nfail_on: error\n")  # a warning only
    (teams / "teams/research/.hwlint.yaml").write_text("select: [BUY003]\nfail_on: warning\n")
    assert hwlint_process("check", "teams/platform", cwd=teams).code == 0
    assert hwlint_process("check", "teams/research", cwd=teams).code == 1
    assert hwlint_process("check", cwd=teams).code == 1  # one run: the worst of each under its own


def test_one_config_for_all_with_config_or_isolated(teams):
    named = hwlint_process("check", "--config", "teams/platform/.hwlint.yaml", "--format", "json", cwd=teams)
    failing = [r["rule_id"] for m in json.loads(named.out)["manifests"] for r in m["results"] if r["status"] == "fail"]
    assert failing and all(r.startswith("GPU") for r in failing)
    # the named config's exclude (drafts) is what applies everywhere
    assert "teams/research/drafts/c.hw.yaml" not in shown_files(teams, "--config", "teams/platform/.hwlint.yaml")
    assert "teams/research/old/a.hw.yaml" in shown_files(teams, "--isolated")
