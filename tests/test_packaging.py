"""What a user installs: every command the README and --help name exists, and the sdist
carries everything the test suite reads (the suite's packaging-sensitive tests run from an
unpacked sdist here). The wheel itself is tested in test_wheel.py."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile

import pytest

from conftest import ROOT

COMMAND = re.compile(r"(?:^|[`$(]|\n\s*)hwlint ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)")


def named_commands(text: str) -> set[tuple[str, ...]]:
    """`hwlint WORD [WORD]` in code spans and code blocks: the command and maybe a subcommand."""
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    found = set()
    for span in spans:
        for line in span.splitlines():
            for match in re.finditer(r"(?:^|[\s(])hwlint ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", line):
                found.add(tuple(w for w in match.groups() if w))
    return found


def test_every_command_the_docs_and_help_name_exists(hwlint):
    texts = [(ROOT / "README.md").read_text(encoding="utf-8"), *(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")),
             (ROOT / "action.yml").read_text(encoding="utf-8"), (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")]
    top = hwlint("--help").out
    commands = re.findall(r"^  ([a-z][a-z-]*)\s", top.split("Commands:")[1], re.M)
    texts += [top] + [hwlint(c, "--help").out for c in commands]
    named = set().union(*(named_commands(t) for t in texts))
    assert ("check",) in {n[:1] for n in named} and ("rules", "test") in named
    for words in sorted(named):
        run = hwlint(*words, "--help")
        if run.code != 0 and len(words) == 2:  # the second word was an argument (`hwlint check FILE`)
            run = hwlint(words[0], "--help")
        assert run.code == 0, f"`hwlint {' '.join(words)}` is named in the docs but is not a command: {run.err}"


@pytest.mark.parametrize("command", ["check", "diff"])
def test_formats_offered_by_help_are_accepted(hwlint, command, tmp_path):
    from conftest import EXAMPLES

    listed = hwlint(command, "--help").out.replace("\n", " ")
    offered = re.search(r"--format(?:, --output-format)? FORMAT\[:PATH\]\s+(.+?) \(default text\)", listed)[1]
    names = re.split(r",\s*|\s+or\s+", re.sub(r"\s+", " ", offered).strip())
    assert "text" in names and "json" in names
    example = EXAMPLES / "single-node-finetune.hw.yaml"
    files = [example] if command == "check" else [example, example]
    for name in names:
        run = hwlint(command, *files, "--format", f"{name}:{tmp_path / name}")
        assert run.code in (0, 1), f"{command} offers --format {name} but refuses it: {run.err}"


def test_license_file_matches_pyproject():
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdist")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    archive = next(out.glob("hwlint-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(out / "unpacked", filter="data")
    return next((out / "unpacked").iterdir())


def tracked_files() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout (this test compares the sdist with git's file list)")
    return {p for p in listed.stdout.split("\0") if p and (ROOT / p).is_file()}


def test_sdist_carries_every_tracked_file_the_tests_may_read(sdist):
    shipped = {str(p.relative_to(sdist)) for p in sdist.rglob("*") if p.is_file()}
    assert "LICENSE" in shipped and "action.yml" in shipped and ".pre-commit-hooks.yaml" in shipped
    missing = sorted(tracked_files() - shipped)
    assert not missing, f"tracked files missing from the sdist: {missing}"


@pytest.mark.slow
def test_packaging_sensitive_tests_pass_from_the_sdist(sdist):
    # the tests that read files outside the package: the action, the hooks, the docs, the README
    chosen = ["tests/test_readme.py", "tests/test_rule_docs.py", "tests/test_layers.py", "tests/test_schemas.py",
              "tests/test_action.py", "tests/test_precommit.py", "tests/test_cli.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *chosen],
                         cwd=sdist, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
