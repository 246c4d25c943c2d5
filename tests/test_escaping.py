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


# --- through GitHub's own renderer: cmark-gfm -------------------------------------------

from html.parser import HTMLParser  # noqa: E402
from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

CASES = yaml.safe_load((Path(__file__).parent / "escaping" / "cases.yaml").read_text(encoding="utf-8"))
MD_PAYLOADS: dict[str, str] = CASES["markdown_payloads"]
MD_PAIRS = [(place, fmt) for place, formats in CASES["markdown_places"].items() for fmt in formats]


class Rendered(HTMLParser):
    """The HTML cmark-gfm made: its tags, the text inside <code>, and the text GitHub scans
    for mentions and references (outside code, pre and links)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.code: list[str] = []
        self.scanned: list[str] = []
        self.text: list[str] = []
        self.open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in ("br", "hr", "img", "input"):
            self.open.append(tag)
        if tag == "code":
            self.code.append("")

    def handle_endtag(self, tag):
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data):
        self.text.append(data)
        if "code" in self.open:
            self.code[-1] += data
        elif not {"pre", "a"} & set(self.open):
            self.scanned.append(data)


def rendered(markdown: str) -> Rendered:
    cmarkgfm = pytest.importorskip("cmarkgfm")  # a test dependency (pyproject.toml [test])
    from cmarkgfm.cmark import Options

    # raw HTML kept (GitHub keeps <b>, <img>, ...) so that any that got through shows here
    return Rendered(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")  # GitHub: @ after a non-word character, then a login
REFERENCE = re.compile(r"(?:^|(?<=[^\w&]))#[0-9]|\w/\w+#[0-9]")


def inert(markdown: str, own_code: set[str], shown: list[str]) -> list[str]:
    """What GitHub would act on in `markdown`, in words; [] when nothing. `own_code`: the code
    spans hwlint writes itself; `shown`: texts that must be visible, as they are."""
    page = rendered(markdown)
    problems = []
    for tag, attrs in page.tags:
        if tag == "a" and "evil" in (attrs.get("href") or "").lower():
            problems.append(f"a link to {attrs['href']}")
        if tag in ("img", "b", "script"):
            problems.append(f"an HTML <{tag}> element")
    scanned = "\n".join(page.scanned)
    problems += [f"a mention {m.group(0)!r}" for m in MENTION.finditer(scanned)]
    problems += [f"a reference {m.group(0)!r}" for m in REFERENCE.finditer(scanned)]
    for span in page.code:
        if span not in own_code and not re.fullmatch(r"@+|#+", span):
            problems.append(f"a code span {span!r}")
    source = re.sub(r"(`+)(?:(?!\1).)+\1", "", markdown)  # GitHub's math is read from the Markdown, outside code
    problems += [f"math at {source[max(m.start() - 20, 0):m.end() + 5]!r}" for m in re.finditer(r"(?<!\\)\$", source)]
    text = "".join(page.text)
    problems += [f"{what!r} is not shown as it is" for what in shown if what not in text]
    return problems


def markdown_output(hwlint, path, fmt: str) -> str:
    run = hwlint("checklist", path) if fmt == "checklist" else hwlint("check", "--format", fmt, path)
    assert "Traceback" not in run.err and run.code in (0, 1, 2), run.err
    return run.out


def groups(place: str) -> list[list[str]]:
    """The payloads in as few texts as the place shows whole (an unknown key or system is
    quoted up to 60 characters)."""
    if place not in ("unknown-key", "unknown-system"):
        return [list(MD_PAYLOADS.values())]
    out: list[list[str]] = [[]]
    for text in MD_PAYLOADS.values():
        if len(" ".join(out[-1] + [text])) > 45:
            out.append([])
        out[-1].append(text)
    return out


def with_payload(tmp_path: Path, place: str, text: str, name: str) -> Path:
    spec = CASES["places"][place]
    source = (EXAMPLES / spec["example"]).read_text(encoding="utf-8")
    if "replace" in spec:
        source = source.replace(spec["replace"][0], spec["replace"][1].replace("PAYLOAD", quoted(text)), 1)
    else:
        source += "\n" + spec["append"].replace("PAYLOAD", quoted(text))
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


@pytest.mark.parametrize("place, fmt", MD_PAIRS, ids=[f"{p}-{f}" for p, f in MD_PAIRS])
def test_markdown_github_would_act_on_is_shown_as_text(hwlint, tmp_path, place, fmt):
    example = EXAMPLES / CASES["places"][place]["example"]
    own = set(rendered(markdown_output(hwlint, example, fmt)).code)
    for index, group in enumerate(groups(place)):
        path = with_payload(tmp_path, place, " ".join(["Q1Q", *group]), f"{place}-{index}.hw.yaml")
        out = markdown_output(hwlint, path, fmt)
        assert "Q1Q" in out, f"{place} no longer reaches the {fmt} output: update tests/escaping/cases.yaml\n{out[:1500]}"
        shown = [text for text in group if " " not in text] if fmt != "comment" else []  # the comment may cut text
        assert inert(out, own | {str(path)}, shown) == []  # the comment's table names the file in code


@pytest.mark.parametrize("fmt", ["markdown", "comment", "checklist"])
def test_a_file_name_github_would_act_on_is_shown_as_it_is(hwlint, tmp_path, monkeypatch, fmt):
    name = CASES["markdown_file_name"]
    (tmp_path / name).write_text((EXAMPLES / "flawed-cluster.hw.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    own = set(rendered(markdown_output(hwlint, EXAMPLES / "flawed-cluster.hw.yaml", fmt)).code)
    out = markdown_output(hwlint, name, fmt)
    page = rendered(out)
    assert name in "".join(page.text)
    assert inert(out, own | {name}, [name]) == []
