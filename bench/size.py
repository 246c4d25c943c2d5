"""Time `hwlint size` for a 1T-parameter goal over every catalog GPU (the issue's target:
under 2 s on this machine), and check that every run prints the same answer.

    python bench/size.py            # 7 repetitions, medians
    python bench/size.py --reps 3

Each figure is a fresh process (interpreter start-up, imports, the rule pack from its
cache, the search, the designs and the rule-pack reviews of the best rows), as a user
sees it. Wall-clock time depends on what else the machine runs; the process CPU time
(user + system of the child) is shown too, and is what to compare on a shared machine.
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
# Megatron-LM's 1T configuration (Narayanan et al. 2021, Table 1): 128 layers, hidden 25,600,
# 160 heads, sequence 2,048, global batch 3,072; 450B tokens in 84 days; every catalog data-centre GPU.
GOAL = ["--params", "1000", "--layers", "128", "--hidden", "25600", "--heads", "160", "--seq", "2048", "--global-batch", "3072",
        "--tokens", "450", "--days", "84", "--rack-kw", "60", "--dataset-tb", "200"]


def once() -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "linter.cli", "size", *GOAL], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "HWLINT_TODAY": "2026-11-30"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"hwlint size failed ({proc.returncode}): {proc.stderr}")
    return wall, cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    once()  # warm the rule-pack cache and the file system
    runs = [once() for _ in range(args.reps)]
    walls, cpus, outputs = zip(*runs)
    print(f"hwlint size, 1T on 450B tokens in 84 days, every catalog GPU ({args.reps} runs)")
    print(f"  wall  median {statistics.median(walls):.2f} s  min {min(walls):.2f} s")
    print(f"  cpu   median {statistics.median(cpus):.2f} s  min {min(cpus):.2f} s")
    print(f"  target under 2 s: {'met' if statistics.median(walls) < 2 else 'NOT met'} (wall median)")
    print(f"  identical output on every run: {'yes' if len(set(outputs)) == 1 else 'NO'}")
    print(f"  GPU models with a table: {outputs[0].count(' layout')}")


if __name__ == "__main__":
    main()
