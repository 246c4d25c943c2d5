"""Property-based tests: whatever the manifest, hwlint reports findings or a clean error,
and the same input gives the same output twice.

Inputs come from two places: manifests generated from schemas/manifest.schema.json (valid
by construction), and the examples mutated at the text level (lines dropped, doubled or
cut, bytes inserted) or at the data level (a value replaced by one of the wrong type or
size, a key misspelled or dropped).

The default run is short enough for CI. For a longer one:

    HWLINT_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz.py
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, ROOT

EXAMPLES_N = int(os.environ.get("HWLINT_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=EXAMPLES_N, deadline=None, derandomize="HWLINT_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
SCHEMA = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text())
SOURCES = sorted(EXAMPLES.glob("*.yaml"))
# Characters YAML can carry: no control characters, surrogates or non-characters.
YAML_TEXT = st.characters(blacklist_categories=("Cc", "Cs", "Cn"))


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HWLINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


# --- running hwlint ----------------------------------------------------------------------


def run(*args: object) -> tuple[int, str, str]:
    """`hwlint ARGS` in-process (the `hwlint` fixture is per test, hypothesis runs many)."""
    from linter.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def check_twice(path: Path) -> tuple[int, str]:
    """Review `path` twice (text and JSON); assert a clean, identical outcome both times."""
    first = run("check", path)
    assert first == run("check", path), "the same input gave different output"
    code, out, err = first
    assert code in (0, 1, 2), (code, out, err)
    assert "Traceback" not in out + err and "internal error" not in err, err
    lines = out.splitlines()
    assert lines and lines[-1].startswith(f"{path}: "), out  # a summary line for the file
    assert all(line.startswith(f"{path}:") for line in lines), out  # every finding names the file
    if code == 2:  # unreadable: one finding saying why
        assert re.search(r": (YAML|IO) error ", out), out
    report = run("check", "--format", "json", path)
    assert report == run("check", "--format", "json", path)
    json.loads(report[1])
    return code, out


# --- manifests from the schema -----------------------------------------------------------


def from_schema(node: dict, depth: int = 0) -> st.SearchStrategy:
    """A strategy for values valid under `node` (the subset of JSON Schema the model uses)."""
    if "$ref" in node:
        return st.deferred(lambda: from_schema(SCHEMA["$defs"][node["$ref"].split("/")[-1]], depth + 1))
    if "anyOf" in node:
        return st.one_of([from_schema(option, depth) for option in node["anyOf"]])
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "object":
        return _object(node, depth)
    if kind == "array":
        items = from_schema(node.get("items", {}), depth + 1)
        low = node.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=max(low, min(node.get("maxItems", 3), 3 if depth < 3 else low)))
    if kind == "integer":
        return st.integers(node.get("minimum", -(10**6)), node.get("maximum", 10**6))
    if kind == "number":
        low = node.get("minimum", node.get("exclusiveMinimum", -1e6))
        high = node.get("maximum", node.get("exclusiveMaximum", 1e6))
        return st.floats(low, min(high, 1e9), allow_nan=False, allow_infinity=False,
                         exclude_min="exclusiveMinimum" in node, exclude_max="exclusiveMaximum" in node)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if node.get("format") == "date":
            return st.dates().map(lambda d: d.isoformat())
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True)
        return st.text(YAML_TEXT, min_size=node.get("minLength", 0), max_size=min(node.get("maxLength", 40), 40))
    return st.none()


def _object(node: dict, depth: int) -> st.SearchStrategy:
    properties = node.get("properties", {})
    required = node.get("required", [])
    optional = [k for k in properties if k not in required]
    if depth > 4:
        optional = []

    @st.composite
    def build(draw):
        chosen = required + draw(st.lists(st.sampled_from(optional), unique=True, max_size=len(optional))) if optional else required
        return {key: draw(from_schema(properties[key], depth + 1)) for key in chosen}

    return build()


def write(tmp_path: Path, data: object, name: str = "fuzz.hw.yaml") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")  # JSON is YAML 1.2
    return path


@FUZZ
@given(manifest=from_schema(SCHEMA))
def test_a_manifest_valid_by_the_schema_is_reviewed_cleanly(tmp_path_factory, manifest):
    path = write(tmp_path_factory.mktemp("gen"), manifest)
    code, out = check_twice(path)
    assert code in (0, 1), out  # it parses, so it is reviewed (or gets findings), never unreadable


@FUZZ
@given(manifest=from_schema(SCHEMA))
def test_the_loader_reads_back_exactly_what_was_written(tmp_path_factory, manifest):
    from linter.manifest.loader import load_file

    path = write(tmp_path_factory.mktemp("gen"), manifest)
    assert load_file(str(path)).data == _without_nulls(manifest)


def _without_nulls(value):
    """The loader drops keys given with no value; the schema never asks for null anyway."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


