"""Time hwlint against its peers on this machine, in one run.

    python bench/run.py                # all measurements, 11 repetitions, medians
    python bench/run.py --install      # first pip-install the peers (yamllint, check-jsonschema)
    python bench/run.py --reps 5 --skip-growth --imports

Every figure is the median wall-clock time of a fresh process (the min is shown too), so
it includes interpreter start-up and imports, as a pre-commit hook or a CI step sees it.

1. One typical manifest (examples/multi-node-pretrain.hw.yaml): `python -c pass` (the
   floor), `yamllint FILE`, `check-jsonschema --schemafile schemas/manifest.schema.json
   FILE`, and `hwlint check FILE` with a warm rule-pack cache (the usual case) and with
   the cache off (the first run after a rule file changes).
2. 1,000 and 10,000 manifests in one `hwlint check` call: every format in one process
   (HWLINT_JOBS=1), text and JSON with the default (workers while measured faster), text
   both ways beside a CPU hog (a busy process per CPU in a session of its own; one process
   twice, so the pairs show how far two runs of one command differ), with what the default
   run's own trace says its timing cost, and the floor: PyYAML's C loader reading the same
   files in one process.
   `check --base HEAD` of 300 committed manifests, none, a tenth or all edited since.
3. One manifest with 10, 1,000 and 10,000 node pools: the time per extra pool should not
   grow with the pool count (linear overall).
4. With --imports: the modules that cost most to import (`python -X importtime`).
5. With --team-rules: a cold build of a team's rule folder (`check --rules DIR FILE`, a fresh
   cache dir) for one team rule and for a large folder (the built-in rules as a team's own,
   so that none is in the built-in table), beside an empty team folder and yamllint.
6. With --instructions: also the instructions each run of 1, 5 (and the config chains)
   executes (valgrind), which the load does not change.

The peers come from the `bench` extra (`pip install -e '.[bench]'`) or --install; a
peer that is missing is skipped with a note. Nothing here needs jsonschema's format
extras.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TYPICAL = ROOT / "examples" / "multi-node-pretrain.hw.yaml"
SCHEMA = ROOT / "schemas" / "manifest.schema.json"
BIN = Path(sys.executable).parent
PEERS = {"yamllint": "yamllint", "check-jsonschema": "check-jsonschema"}


def tool(name: str) -> str | None:
    here = BIN / name
    return str(here) if here.exists() else shutil.which(name)


CPU: dict[str, list[float]] = {}  # label -> CPU seconds (user + system) of each timed run
FRESH = "fresh"  # env value: a new, empty HWLINT_CACHE_DIR for every run
# The benchmark's own pack cache: other checkouts on the machine cannot evict its pack.
PRIVATE_CACHE = tempfile.mkdtemp(prefix="hwlint-bench-cache-")


def environment(env: dict | None) -> tuple[dict, str | None]:
    """The environment of a measured run (the benchmark's cache, a pinned date, then `env`),
    and the new cache dir made for it when `env` asks for a FRESH one (to be removed after)."""
    full_env = {**os.environ, "HWLINT_TODAY": "2026-11-30", "HWLINT_CACHE_DIR": PRIVATE_CACHE, **(env or {})}
    fresh = None
    if full_env.get("HWLINT_CACHE_DIR") == FRESH:
        fresh = full_env["HWLINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="hwlint-cache-")
    return full_env, fresh


def run_measured(command: list[str], env: dict | None = None, stdout: Any = subprocess.DEVNULL) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, the process and the children it waited
    for) and peak resident memory in KB of one run of `command`."""
    full_env, fresh = environment(env)
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=stdout, stderr=subprocess.DEVNULL, env=full_env, cwd=ROOT)
    _, _, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = 0
    if fresh:
        shutil.rmtree(fresh, ignore_errors=True)
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def once(command: list[str], env: dict | None = None, label: str = "") -> float:
    took, cpu, _ = run_measured(command, env)
    CPU.setdefault(label, []).append(cpu)
    return took


