"""Every (place, format) pair: text a manifest's author controls reaches a human report only
escaped. The reproducers are data (tests/escaping/cases.yaml): each payload at each place,
reviewed in each human format (text, Markdown, GitHub annotations, checklist, verify).

One review per pair carries every payload, each after its own short label (`k03=...;`), so a
failure names the payloads that leaked and the characters they leaked.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES

CASES = yaml.safe_load((Path(__file__).parent / "escaping" / "cases.yaml").read_text(encoding="utf-8"))
PAYLOADS: dict = CASES["payloads"]
START, END = "Q1Q", "Q2Q"  # letters: no format escapes them
PAIRS = [(place, fmt) for place, spec in CASES["places"].items() for fmt in spec["formats"]]


def yaml_quoted(text: str) -> str:
    """`text` as a YAML double-quoted scalar that writes every unusual character as an escape
    (the file itself stays plain printable text, as a reviewer would see it in a diff)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


LABELS = {name: f"k{index:02d}" for index, name in enumerate(PAYLOADS)}  # short: names have length limits


def carriers(per_file: int = 0) -> list[list[str]]:
    """The payloads, labelled, between START and END: all in one text, or (`per_file: N`,
    for a place that quotes only the start of a long value and a limited number of them)
    one text each, N to a manifest."""
    labelled = [f"{LABELS[name]}={p['text']};" for name, p in PAYLOADS.items()]
    if not per_file:
        return [[START + "".join(labelled) + END]]
    each = [START + text + END for text in labelled]
    return [each[i:i + per_file] for i in range(0, len(each), per_file)]


def forbidden(char: str) -> bool:
    """A character no human report may carry raw: controls (but tab and line feed, the
    formats' own layout), format characters, line and paragraph separators, and every
    non-ASCII character a payload is made of (fillers and joiners Unicode does not class
    as format characters)."""
    if char in "\t\n":
        return False
    if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
        return True
    return char in SPECIAL


SPECIAL = {c for p in PAYLOADS.values() for c in p["text"] if ord(c) > 0x7E}


def manifests(tmp_path: Path, place: str) -> list[Path]:
    spec = CASES["places"][place]
    source = (EXAMPLES / spec["example"]).read_text(encoding="utf-8")
    paths = []
    for index, group in enumerate(carriers(spec.get("per_file", 0))):
        payloads = [yaml_quoted(c) for c in group]
        text = source
        if "replace" in spec:
            old, new = spec["replace"]
            assert old in text, f"{spec['example']} no longer holds {old!r}: update tests/escaping/cases.yaml"
            text = text.replace(old, new.replace("PAYLOAD", payloads[0]), 1)
        if "append" in spec:
            text += "\n" + "".join(spec["append"].replace("PAYLOAD", p) for p in payloads)
        path = tmp_path / f"{place}-{index}.hw.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def output(hwlint, path: Path, fmt: str) -> str:
    if fmt in ("checklist", "verify"):
        run = hwlint(fmt, path)
    else:
        run = hwlint("check", "--format", fmt, path)
    assert "Traceback" not in run.err and run.code in (0, 1, 2), (run.code, run.err)
    return run.out + run.err


def leaks(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X} {unicodedata.name(c, '(control)')}" for c in text if forbidden(c)})


@pytest.mark.parametrize("place, fmt", PAIRS, ids=[f"{p}-{f}" for p, f in PAIRS])
def test_manifest_text_reaches_the_report_only_escaped(hwlint, tmp_path, place, fmt):
    out = "".join(output(hwlint, path, fmt) for path in manifests(tmp_path, place))
    assert leaks(out) == [], f"{place} in {fmt} output carries raw characters"
    shown = re.findall(re.escape(START) + "(.*?)" + re.escape(END), out)
    assert shown, f"{place} no longer reaches the {fmt} output: update tests/escaping/cases.yaml\n{out[:2000]}"
    text = ";".join(shown)
    for name, payload in PAYLOADS.items():
        label = LABELS[name]
        at = text.find(f"{label}=")
        assert at >= 0, f"{name} ({label}) is missing from the {fmt} output: {text!r}"
        first = text[at + len(label) + 1]
        # escaped visibly (a backslash escape, or %0D in a workflow command), or, for
        # Unicode white space, folded into a space by a one-line report
        assert first in "\\%" or (payload.get("spaces") and first in " ;"), (name, text[at:at + 40])


