"""Time `hwlint size` against a single `hwlint check` on the same machine, in the same run:
issue 31's target is a 1T goal over every catalog GPU in at most 10x a check's time. Every
run must print the same answer.

    python bench/size.py             # 7 rounds, medians
    python bench/size.py --reps 3 --goals 1T,175B
    python bench/size.py --alone     # each goal also in one process (HWLINT_JOBS=1), same rounds

Each figure is a fresh process (interpreter start-up, imports, the rule pack from its cache,
the search, the designs and the rule-pack reviews of the best rows), as a user sees it. The
commands run round-robin, after one untimed warm-up round, so a busy spell slows all of them
alike; the ratio to the check measured in the same rounds is the figure that transfers to
another machine, not the seconds. CPU time (user + system of the child) is shown beside the
wall-clock time: on a shared machine it is the steadier of the two.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ["check", "examples/multi-node-pretrain.hw.yaml"]  # the typical manifest of bench/run.py
GOALS = {
    # Megatron-LM's 1T configuration (Narayanan et al. 2021, Table 1): 128 layers, hidden 25,600,
    # 160 heads, sequence 2,048, global batch 3,072; 450B tokens in 84 days.
    "1T": ["--params", "1000", "--layers", "128", "--hidden", "25600", "--heads", "160", "--seq", "2048",
           "--global-batch", "3072", "--tokens", "450", "--days", "84", "--rack-kw", "60", "--dataset-tb", "200"],
    # GPT-3 175B as Megatron-LM trained it (Table 1): 96 layers, hidden 12,288, 96 heads, batch 1,536; 300B tokens.
    "175B": ["--params", "175", "--layers", "96", "--hidden", "12288", "--heads", "96", "--seq", "2048",
             "--global-batch", "1536", "--tokens", "300", "--days", "34"],
    "34B goal only": ["--params", "34", "--tokens", "1500", "--days", "60"],
    "Llama-3.1-70B QLoRA": ["--model", "Llama-3.1-70B", "--method", "qlora", "--tokens", "1", "--days", "5"],
}


def once(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "linter.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "HWLINT_TODAY": "2026-11-30", **(env or {})})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.exit(f"hwlint {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return wall, cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--goals", default=",".join(GOALS), help="comma-separated names among: " + ", ".join(GOALS))
    parser.add_argument("--alone", action="store_true",
                        help="also each goal in this process alone (HWLINT_JOBS=1): what the helper buys, in the same rounds")
    args = parser.parse_args()
    names = [n.strip() for n in args.goals.split(",") if n.strip()]
    commands = {"check": (CHECK, None), **{n: (["size", *GOALS[n]], None) for n in names}}
    if args.alone:
        commands.update({f"{n}, HWLINT_JOBS=1": (["size", *GOALS[n]], {"HWLINT_JOBS": "1"}) for n in names})
    for command, env in commands.values():
        once(command, env)  # warm the rule-pack cache and the file system
    runs: dict[str, list[tuple[float, float, str]]] = {name: [] for name in commands}
    for _ in range(args.reps):
        for name, (command, env) in commands.items():
            runs[name].append(once(command, env))
    load = os.getloadavg()[0]
    print(f"hwlint size against one check, {args.reps} rounds round-robin, load average {load:.1f} at the end\n")
    print("| run | wall median | / check | CPU median | / check | same output every run |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    wall0 = statistics.median(r[0] for r in runs["check"])
    cpu0 = statistics.median(r[1] for r in runs["check"])
    for name, rows in runs.items():
        wall, cpu = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        same = "yes" if len({r[2] for r in rows}) == 1 else "NO"
        if name.endswith("HWLINT_JOBS=1") and same == "yes":  # and the same as with the helper
            same = "yes, and as with the helper" if rows[0][2] == runs[name.split(",")[0]][0][2] else "NOT as with the helper"
        label = "`hwlint check` (the peer)" if name == "check" else f"`hwlint size`, {name}, every catalog GPU"
        print(f"| {label} | {wall:.2f} s | {wall / wall0:.1f}x | {cpu:.2f} s | {cpu / cpu0:.1f}x | {same} |")


if __name__ == "__main__":
    main()
