"""Sign-offs that are never lost and never touch another byte: concurrent runs under a lock,
line counting by the file's own line breaks, every shape `check` accepts, no temporary file
left behind, and the hwlint build bound into the record."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import EXAMPLES, ROOT, TODAY, hostile_manifest, hwlint_process
from test_signoff import TRICKY, inserted_only, verify_lines

GOOD = EXAMPLES / "multi-node-pretrain.hw.yaml"
ROLES = ("technical lead", "facilities", "finance")


def _popen(*args: str) -> subprocess.Popen:
    env = {**os.environ, "HWLINT_TODAY": TODAY}
    return subprocess.Popen([sys.executable, "-m", "linter.cli", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_concurrent_signoffs_lose_no_record(tmp_path):
    """Three sign-offs started together on one file, 50 times: every record survives."""
    lost = []
    for trial in range(50):
        path = tmp_path / f"t{trial}.hw.yaml"
        path.write_bytes(GOOD.read_bytes())
        runs = [_popen("signoff", path, "--role", role, "--name", f"P{trial}") for role in ROLES]
        codes = [run.wait(timeout=120) for run in runs]
        assert codes == [0, 0, 0], [run.stderr.read() for run in runs]
        text = path.read_text()
        missing = [role for role in ROLES if f"role: {role}\n" not in text]
        if missing:
            lost.append((trial, missing))
    assert lost == []


SEPARATORS = ["\u2028", "\u2029", "\u0085"]


@pytest.mark.parametrize("sep", SEPARATORS, ids=["LS", "PS", "NEL"])
def test_unicode_line_separators_inside_values_shift_nothing(hwlint, tmp_path, sep):
    path = tmp_path / "m.hw.yaml"
    text = TRICKY.replace("name:   'support-bot 13B fine-tune'",
                          f'name:   "support{sep}bot{sep}{sep} 13B fine-tune"')
    text += "\n\n# a comment before the section\n\nsignoffs: []\n\n# after the section\noperations: {monitoring: true}\n"
    original = text.encode()
    path.write_bytes(original)
    for role in ROLES:
        assert hwlint("signoff", path, "--role", role, "--name", "Ada").code == 0
    after = path.read_bytes()
    head, tail = original.split(b"signoffs: []\n")
    assert after.startswith(head) and after.endswith(tail)
    assert b"# a comment before the section\n\n" in after and b"# after the section\n" in after


def test_tabs_that_check_accepts_are_kept(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    text = TRICKY.replace("owner: applied-ml@example.com", "owner:\tapplied-ml@example.com\t# tab-separated")
    text = text.replace("    micro_batch_size: 1", "    micro_batch_size:\t1")
    original = (text + "\n").encode()
    path.write_bytes(original)
    assert hwlint("check", path).code in (0, 1)
    run = hwlint("signoff", path, "--role", "finance", "--name", "Ada")
    assert run.code == 0 and "ScannerError" not in run.err, run.err
    assert path.read_bytes().startswith(original)


SHAPES = {
    "document-markers": "%YAML 1.2\n---\n{body}...\n# after the end marker\n",
    "bom-crlf": "\ufeff{body}",
    "cr-only": "{body}",
    "comment-only-tail": "{body}\n# the end\n\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_byte_outside_the_section_survives(hwlint, tmp_path, shape):
    body = TRICKY + "\n"
    if shape == "bom-crlf":
        body = body.replace("\n", "\r\n")
    if shape == "cr-only":
        body = body.replace("\n", "\r")
    path = tmp_path / "m.hw.yaml"
    original = SHAPES[shape].format(body=body)
    path.write_bytes(original.encode())
    assert hwlint("check", path).code in (0, 1)
    for role in ROLES:
        run = hwlint("signoff", path, "--role", role, "--name", "Ada")
        assert run.code == 0, run.err
    after = path.read_bytes().decode()
    if shape == "document-markers":
        head, end = original.split("...\n")
        assert after.startswith(head) and after.endswith("...\n" + end)
    else:
        newline = "\r" if shape == "cr-only" else "\r\n" if shape == "bom-crlf" else "\n"
        assert all(line.endswith(newline) for line in after.splitlines(True) if "\u2028" not in line)
        inserted_only(original.encode(), after.encode())


def test_no_temporary_file_is_left_on_a_signal(tmp_path):
    """SIGTERM while writing: the original stays, and no .NAME.hwlint-*.tmp is left."""
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    before = path.read_bytes()
    hook = tmp_path / "slow_fsync.py"
    hook.write_text(
        "import os, time\n"
        "real = os.fsync\n"
        "def slow(fd):\n"
        "    open(os.environ['HWLINT_TEST_MARK'], 'w').close()\n"
        "    time.sleep(30)\n"
        "    real(fd)\n"
        "os.fsync = slow\n"
        "from linter.cli import main\n"
        "raise SystemExit(main())\n")
    mark = tmp_path / "in-fsync"
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_TEST_MARK": str(mark), "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, str(hook), "signoff", str(path), "--role", "finance", "--name", "Ada"],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(600):  # wait until it is inside the write (not a timing assertion: it waits for a file)
        if mark.exists() or run.poll() is not None:
            break
        time.sleep(0.05)
    assert mark.exists(), run.stderr.read() if run.poll() is not None else "never reached fsync"
    run.send_signal(signal.SIGTERM)
    run.wait(timeout=60)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_leftover_temporary_file_is_removed_by_the_next_signoff(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    leftover = tmp_path / ".m.hw.yaml.hwlint-abc123.tmp"  # what kill -9 inside the write leaves
    leftover.write_text("partial")
    unrelated = tmp_path / ".other.tmp"
    unrelated.write_text("not ours")
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    assert not leftover.exists() and unrelated.exists()


def test_a_different_hwlint_build_stales_the_signoff(tmp_path):
    """A copy of hwlint with one changed line of code: its verify calls every sign-off stale."""
    import shutil

    copy = tmp_path / "build"
    shutil.copytree(ROOT / "linter", copy / "linter", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("rules", "schemas", "templates", "catalog"):
        shutil.copytree(ROOT / folder, copy / folder)
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    for role in ROLES:
        assert hwlint_process("signoff", path, "--role", role, "--name", "Ada").code == 0
    same = subprocess.run([sys.executable, "-m", "linter.cli", "verify", str(path)], cwd=copy, capture_output=True,
                          text=True, env={**os.environ, "HWLINT_TODAY": TODAY, "PYTHONPATH": str(copy)})
    assert "hwlint changed since" not in same.stdout, same.stdout + same.stderr
    numbers = copy / "linter" / "numbers.py"
    numbers.write_text(numbers.read_text() + "\n# patched\n")
    patched = subprocess.run([sys.executable, "-m", "linter.cli", "verify", str(path)], cwd=copy, capture_output=True,
                             text=True, env={**os.environ, "HWLINT_TODAY": TODAY, "PYTHONPATH": str(copy)})
    assert patched.returncode == 1
    from types import SimpleNamespace

    states = verify_lines(SimpleNamespace(out=patched.stdout))
    assert all(s.startswith("stale: hwlint changed since (signed with hwlint ") for s in states.values()), states


def test_a_stale_signoff_lists_the_changed_fields(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    text = path.read_text()
    assert "it_capacity_kw: 500" in text
    path.write_text(text.replace("it_capacity_kw: 500", "it_capacity_kw: 520"))
    run = hwlint("verify", path)
    assert "  changed: facility.it_capacity_kw: 500 → 520" in run.out.splitlines()
    assert verify_lines(run)["finance"] == "stale: the manifest changed since (changed: facility)"


def test_a_forged_snapshot_is_not_believed(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    assert hwlint("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    from linter.signoff.records import snapshot

    forged = snapshot({"name": "something else"}).replace("\n", "\n      ")
    text = path.read_text()
    start = text.index("    snapshot: |\n") + len("    snapshot: |\n")
    end = text.index("\n", text.index("==", start)) + 1 if "==" in text[start:] else len(text)
    text = text[:start] + "      " + forged.rstrip(" ") + text[end:]
    path.write_text(text.replace("it_capacity_kw: 500", "it_capacity_kw: 520"))
    run = hwlint("verify", path)
    assert run.code == 1 and "stale: the manifest changed since" in run.out, run.out + run.err
    assert "changed: name" not in run.out


def test_names_with_line_separators_are_refused(hwlint, tmp_path):
    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    run = hwlint("signoff", path, "--role", "finance", "--name", "Ada\u2028Lovelace")
    assert run.code == 2 and "one line" in run.err and path.read_bytes() == GOOD.read_bytes()


@pytest.mark.slow
def test_a_signoff_waits_for_the_filelock_another_process_holds(tmp_path):
    """The lock is filelock's (flock on Linux and macOS, LockFileEx on Windows) on
    .NAME.hwlint-lock: a sign-off waits while another holder has it, then records, and
    leaves no lock file behind."""
    from filelock import FileLock

    path = tmp_path / "m.hw.yaml"
    path.write_bytes(GOOD.read_bytes())
    before = path.read_bytes()
    holder = FileLock(tmp_path / ".m.hw.yaml.hwlint-lock")
    holder.acquire()
    try:
        run = _popen("signoff", path, "--role", "finance", "--name", "Ada")
        time.sleep(5)  # a sign-off reaches its lock within a second or two
        assert run.poll() is None and path.read_bytes() == before  # waiting, nothing written
    finally:
        holder.release()
    assert run.wait(timeout=120) == 0, run.stderr.read()
    assert "role: finance\n" in path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.hw.yaml"]


@pytest.mark.slow
def test_a_signoff_that_would_make_the_manifest_too_big_to_read_is_refused(tmp_path):
    """Each record holds a compressed copy of the manifest: on a 2.8 MB manifest of racks
    with names that do not compress, the second would take the file past the 5,000,000
    bytes check, verify and signoff read. It is refused, saying so, and the file still reads."""
    path = hostile_manifest("signoff-past-the-read-limit", tmp_path)
    assert hwlint_process("signoff", path, "--role", "finance", "--name", "Ada").code == 0
    signed = path.read_bytes()
    assert len(signed) < 5_000_000
    run = hwlint_process("signoff", path, "--role", "facilities", "--name", "Grace")
    assert run.code == 2 and "Traceback" not in run.err
    assert re.search(r"^hwlint: with this sign-off the manifest would be [\d,]+ bytes, and hwlint reads manifests of at "
                     r"most 5,000,000 bytes: check, verify and signoff would refuse it\. Each sign-off holds a compressed "
                     r"copy of the manifest, here [\d,]+ bytes: .*; .*\.hw\.yaml is unchanged$", run.err, re.M), run.err
    assert path.read_bytes() == signed
    assert hwlint_process("check", "-q", path).code == 1  # still read and reviewed
