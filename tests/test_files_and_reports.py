"""What hwlint reads and writes: only regular files inside the folder given, never a report
over an input or through a link, never a hang on a pipe, and never the content of a file that
is not a manifest in a finding.

Each case is a reproducer through the command line; those that are plain files live in
tests/bad_inputs/ and tests/hostile_rule_folders/, the rest (links, pipes, huge or sparse
files) are made here.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES, ROOT, TODAY, hwlint_process, twice_over

MANIFEST = EXAMPLES / "multi-node-pretrain.hw.yaml"
CORPUS = ROOT / "tests" / "bad_inputs"
SECRET = "ghp_EXAMPLEtoken000000000000000000000000"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git work tree (a `.git` folder is what marks it) holding one manifest."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    shutil.copy(MANIFEST, root / "m.hw.yaml")
    return root


def _limited(gigabytes: float = 2.0):
    def limit() -> None:
        size = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def run_limited(*args, cwd: Path | None = None, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """hwlint in a subprocess under a 2 GB memory limit and a timeout: a hang or a runaway
    allocation fails the test instead of the machine."""
    return subprocess.run(
        [sys.executable, "-m", "linter.cli", *map(str, args)], capture_output=True, text=True,
        cwd=cwd or ROOT, timeout=timeout, preexec_fn=_limited(),
        env={**os.environ, "HWLINT_TODAY": TODAY, **(env or {})},
    )


# --- reports ----------------------------------------------------------------------------


@pytest.mark.parametrize("option", [("--output", "{m}"), ("--format", "sarif:{m}"), ("--format", "text"),
                                    ("--format", "markdown:{m}")])
def test_a_report_never_overwrites_the_manifest_it_reviews(hwlint, repo, option):
    manifest = repo / "m.hw.yaml"
    before = manifest.read_bytes()
    args = [a.format(m=manifest) for a in option]
    if option == ("--format", "text"):
        args += ["--output", str(manifest)]
    run = hwlint("check", manifest, *args)
    assert run.code == 2
    assert "is an input" in run.err and "never writes over a file it reads" in run.err
    assert manifest.read_bytes() == before


def test_a_report_never_overwrites_a_rule_file(hwlint, repo, tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    shutil.copy(ROOT / "rules" / "ops.yaml", rules / "team.yaml")
    (rules / "team.yaml").write_text("rules: []\n")
    run = hwlint("check", repo / "m.hw.yaml", "--rules", rules, "--format", f"json:{rules / 'team.yaml'}")
    assert run.code == 2 and "is an input" in run.err
    assert (rules / "team.yaml").read_text() == "rules: []\n"


def test_the_checklist_never_overwrites_its_manifest(hwlint, repo):
    manifest = repo / "m.hw.yaml"
    before = manifest.read_bytes()
    run = hwlint("checklist", manifest, "--output", manifest)
    assert run.code == 2 and "is an input" in run.err
    assert manifest.read_bytes() == before


def test_a_report_path_that_is_a_link_is_refused_and_its_target_untouched(hwlint, repo, tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    link = repo / "review.md"
    link.symlink_to(target)
    for args in (["--format", f"markdown:{link}"], ["--output", str(link)]):
        run = hwlint("check", repo / "m.hw.yaml", *args)
        assert run.code == 2 and "is a symbolic link" in run.err, run.err
    assert target.read_text() == "keep me\n"


WRITE_TARGETS = ROOT / "tests" / "write_targets"
TARGET_CASES = yaml.safe_load((WRITE_TARGETS / "cases.yaml").read_text(encoding="utf-8"))["cases"]


@pytest.fixture
def target_repo(tmp_path, monkeypatch) -> Path:
    """A copy of tests/write_targets/repo with a manifest under each config, as the cwd."""
    root = tmp_path / "repo"
    shutil.copytree(WRITE_TARGETS / "repo", root)
    for folder in ("cluster", "toml"):
        shutil.copy(EXAMPLES / "single-gpu-experiment.hw.yaml", root / folder / "m.hw.yaml")
    monkeypatch.chdir(root)
    return root


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(TARGET_CASES))
def test_no_command_writes_over_what_the_run_reads_an_existing_file_or_a_signed_manifest(hwlint, target_repo, name):
    case = TARGET_CASES[name]
    before = files_of(target_repo)
    run = hwlint(*case["run"])
    assert run.code == 2 and case["says"] in run.err and "Traceback" not in run.err, run.err
    assert files_of(target_repo) == before


def test_force_replaces_a_file_that_is_no_input_and_holds_no_sign_off(hwlint, target_repo):
    run = hwlint("check", "cluster/m.hw.yaml", "--format", "markdown:old-review.md", "--force")
    assert run.code == 0 and (target_repo / "old-review.md").read_text().startswith("# hwlint review:")
    run = hwlint("checklist", "cluster/m.hw.yaml", "--output", "old-review.md", "--force")
    assert run.code == 0 and (target_repo / "old-review.md").read_text().startswith("# Sign-off checklist:")
    run = hwlint("init", "cluster/new.hw.yaml")
    assert run.code == 0
    assert hwlint("init", "cluster/new.hw.yaml").code == 2
    assert hwlint("init", "cluster/new.hw.yaml", "--force").code == 0


def test_two_reports_to_one_file_are_a_usage_error(hwlint, repo):
    out = repo / "report"
    for args in (["--format", f"json:{out}", "--format", f"sarif:{out}"],
                 ["--format", "text", "--output", str(out), "--format", f"markdown:{out}"],
                 ["--format", f"json:{out}", "--format", f"sarif:{repo / '.' / 'report'}"]):
        run = hwlint("check", repo / "m.hw.yaml", *args)
        assert run.code == 2 and "two reports would be written to" in run.err, args
    assert not out.exists()


# --- manifests: links, pipes, devices, files that are not manifests ---------------------


def test_a_link_to_a_file_outside_the_repository_is_refused_without_quoting_it(hwlint, repo, tmp_path):
    secret = tmp_path / "home" / ".git-credentials"
    secret.parent.mkdir()
    secret.write_text(f"https://deploy:{SECRET}@github.com\n")
    (repo / "leak.hw.yaml").symlink_to(secret)
    for fmt in ("text", "markdown", "json", "sarif", "github"):
        run = hwlint("check", repo / "leak.hw.yaml", "--format", fmt)
        assert run.code == 2, run.out + run.err
        assert SECRET not in run.out + run.err and "deploy" not in run.out + run.err
    run = hwlint("check", repo / "leak.hw.yaml")
    assert "is a symbolic link to a file outside" in run.out


def test_a_link_inside_the_repository_is_followed(hwlint, repo):
    (repo / "clusters").mkdir()
    (repo / "clusters" / "alias.hw.yaml").symlink_to(repo / "m.hw.yaml")
    run = hwlint("check", repo / "clusters" / "alias.hw.yaml")
    assert run.code == 0, run.out


def test_a_named_pipe_is_refused_without_opening_it(repo):
    fifo = repo / "pipe.hw.yaml"
    os.mkfifo(fifo)
    run = run_limited("check", fifo, timeout=30)  # on a blocking open this times out
    assert run.returncode == 2
    assert "is a named pipe, not a regular file" in run.stdout


def test_a_device_is_refused(hwlint):
    run = hwlint("check", "/dev/zero")
    assert run.code == 2 and "/dev/zero is a character device, not a regular file" in run.out


@pytest.mark.parametrize("name", ["credentials-file.yaml", "mapping-without-manifest-version.yaml"])
def test_a_file_that_is_not_a_manifest_is_named_by_its_kind_only(hwlint, name):
    text = "".join(line for line in (CORPUS / name).open() if not line.startswith("#"))
    words = {w for w in text.replace(":", " ").replace("@", " ").split() if len(w) > 8}
    for fmt in ("text", "markdown", "json", "sarif", "github"):
        run = hwlint("check", CORPUS / name, "--format", fmt)
        assert run.code == 1
        # words the report holds anyway (the SARIF links to the rule reference on github.com) are no leak
        always = hwlint("check", EXAMPLES / "single-node-finetune.hw.yaml", "--format", fmt).out
        leaked = [w for w in words if w in run.out + run.err and w not in always]
        assert not leaked, (fmt, leaked)


def test_one_unreadable_file_in_a_batch_is_a_finding_and_the_rest_are_reviewed(hwlint, repo, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.hw.yaml").write_text("manifest_version: 1\n")
    locked.chmod(0)
    try:
        if os.access(locked / "x.hw.yaml", os.R_OK):
            pytest.skip("running as a user who reads every file anyway")
        run = hwlint("check", locked / "x.hw.yaml", repo / "m.hw.yaml")
    finally:
        locked.chmod(0o755)
    assert "internal error" not in run.err
    assert f"{locked / 'x.hw.yaml'}:1:1: IO error cannot read" in run.out, run.out + run.err
    assert f"{repo / 'm.hw.yaml'}: 0 failing" in run.out


def test_a_file_name_too_long_to_open_is_a_finding_and_the_rest_are_reviewed(hwlint, repo):
    long_name = repo / ("a" * 300 + ".hw.yaml")
    run = hwlint("check", long_name, repo / "m.hw.yaml")
    assert "internal error" not in run.err, run.err
    assert f"{long_name}:1:1: IO error cannot read" in run.out and "File name too long" in run.out
    assert f"{repo / 'm.hw.yaml'}: 0 failing" in run.out
    assert run.code == 2


def test_a_hundred_thousand_misspelt_keys_give_a_bounded_report(hwlint, tmp_path):
    path = tmp_path / "typos.hw.yaml"
    path.write_text(MANIFEST.read_text() + "".join(f"nmae{i}: x\n" for i in range(100_000)))
    run = hwlint("check", path)
    assert run.code == 1
    lines = run.out.splitlines()
    assert len(lines) < 30, len(lines)
    assert "the top level has 99,980 more unknown keys" in run.out


def test_ten_thousand_pools_and_five_thousand_racks_are_within_the_value_limit(hwlint, tmp_path):
    pools = "".join(f"  - {{name: p{i}, role: compute, count: 1, gpu: {{model: H100-SXM5-80GB, count: 8}}, "
                    f"host_ram_gb: 2048}}\n" for i in range(10_000))
    racks = "".join(f"    - {{name: r{i}, count: 1, contents: [{{pool: p{2 * i}, nodes: 1}}, {{pool: p{2 * i + 1}, nodes: 1}}], "
                    f"power_budget_kw: 40, cooling: air, cooling_capacity_kw: 40, "
                    f"circuits: {{count: 2, voltage_v: 415, phases: 3, breaker_a: 32, ab_redundant: true}}}}\n"
                    for i in range(5_000))
    path = tmp_path / "big.hw.yaml"
    path.write_text("manifest_version: 1\nname: big\nplan: {goal: pretrain}\nnode_pools:\n" + pools
                    + "facility:\n  it_capacity_kw: 200000\n  racks:\n" + racks)
    run = hwlint("check", path, "--select", "PWR")
    assert "values" not in run.out and "refusing" not in run.out, run.out[:500]
    assert run.code in (0, 1), run.out[-2000:] + run.err


# --- rule folders -----------------------------------------------------------------------


def _rule_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "team-rules"
    folder.mkdir()
    (folder / "team.yaml").write_text((ROOT / "tests" / "hostile_rule_folders" / "plain" / "team.yaml").read_text())
    return folder


@pytest.mark.parametrize("name", ["policy.yaml", "tiers.yaml", "references.yaml"])
@pytest.mark.parametrize("command", [["check", "--format", "json"], ["check", "--format", "sarif"], ["checklist"], ["verify"]])
def test_a_rule_folder_file_linked_to_dev_zero_is_never_read(tmp_path, name, command):
    folder = _rule_folder(tmp_path)
    (folder / name).symlink_to("/dev/zero")
    run = run_limited(command[0], MANIFEST, *command[1:], "--rules", folder)
    assert "MemoryError" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert run.returncode in (0, 1), run.stderr


def test_the_cache_key_does_not_read_files_the_loader_does_not_read(tmp_path):
    folder = _rule_folder(tmp_path)
    with open(folder / "huge.bin", "wb") as handle:  # sparse: no disk used, 3 GB to read
        handle.truncate(3 * 10**9)
    run = run_limited("check", MANIFEST, "--rules", folder)
    assert run.returncode == 0, run.stderr


def test_a_rule_file_linked_outside_its_folder_is_refused(hwlint, tmp_path):
    folder = _rule_folder(tmp_path)
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text((folder / "team.yaml").read_text())
    (folder / "team.yaml").unlink()
    (folder / "team.yaml").symlink_to(outside)
    run = hwlint("check", MANIFEST, "--rules", folder)
    assert run.code == 2
    assert "is a symbolic link to a file outside" in run.err


def test_a_large_rule_file_is_refused_before_it_is_parsed(tmp_path):
    folder = _rule_folder(tmp_path)
    (folder / "big.yaml").write_text("rules:\n" + "# padding\n" * 400_000)
    run = run_limited("check", MANIFEST, "--rules", folder)
    assert run.returncode == 2
    assert "rule files are limited to 500,000 bytes" in run.stderr


def test_rules_test_refuses_a_base_outside_the_folder(tmp_path):
    source = ROOT / "tests" / "hostile_rule_folders" / "base-outside"
    folder = tmp_path / "a" / "b" / "rules"
    shutil.copytree(source, folder)
    (tmp_path / "secret.env").write_text("manifest_version: 1\nname: TOKEN-s3cr3t-value\n")
    run = hwlint_process("rules", "test", folder)
    assert run.code == 1
    assert "is outside the rule folder" in run.out
    assert "s3cr3t" not in run.out + run.err


class _EndlessInput:
    """Standard input that never ends (`yes | hwlint check -`); reading far past the limit
    fails the test instead of hanging it."""

    def __init__(self):
        self.given = 0
        self.buffer = self

    def read(self, size: int = -1) -> bytes:
        if size < 0 or self.given + size > 50_000_000:
            raise AssertionError(f"read {size} bytes after {self.given:,}: standard input is read without a limit")
        self.given += size
        return b"a" * size


def test_standard_input_has_the_file_size_limit(hwlint, monkeypatch, tmp_path):
    from linter.manifest.loader import MAX_BYTES

    endless = _EndlessInput()
    monkeypatch.setattr(sys, "stdin", endless)
    run = hwlint("check", "-", "--stdin-filename", "piped.hw.yaml")
    assert run.code == 2 and "Traceback" not in run.err
    assert f"piped.hw.yaml:1:1: IO error standard input is more than {MAX_BYTES:,} bytes; manifests are limited to {MAX_BYTES:,} bytes" in run.out
    assert endless.given == MAX_BYTES + 1  # one byte over the limit is read, nothing more
    big = tmp_path / "big.hw.yaml"
    big.write_bytes(b"a" * (MAX_BYTES + 1))
    on_disk = hwlint("check", big)
    assert on_disk.code == 2 and f"manifests are limited to {MAX_BYTES:,} bytes" in on_disk.out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_standard_output_that_cannot_be_written_ends_in_words(fmt, tmp_path):
    """A full disk behind standard output (/dev/full) is the user's to fix: one line that
    says so and what to do, exit 2; no internal error, no exception printed at exit. Twice
    the examples make the JSON report spill to its temporary file and come back as bytes."""
    files = twice_over(tmp_path)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "linter.cli", "check", "--format", fmt, *files], cwd=ROOT,
                              env={**os.environ, "HWLINT_TODAY": TODAY}, stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        "hwlint: cannot write the report to standard output: No space left on device; "
        "send it to a file with --output or FORMAT:PATH"], proc.stderr


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif", "github", "comment"])
def test_no_report_shows_a_memory_address(hwlint, fmt):
    run = hwlint("check", "--rules", ROOT / "tests" / "hostile_rule_folders" / "object-addresses", "--format", fmt, MANIFEST)
    assert run.code == 0 and "OPS990" in run.out, run.err
    assert "safe" in run.out and not re.search(r" at 0x[0-9a-f]+", run.out + run.err), \
        re.findall(r".{30} at 0x[0-9a-f]+.{5}", run.out)


def test_no_output_shows_an_absolute_path(hwlint, target_repo):
    """A config found above the manifest, the folders it names, the manifest itself: every
    report names them as the user would, relative to the working folder; none shows the
    machine's layout. Also from a folder below the config, and for a broken config."""
    outputs = [hwlint("check", "-v", "cluster/m.hw.yaml", "--format", fmt) for fmt in
               ("text", "markdown", "json", "sarif", "github", "comment")]
    outputs += [hwlint("checklist", "cluster/m.hw.yaml"), hwlint("verify", "cluster/m.hw.yaml"),
                hwlint("catalog", "list")]
    assert "| Config | config .hwlint.yaml (sha256:" in outputs[1].out
    os.chdir(target_repo / "cluster")
    outputs.append(hwlint("check", "--format", "markdown", "m.hw.yaml"))
    assert "| Config | config ../.hwlint.yaml (sha256:" in outputs[-1].out
    (target_repo / ".hwlint.yaml").write_text("rules: [team-rules]\nfail_on: sometimes\n")
    outputs.append(hwlint("check", "m.hw.yaml"))
    assert outputs[-1].code == 2 and outputs[-1].err.startswith("hwlint: config error: ../.hwlint.yaml:2:"), outputs[-1].err
    for run in outputs:
        assert str(target_repo) not in run.out + run.err and "Traceback" not in run.err, run.out + run.err