def instructions(command: list[str], env: dict | None = None) -> int:
    """Instructions one run of `command` executes (valgrind's callgrind, the whole process):
    a count the machine's load does not change."""
    full_env, fresh = environment({"PYTHONHASHSEED": "0", **(env or {})})
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                          capture_output=True, text=True, env=full_env, cwd=ROOT)
    if fresh:
        shutil.rmtree(fresh, ignore_errors=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if not found:
        raise RuntimeError(f"valgrind gave no count for {command}: {proc.stderr[-500:]}")
    return int(found.group(1))


def timed(command: list[str], reps: int, env: dict | None = None) -> tuple[float, float]:
    """Median and minimum wall time of `command`, after one untimed warm-up run."""
    return interleaved({"": (command, env)}, reps)[""]


def interleaved(commands: dict[str, tuple[list[str], dict | None]], reps: int) -> dict[str, tuple[float, float]]:
    """Median and minimum of each command, run in turn (round-robin) so that a busy spell
    on the machine slows all of them alike; one untimed warm-up round first."""
    runs: dict[str, list[float]] = {label: [] for label in commands}
    for i in range(reps + 1):
        for label, (command, env) in commands.items():
            took = once(command, env, label if i else "warm-up")
            if i:
                runs[label].append(took)
    return {label: (statistics.median(times), min(times)) for label, times in runs.items()}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        model = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text())
        cpu = model.group(1) if model else cpu
    except OSError:
        pass
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return (f"{dt.datetime.now().isoformat(timespec='minutes')}, {cpu}, {os.cpu_count()} CPUs, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}, load average at start {load}")


def one_manifest(reps: int, count: bool = False) -> None:
    """With `count`, also the instructions of one run of each (valgrind): the ratios the
    machine's load cannot move."""
    hwlint = tool("hwlint")
    rows = [("python -c pass (floor)", [sys.executable, "-c", "pass"], None)]
    if tool("yamllint"):
        rows.append(("yamllint FILE", [tool("yamllint"), str(TYPICAL)], None))
        rows.append(("yamllint -d relaxed FILE", [tool("yamllint"), "-d", "relaxed", str(TYPICAL)], None))
    if tool("check-jsonschema"):
        rows.append(("check-jsonschema --schemafile ... FILE", [tool("check-jsonschema"), "--schemafile", str(SCHEMA), str(TYPICAL)], None))
    rows.append(("hwlint check FILE (warm pack cache)", [hwlint, "check", str(TYPICAL)], None))
    rows.append(("hwlint check FILE (cache off)", [hwlint, "check", str(TYPICAL)], {"HWLINT_CACHE": "off"}))
    rows.append(("hwlint check FILE (fresh cache dir)", [hwlint, "check", str(TYPICAL)], {"HWLINT_CACHE_DIR": FRESH}))
    rows.append(("hwlint --help", [hwlint, "--help"], None))
    rows.append(("hwlint rules list", [hwlint, "rules", "list"], None))
    missing = [name for name in PEERS if not tool(name)]
    print(f"## One typical manifest ({TYPICAL.relative_to(ROOT)}, {reps} runs each)\n")
    if missing:
        print(f"(not installed, skipped: {', '.join(missing)}; `pip install -e '.[bench]'` or --install)\n")
    results = interleaved({label: (command, env) for label, command, env in rows}, reps)
    counted = {label: instructions(command, env) for label, command, env in rows} if count else {}
    warm = "hwlint check FILE (warm pack cache)"
    ours, ours_cpu = results[warm][0], statistics.median(CPU[warm])
    extra = " instructions | hwlint (warm) / this, instructions |" if counted else ""
    print("| command | median wall | min wall | median CPU | hwlint (warm) / this, wall | this / hwlint (warm), CPU |" + extra)
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if counted else ""))
    for label, (median, low) in results.items():
        cpu = statistics.median(CPU[label])
        more = f" {counted[label] / 1e6:,.0f} M | {counted[warm] / counted[label]:.2f}x |" if counted else ""
        print(f"| `{label}` | {ms(median)} | {ms(low)} | {ms(cpu)} | {ours / median:.2f}x | {cpu / ours_cpu:.2f}x |{more}")
    print()


TEAM_PLAIN = ROOT / "tests" / "hostile_rule_folders" / "plain"  # one well-behaved team rule