# --- mutated examples --------------------------------------------------------------------

WRONG = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, -1, -(10**6), 10**7, 10**40, 1e30, -1e30, 0.5, 1e-300]),
    st.text(max_size=20), st.sampled_from(["", "8", "NaN", "inf", "1e30", "H100", "2026-13-45", "<script>"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


@st.composite
def mutated_data(draw):
    from linter.manifest.loader import load_file

    data = load_file(str(draw(st.sampled_from(SOURCES)))).data
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        target = draw(st.sampled_from(paths))
        parent = data
        for step in target[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "drop", "misspell"]))
        if action == "replace" or isinstance(parent, list):
            parent[target[-1]] = draw(WRONG)
        elif action == "drop":
            del parent[target[-1]]
        else:
            parent[target[-1] + draw(st.sampled_from(["s", "_", "x"]))] = parent.pop(target[-1])
    return data


@FUZZ
@given(data=mutated_data())
def test_a_mutated_example_gets_findings_or_a_clean_error(tmp_path_factory, data):
    json.dumps(data, allow_nan=False)  # only finite numbers are written (NaN has its own corpus case)
    check_twice(write(tmp_path_factory.mktemp("mut"), data))


@st.composite
def mutated_text(draw):
    raw = draw(st.sampled_from(SOURCES)).read_bytes()
    lines = raw.split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "double", "cut", "insert", "indent", "bytes"]))
        if action == "drop":
            del lines[index]
        elif action == "double":
            lines.insert(index, lines[index])
        elif action == "cut":
            lines[index] = lines[index][: draw(st.integers(0, max(len(lines[index]) - 1, 0)))]
        elif action == "insert":
            at = draw(st.integers(0, len(lines[index])))
            lines[index] = lines[index][:at] + draw(st.sampled_from([b":", b"- ", b"[", b"{", b"&a ", b"*a", b"!!", b"\t", b"'", b'"', b"#", b"<<: "])) + lines[index][at:]
        elif action == "indent":
            lines[index] = b" " * draw(st.integers(1, 5)) + lines[index]
        else:
            lines[index] += draw(st.binary(max_size=4))
        if not lines:
            lines = [b""]
    return b"\n".join(lines)


