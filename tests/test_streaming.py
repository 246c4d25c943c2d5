"""Reports of many manifests stream: each review is written and dropped, so a run's peak
memory does not grow with the number of files; and the JSON text is the standard library's.

The memory test compares the peak resident memory (ru_maxrss, from the kernel) of two real
runs, 30 and 330 files, every streamed format at once (text, JSON, SARIF, Markdown and the
pull-request comment). Keeping every review to the end (as hwlint did) grows the peak by
about 100 kB a file: some 30 MB for the 300 extra files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, ROOT, TODAY, twice_over


# Linux keeps a process's peak memory across exec, so a child forked from this (large) test
# process would report this process's size: a small Python starts hwlint and reports its peak.
_STARTER = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:], stdout=sys.stdout); "
            "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)")


def _peak_kb(folder: Path, tmp: Path, env: dict[str, str]) -> int:
    command = [sys.executable, "-m", "linter.cli", "check", "--force", "--format", f"json:{tmp / 'r.json'}",
               "--format", f"sarif:{tmp / 'r.sarif'}", "--format", f"markdown:{tmp / 'r.md'}",
               "--format", f"comment:{tmp / 'r.comment.md'}", "--format", "text", str(folder)]
    with open(tmp / "r.txt", "wb") as out:
        proc = subprocess.run([sys.executable, "-c", _STARTER, *command], cwd=ROOT, env=env, stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=600)
    code, peak = proc.stderr.split()[-2:]
    assert code in ("0", "1"), proc.stderr
    manifests = json.loads((tmp / "r.json").read_text(encoding="utf-8"))["manifests"]
    assert len(manifests) == len(list(folder.glob("*.hw.yaml")))
    count = len(manifests)
    assert f"summaries of all {count} manifests do not fit" in (tmp / "r.md").read_text(encoding="utf-8")
    assert f"**{count} manifests reviewed:**" in (tmp / "r.comment.md").read_text(encoding="utf-8")
    return int(peak)


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_number_of_manifests(tmp_path):
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text(encoding="utf-8")
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_JOBS": "1", "HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    peaks = {}
    for count in (30, 330):
        folder = tmp_path / f"m{count}"
        folder.mkdir()
        for i in range(count):
            (folder / f"c{i:04d}.hw.yaml").write_text(text.replace("atlas-70b", f"atlas-70b-{i}", 1), encoding="utf-8")
        _peak_kb(folder, tmp_path, env)  # the first run builds the pack cache
        peaks[count] = _peak_kb(folder, tmp_path, env)
    grown = peaks[330] - peaks[30]
    assert grown < 12 * 1024, f"300 more manifests took {grown / 1024:.0f} MB more at peak ({peaks})"


# JSON values as reports hold them, and what finite() and default=str turn into text.
class Tag:
    def __str__(self) -> str:
        return "tag \u00e9"


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.just(Tag()))
KEYS = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(value=VALUES, level=st.integers(0, 5))
def test_the_report_encoder_writes_what_json_dumps_writes(value, level):
    from linter.report.json import Encoded, encode, encode_utf8, finite

    expected = json.dumps(finite(value), indent=2, ensure_ascii=False, allow_nan=False, default=str)
    assert encode(value, level) == expected.replace("\n", "\n" + "  " * level)
    kept = {"kept": Encoded(value), "after": value}  # a value made once, as the citations are
    assert encode_utf8(kept, level) == encode({"kept": value, "after": value}, level).encode()


RESULTS = st.builds(
    dict, rule_id=st.sampled_from(["GPU001", "NET002", "ORG001"]), title=st.text(max_size=8),
    layer=st.sampled_from(["GPU", "NET", "ORG"]), severity=st.sampled_from(["error", "warning", "info"]),
    status=st.sampled_from(["fail", "waived", "pending", "pass", "skipped"]), message=st.text(max_size=8),
    fix=st.text(max_size=8), citations=st.lists(st.sampled_from(["known", "unknown"]), max_size=2),
    file=st.text(max_size=8), line=st.one_of(st.none(), st.integers()), column=st.integers(),
    path=st.text(max_size=8), reason=st.text(max_size=8), missing=st.lists(st.text(max_size=4), max_size=2),
    facts=st.dictionaries(st.text(max_size=4), SCALARS, max_size=3),
    waiver=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), SCALARS, max_size=2)), evidence=st.text(max_size=8),
)


@settings(max_examples=200, deadline=None)
@given(results=st.lists(RESULTS, max_size=4), level=st.integers(0, 4))
def test_results_are_written_as_their_fields_would_be(results, level):
    """The report writes each result field by field, reusing its rule's fixed fields: the
    same text as encoding the result's fields, with its citations, as a dict."""
    from dataclasses import fields

    from linter.report.json import Results, citation, encode, encode_utf8
    from linter.results import Result

    references = {"known": {"title": "A paper \u00e9", "year": 2024, "url": ""}}
    made: dict = {}
    objects = [Result(**r) for r in results]
    as_dicts = [{**{f.name: getattr(r, f.name) for f in fields(r)}, "citations": [citation(k, references) for k in r.citations]}
                for r in objects]
    expected = encode(as_dicts, level)
    assert encode(Results(objects, references, made), level) == expected
    assert encode_utf8(Results(objects, references, made), level) == expected.encode()  # from what was made once