def write_team_folder(folder: Path) -> int:
    """The built-in rule files as one large team's own rule folder: ids renamed (GPU001 ->
    TGPU001), every expression in parentheses and every template after a comment, so that no
    source is in the built-in pack's table of compiled sources (rules/compiled.json) and each
    is parsed, checked and translated as a team's own rule is. Returns the number of sources."""
    import yaml

    keys = {"when": "expr", "require": "expr", "message": "tmpl", "fix": "tmpl", "at": "tmpl", "evidence": "tmpl"}
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for path in sorted((ROOT / "rules").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "rules" not in data:
            continue
        for rule in data["rules"]:
            rule["id"] = "T" + rule["id"]
            rule.pop("tests", None)  # cases name bases beside the built-in rules; a check does not read them
            for key, kind in keys.items():
                if isinstance(rule.get(key), str):
                    rule[key] = f"({rule[key]})" if kind == "expr" else "{# team #}" + rule[key]
                    count += 1
        (folder / path.name).write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return count


def team_rules(reps: int, count: bool = False) -> None:
    """A cold build of a team's rule folder: `check --rules DIR FILE` with a fresh cache dir
    (the first run after the folder changed), beside the same check with an empty team folder
    (the same command line, so click's import is in both) and yamllint, round-robin. The
    built-in sources come from their table; a team's are parsed, checked and translated.
    With `count`, also the instructions of one run of each (valgrind)."""
    hwlint = tool("hwlint")
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "team"
        sources = write_team_folder(large)
        empty = Path(tmp) / "empty"
        empty.mkdir()
        rows: dict[str, tuple[list[str], dict | None]] = {}
        if tool("yamllint"):
            rows["yamllint FILE"] = ([tool("yamllint"), str(TYPICAL)], None)
        for name, folder in (("EMPTY", empty), ("ONE", TEAM_PLAIN), ("LARGE", large)):
            rows[f"hwlint check --rules {name} FILE (fresh cache dir)"] = (
                [hwlint, "check", "--rules", str(folder), str(TYPICAL)], {"HWLINT_CACHE_DIR": FRESH})
        rows["hwlint check --rules LARGE FILE (warm pack cache)"] = ([hwlint, "check", "--rules", str(large), str(TYPICAL)], None)
        results = interleaved(rows, reps)
        counted = {label: instructions(command, env) for label, (command, env) in rows.items()} if count else {}
    print(f"## A team's rule folder, cold ({reps} runs each, round-robin)\n")
    print(f"EMPTY: a folder without rule files; ONE: {TEAM_PLAIN.relative_to(ROOT)} (1 rule, 3 sources); "
          f"LARGE: the built-in rule files as a team's own ({sources} sources, none in the built-in table).\n")
    peer = "yamllint FILE" if "yamllint FILE" in rows else None
    extra = " instructions | this / yamllint, instructions |" if counted else ""
    print("| command | median wall | min wall | median CPU | this / yamllint, wall | this / yamllint, CPU |" + extra)
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if counted else ""))

    def cpu(label: str) -> float:
        return statistics.median(CPU[label])

    for label, (median, low) in results.items():
        ratios = f"{median / results[peer][0]:.2f}x | {cpu(label) / cpu(peer):.2f}x" if peer else "- | -"
        if counted:
            ratios += f" | {counted[label] / 1e6:,.0f} M | " + (f"{counted[label] / counted[peer]:.2f}x" if peer else "-")
        print(f"| `{label}` | {ms(median)} | {ms(low)} | {ms(cpu(label))} | {ratios} |")
    base = "hwlint check --rules EMPTY FILE (fresh cache dir)"
    for name in ("ONE", "LARGE"):
        label = f"hwlint check --rules {name} FILE (fresh cache dir)"
        said = f"{ms(results[label][0] - results[base][0])} wall, {ms(cpu(label) - cpu(base))} CPU"
        if counted:
            said += f", {(counted[label] - counted[base]) / 1e6:,.0f} M instructions"
            if peer:
                said += f" ({(counted[label] - counted[base]) / counted[peer]:.2f}x yamllint's whole run)"
        print(f"\nBuilding the {name} team folder cold adds {said} to a cold check with an EMPTY one.", end="")
    print("\n")


def write_copies(folder: Path, count: int) -> list[Path]:
    text = TYPICAL.read_text(encoding="utf-8")
    paths = []
    for i in range(count):
        path = folder / f"cluster-{i:04d}.hw.yaml"
        path.write_text(text.replace("name: atlas-70b pretraining cluster", f"name: atlas-70b cluster {i}", 1), encoding="utf-8")
        paths.append(path)
    return paths


