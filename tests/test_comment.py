"""The pull-request comment (`--format comment`): one GitHub comment for any number of
manifests. 60 failing manifests changed in a pull request (checked with --base in a throwaway
git repository) give a comment within GitHub's 65,536 characters, with a verdict row for
every manifest, footnotes numbered once for the whole comment, unchanged manifests on one
line, and a last line saying where the rest is."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, hwlint_process

FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
FAILING = 60
UNCHANGED = 60
MARK = re.compile(r"(?<!\\)\[\^(\d+)\](?!:)")
DEFINITION = re.compile(r"^\[\^(\d+)\]:", re.M)
RUN_ENV = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/clusters", "GITHUB_RUN_ID": "4242",
           "HWLINT_ARTIFACT": "hwlint-review"}


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory) -> Path:
    """A repository whose base commit has good manifests; the pull request turns 60 of them into
    the flawed example and leaves 60 more (long names, some failing) as they were."""
    root = tmp_path_factory.mktemp("pr")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin"}
    for i in range(FAILING):
        shutil.copy(GOOD, root / f"cluster-{i:02}.hw.yaml")
    for i in range(UNCHANGED):
        shutil.copy(FLAWED if i % 2 else GOOD, root / f"untouched-datacenter-region-{i:02}.hw.yaml")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    for i in range(FAILING):
        shutil.copy(FLAWED, root / f"cluster-{i:02}.hw.yaml")
    return root


def comment(root: Path, *extra: str, env: dict | None = None) -> str:
    files = sorted(p.name for p in root.glob("*.hw.yaml"))
    run = hwlint_process("check", *files, "--base", "HEAD", "--format", "comment", *extra, cwd=root, env=env)
    assert run.code == 1, run.err  # the exit code is the findings', whatever the comment shows
    return run.out


@pytest.fixture(scope="module")
def sixty(pull_request) -> str:
    return comment(pull_request, env=RUN_ENV)


def test_sixty_failing_manifests_fit_one_comment(sixty):
    assert utf16(sixty) <= 65_536
    assert sixty.startswith("<!-- hwlint-review -->\n## hwlint: ❌ changes needed\n")
    assert f"**{FAILING + UNCHANGED} manifests reviewed:** {FAILING + UNCHANGED // 2} need changes" in sixty
    assert f"Against `HEAD`: {FAILING} changed or new, {UNCHANGED} unchanged." in sixty


def test_every_changed_manifest_has_a_verdict_row_before_any_detail(sixty):
    first_detail = sixty.index("## What this change does:")
    table = sixty[:first_detail]
    for i in range(FAILING):
        assert re.search(rf"^\| `cluster-{i:02}\.hw\.yaml` \| ❌ changes needed \| 11 \| 17 \| 4 \| "
                         r"29 introduced, 0 resolved \| (below|job summary) \|$", table, re.M), i
    assert "untouched-datacenter" not in "".join(line for line in table.splitlines(True) if line.startswith("|"))
    shown = re.findall(r"^# hwlint review: ", sixty, re.M)
    below = re.findall(r"\| below \|$", table, re.M)
    assert 1 <= len(shown) == len(below) < FAILING  # details for as many as fit, and the table says which


def test_unchanged_manifests_share_one_shortened_line(sixty):
    (line,) = [line for line in sixty.splitlines() if "unchanged**" in line]
    assert line.startswith(f"**{UNCHANGED} manifests unchanged** ({UNCHANGED // 2} failing, as before): "
                           "`untouched-datacenter-region-00.hw.yaml`, ")
    named = re.findall(r"`untouched-[^`]+`", line)
    more = int(re.search(r" and (\d+) more\.$", line).group(1))
    assert 10 < len(named) < UNCHANGED and len(named) + more == UNCHANGED


def test_footnotes_are_numbered_once_for_the_whole_comment(sixty):
    used = MARK.findall(sixty)
    defined = DEFINITION.findall(sixty)
    assert used and len(defined) == len(set(defined))  # no number defined twice
    assert set(used) == set(defined)  # every number used has its definition, and none is spare
    assert [int(n) for n in defined] == list(range(1, len(defined) + 1))
    assert sixty.count("## Sources") == 1
    first_use = list(dict.fromkeys(int(n) for n in used))
    assert first_use == sorted(first_use)  # numbered in the order they first appear


def test_the_last_line_says_where_the_rest_is(sixty):
    detailed = len(re.findall(r"^# hwlint review: ", sixty, re.M))
    expected = (f"The full reviews of the {FAILING - detailed} manifests not detailed here and of the unchanged ones "
                "are review.md in the artifact `hwlint-review` of [workflow run 4242]"
                "(https://github.com/acme/clusters/actions/runs/4242), every finding also in hwlint.json and "
                "hwlint.sarif there; its job summary shows them as far as GitHub's 1 MiB for a summary allows.")
    assert expected in sixty
    assert sixty.index(expected) < sixty.index("## Sources")


def test_a_small_budget_still_names_every_row_it_can_and_counts_the_rest(pull_request):
    text = comment(pull_request, "--max-chars", "4000")
    assert utf16(text) <= 4000
    rows = re.findall(r"^\| `cluster-\d\d\.hw\.yaml` \|", text, re.M)
    left = int(re.search(r"^\| … and (\d+) more manifests \((\d+) failing\) \|", text, re.M).group(1))
    assert rows and len(rows) + left == FAILING
    assert "are not in this comment: `hwlint check --format markdown --max-chars 0 FILE`" in text  # no workflow run here


def test_one_manifest_comment_is_marker_table_review_and_sources(hwlint):
    run = hwlint("check", FLAWED, "--format", "comment")
    assert run.out.startswith("<!-- hwlint-review -->\n## hwlint: ❌ changes needed\n\n**1 manifest reviewed:** 1 need changes.")
    assert "| below |" in run.out and "# hwlint review:" in run.out and "## Confirmed" in run.out
    assert "not detailed here" not in run.out and "The full reviews" not in run.out  # nothing left out
    assert set(MARK.findall(run.out)) == set(DEFINITION.findall(run.out))


def test_markdown_of_several_manifests_numbers_sources_once(hwlint, tmp_path):
    files = []
    for name in ("a", "b"):
        files.append(tmp_path / f"{name}.hw.yaml")
        shutil.copy(FLAWED if name == "a" else EXAMPLES / "moe-pretrain.hw.yaml", files[-1])
    out = hwlint("check", *files, "--format", "markdown", "--max-chars", "0").out
    assert out.count("# hwlint review:") == 2 and out.count("## Sources") == 1
    defined = DEFINITION.findall(out)
    assert len(defined) == len(set(defined)) and set(MARK.findall(out)) == set(defined)
    assert "Shortened to fit" not in out


def test_a_shortened_review_says_so_at_its_top_and_where_the_whole_one_is(hwlint, tmp_path, monkeypatch):
    for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "HWLINT_ARTIFACT"):
        monkeypatch.delenv(name, raising=False)
    files = []
    for n in range(3):
        files.append(tmp_path / f"c{n}.hw.yaml")
        shutil.copy(FLAWED, files[-1])
    whole = hwlint("check", *files, "--format", "markdown", "--max-chars", "0").out
    assert not whole.startswith("> **This review is shortened**")
    short = hwlint("check", *files, "--format", "markdown", "--max-chars", "30000").out
    assert utf16(short) <= 30000 and "Shortened to fit" in short
    assert short.startswith("> **This review is shortened** to fit 30,000 characters: manifests below that say so show "
                            "only part of their findings; `hwlint check --format markdown --max-chars 0` on the same "
                            "manifests writes the whole review.\n")
    for name, value in RUN_ENV.items():  # in the action's run: the artifact it uploads
        monkeypatch.setenv(name, value)
    short = hwlint("check", *files, "--format", "markdown", "--max-chars", "30000").out
    assert short.splitlines()[0].endswith("the whole review is review.md in the artifact `hwlint-review` of "
                                          "[workflow run 4242](https://github.com/acme/clusters/actions/runs/4242).")
