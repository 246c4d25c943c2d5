"""GitHub workflow annotations within GitHub's limits: at most 10 of each kind per step are
shown, so the most severe come first, then by file and line, and a last one of each kind
counts what did not fit. With --base, only manifests that changed are annotated."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from conftest import EXAMPLES
from test_formats import annotations

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "single-node-finetune.hw.yaml"
RANK = {"error": 0, "warning": 1, "notice": 2}


def test_ordered_by_severity_then_file_and_line_and_capped(hwlint, tmp_path):
    other = tmp_path / "b.hw.yaml"
    shutil.copy(FLAWED, other)
    run = hwlint("check", other, FLAWED, "--format", "github")
    found = annotations(run.out)
    kinds = [a["kind"] for a in found]
    assert kinds == sorted(kinds, key=RANK.get)
    for kind in ("error", "warning"):
        mine = [a for a in found if a["kind"] == kind]
        assert len(mine) == 10  # GitHub's limit per kind and step, used in full
        *shown, more = mine
        assert "file" not in more and re.match(r"^\d+ more " + kind, more["message"])
        places = [(a["file"], int(a["line"]), int(a["col"])) for a in shown]
        assert places == sorted(places)
        report = json.loads(hwlint("check", other, FLAWED, "--format", "json").out)
        # one annotation per failing item (a finding that names several items gets one each)
        total = sum(max(1, len(r["items"])) for m in report["manifests"] for r in m["results"]
                    if r["status"] == "fail" and {"error": "error", "warning": "warning"}[kind] == r["severity"])
        assert int(more["message"].split()[0]) == total - 9
    errors = [a["title"] for a in found if a["kind"] == "error" and "file" in a]
    assert "hwlint STO006 (error)" in errors or len(errors) == 9  # STO006 is no longer lost behind warnings


def test_a_few_findings_are_not_cut(hwlint):
    found = annotations(hwlint("check", GOOD, "--format", "github").out)
    assert found and all("file" in a for a in found) and not any("more" in a["title"] for a in found)


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_with_base_only_changed_manifests_are_annotated(hwlint, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    shutil.copy(FLAWED, repo / "same.hw.yaml")
    shutil.copy(FLAWED, repo / "edited.hw.yaml")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / "edited.hw.yaml").write_text(FLAWED.read_text().replace("it_capacity_kw: 60", "it_capacity_kw: 58"))
    monkeypatch.chdir(repo)
    found = annotations(hwlint("check", "same.hw.yaml", "edited.hw.yaml", "--base", "HEAD", "--select", "PWR001,GPU002",
                                    "--format", "github").out)
    files = {a.get("file") for a in found} - {None}
    assert files == {"edited.hw.yaml"}
    everything = annotations(hwlint("check", "same.hw.yaml", "edited.hw.yaml", "--select", "PWR001,GPU002", "--format", "github").out)
    assert {a.get("file") for a in everything} - {None} == {"same.hw.yaml", "edited.hw.yaml"}


def test_the_last_annotation_points_where_every_finding_really_is(hwlint, tmp_path, monkeypatch):
    other = tmp_path / "b.hw.yaml"
    shutil.copy(FLAWED, other)

    def notes() -> list[str]:
        return [a["message"] for a in annotations(hwlint("check", other, FLAWED, "--format", "github").out)
                if "file" not in a]

    for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "HWLINT_ARTIFACT"):
        monkeypatch.delenv(name, raising=False)
    assert notes() and all("job log" not in n and n.endswith("`hwlint check` on these manifests lists every finding.")
                           for n in notes())  # the log holds only the annotations shown
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/clusters")
    monkeypatch.setenv("GITHUB_RUN_ID", "7")
    monkeypatch.setenv("HWLINT_ARTIFACT", "hwlint-review")  # as action.yml sets it when it uploads the reports
    assert all(n.endswith("Every finding is in hwlint.sarif and review.md of the artifact hwlint-review of this run.")
               for n in notes())