def file_digest(path: Path) -> tuple[int, str]:
    """(size, sha256) of a file, read in pieces."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while piece := handle.read(1 << 20):
            digest.update(piece)
            size += len(piece)
    return size, digest.hexdigest()


@contextlib.contextmanager
def cpu_hog(busy: int | None = None) -> Any:
    """`busy` processes (default: one per CPU) spinning in a session of their own, as another
    job on the machine would (Linux's autogroup scheduling shares the CPUs between sessions,
    so the run under test does not out-number them); ended when the block ends."""
    spin = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(spin, start_new_session=True) for _ in range(busy or os.cpu_count() or 1)]
    try:
        time.sleep(0.2)  # spinning before the run starts
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


BULK_RUNS = {  # label -> (hwlint check options, environment, with a CPU hog beside it)
    "text, one process (HWLINT_JOBS=1)": (["--format", "text"], {"HWLINT_JOBS": "1"}, False),
    "text, default": (["--format", "text"], {}, False),
    "json, one process": (["--format", "json"], {"HWLINT_JOBS": "1"}, False),
    "json, default": (["--format", "json"], {}, False),
    "sarif, one process": (["--format", "sarif"], {"HWLINT_JOBS": "1"}, False),
    "markdown, one process": (["--format", "markdown"], {"HWLINT_JOBS": "1"}, False),
    "comment, one process": (["--format", "comment"], {"HWLINT_JOBS": "1"}, False),
    "text, one process, CPU hog beside": (["--format", "text"], {"HWLINT_JOBS": "1"}, True),
    "text, default, CPU hog beside": (["--format", "text"], {}, True),
    # the same command as the first hog row: how far two runs differ with nothing changed
    "text, one process again, CPU hog beside": (["--format", "text"], {"HWLINT_JOBS": "1"}, True),
}
YAML_FLOOR = "PyYAML C loader, same files (floor)"
# The floor of reading the files: each loaded by PyYAML's C loader (libyaml) in one process.
LOAD_ALL = "import sys, yaml\nfor p in sys.argv[1:]:\n    with open(p, 'rb') as f: yaml.load(f, Loader=yaml.CSafeLoader)\n"


def timing_excess(trace: Path) -> float:
    """What a run with timed workers took beyond its files at one process's pace, as a share
    of the latter: both from the run's own trace (`HWLINT_BULK_TRACE`, linter/engine/bulk.py),
    so a load that drifts between two runs does not enter it. Negative: the workers gained."""
    took = files = here_took = here_files = 0.0
    for line in trace.read_text(encoding="utf-8").splitlines():
        for kind, count, seconds in json.loads(line)["phases"]:
            took, files = took + seconds, files + count
            if kind == "here":
                here_took, here_files = here_took + seconds, here_files + count
    one = here_took / here_files
    return took / (files * one) - 1


def bulk(count: int, reps: int, rows: tuple[str, ...] = ()) -> None:
    """`count` manifests in one call: one process (HWLINT_JOBS=1) and the default (workers
    while they are measured faster), every format, and text beside a CPU hog; the same files
    loaded by PyYAML's C loader as the floor. Reports of a format must be the same bytes.
    `rows`: only the runs whose label holds one of these (the floor always runs)."""
    hwlint = tool("hwlint")
    runs = {label: run for label, run in BULK_RUNS.items() if not rows or any(r in label for r in rows)}
    print(f"## {count:,} manifests in one call ({reps} runs each, round-robin)\n")
    print("| run | median wall | per manifest | median CPU | peak memory | output |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        paths = list(map(str, write_copies(Path(tmp), count)))
        figures: dict[str, list[tuple[float, float, int]]] = {label: [] for label in [*runs, YAML_FLOOR]}
        outputs: dict[str, tuple[int, str]] = {}  # (size, sha256): a report is never read into this process,
        # whose memory a child's peak would include (Linux counts the parent's pages at exec)
        loads: list[float] = []  # load average (1 minute) at each run's start
        excess: dict[str, list[float]] = {}  # label -> each timed run's time beyond one process's, by its trace
        for rep in range(reps):
            order = list(runs)
            hogged = [i for i, label in enumerate(order) if runs[label][2]]
            if rep % 2:  # the runs beside the hog the other way round: a drifting load favours none
                for at, label in zip(hogged, [order[i] for i in reversed(hogged)]):
                    order[at] = label
            for label in order:
                args, env, hog = runs[label]
                out, trace = Path(tmp) / "report.out", Path(tmp) / "bulk-trace.jsonl"
                traced = hog and "HWLINT_JOBS" not in env  # the timed workers beside the hog: their own account
                trace.unlink(missing_ok=True)
                with out.open("wb") as handle, cpu_hog() if hog else contextlib.nullcontext():
                    loads.append(os.getloadavg()[0])
                    figures[label].append(run_measured([hwlint, "check", *args, *paths],
                                                       {**env, "HWLINT_BULK_TRACE": str(trace)} if traced else env,
                                                       stdout=handle))
                outputs[label] = file_digest(out)
                if traced and trace.exists():
                    excess.setdefault(label, []).append(timing_excess(trace))
            loads.append(os.getloadavg()[0])
            figures[YAML_FLOOR].append(run_measured([sys.executable, "-c", LOAD_ALL, *paths]))
            outputs[YAML_FLOOR] = (0, "")
        for label, got in figures.items():
            wall = statistics.median(g[0] for g in got)
            cpu = statistics.median(g[1] for g in got)
            memory = max(g[2] for g in got)
            print(f"| {label} | {ms(wall)} | {ms(wall / count)} | {ms(cpu)} | {memory / 1024:,.0f} MB | "
                  f"{outputs[label][0]:,} bytes |")

        def wall(label: str) -> float:
            return statistics.median(g[0] for g in figures[label])

        def memory(label: str) -> int:
            return max(g[2] for g in figures[label])

        text = "text, one process (HWLINT_JOBS=1)"
        said = []
        if text in figures:
            said += [f"{name} / text, one process: {wall(label) / wall(text):.2f}x time, "
                     f"{memory(label) / memory(text):.2f}x peak memory"
                     for name, label in (("JSON", "json, one process"), ("SARIF", "sarif, one process"),
                                         ("Markdown", "markdown, one process"), ("comment", "comment, one process"))
                     if label in figures]
            said.append(f"text in one process / the PyYAML C loader: {wall(text) / wall(YAML_FLOOR):.2f}x time")
        if text in figures and "text, default" in figures:
            said.append(f"text, default / one process: {wall('text, default') / wall(text):.2f}x")
        if "json, default" in figures and "text, default" in figures:
            said.append(f"JSON / text with the default workers: {wall('json, default') / wall('text, default'):.2f}x")
        hog_one, hog_default = "text, one process, CPU hog beside", "text, default, CPU hog beside"
        for other, name in ((hog_default, "default"), ("text, one process again, CPU hog beside", "one process again")):
            if hog_one in figures and other in figures:
                paired = [b[0] / a[0] for a, b in zip(figures[hog_one], figures[other])]
                said.append(f"beside a CPU hog ({os.cpu_count()} spinning processes in a session of their own), {name} / "
                            f"one process: {wall(other) / wall(hog_one):.2f}x (each pair: "
                            f"{', '.join(f'{r:.2f}x' for r in paired)})")
        for label, shares in excess.items():
            said.append(f"{label}, by each run's own trace: {statistics.median(shares):+.1%} against its files at the "
                        f"one-process pace measured in that run (each run: {', '.join(f'{x:+.1%}' for x in shares)})")
        for one, other in ((text, "text, default"), ("json, one process", "json, default"), (text, hog_default)):
            if one in outputs and other in outputs:
                said.append(f"{other}: {'the same bytes' if outputs[one] == outputs[other] else 'NOT the same bytes'} as {one}")
        said.append(f"load average (1 min) at the runs' starts {min(loads):.2f} to {max(loads):.2f}")
        print("\n" + "; ".join(said) + ".\n")


def base_run(count: int = 300, reps: int = 3) -> None:
    """`check --base HEAD` of `count` committed manifests, against the same check without
    --base: none edited since the commit, a tenth edited, every one edited (round-robin, one
    process); and the git processes --base starts."""
    hwlint = tool("hwlint")
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        paths = write_copies(repo, count)
        originals = [path.read_bytes() for path in paths]
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", "base"], check=True, env=env)
        log, wrapper = Path(tmp) / "git.log", Path(tmp) / "bin"
        wrapper.mkdir()
        (wrapper / "git").write_text(f'#!/bin/sh\necho x >> {log}\nexec {shutil.which("git")} "$@"\n')
        (wrapper / "git").chmod(0o755)
        path_env = {"PATH": f"{wrapper}:{os.environ['PATH']}", "HWLINT_JOBS": "1"}
        scenarios = {"none edited": 0, "a tenth edited": count // 10, "every one edited": count}
        figures: dict[tuple[str, bool], list[tuple[float, float, int]]] = {}
        for _ in range(reps):
            for scenario, edited in scenarios.items():
                for path, raw in zip(paths, originals):
                    path.write_bytes(raw)
                for path in paths[:edited]:  # a change a review sees: more GPUs in the first pool
                    path.write_text(path.read_text().replace("count: 32", "count: 36", 1))
                for based in (False, True):
                    command = [hwlint, "check", *(["--base", "HEAD"] if based else []), *map(str, paths)]
                    figures.setdefault((scenario, based), []).append(
                        run_measured(command, path_env if based else {"HWLINT_JOBS": "1"}))
        log.unlink(missing_ok=True)
        for path, raw in zip(paths, originals):
            path.write_bytes(raw)
        run_measured([hwlint, "check", "--base", "HEAD", *map(str, paths)], path_env)
        started = len(log.read_text().splitlines()) if log.exists() else 0
    print(f"## `check --base HEAD` on {count} manifests (one process, {reps} runs each, round-robin)\n")
    print("| manifests edited since the commit | without --base | with --base HEAD | with / without, wall | with / without, CPU |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for scenario in scenarios:
        plain, based = figures[(scenario, False)], figures[(scenario, True)]
        wall = [statistics.median(g[0] for g in got) for got in (plain, based)]
        cpu = [statistics.median(g[1] for g in got) for got in (plain, based)]
        print(f"| {scenario} | {ms(wall[0])} | {ms(wall[1])} | {wall[1] / wall[0]:.2f}x | {cpu[1] / cpu[0]:.2f}x |")
    print(f"\ngit processes started for one --base run: {started}\n")


def precommit_commit(reps: int) -> None:
    """`git commit` of one manifest with hwlint's hook and with yamllint's (both run by
    pre-commit as installed commands, language: system), round-robin."""
    if not (tool("pre-commit") and tool("yamllint")):
        print("## pre-commit: skipped (pre-commit or yamllint not installed)\n")
        return
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "HWLINT_TODAY": "2026-11-30", "PATH": f"{BIN}:{os.environ['PATH']}",
           "HWLINT_CACHE_DIR": PRIVATE_CACHE}
    hooks = {
        "hwlint": "  - id: hwlint\n    name: hwlint\n    entry: hwlint check\n    language: system\n    files: '\\.hw\\.ya?ml$'\n",
        "yamllint": "  - id: yamllint\n    name: yamllint\n    entry: yamllint -d relaxed\n    language: system\n    files: '\\.ya?ml$'\n",
    }
    times: dict[str, list[float]] = {name: [] for name in hooks}
    with tempfile.TemporaryDirectory() as tmp:
        repos = {}
        for name, hook in hooks.items():
            repo = Path(tmp) / name
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
            (repo / ".pre-commit-config.yaml").write_text(f"repos:\n- repo: local\n  hooks:\n{hook}")
            subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
            subprocess.run(["git", "-C", str(repo), "commit", "-qm", "config"], check=True, env=env)
            subprocess.run([tool("pre-commit"), "install"], cwd=repo, check=True, env=env, capture_output=True)
            repos[name] = repo
        for i in range(reps + 1):
            for name, repo in repos.items():
                target = repo / "cluster.hw.yaml"
                target.write_text(TYPICAL.read_text().replace("atlas-70b pretraining cluster", f"atlas run {i}", 1))
                subprocess.run(["git", "-C", str(repo), "add", "cluster.hw.yaml"], check=True, env=env)
                start = time.perf_counter()
                done = subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"edit {i}"], env=env, capture_output=True)
                if i:
                    times[name].append(time.perf_counter() - start)
                if done.returncode != 0:
                    print(f"(the {name} commit failed: {done.stdout.decode()[-300:]})")
    hw, yl = statistics.median(times["hwlint"]), statistics.median(times["yamllint"])
    print(f"## pre-commit: `git commit` of one manifest ({reps} commits each, round-robin)\n")
    print("| hook | median | min |")
    print("| --- | ---: | ---: |")
    for name, got in times.items():
        print(f"| {name} | {ms(statistics.median(got))} | {ms(min(got))} |")
    print(f"\nhwlint's commit / yamllint's: {hw / yl:.2f}x\n")


def config_chains(reps: int, per_team: int = 50, count: bool = False) -> None:
    """Issue 31, item 5: nested configs cost (nearly) nothing. Two repositories with the same
    manifests (`per_team` in each of two team folders): one with the root's .hwlint.yaml alone,
    one where each team folder adds its own config under it (a tightened floor, as the gate
    allows). One manifest, then the whole repository, round-robin, against yamllint."""
    hwlint = tool("hwlint")
    env = {"GIT_CONFIG_GLOBAL": os.devnull}
    with tempfile.TemporaryDirectory() as tmp:
        repos = {}
        for name in ("root config only", "root + two team configs"):
            repo = Path(tmp) / name.replace(" ", "-").replace("+", "and")
            for team in ("a", "b"):
                (repo / "teams" / team).mkdir(parents=True)
                write_copies(repo / "teams" / team, per_team)
                if "team" in name:
                    (repo / "teams" / team / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 30}\n")
            (repo / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 25}\n")
            subprocess.run(["git", "init", "-q", str(repo)], check=True, env={**os.environ, **env})
            repos[name] = repo
        one = sorted((Path(tmp) / "root-and-two-team-configs" / "teams" / "a").glob("*.hw.yaml"))[0]
        rows = {f"hwlint check FILE, {name}": ([hwlint, "check", str(repo / "teams" / "a" / one.name)], env)
                for name, repo in repos.items()}
        if tool("yamllint"):
            rows["yamllint -d relaxed FILE"] = ([tool("yamllint"), "-d", "relaxed", str(one)], None)
        rows.update({f"hwlint check . ({2 * per_team} manifests), {name}": ([hwlint, "check", str(repo)], env)
                     for name, repo in repos.items()})
        results = interleaved(rows, reps)
        counted = {label: instructions(command, env) for label, (command, env) in rows.items()} if count else {}
    print(f"## Config chains: a root config alone against a root and two team configs ({reps} runs each, round-robin)\n")
    print("| command | median wall | median CPU |" + (" instructions |" if counted else ""))
    print("| --- | ---: | ---: |" + (" ---: |" if counted else ""))
    for label, (median, _) in results.items():
        more = f" {counted[label] / 1e6:,.0f} M |" if counted else ""
        print(f"| `{label}` | {ms(median)} | {ms(statistics.median(CPU[label]))} |{more}")
    single = [label for label in results if label.startswith("hwlint check FILE")]
    whole = [label for label in results if label.startswith("hwlint check .")]
    print()
    if "yamllint -d relaxed FILE" in results:
        peer = results["yamllint -d relaxed FILE"][0]
        print(f"One manifest under two configs / yamllint -d relaxed: {results[single[1]][0] / peer:.2f}x wall, "
              f"{statistics.median(CPU[single[1]]) / statistics.median(CPU['yamllint -d relaxed FILE']):.2f}x CPU")
    print(f"The repository with team configs / with the root's alone: {results[whole[1]][0] / results[whole[0]][0]:.2f}x wall, "
          f"{statistics.median(CPU[whole[1]]) / statistics.median(CPU[whole[0]]):.2f}x CPU; one manifest: "
          f"{results[single[1]][0] / results[single[0]][0]:.2f}x wall")
    if counted:
        if "yamllint -d relaxed FILE" in counted:
            print(f"By instructions: one manifest under two configs / yamllint -d relaxed "
                  f"{counted[single[1]] / counted['yamllint -d relaxed FILE']:.2f}x; ", end="")
        print(f"the repository with team configs / with the root's alone {counted[whole[1]] / counted[whole[0]]:.2f}x; "
              f"one manifest {counted[single[1]] / counted[single[0]]:.2f}x")
    print()


def grown(pools: int) -> str:
    """The typical manifest with `pools` node pools: its two, plus small storage pools."""
    sys.path.insert(0, str(ROOT))
    from linter.manifest.loader import load_file

    data = load_file(str(TYPICAL)).data
    extra = [{"name": f"store-{i:05d}", "role": "storage", "count": 1, "host_ram_gb": 256, "max_power_kw": 0.8}
             for i in range(pools - len(data["node_pools"]))]
    data["node_pools"] = data["node_pools"] + extra
    return json.dumps(data, indent=1)  # JSON is YAML


def growth(reps: int, sizes: tuple[int, ...] = (10, 1_000, 10_000)) -> None:
    hwlint = tool("hwlint")
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"pools-{size}.hw.yaml"
            path.write_text(grown(size), encoding="utf-8")
            times[size] = timed([hwlint, "check", str(path)], max(3, reps // 3))[0]
    print("## Growth: node pools in one manifest\n")
    print("| node pools | time | per extra pool since the previous size |")
    print("| ---: | ---: | ---: |")
    previous = None
    for size in sizes:
        step = "" if previous is None else ms((times[size] - times[previous]) / (size - previous))
        print(f"| {size:,} | {ms(times[size])} | {step} |")
        previous = size
    first, middle, last = sizes[0], sizes[1], sizes[-1]
    slope_a = (times[middle] - times[first]) / (middle - first)
    slope_b = (times[last] - times[middle]) / (last - middle)
    print(f"\nCost per pool, {middle:,}->{last:,} over {first:,}->{middle:,}: {slope_b / slope_a:.2f} "
          "(1.0 is exactly linear; well above 1 would mean super-linear work)\n")


def imports(top: int = 15, runs: int = 7) -> None:
    """The import-time profile of one warm check: the heaviest top-level packages and modules
    (the minimum over `runs` runs of each module's time, which a busy machine inflates least)."""
    command = [sys.executable, "-X", "importtime", "-c", f"from linter.cli import main; main(['check', {str(TYPICAL)!r}])"]
    env = {**os.environ, "HWLINT_TODAY": "2026-11-30", "HWLINT_CACHE_DIR": PRIVATE_CACHE}
    subprocess.run(command, capture_output=True, cwd=ROOT, env=env)  # the pack cache warm
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
        for line in proc.stderr.splitlines():
            match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
            if match and len(match.group(3)) <= 3:  # top-level imports and their direct children
                name, figures = match.group(4), (int(match.group(2)), int(match.group(1)))
                best[name] = min(best.get(name, figures), figures)
    print(f"## Import time (`python -X importtime`, one warm check, minimum of {runs} runs, top {top} by cumulative time)\n")
    print("| module | cumulative | self |")
    print("| --- | ---: | ---: |")
    for name, (cumulative, own) in sorted(best.items(), key=lambda item: item[1], reverse=True)[:top]:
        print(f"| {name} | {cumulative / 1000:.1f} ms | {own / 1000:.1f} ms |")
    print()


def install() -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *PEERS.values()], check=True)


