"""The Markdown review's Mermaid charts: per-GPU memory and power per rack.

The charts are checked twice: what they say (bars only for known values, "estimate" where the
number is one, a bounded number of bars, manifest text that cannot break out of a label), and
that they draw: every ```mermaid block of every example's review, and of the hostile and
many-rack manifests below, is rendered by the real mermaid-cli on Chromium in one run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, ROOT
from tools import npm_tool

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.hw.yaml"))
BLOCK = re.compile(r"^```mermaid\n(.*?)^```$", re.S | re.M)
FLAWED_RACK = """  racks:   # ruleid: PWR008
    - name: row-a
      count: 2
      contents: [{pool: v100, nodes: 8}]     # 8 x 3.5 = 28 kW per rack
      power_budget_kw: 30
      cooling: air
      cooling_capacity_kw: 25   # ruleid: PWR004
      circuits: {count: 2, voltage_v: 208, phases: 1, breaker_a: 30, ab_redundant: true}   # ruleid: PWR003
"""
# What a hostile rack name may try inside a Mermaid block: end the label's string and the
# list, start a statement or a directive, a comment, an entity, HTML, a new line, a code fence.
HOSTILE = 'r"]; bar [1] %%{init: {"theme": "dark"}}%% #quot; <img src=x onerror=alert(1)>\n```\nline [9]'


def blocks(markdown: str) -> list[str]:
    return BLOCK.findall(markdown)


def review(hwlint, *paths) -> str:
    run = hwlint("check", "--format", "markdown", *paths)
    assert run.code in (0, 1), run.err
    return run.out


def bars(block: str) -> list[float]:
    return [float(v) for v in re.search(r"^    bar \[(.*)\]$", block, re.M).group(1).split(", ")]


def categories(block: str) -> list[str]:
    line = re.search(r"^    x-axis \[(.*)\]$", block, re.M).group(1)
    names = re.findall(r'"([^"]*)"', line)
    assert ", ".join(f'"{n}"' for n in names) == line, f"the x-axis is not a plain list of strings: {line}"
    values = bars(block)
    assert [n.rsplit(" ", 1)[1] for n in names] == [f"{v:g}" for v in values], "each label ends with its bar's value"
    return [n.rsplit(" ", 1)[0] for n in names]


def chart(markdown: str, heading: str) -> tuple[str, str]:
    """(the mermaid block, the notes under it) of the chart under `### heading`."""
    found = re.search(rf"^### {re.escape(heading)}\n\n[^\n]*\n\n```mermaid\n(.*?)^```\n(.*?)(?=^#)", markdown, re.S | re.M)
    assert found, f"no chart {heading!r} in:\n{markdown[:3000]}"
    return found.group(1), found.group(2)


def flawed_with(tmp_path, name: str, old: str, new: str) -> str:
    text = (EXAMPLES / "flawed-cluster.hw.yaml").read_text()
    assert old in text
    path = tmp_path / f"{name}.hw.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.fixture
def hostile(tmp_path):
    return flawed_with(tmp_path, "hostile", "    - name: row-a\n", f"    - name: {json.dumps(HOSTILE)}\n")


@pytest.fixture
def odd_name(tmp_path):
    return flawed_with(tmp_path, "odd-name", "    - name: row-a\n", f"    - name: {'-_.-' * 16}\n")


@pytest.fixture
def many_racks(tmp_path):
    """Nine rack groups of one node each (different budgets), two of them alike."""
    racks = "".join(
        f"    - name: rack-{i}\n      count: 1\n      contents: [{{pool: v100, nodes: 1}}]\n"
        f"      power_budget_kw: {budget}\n"
        for i, budget in enumerate((4, 5, 6, 7, 8, 9, 10, 10, 3.6))
    )
    return flawed_with(tmp_path, "many-racks", FLAWED_RACK, "  racks:\n" + racks)


def test_every_example_with_facts_draws_its_memory_and_the_racked_ones_their_power(hwlint, monkeypatch):
    monkeypatch.chdir(ROOT)
    for example in EXAMPLE_FILES:
        out = review(hwlint, example.relative_to(ROOT))
        memory, _ = chart(out, "GPU memory per GPU (estimate)")
        assert categories(memory)[-1] == "total needed" and "estimate" in memory
        assert 0 not in bars(memory)
        if "rented" in example.name:  # the provider's facility: no racks of its own
            assert "### Power per rack" not in out
        else:
            power, _ = chart(out, "Power per rack")
            assert 0 not in bars(power) and categories(power)


def test_the_flawed_example_draws_the_budget_tables_numbers(hwlint, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = review(hwlint, "examples/flawed-cluster.hw.yaml")
    assert "| GPU memory per GPU | 42.7 GB (model states 10.3 at 16 bytes per trainable parameter + activations 32.4) | 28.8 GB usable of 32 GB" in out
    memory, _ = chart(out, "GPU memory per GPU (estimate)")
    assert dict(zip(categories(memory), bars(memory))) == {
        "weights": 3.8, "gradients": 3.8, "optimizer states": 2.8, "activations": 32.4, "total needed": 42.7}
    assert re.search(r"^    line \[28.8, 28.8, 28.8, 28.8, 28.8\]$", memory, re.M), memory
    assert 'title "Memory per GPU, GB (estimate); red line: 28.8 usable"' in memory
    assert "red line: 28.8 GB usable of the GPU's 32 GB (10% reserve)." in out
    power, _ = chart(out, "Power per rack")
    assert dict(zip(categories(power), bars(power))) == {
        "row-a x2 load": 28, "row-a budget": 30, "row-a circuits per feed": 5}


def test_a_hostile_rack_name_is_refused_before_any_chart(hwlint, hostile):
    out = review(hwlint, hostile)
    assert "cannot be reviewed" in out and "facility.racks\\[0\\].name" in out
    assert not blocks(out) and "```" not in out


def test_the_longest_oddest_allowed_rack_name_is_cut_to_a_label(hwlint, odd_name):
    power, _ = chart(review(hwlint, odd_name), "Power per rack")
    names = categories(power)
    assert names[0] == "-_.-" * 5 + "-_.~ x2 load", names
    assert all(re.fullmatch(r"[\w .+()/~-]*", n) for n in names)


def test_labels_keep_nothing_mermaid_or_html_could_read(tmp_path):
    from linter.report.charts import label
    made = label(HOSTILE, limit=200)
    assert re.fullmatch(r"[\w .+()/-]*", made), made
    assert made == "r___ bar _1_ ___init_ __theme__ _dark_____ _quot_ _img src_x onerror_alert(1)______line _9_"
    assert label("机架 A") == "机架 A" and label("x" * 30) == "x" * 23 + "~"


def test_unknown_values_are_left_out_and_named_never_drawn_as_zero(hwlint, tmp_path):
    path = flawed_with(tmp_path, "unknowns", "      power_budget_kw: 30\n", "")
    text = path.read_text().replace("    sequence_length: 2048\n", "").replace(
        "ab_redundant: true}", "ab_redundant: true}\n"
        "    - {name: row-b, count: 1, contents: [{pool: mgmt, nodes: 1}]}\n"
        "    - {name: row-c, count: 1, contents: [{pool: mgmt, nodes: 1}, {pool: v100, nodes: 1}], power_budget_kw: 9}\n")
    text = text.replace("\nnetwork:", "  - {name: mgmt, role: management, count: 2}\n\nnetwork:")
    path.write_text(text)
    out = review(hwlint, path)
    memory, memory_notes = chart(out, "GPU memory per GPU (estimate)")
    assert categories(memory) == ["weights", "gradients", "optimizer states"]
    assert "Activations are not drawn" in memory_notes and "plan.model.sequence\\_length" in memory_notes
    power, power_notes = chart(out, "Power per rack")
    assert categories(power) == ["row-a x2 load", "row-a circuits per feed", "row-c x1 load, at least", "row-c budget"]
    assert bars(power) == [28, 5, 3.5, 9]
    assert "No power budget drawn, not given: row-a (facility.racks\\[0\\].power\\_budget\\_kw)." in power_notes
    assert "Not drawn, their load not known yet: row-b (node\\_pools\\[1\\].max\\_power\\_kw)." in power_notes
    assert ("Drawn with the known part of their load only (at least), still to give: "
            "row-c (node\\_pools\\[1\\].max\\_power\\_kw).") in power_notes
    assert "No circuit capacity drawn, not known without: row-b" not in power_notes  # not drawn at all
    assert "No circuit capacity drawn, not known without: row-c (facility.racks\\[2\\].circuits)." in power_notes


def test_estimated_rack_power_says_estimate(hwlint, tmp_path):
    path = flawed_with(tmp_path, "estimate", "    max_power_kw: 3.5\n", "")
    out = review(hwlint, path)
    power, _ = chart(out, "Power per rack (estimate)")
    assert "Power per rack in kW (estimate)" in power
    assert categories(power)[0] == "row-a x2 load (estimate)"


def test_many_racks_are_grouped_and_bounded(hwlint, many_racks):
    out = review(hwlint, many_racks)
    power, notes = chart(out, "Power per rack")
    names = categories(power)
    # the four tightest of eight groups (3.5 kW of 3.6, 4, 5 and 6), in the manifest's order
    assert names == [f"rack-{i} {what}" for i in (0, 1, 2, 8) for what in ("x1 load", "budget")], names
    assert bars(power) == [3.5, 4, 3.5, 5, 3.5, 6, 3.5, 3.6]
    assert "rack-6, rack-7 (2 racks)" in notes  # alike: one group
    assert "4 of 8 rack groups, those with the most headroom, are not drawn (rack-3; rack-4; rack-5; rack-6; rack-7)" in notes
    assert "No circuit capacity drawn, not known without: rack-0 (facility.racks\\[0\\].circuits); " in notes
    assert "; and 3 more." in notes  # nine racks, six named


def test_a_review_cut_to_fit_a_comment_leaves_the_charts_out(hwlint, tmp_path):
    single = review(hwlint, EXAMPLES / "flawed-cluster.hw.yaml")
    assert len(blocks(single)) == 2
    count = 65_536 // len(single) + 1
    while True:  # just too long in full: the copies share one list of sources
        copies = [flawed_with(tmp_path, f"copy-{i}", "row-a", "row-a") for i in range(count)]
        if len(hwlint("check", *copies, "--format", "markdown", "--max-chars", "0").out) > 65_536:
            break
        count += 1
    out = review(hwlint, *copies)
    assert out.count("Shortened to fit a GitHub comment") == len(copies) and "nor the charts" in out
    assert not blocks(out)


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    pytest.skip("Chromium is not installed (.ci/run installs it with apt)")


def test_every_chart_renders_with_the_real_mermaid_cli(hwlint, odd_name, many_racks, tmp_path, monkeypatch):
    browser = chromium()
    mmdc = npm_tool("@mermaid-js/mermaid-cli", "mmdc",
                    env={"PUPPETEER_SKIP_DOWNLOAD": "1", "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1"})
    monkeypatch.chdir(ROOT)
    found = []
    for path in [*(p.relative_to(ROOT) for p in EXAMPLE_FILES), odd_name, many_racks]:
        found += blocks(review(hwlint, path))
    assert len(found) >= 2 * len(EXAMPLE_FILES)
    from linter.report.charts import _xychart, label  # and a chart labelled with everything hostile
    found.append(_xychart("hostile", "kW", [label(HOSTILE), label(HOSTILE, 200)], [1, 2], 1.5) + "\n")
    # one mmdc run over one Markdown file holding every block
    source = tmp_path / "charts.md"
    source.write_text("".join(f"```mermaid\n{b}```\n\n" for b in found), encoding="utf-8")
    config = tmp_path / "puppeteer.json"
    config.write_text(json.dumps({"executablePath": browser, "args": ["--no-sandbox"]}))
    run = subprocess.run([str(mmdc), "--puppeteerConfigFile", str(config), "--input", str(source),
                          "--output", str(tmp_path / "out.md"), "--outputFormat", "svg", "--quiet"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, f"mermaid-cli failed:\n{run.stderr[-4000:]}"
    for n, block in enumerate(found, 1):
        svg = (tmp_path / f"out-{n}.svg").read_text(encoding="utf-8")
        title = re.search(r'^    title "(.*)"$', block, re.M).group(1)
        assert title.replace("&", "&amp;") in svg, f"chart {n} lacks its title:\n{block}"
        assert "Syntax error" not in svg