def test_a_report_past_the_spool_limit_is_the_same_text_wherever_it_goes(tmp_path):
    """Past Spool.LIMIT the entries wait in a temporary file as UTF-8 and are copied on as
    bytes: to a file, to a UTF-8 standard output, and (decoded) to one that is not UTF-8,
    the report is the same text; and it is the report of every manifest."""
    from linter.report.json import Spool

    files = twice_over(tmp_path)
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_JOBS": "1", "HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    base = [sys.executable, "-m", "linter.cli", "check", "--exit-zero", *files]
    to_file = subprocess.run([*base, "--format", f"json:{tmp_path / 'r.json'}", "--format", f"sarif:{tmp_path / 'r.sarif'}"],
                             cwd=ROOT, env=env, capture_output=True, timeout=300)
    assert to_file.returncode == 0, to_file.stderr
    written = (tmp_path / "r.json").read_bytes()
    assert len(written) > Spool.LIMIT * 1.5
    report = json.loads(written)
    assert [m["file"] for m in report["manifests"]] == files
    assert report["summary"]["manifests"] == len(files)
    for encoding, fmt, expected in (("utf-8", "json", written), ("utf-16", "json", written),
                                    ("utf-8", "sarif", (tmp_path / "r.sarif").read_bytes())):
        run = subprocess.run([*base, "--format", fmt], cwd=ROOT, env={**env, "PYTHONIOENCODING": encoding},
                             capture_output=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert run.stdout.decode(encoding) == expected.decode("utf-8"), (encoding, fmt)


def test_a_report_whose_temporary_file_cannot_be_written_ends_in_words(tmp_path):
    """A JSON report past Spool.LIMIT waits in a temporary file; one that cannot be made or
    written (a full disk: here a file size limit, EFBIG; no usable temporary folder at all:
    a limit of 0) ends the run with exit 2 and what to do, no traceback, nothing half written,
    and a SARIF log asked for beside it says the run failed."""
    import resource

    files = twice_over(tmp_path)
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_JOBS": "1", "HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    sarif = tmp_path / "r.sarif"
    for limit, says in ((500_000, "its temporary file in "), (0, "No usable temporary directory found")):
        def limited(size: int = limit) -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

        formats = ["--format", f"sarif:{sarif}"] if limit else []
        run = subprocess.run([sys.executable, "-m", "linter.cli", "check", "--exit-zero", *formats, "--format", "json", *files],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limited)
        assert run.returncode == 2 and run.stdout == "", run.stderr
        assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
        first = run.stderr.splitlines()[0]
        assert first.startswith("hwlint: cannot write the JSON report: ") and says in first, run.stderr
        assert "set TMPDIR" in first, run.stderr
    log = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["invocations"][0]
    assert log["executionSuccessful"] is False
    assert "cannot write the JSON report: its temporary file in " in log["toolExecutionNotifications"][0]["message"]["text"]