def compile_package() -> None:
    """Byte-compile hwlint's modules first, as pip does when it installs a wheel. With
    PYTHONDONTWRITEBYTECODE set (some shells and CI images set it) and a __pycache__ older
    than the code, every timed run would compile the changed modules again, and the figures
    would time Python's compiler instead of hwlint (tens of milliseconds a run)."""
    import compileall

    compileall.compile_dir(str(ROOT / "linter"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=11, help="timed runs per command (default 11)")
    parser.add_argument("--install", action="store_true", help="pip-install yamllint and check-jsonschema first")
    parser.add_argument("--skip-bulk", action="store_true")
    parser.add_argument("--bulk", default="1000,10000", help="manifest counts for the bulk runs (default 1000,10000)")
    parser.add_argument("--bulk-reps", type=int, default=3, help="runs of each bulk measurement (default 3)")
    parser.add_argument("--bulk-rows", default="", help="only the bulk runs whose label holds one of these "
                        "comma-separated words (e.g. 'one process')")
    parser.add_argument("--skip-base", action="store_true")
    parser.add_argument("--skip-precommit", action="store_true")
    parser.add_argument("--skip-growth", action="store_true")
    parser.add_argument("--skip-configs", action="store_true", help="skip the config-chain runs (issue 31, item 5)")
    parser.add_argument("--imports", action="store_true", help="also print the import-time profile")
    parser.add_argument("--team-rules", action="store_true", help="also time a cold build of a team's rule folder")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions (valgrind), which the load does not change: one manifest, "
                             "the config chains and --team-rules")
    args = parser.parse_args()
    if args.install:
        install()
    if not tool("hwlint"):
        sys.exit("hwlint is not installed next to this Python; run `pip install -e .` first")
    compile_package()
    print(f"# hwlint benchmark\n\n{machine()}\n")
    one_manifest(args.reps, args.instructions)
    if not args.skip_bulk:
        for count in (int(c) for c in args.bulk.split(",") if c):
            bulk(count, args.bulk_reps if count <= 1000 else 1, tuple(r for r in args.bulk_rows.split(",") if r))
    if not args.skip_base:
        base_run()
    if not args.skip_precommit:
        precommit_commit(max(5, args.reps // 2))
    if not args.skip_growth:
        growth(args.reps)
    if not args.skip_configs:
        config_chains(args.reps, count=args.instructions)
    if args.imports:
        imports()
    if args.team_rules:
        team_rules(args.reps, args.instructions)
    shutil.rmtree(PRIVATE_CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
