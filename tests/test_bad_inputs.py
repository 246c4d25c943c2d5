"""Every broken manifest ends in a clear finding or a one-line error, in bounded time and
memory, and never in a traceback.

The corpus is tests/bad_inputs/*.yaml; tests/bad_inputs/EXPECTED says, for each file, the
exit code and the line and words hwlint must report. Inputs too big to commit (a 50 MB
file, two million list items) and paths that are not files are made here.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TODAY

CORPUS = ROOT / "tests" / "bad_inputs"


def expectations() -> dict[str, tuple[int, int, str]]:
    out = {}
    for line in (CORPUS / "EXPECTED").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, code, lineno, fragment = (part.strip() for part in line.split(" | ", 3))
            out[name] = (int(code), int(lineno), fragment)
    return out


EXPECTED = expectations()


def test_every_corpus_file_has_an_expectation_and_the_corpus_is_large_enough():
    files = sorted(p.name for p in CORPUS.glob("*.yaml"))
    assert files == sorted(EXPECTED)
    assert len(files) >= 40


def assert_clean(run, path: str, code: int, line: int, fragment: str) -> None:
    """Exit `code`; a finding at `path:line:` holding `fragment`; no traceback; and an
    unreadable file gets exactly one error line."""
    assert "Traceback" not in run.out + run.err and "internal error" not in run.err, run.err
    assert run.code == code, run.out + run.err
    about = [entry for entry in run.out.splitlines() if entry.startswith(f"{path}:") and " failing" not in entry]
    assert any(entry.startswith(f"{path}:{line}:") and fragment in entry for entry in about), run.out
    if code == 2:
        assert len(about) == 1, run.out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_manifest_gives_the_expected_finding(hwlint, name):
    code, line, fragment = EXPECTED[name]
    path = CORPUS / name
    assert_clean(hwlint("check", path), str(path), code, line, fragment)


MADE = {
    "missing.yaml": (2, 1, "no such file"),
    "fifty-megabytes.yaml": (2, 1, "file is 50,000,030 bytes; manifests are limited to 5,000,000 bytes"),
    "two-million-items.yaml": (2, 2, "the document has more than 500,000 values"),
    "long-name.yaml": (1, 2, "name has 4,000,000 characters; it must have at most 500"),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """Broken inputs too big to commit, or that are not files at all (see MADE). (A folder
    given is searched, as ruff does: one without manifests adds nothing, test_conventions.)"""
    folder = tmp_path_factory.mktemp("made")
    with open(folder / "fifty-megabytes.yaml", "wb") as handle:
        handle.write(b"manifest_version: 1\nname: big\n" + b"# padding\n" * 5_000_000)
    (folder / "two-million-items.yaml").write_text("manifest_version: 1\nplan: [" + "1," * 2_000_000 + "1]\n")
    (folder / "long-name.yaml").write_text("manifest_version: 1\nname: " + "x" * 4_000_000 + "\n")
    return folder


def _limit_memory() -> None:
    one_gigabyte = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (one_gigabyte, one_gigabyte))


def test_all_broken_inputs_in_one_process_within_time_and_memory(made):
    """The whole corpus plus the generated inputs, in one real process limited to 1 GB of
    address space and one minute: each file still gets its own finding."""
    paths = [str(CORPUS / name) for name in sorted(EXPECTED)] + [str(made / name) for name in sorted(MADE)]
    proc = subprocess.run(
        [sys.executable, "-m", "linter.cli", "check", *paths],
        capture_output=True, text=True, cwd=ROOT, timeout=60, preexec_fn=_limit_memory,
        env={"HWLINT_TODAY": TODAY, "PATH": "/usr/bin:/bin", "HWLINT_CACHE": "off"},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stderr == "", proc.stderr
    for path, (_, line, fragment) in zip(paths, [*(EXPECTED[n] for n in sorted(EXPECTED)), *(MADE[n] for n in sorted(MADE))]):
        assert any(entry.startswith(f"{path}:{line}:") and fragment in entry for entry in proc.stdout.splitlines()), path


@pytest.mark.parametrize("name", sorted(MADE))
def test_generated_broken_input_alone_has_its_own_exit_code(hwlint, made, name):
    code, line, fragment = MADE[name]
    path = made / name
    assert_clean(hwlint("check", path), str(path), code, line, fragment)


# --- YAML bombs: bounded in every kind of file, and never the end of a batch ---------------

BOMBS = {  # corpus file -> (line, words) of the one error it must end in
    "alias-chain.yaml": (54, "nesting is deeper than 50 levels here, counting the 49 levels the alias *x49 brings in"),
    "merge-chain.yaml": (638, "aliases in this file bring in more than 400,544 values"),
    "alias-bomb.yaml": (8, "aliases in this file bring in more than 10,000 values"),
}
CPU_SECONDS, MEGABYTES = 2.0, 200


def measured(*args: str, cwd: Path = ROOT) -> tuple[int, str, str, float, float]:
    """(exit code, stdout, stderr, CPU seconds, peak megabytes) of one hwlint process. CPU
    time, not wall time, so a busy machine does not make the bound fail; RLIMIT_CPU ends a
    runaway run."""
    import os
    import tempfile

    # hwlint is the child of a small starter Python, which sets the limit and reports the
    # child's usage: a child of the test process itself (forked or vforked) would count the
    # test process's pages (hundreds of MB late in a run) in its peak memory, across its exec.
    starter = ("import os, resource, subprocess, sys; "
               "child = subprocess.Popen([sys.executable, '-m', 'linter.cli', *sys.argv[2:]], "
               "preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (30, 30))); "
               "_, status, used = os.wait4(child.pid, 0); "
               "open(sys.argv[1], 'w').write(f'{used.ru_utime + used.ru_stime} {used.ru_maxrss}'); "
               "sys.exit(os.waitstatus_to_exitcode(status))")
    env = {"HWLINT_TODAY": TODAY, "PATH": "/usr/bin:/bin", "HWLINT_CACHE": "off"}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as where:
        usage = os.path.join(where, "usage")
        code = subprocess.call([sys.executable, "-c", starter, usage, *args], stdout=out, stderr=err, cwd=cwd, env=env)
        seconds, peak_kb = map(float, open(usage).read().split())
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(), err.read().decode(), seconds, peak_kb / 1024


def place(kind: str, bomb: Path, folder: Path) -> tuple[list[str], Path]:
    """The command line that reads `bomb` as a `kind` of file, and where the file is."""
    manifest = ROOT / "examples" / "single-gpu-experiment.hw.yaml"
    if kind == "manifest":
        return ["check", str(bomb)], bomb
    if kind == "config":
        (folder / ".hwlint.yaml").write_bytes(bomb.read_bytes())
        target = folder / "m.hw.yaml"
        target.write_bytes(manifest.read_bytes())
        return ["check", str(target)], folder / ".hwlint.yaml"
    (folder / kind).mkdir()
    (folder / kind / "team.yaml").write_bytes(bomb.read_bytes())
    return ["check", f"--{kind}", str(folder / kind), str(manifest)], folder / kind / "team.yaml"


@pytest.mark.parametrize("kind", ["manifest", "config", "rules", "catalog"])
@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_yaml_bomb_in_any_file_ends_in_one_error_within_two_cpu_seconds_and_200_mb(tmp_path, name, kind):
    args, where = place(kind, CORPUS / name, tmp_path)
    code, out, err, seconds, megabytes = measured(*args)
    line, words = BOMBS[name]
    assert code == 2 and "Traceback" not in out + err and "internal error" not in out + err, out + err
    # a manifest is named as given; a config as reports name it, from the run's folder (ROOT)
    named = (str(where), os.path.relpath(where, ROOT))
    assert any(f"{n}:{line}:" in out + err for n in named) and words in out + err, out + err
    assert seconds < CPU_SECONDS and megabytes < MEGABYTES, f"{seconds:.2f} s of CPU, {megabytes:.0f} MB"


def test_bombs_in_a_batch_do_not_stop_the_other_files_being_reviewed_and_reported(tmp_path):
    """As the Action runs it: several manifests, every report at once. Each bomb gets its own
    finding in each report, and the good manifests their reviews."""
    good = [ROOT / "examples" / "single-gpu-experiment.hw.yaml", ROOT / "examples" / "multi-node-pretrain.hw.yaml"]
    files = [str(good[0]), *(str(CORPUS / name) for name in sorted(BOMBS)), str(good[1])]
    reports = {fmt: tmp_path / f"report.{fmt}" for fmt in ("json", "sarif", "comment")}
    code, out, err, _, _ = measured("check", *files, *(f"--format={fmt}:{path}" for fmt, path in reports.items()),
                                    "--format", "text")
    assert code == 2 and "Traceback" not in out + err and err == "", err
    written = {fmt: path.read_text() for fmt, path in reports.items()}
    import json

    by_file = {entry["file"]: entry for entry in json.loads(written["json"])["manifests"]}
    sarif = json.loads(written["sarif"])["runs"][0]
    located = {loc["physicalLocation"]["artifactLocation"]["uri"] for res in sarif["results"] for loc in res["locations"]}
    for name, (line, words) in BOMBS.items():
        path = str(CORPUS / name)
        assert f"{path}:{line}:" in out and words in out
        assert by_file[path]["unreadable"] and words in by_file[path]["results"][0]["message"]
        assert any(uri.endswith(f"bad_inputs/{name}") for uri in located), located
        assert name in written["comment"]
    for path in map(str, good):
        assert not by_file[path]["unreadable"] and by_file[path]["counts"]["pass"] > 10, by_file[path]["counts"]
        assert Path(path).name in written["comment"]