def test_every_format_character_is_escaped(hwlint, tmp_path):
    """The escape covers the whole format category (Cf) of the running Python's Unicode
    database, not only the characters listed as payloads."""
    import sys

    chars = "".join(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")
    path = tmp_path / "every-format-character.hw.yaml"
    text = (EXAMPLES / "flawed-cluster.hw.yaml").read_text(encoding="utf-8")
    path.write_text(text + "\nwaivers:\n  - rule: BUY002\n    reason: " + yaml_quoted(START + chars[:200] + END)
                    + "\n    approver: ops-lead@example.com\n    expires: 2027-06-30\n  - rule: BUY001\n    reason: "
                    + yaml_quoted(START + chars[200:] + END)
                    + "\n    approver: ops-lead@example.com\n    expires: 2027-06-30\n", encoding="utf-8")
    out = output(hwlint, path, "text")
    assert out.count(START) >= 2 and leaks(out) == []


def test_the_payloads_are_what_they_say(tmp_path):
    """The data file is read as intended: the escapes in it became the characters."""
    assert PAYLOADS["bell"]["text"] == "\a" and PAYLOADS["nul"]["text"] == "\0"
    assert PAYLOADS["line-separator"]["text"] == "\u2028" and PAYLOADS["tag-character"]["text"] == "\U000e0041"
    assert sum(len(group) for group in carriers(per_file=8)) == len(PAYLOADS)
    assert all(f"{label}=" in carriers()[0][0] for label in LABELS.values())


FORGED = re.compile(r"^(::|##\[|forged)", re.M)
GITHUB_LINE = re.compile(r"^::(error|warning|notice) [^:]*::")


def forged_lines(out: str, fmt: str) -> list[str]:
    """Lines a CI log or a reader would take for a workflow command or a finding hwlint did
    not make. In GitHub format every line is an annotation: its properties (up to `::`) may
    not hold a raw `::` or line break from a name."""
    if fmt == "github":
        return [line for line in out.splitlines(True) if not GITHUB_LINE.match(line)]
    return FORGED.findall(out) and [line for line in out.split("\n") if FORGED.match(line)]


FILE_PAIRS = [(name, fmt) for name in CASES["file_names"] for fmt in CASES["file_name_formats"]]


@pytest.mark.parametrize("name, fmt", FILE_PAIRS, ids=[f"{n}-{f}" for n, f in FILE_PAIRS])
def test_a_file_name_cannot_start_a_line(hwlint, tmp_path, monkeypatch, name, fmt):
    (tmp_path / CASES["file_names"][name]).write_text((EXAMPLES / "flawed-cluster.hw.yaml").read_text())
    monkeypatch.chdir(tmp_path)  # the name as given, not behind a folder
    out = output(hwlint, Path(CASES["file_names"][name]), fmt)
    assert "legacy-v100" in out or "GPU002" in out, out[:1000]  # it was reviewed
    assert forged_lines(out, fmt) == []
    assert leaks(out) == []


@pytest.mark.parametrize("option", CASES["options"])
def test_an_option_value_is_escaped_where_it_is_echoed(hwlint, tmp_path, monkeypatch, option):
    import io
    import subprocess
    import sys

    manifest = tmp_path / "m.hw.yaml"
    manifest.write_text((EXAMPLES / "flawed-cluster.hw.yaml").read_text())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(manifest.read_bytes())))
    run = hwlint("check", "-" if option == "--stdin-filename" else manifest, option, CASES["option_value"])
    assert "Traceback" not in run.err
    assert forged_lines(run.out + run.err, "text") == [], run.out + run.err


URL_PAIRS = [(place, fmt) for place, formats in CASES["bare_url_places"].items() for fmt in formats]


@pytest.mark.parametrize("place, fmt", URL_PAIRS, ids=[f"{p}-{f}" for p, f in URL_PAIRS])
def test_bare_urls_from_the_manifest_are_not_links_in_markdown(hwlint, tmp_path, place, fmt):
    spec = CASES["places"][place]
    text = (EXAMPLES / spec["example"]).read_text(encoding="utf-8")
    url = yaml_quoted(CASES["bare_url"])
    if "replace" in spec:
        text = text.replace(spec["replace"][0], spec["replace"][1].replace("PAYLOAD", url), 1)
    else:
        text += "\n" + spec["append"].replace("PAYLOAD", url)
    path = tmp_path / "urls.hw.yaml"
    path.write_text(text, encoding="utf-8")
    run = hwlint(fmt, path) if fmt == "checklist" else hwlint("check", "--format", fmt, path)
    out = run.out  # the Markdown; messages on stderr are plain text
    assert "evil" in out.lower(), f"{place} does not reach {fmt}"
    assert not re.search(r"(?i)(https?://|www\.)evil", out), re.findall(r"(?i).{20}(?:https?://|www\.)evil.{10}", out)


def test_the_base_diff_keeps_manifest_text_on_its_line(hwlint, tmp_path, monkeypatch):
    """`check --base` lists what a change introduces, quoting the manifest's text: a line
    break in it must not start a forged line (the value is one of option_value's lines)."""
    import subprocess

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       check=True, capture_output=True)

    manifest = tmp_path / "m.hw.yaml"
    original = (EXAMPLES / "single-node-finetune.hw.yaml").read_text()
    manifest.write_text(original)
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    manifest.write_text(original.replace("system: DGX-H100", "system: " + yaml_quoted(CASES["option_value"]), 1))
    monkeypatch.chdir(tmp_path)
    run = hwlint("check", "m.hw.yaml", "--base", "HEAD")
    assert "introduced: m.hw.yaml" in run.out and "forged" in run.out, run.out
    assert forged_lines(run.out + run.err, "text") == [], run.out
