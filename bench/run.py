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
2. 1,000 manifests in one `hwlint check` call: the cost per manifest, as the marginal
   (time for 1,000 minus time for 1, over 999) and the plain average.
3. One manifest with 10, 1,000 and 10,000 node pools: the time per extra pool should not
   grow with the pool count (linear overall).
4. With --imports: the modules that cost most to import (`python -X importtime`).

The peers come from the `bench` extra (`pip install -e '.[bench]'`) or --install; a
peer that is missing is skipped with a note. Nothing here needs jsonschema's format
extras.
"""

from __future__ import annotations

import argparse
import datetime as dt
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

ROOT = Path(__file__).resolve().parent.parent
TYPICAL = ROOT / "examples" / "multi-node-pretrain.hw.yaml"
SCHEMA = ROOT / "schemas" / "manifest.schema.json"
BIN = Path(sys.executable).parent
PEERS = {"yamllint": "yamllint", "check-jsonschema": "check-jsonschema"}


def tool(name: str) -> str | None:
    here = BIN / name
    return str(here) if here.exists() else shutil.which(name)


def once(command: list[str], env: dict | None = None) -> float:
    full_env = {**os.environ, "HWLINT_TODAY": "2026-11-30", **(env or {})}
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=full_env, cwd=ROOT)
    return time.perf_counter() - start


def timed(command: list[str], reps: int, env: dict | None = None) -> tuple[float, float]:
    """Median and minimum wall time of `command`, after one untimed warm-up run."""
    return interleaved({"": (command, env)}, reps)[""]


def interleaved(commands: dict[str, tuple[list[str], dict | None]], reps: int) -> dict[str, tuple[float, float]]:
    """Median and minimum of each command, run in turn (round-robin) so that a busy spell
    on the machine slows all of them alike; one untimed warm-up round first."""
    runs: dict[str, list[float]] = {label: [] for label in commands}
    for i in range(reps + 1):
        for label, (command, env) in commands.items():
            took = once(command, env)
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
    return (f"{dt.date.today().isoformat()}, {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def one_manifest(reps: int) -> None:
    hwlint = tool("hwlint")
    rows = [("python -c pass (floor)", [sys.executable, "-c", "pass"], None)]
    if tool("yamllint"):
        rows.append(("yamllint FILE", [tool("yamllint"), str(TYPICAL)], None))
    if tool("check-jsonschema"):
        rows.append(("check-jsonschema --schemafile ... FILE", [tool("check-jsonschema"), "--schemafile", str(SCHEMA), str(TYPICAL)], None))
    rows.append(("hwlint check FILE (warm pack cache)", [hwlint, "check", str(TYPICAL)], None))
    rows.append(("hwlint check FILE (cache off)", [hwlint, "check", str(TYPICAL)], {"HWLINT_CACHE": "off"}))
    missing = [name for name in PEERS if not tool(name)]
    print(f"## One typical manifest ({TYPICAL.relative_to(ROOT)}, {reps} runs each)\n")
    if missing:
        print(f"(not installed, skipped: {', '.join(missing)}; `pip install -e '.[bench]'` or --install)\n")
    results = interleaved({label: (command, env) for label, command, env in rows}, reps)
    ours = results["hwlint check FILE (warm pack cache)"][0]
    print("| command | median | min | hwlint (warm) / this |")
    print("| --- | ---: | ---: | ---: |")
    for label, (median, low) in results.items():
        print(f"| `{label}` | {ms(median)} | {ms(low)} | {ours / median:.2f}x |")
    print()


def write_copies(folder: Path, count: int) -> list[Path]:
    text = TYPICAL.read_text(encoding="utf-8")
    paths = []
    for i in range(count):
        path = folder / f"cluster-{i:04d}.hw.yaml"
        path.write_text(text.replace("name: atlas-70b pretraining cluster", f"name: atlas-70b cluster {i}", 1), encoding="utf-8")
        paths.append(path)
    return paths


def bulk(reps: int, count: int = 1000) -> None:
    hwlint = tool("hwlint")
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_copies(Path(tmp), count)
        single, _ = timed([hwlint, "check", str(paths[0])], reps)
        many, low = timed([hwlint, "check", *map(str, paths)], max(3, reps // 3))
    print(f"## {count:,} manifests in one call\n")
    print("| measure | time |")
    print("| --- | ---: |")
    print(f"| `hwlint check` of 1 manifest | {ms(single)} |")
    print(f"| `hwlint check` of {count:,} manifests (median; min {ms(low)}) | {ms(many)} |")
    print(f"| per manifest, marginal: (t{count} - t1) / {count - 1} | {ms((many - single) / (count - 1))} |")
    print(f"| per manifest, average: t{count} / {count} | {ms(many / count)} |")
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


def imports(top: int = 15) -> None:
    """The import-time profile of one check: the heaviest top-level packages and modules."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"from linter.cli import main; main(['check', {str(TYPICAL)!r}])"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "HWLINT_TODAY": "2026-11-30"},
    )
    rows = []
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(3)) <= 3:  # top-level imports and their direct children
            rows.append((int(match.group(2)), int(match.group(1)), match.group(4)))
    print(f"## Import time (`python -X importtime`, one run, top {top} by cumulative time)\n")
    print("| module | cumulative | self |")
    print("| --- | ---: | ---: |")
    for cumulative, own, name in sorted(rows, reverse=True)[:top]:
        print(f"| {name} | {cumulative / 1000:.1f} ms | {own / 1000:.1f} ms |")
    print()


def install() -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *PEERS.values()], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=11, help="timed runs per command (default 11)")
    parser.add_argument("--install", action="store_true", help="pip-install yamllint and check-jsonschema first")
    parser.add_argument("--skip-bulk", action="store_true")
    parser.add_argument("--skip-growth", action="store_true")
    parser.add_argument("--imports", action="store_true", help="also print the import-time profile")
    args = parser.parse_args()
    if args.install:
        install()
    if not tool("hwlint"):
        sys.exit("hwlint is not installed next to this Python; run `pip install -e .` first")
    print(f"# hwlint benchmark\n\n{machine()}\n")
    one_manifest(args.reps)
    if not args.skip_bulk:
        bulk(args.reps)
    if not args.skip_growth:
        growth(args.reps)
    if args.imports:
        imports()


if __name__ == "__main__":
    main()
