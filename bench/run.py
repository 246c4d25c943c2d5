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
   both ways beside a CPU hog (a busy process per CPU in a session of its own), and the
   floor: PyYAML's C loader reading the same files in one process.
   `check --base HEAD` of 300 committed manifests, none, a tenth or all edited since.
3. One manifest with 10, 1,000 and 10,000 node pools: the time per extra pool should not
   grow with the pool count (linear overall).
4. With --imports: the modules that cost most to import (`python -X importtime`).
5. With --parser: every expression and template of the built-in rule pack parsed by
   linter.engine.parse and by Jinja2's lexer and parser (CPU time in this process, median of
   --reps runs), and what importing each costs.

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


def run_measured(command: list[str], env: dict | None = None, stdout: Any = subprocess.DEVNULL) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, the process and the children it waited
    for) and peak resident memory in KB of one run of `command`."""
    full_env = {**os.environ, "HWLINT_TODAY": "2026-11-30", "HWLINT_CACHE_DIR": PRIVATE_CACHE, **(env or {})}
    fresh = None
    if full_env.get("HWLINT_CACHE_DIR") == FRESH:
        fresh = tempfile.mkdtemp(prefix="hwlint-cache-")
        full_env["HWLINT_CACHE_DIR"] = fresh
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


def one_manifest(reps: int) -> None:
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
    ours = results["hwlint check FILE (warm pack cache)"][0]
    ours_cpu = statistics.median(CPU["hwlint check FILE (warm pack cache)"])
    print("| command | median wall | min wall | median CPU | hwlint (warm) / this, wall | this / hwlint (warm), CPU |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, (median, low) in results.items():
        cpu = statistics.median(CPU[label])
        print(f"| `{label}` | {ms(median)} | {ms(low)} | {ms(cpu)} | {ours / median:.2f}x | {cpu / ours_cpu:.2f}x |")
    print()


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
}
YAML_FLOOR = "PyYAML C loader, same files (floor)"
# The floor of reading the files: each loaded by PyYAML's C loader (libyaml) in one process.
LOAD_ALL = "import sys, yaml\nfor p in sys.argv[1:]:\n    with open(p, 'rb') as f: yaml.load(f, Loader=yaml.CSafeLoader)\n"


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
        for rep in range(reps):
            order = list(runs)
            hogged = [i for i, label in enumerate(order) if runs[label][2]]
            if rep % 2 and len(hogged) == 2:  # the pair beside the hog the other way round: a drifting load favours neither
                first, second = hogged
                order[first], order[second] = order[second], order[first]
            for label in order:
                args, env, hog = runs[label]
                out = Path(tmp) / "report.out"
                with out.open("wb") as handle, cpu_hog() if hog else contextlib.nullcontext():
                    loads.append(os.getloadavg()[0])
                    figures[label].append(run_measured([hwlint, "check", *args, *paths], env, stdout=handle))
                outputs[label] = file_digest(out)
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
        if hog_one in figures and hog_default in figures:
            paired = [b[0] / a[0] for a, b in zip(figures[hog_one], figures[hog_default])]
            said.append(f"beside a CPU hog ({os.cpu_count()} spinning processes in a session of their own), default / "
                        f"one process: {wall(hog_default) / wall(hog_one):.2f}x (each pair: "
                        f"{', '.join(f'{r:.2f}x' for r in paired)})")
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


def pack_sources() -> list[tuple[str, str]]:
    """(kind, source) of every expression ("expr") and template ("tmpl") of the built-in pack,
    as the pack builder parses them."""
    from linter.engine.rules import load_pack

    os.environ.setdefault("HWLINT_CACHE_DIR", PRIVATE_CACHE)
    pack = load_pack()
    keys = (("when", "expr"), ("require", "expr"), ("message", "tmpl"), ("fix", "tmpl"), ("at", "tmpl"), ("evidence", "tmpl"))
    found = [(kind, getattr(rule.spec, key)) for rule in pack.rules for key, kind in keys]
    found += [(kind, record.get(key)) for record in (*pack.tiers, *pack.conditions)
              for key, kind in (("when", "expr"), ("reason", "tmpl"))]
    return [(kind, source) for kind, source in found if isinstance(source, str)]


def import_cost(module: str, runs: int = 7) -> float:
    """Seconds `import module` adds to a fresh process: the top-level lines of its package in
    `python -X importtime` (what the interpreter imports at start-up left out), minimum of `runs`."""
    root = module.split(".")[0]
    best = float("inf")
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                              text=True, cwd=ROOT)
        total = sum(int(m.group(1)) for m in re.finditer(r"^import time:\s+\d+ \|\s+(\d+) \| (\S+)$", proc.stderr, re.M)
                    if m.group(2) == root or m.group(2).startswith(root + "."))
        best = min(best, total / 1e6)
    return best


def parser_speed(reps: int) -> None:
    from jinja2.parser import Parser
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from linter.engine import parse

    sources = pack_sources()
    env = ImmutableSandboxedEnvironment(keep_trailing_newline=False)

    def jinja(kind: str, source: str) -> Any:
        return env.parse(source) if kind == "tmpl" else Parser(env, source, state="variable").parse_expression()

    def fast(kind: str, source: str) -> Any:
        return parse.parse_template(source) if kind == "tmpl" else parse.parse_expression(source)

    times: dict[str, list[float]] = {"fast": [], "jinja": []}
    for _ in range(reps):  # round-robin, so both see the same machine
        for name, function in (("fast", fast), ("jinja", jinja)):
            started = time.process_time()
            for kind, source in sources:
                function(kind, source)
            times[name].append(time.process_time() - started)
    ours, theirs = statistics.median(times["fast"]), statistics.median(times["jinja"])
    size = sum(len(source) for _, source in sources)
    print(f"## Rule template parser ({len(sources)} sources of the built-in pack, {size / 1000:.0f} kB; "
          f"CPU time in one process, median of {reps} runs)\n")
    print("| parser | parse all | import (fresh process, -X importtime, min of 7) |")
    print("| --- | ---: | ---: |")
    print(f"| linter.engine.parse | {ms(ours)} | {ms(import_cost('linter.engine.parse'))} |")
    print(f"| Jinja2 lexer + parser | {ms(theirs)} | {ms(import_cost('jinja2.sandbox'))} |")
    print(f"\nJinja2's / linter.engine.parse's parse time: {theirs / ours:.2f}x\n")


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
    parser.add_argument("--imports", action="store_true", help="also print the import-time profile")
    parser.add_argument("--parser", action="store_true", help="also time the rule template parser against Jinja2's")
    args = parser.parse_args()
    if args.install:
        install()
    if not tool("hwlint"):
        sys.exit("hwlint is not installed next to this Python; run `pip install -e .` first")
    compile_package()
    print(f"# hwlint benchmark\n\n{machine()}\n")
    one_manifest(args.reps)
    if not args.skip_bulk:
        for count in (int(c) for c in args.bulk.split(",") if c):
            bulk(count, args.bulk_reps if count <= 1000 else 1, tuple(r for r in args.bulk_rows.split(",") if r))
    if not args.skip_base:
        base_run()
    if not args.skip_precommit:
        precommit_commit(max(5, args.reps // 2))
    if not args.skip_growth:
        growth(args.reps)
    if args.imports:
        imports()
    if args.parser:
        parser_speed(max(args.reps, 11))
    shutil.rmtree(PRIVATE_CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
