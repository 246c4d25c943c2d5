"""Text from a manifest is untrusted: it must reach every report as inert text.

A pull request controls the manifest, and the report lands in a PR comment (Markdown),
in GitHub annotations (workflow commands), in code scanning (SARIF), in JSON for other
tools and in CI logs (text). The manifest below puts script tags, @mentions,
javascript: links, images, backticks, table pipes and a newline followed by a workflow
command into the review's name, a quote's item (quoted in a rule message), a waiver's
reason and approver, an unknown catalog model and an unknown key.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import EXAMPLES

NASTY = "<script>alert(1)</script> @octocat [click](javascript:alert(1)) ![img](x) `rm -rf /` a|b **bold**\n::error::injected"
HEAD = "<script>alert(1)</script>"


def quoted(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar


@pytest.fixture
def nasty_manifest(tmp_path):
    text = (EXAMPLES / "flawed-cluster.hw.yaml").read_text()
    text = text.replace("name: legacy-v100 30B pretraining", f"name: {quoted(NASTY)}", 1)
    text = text.replace("{item: HDR InfiniBand switches and cables,", f"{{item: {quoted(NASTY)},", 1)
    text += f"\nwaivers:\n  - rule: BUY002\n    reason: {quoted(NASTY)}\n    approver: {quoted(NASTY)}\n    expires: 2027-06-30\n"
    path = tmp_path / "nasty.hw.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def nasty_file_findings(tmp_path):
    """A manifest whose problems quote the nasty text: an unknown model and an unknown key."""
    text = (EXAMPLES / "single-node-finetune.hw.yaml").read_text()
    text = re.sub(r"system: \S+", f"system: {quoted(NASTY)}", text, count=1)
    text += f"{quoted(NASTY)}: 1\n"
    path = tmp_path / "nasty-findings.hw.yaml"
    path.write_text(text)
    return path


def report(hwlint, path, fmt):
    run = hwlint("check", "--format", fmt, path)
    assert run.code in (1, 2) and "Traceback" not in run.err, run.err
    return run.out


def assert_inert_markdown(out: str) -> None:
    assert HEAD not in out and "<script" not in out
    assert not re.search(r"(?<![\\&#\w])@octocat", out), "a raw @mention would notify a GitHub user"
    assert not re.search(r"(?<!\\)\[click(?<!\\)\]\(javascript", out), "a live javascript: link"
    assert not re.search(r"(?<!\\)!(?<!\\)\[img", out), "a live image"
    assert not re.search(r"(?<!\\)`rm", out), "a code span opened by the manifest"
    assert "\n::error::injected" not in out
    for table in re.findall(r"(?:^\|.*\n)+", out, re.M):  # every row has the header's column count
        rows = table.splitlines()
        cells = [len(re.findall(r"(?<!\\)\|", row)) for row in rows]
        assert len(set(cells)) == 1, rows


@pytest.mark.parametrize("fixture", ["nasty_manifest", "nasty_file_findings"])
def test_markdown_review_is_inert(hwlint, request, fixture):
    path = request.getfixturevalue(fixture)
    out = report(hwlint, path, "markdown")
    assert_inert_markdown(out)
    assert "&lt;script&gt;" in out  # the text is still there to read


def test_markdown_heading_stays_one_line(hwlint, nasty_manifest):
    out = report(hwlint, nasty_manifest, "markdown")
    heading = out.splitlines()[0]
    assert heading.startswith("# hwlint review: ") and "injected" in heading


def test_checklist_is_inert(hwlint, nasty_manifest):
    run = hwlint("checklist", nasty_manifest)
    assert "Traceback" not in run.err
    assert_inert_markdown(run.out)


@pytest.mark.parametrize("fixture", ["nasty_manifest", "nasty_file_findings"])
def test_github_annotations_cannot_inject_workflow_commands(hwlint, request, fixture):
    path = request.getfixturevalue(fixture)
    out = report(hwlint, path, "github")
    lines = out.splitlines()
    assert lines and all(re.match(r"::(error|warning|notice)( |::)", line) for line in lines), out
    assert not any(line.startswith("::error::injected") for line in lines)
    assert "%0A::error::injected" in out  # escaped inside its own annotation, still readable


@pytest.mark.parametrize("fixture", ["nasty_manifest", "nasty_file_findings"])
def test_sarif_messages_are_plain_text_without_links(hwlint, request, fixture):
    path = request.getfixturevalue(fixture)
    sarif = json.loads(report(hwlint, path, "sarif"))
    texts = [r["message"]["text"] for run in sarif["runs"] for r in run["results"]]
    quoting = [t for t in texts if "click" in t]
    assert quoting, texts
    for text in quoting:
        assert "\\[click\\](javascript" in text and not re.search(r"(?<!\\)\[click", text)
    for run in sarif["runs"]:
        for result in run["results"]:
            assert "markdown" not in result["message"] or HEAD not in result["message"]["markdown"]


@pytest.mark.parametrize("fixture", ["nasty_manifest", "nasty_file_findings"])
def test_json_keeps_the_text_exactly(hwlint, request, fixture):
    """JSON consumers get the manifest's text character for character (the encoder escapes)."""
    path = request.getfixturevalue(fixture)
    strings = list(_strings(json.loads(report(hwlint, path, "json"))))
    assert any(NASTY in s for s in strings)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("fixture", ["nasty_manifest", "nasty_file_findings"])
def test_text_report_keeps_one_line_per_finding(hwlint, request, fixture):
    """A newline from the manifest must not start a line that looks like another finding."""
    path = request.getfixturevalue(fixture)
    out = report(hwlint, path, "text")
    for line in out.splitlines():
        assert line.startswith(f"{path}:") or line.startswith("hwlint:"), line