@FUZZ
@given(raw=mutated_text())
def test_a_damaged_file_gets_findings_or_a_clean_error(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("txt") / "damaged.hw.yaml"
    path.write_bytes(raw)
    check_twice(path)



def copies(folder: Path, count: int, broken_at: int) -> list[Path]:
    """`count` copies of the SOURCES in turn, and one file that is not YAML at `broken_at`."""
    paths = []
    for i in range(count):
        source = SOURCES[i % len(SOURCES)]
        paths.append(folder / f"{i:03d}-{source.name}")
        paths[-1].write_bytes(source.read_bytes())
    broken = folder / f"{broken_at:03d}-broken.yaml"
    broken.write_text("plan: [\n")
    paths.insert(broken_at, broken)
    return paths


def test_many_files_give_the_same_report_in_workers_as_in_one_process(tmp_path, monkeypatch):
    """Enough files to be split over worker processes: same bytes, same exit code."""
    from linter.engine.bulk import MIN_PARALLEL

    paths = copies(tmp_path, MIN_PARALLEL + 6, broken_at=10)
    monkeypatch.setenv("HWLINT_JOBS", "1")
    alone = run("check", "--format", "json", *paths)
    monkeypatch.setenv("HWLINT_JOBS", "2")
    split = run("check", "--format", "json", *paths)
    assert alone == split and alone[0] == 2
    assert [m["file"] for m in json.loads(split[1])["manifests"]] == [str(p) for p in paths]


def test_a_worker_that_dies_leaves_its_files_to_this_process(tmp_path, monkeypatch):
    """A worker killed mid-run (out of memory, say) is not waited for: this process reviews
    what it had and the rest, and the report is the one a single process writes."""
    import os

    from linter.engine import review
    from linter.engine.bulk import MIN_PARALLEL

    paths = copies(tmp_path, MIN_PARALLEL + 6, broken_at=10)
    monkeypatch.setenv("HWLINT_JOBS", "1")
    alone = run("check", "--format", "json", *paths)
    parent, real, fatal = os.getpid(), review.review_file, str(paths[40])
    died = tmp_path / "died"

    def dies_in_a_worker(path, *args):
        if os.getpid() != parent and str(path) == fatal:
            died.touch()
            os._exit(9)
        return real(path, *args)

    monkeypatch.setattr(review, "review_file", dies_in_a_worker)
    monkeypatch.setenv("HWLINT_JOBS", "2")
    split = run("check", "--format", "json", *paths)
    assert died.exists(), "no worker reviewed the file meant to end it"
    assert alone == split and alone[0] == 2


def timed_workers(monkeypatch):
    """The bulk module with the workers' timing on for a small run: two CPUs, no floor of
    seconds, and a trial however many files are left (tried again at once after losing)."""
    from linter.engine import bulk

    monkeypatch.delenv("HWLINT_JOBS", raising=False)
    monkeypatch.setattr(bulk.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(bulk, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(bulk, "TRIAL_COST", 1e9)
    return bulk


def test_the_bulk_trace_accounts_for_every_file_and_never_stops_a_run(tmp_path, monkeypatch):
    """HWLINT_BULK_TRACE gets one JSON line a run whose phases deliver every file once (what
    bench/ reads for the timing's cost); a trace that cannot be written changes nothing."""
    paths = copies(tmp_path, 150, broken_at=30)
    monkeypatch.setenv("HWLINT_JOBS", "1")
    alone = run("check", "--format", "json", *paths)
    timed_workers(monkeypatch)
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("HWLINT_BULK_TRACE", str(trace))
    assert run("check", "--format", "json", *paths) == alone
    (line,) = trace.read_text().splitlines()
    phases = json.loads(line)["phases"]
    assert sum(files for _, files, _ in phases) == len(paths) and {kind for kind, _, _ in phases} <= {"here", "workers"}
    monkeypatch.setenv("HWLINT_BULK_TRACE", str(tmp_path / "no such folder" / "trace.jsonl"))
    assert run("check", "--format", "json", *paths) == alone


@pytest.mark.parametrize("timing", ["kept", "stopped", "switching", "not waited for"])
def test_workers_kept_stopped_or_resumed_mid_run_give_the_same_report(tmp_path, monkeypatch, timing):
    """Without HWLINT_JOBS the workers are timed against one process as the run goes: kept,
    ended when behind (the rest reviewed in this process until they are tried again, forked
    anew), resumed after one process's pace is measured again, or ended when a chunk on trial
    would keep them too far behind. Same bytes every way. The outcome of each timing is forced
    here, so the test does not depend on the machine."""
    import itertools

    paths = copies(tmp_path, 150, broken_at=30)
    monkeypatch.setenv("HWLINT_JOBS", "1")
    alone = run("check", "--format", "json", *paths)
    bulk = timed_workers(monkeypatch)
    monkeypatch.setattr(bulk, "RECHECK", 40)
    # each timing's verdict in turn: the trial's end, then each round and each re-check
    verdicts = {"kept": [True], "stopped": [False], "switching": [True, True, False], "not waited for": [True]}[timing]
    answers = itertools.cycle(verdicts)
    monkeypatch.setattr(bulk, "_ahead", lambda *args: next(answers))
    # a chunk on trial is always waited for, or never
    monkeypatch.setattr(bulk, "GRACE", -1e9 if timing == "not waited for" else 1e9)
    counts = {"_start": 0, "_end": 0, "_paced_here": 0}
    for name in counts:
        real = getattr(bulk._Run, name)
        monkeypatch.setattr(bulk._Run, name, lambda self, *a, real=real, name=name: counts.update(
            {name: counts[name] + 1}) or real(self, *a))
    timed = run("check", "--format", "json", *paths)
    assert alone == timed and alone[0] == 2
    if timing == "kept":  # one process timed first, and again after the workers' first 40 files
        assert counts == {"_start": 1, "_end": 0, "_paced_here": 2}, counts
    else:  # ended, and forked again when tried again
        assert counts["_start"] >= 2 and counts["_end"] >= 1, counts


def _schema_errors(data) -> list:
    from jsonschema import Draft202012Validator

    return list(Draft202012Validator(SCHEMA).iter_errors(data))


@FUZZ
@given(manifest=from_schema(SCHEMA))
def test_the_quick_schema_check_accepts_valid_manifests(manifest):
    """The fast path must actually be taken for valid manifests (else it only costs)."""
    from linter.manifest.quickcheck import compile_schema

    assert compile_schema(SCHEMA)(manifest) and not _schema_errors(manifest)


@FUZZ
@given(data=mutated_data())
def test_the_quick_schema_check_never_accepts_what_jsonschema_rejects(data):
    """Soundness: when the quick check says valid, jsonschema finds nothing either."""
    from linter.manifest.quickcheck import compile_schema

    if compile_schema(SCHEMA)(data):
        assert not _schema_errors(data)


@pytest.mark.parametrize("value, valid", [(True, False), (1.0, False), (1, True), ("1", False)])
def test_the_quick_schema_check_is_strict_about_types(value, valid):
    """manifest_version is the constant 1: true and 1.0 are not 1 for the quick check
    (jsonschema then decides), "1" is wrong for both."""
    from linter.manifest.quickcheck import compile_schema

    manifest = {"manifest_version": value, "name": "x", "plan": {"goal": "pretrain"}, "node_pools": [{"name": "a", "count": 1}]}
    assert compile_schema(SCHEMA)(manifest) is valid


# --- the plain dump (linter.manifest.dump) is exactly pydantic's round trip ---------------


def _pydantic_dump(data):
    from pydantic import ValidationError

    from linter.manifest.model import Manifest

    try:
        return Manifest.model_validate(data).model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValidationError:
        return None


def _same_dump(data) -> bool:
    """The plain dump either declines (None: pydantic decides) or equals pydantic's dump in
    every key, key order and number type (JSON text tells 8 from 8.0)."""
    from linter.manifest.dump import dump, shape

    plain = dump(shape(), data)
    if plain is None:
        return True
    expected = _pydantic_dump(data)
    assert expected is not None, "the plain dump accepted what pydantic rejects"
    assert json.dumps(plain) == json.dumps(expected)
    return False


@FUZZ
@given(manifest=from_schema(SCHEMA))
def test_the_plain_dump_of_a_generated_manifest_is_pydantics(manifest):
    _same_dump(manifest)


@FUZZ
@given(data=mutated_data())
def test_the_plain_dump_of_a_mutated_example_is_pydantics(data):
    if not _schema_errors(data):  # the review asks for the dump of schema-valid data only
        _same_dump(data)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_the_plain_dump_is_taken_for_every_example_with_its_catalog_parts(source):
    """The examples as the review sees them (catalog values filled in): same data, and no
    pydantic needed."""
    from linter.manifest.catalog import resolve
    from linter.manifest.loader import load_file

    resolved = resolve(load_file(str(source))).data
    assert not _same_dump(resolved), "the plain dump declined a valid example"
    with_ints = json.loads(json.dumps(resolved).replace(".0,", ","))  # whole floats written as ints
    _same_dump(with_ints)


# --- every number of the examples, pushed to the edges -------------------------------------

EDGES = st.one_of(
    st.sampled_from([5e-324, 2.2250738585072014e-308, 1e-300, 1e-12, 1e-6, 0.001, 0.01, 0.5, 0.999999, 1, 1.000001,
                     64, 1024, 10**6, 1e9, 1e12, 1e15, 1e300, 1.7976931348623157e308, 0, -5e-324, -1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=0, max_value=1, allow_nan=False, exclude_min=True),
    st.integers(-(10**6), 10**16),
)


@st.composite
def example_with_edge_numbers(draw):
    from linter.manifest.loader import load_file

    data = load_file(str(draw(st.sampled_from(SOURCES)))).data
    numeric = [p for p in _paths(data) if p and _is_number(_at(data, p))]
    for target in draw(st.lists(st.sampled_from(numeric), min_size=1, max_size=3, unique=True)):
        _at(data, target[:-1])[target[-1]] = draw(EDGES)
    return data


def _at(data, path):
    for step in path:
        data = data[step]
    return data


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@pytest.mark.parametrize("name, says", [
    ("tiny-target-duration.yaml", ":28:3: SCHEMA error plan.target_duration_days is 4.94066e-324; it must be at least 0.01"),
    ("tiny-parameters.yaml", ":27:3: GPU007 pending Pretraining tokens per parameter are within the policy's band around "
                             "~20: needs plan.model.parameters_billion and plan.training_tokens_billion (realistic values: these give a "
                             "result out of range)"),
    ("tiny-power-factor.yaml", ":90:3: PWR006 pending The UPS carries the full IT load with headroom: needs "
                               "facility.ups.power_factor (a realistic one: 4.9e-324 would need more than 10^15 kVA)"),
])
def test_the_smallest_float_in_a_field_that_divides_is_a_finding_not_a_rule_error(name, says):
    """5e-324 as a duration, a model size or a UPS power factor once overflowed to a rule error."""
    path = ROOT / "tests" / "bad_inputs" / name
    code, out, err = run("check", "-v", path)
    assert code in (0, 1) and "rule error" not in out and not re.search(r"\b(inf|nan)\b", out), out + err
    assert f"{path}{says}" in out, out


@FUZZ
@given(data=example_with_edge_numbers())
def test_any_number_in_any_numeric_field_gets_findings_never_a_rule_error(tmp_path_factory, data):
    """Every fact that divides or converts stays finite on what the schema accepts; what it
    refuses is a finding (exit 1), never an error of hwlint's own (exit 2)."""
    path = write(tmp_path_factory.mktemp("num"), data)
    code, out, err = run("check", path)
    assert code in (0, 1), out + err
    assert "Traceback" not in out + err and "internal error" not in err and "rule error" not in out, out + err
    assert not re.search(r"\b(inf|nan)\b", out), out


@pytest.mark.parametrize("text, value", [
    ("3.35", 3.35), ("10.0", 10.0), ("00.10", 0.1), ("1.", 1.0), (".5", 0.5), ("-2.5", -2.5), ("1.5e3", 1500.0),
    ("1.2.3", "1.2.3"), ("٣.٥", "٣.٥"), ("3.x", "3.x"), ("null", None), ("~", None), ("NULL", None), ("nul", "nul"),
])
def test_plain_numbers_and_nulls_read_as_the_yaml_core_schema_does(text, value):
    """The loader's quick paths (a plain decimal, the null words) read as its patterns do:
    floats are floats (10.0 is not 10), other digits and near-misses stay text."""
    from linter.manifest.loader import load_text

    data = load_text(f"a: {text}\nb: 1\n").data
    assert data.get("a") == value and type(data.get("a")) is type(value), data
