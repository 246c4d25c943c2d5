"""Every broken manifest ends in a clear finding or a one-line error, in bounded time and
memory, and never in a traceback.

The corpus is tests/bad_inputs/*.yaml; tests/bad_inputs/EXPECTED says, for each file, the
exit code and the line and words hwlint must report. Inputs too big to commit (a 50 MB
file, two million list items) and paths that are not files are made here.
"""

from __future__ import annotations

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
