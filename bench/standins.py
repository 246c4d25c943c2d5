"""What each hand-written stand-in for a library buys a warm check, measured in one run.

    python bench/standins.py               # 41 runs of each, round-robin, medians
    python bench/standins.py --reps 101

The rule (docs/architecture.md): a stand-in stays only where it buys at least 10% of a warm
`hwlint check FILE` (examples/multi-node-pretrain.hw.yaml, the pack cache warm), or where
security needs it. Each figure is the median wall and CPU time of a fresh process, as a
pre-commit hook sees it, all run round-robin so that a busy spell slows every one alike:

- `hwlint check FILE` in a copy of the package as it is, and in copies with one stand-in
  swapped for its library: record classes made by dataclasses (linter/record.py), every
  command line through click (linter/cli.py's plain path off), the schema check left to
  jsonschema alone (validate.certainly_valid never sure). A stand-in's gain is its copy's
  time minus the unchanged copy's, as a share of the unchanged copy's.
- the YAML position loader (linter/manifest/loader.py) cannot be swapped without writing
  another loader, so two fresh processes stand for it: one imports it and loads FILE, the
  other does what it replaces, ruamel.yaml's round-trip load (which keeps every key's line
  and column). The gain is the difference, as a share of the warm check. It is a floor:
  ruamel's tree would still have to become plain data and positions, within the limits.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CPU, PRIVATE_CACHE, ROOT, TYPICAL, compile_package, environment, instructions, interleaved, machine, ms, tool  # noqa: E402,E501

FOLDERS = ("linter", "rules", "schemas", "templates", "catalog")
# name -> (file, text, replacement): one stand-in swapped for its library
SWAPS = {
    "record classes by dataclasses": (
        "linter/record.py", None,
        '"""Record classes by dataclasses (bench/standins.py)."""\n'
        "from dataclasses import dataclass as record, field, replace  # noqa: F401\n"),
    "every command line through click": (
        "linter/cli.py", '    from linter import console\n\n    if not all(',
        '    from linter import console\n\n    return None\n    if not all('),
    "schema check by jsonschema alone": (
        "linter/manifest/validate.py", '    return isinstance(data, dict) and _quick_check()(data)',
        '    return False'),
}
UNCHANGED = "as it is"


def copy_package(where: Path, swap: tuple[str, str | None, str] | None) -> Path:
    """The package and its data folders under `where`, with `swap` applied, byte-compiled."""
    import compileall

    for name in FOLDERS:
        shutil.copytree(ROOT / name, where / name, ignore=shutil.ignore_patterns("__pycache__"))
    if swap is not None:
        file, text, replacement = swap
        path = where / file
        if text is None:
            path.write_text(replacement, encoding="utf-8")
        else:
            source = path.read_text(encoding="utf-8")
            if text not in source:
                sys.exit(f"{file} has changed: the swap does not apply; update bench/standins.py")
            path.write_text(source.replace(text, replacement, 1), encoding="utf-8")
    compileall.compile_dir(str(where / "linter"), quiet=1)
    return where


def same(rows: dict[str, tuple[list[str], dict | None]]) -> None:
    """Every copy checks FILE as the unchanged one does (a swap that broke the check would
    time nothing); the two loader processes load it."""
    outputs = {}
    for label, (command, env) in rows.items():
        run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, env=environment(env)[0])
        outputs[label] = (run.returncode, run.stdout, run.stderr)
        if label not in SWAPS and label != UNCHANGED and run.returncode != 0:
            sys.exit(f"{label} failed: {run.stderr[-800:]}")
    for label in SWAPS:
        if outputs[label] != outputs[UNCHANGED]:
            sys.exit(f"hwlint check FILE, {label}, gives another output than the unchanged copy:\n{outputs[label][2][-800:]}")


def cpu(label: str) -> float:
    return statistics.median(CPU[label])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=41, help="timed runs of each (default 41)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the instructions of one run of each (valgrind), which the load does not change")
    args = parser.parse_args()
    hwlint = tool("hwlint")
    if not hwlint:
        sys.exit("hwlint is not installed next to this Python; run `pip install -e .` first")
    compile_package()  # the loader's process imports the package itself, byte-compiled as installed
    print(f"# What each stand-in buys a warm check\n\n{machine()}\n")
    with tempfile.TemporaryDirectory() as tmp:
        rows: dict[str, tuple[list[str], dict | None]] = {}
        for name, swap in {UNCHANGED: None, **SWAPS}.items():
            copy = copy_package(Path(tmp) / f"copy-{len(rows)}", swap)
            # a copy's own pack cache, made warm by the untimed first round
            rows[name] = ([hwlint, "check", str(TYPICAL)], {"PYTHONPATH": str(copy), "HWLINT_CACHE_DIR": str(copy / "cache")})
        loader = "import sys; from linter.manifest.loader import load_file; load_file(sys.argv[1])"
        ruamel = "import sys; from ruamel.yaml import YAML; YAML().load(open(sys.argv[1], encoding='utf-8'))"
        rows["loader.py: import and load FILE"] = ([sys.executable, "-c", loader, str(TYPICAL)], {"PYTHONPATH": str(ROOT)})
        rows["ruamel.yaml round trip: import and load FILE"] = ([sys.executable, "-c", ruamel, str(TYPICAL)], None)
        same(rows)
        results = interleaved(rows, args.reps)
        counted = {label: instructions(command, env) for label, (command, env) in rows.items()} if args.instructions else {}

    print(f"## Fresh processes, {args.reps} runs each, round-robin (FILE: {TYPICAL.relative_to(ROOT)})\n")
    print("| run | median wall | min wall | median CPU |" + (" instructions |" if counted else ""))
    print("| --- | ---: | ---: | ---: |" + (" ---: |" if counted else ""))
    for label, (median, low) in results.items():
        shown = f"hwlint check FILE, {label}" if label == UNCHANGED or label in SWAPS else label
        extra = f" {counted[label] / 1e6:,.1f} M |" if counted else ""
        print(f"| {shown} | {ms(median)} | {ms(low)} | {ms(cpu(label))} |{extra}")
    loader, ruamel = "loader.py: import and load FILE", "ruamel.yaml round trip: import and load FILE"
    standins = {"record classes by dataclasses": ("linter/record.py", "dataclasses", "record classes by dataclasses", UNCHANGED),
                "click": ("plain check in linter/cli.py, linter/console.py", "click", "every command line through click", UNCHANGED),
                "jsonschema": ("linter/manifest/quickcheck.py", "jsonschema", "schema check by jsonschema alone", UNCHANGED),
                "ruamel": ("linter/manifest/loader.py", "ruamel.yaml", ruamel, loader)}
    base, base_cpu = results[UNCHANGED][0], cpu(UNCHANGED)
    print(f"\n## What each stand-in buys a warm check ({ms(base)} wall, {ms(base_cpu)} CPU"
          + (f", {counted[UNCHANGED] / 1e6:,.1f} M instructions" if counted else "") + ")\n")
    print("| stand-in | library instead | gain, wall | share | gain, CPU | share |"
          + (" gain, instructions | share |" if counted else "") + " stays (>= 10%) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if counted else "") + " --- |")
    for what, library, swapped, against in standins.values():
        wall, spent = results[swapped][0] - results[against][0], cpu(swapped) - cpu(against)
        shares = [wall / base, spent / base_cpu]
        row = f"| {what} | {library} | {ms(wall)} | {shares[0]:.0%} | {ms(spent)} | {shares[1]:.0%} |"
        if counted:
            done = counted[swapped] - counted[against]
            shares.append(done / counted[UNCHANGED])
            row += f" {done / 1e6:,.1f} M | {shares[2]:.1%} |"
        stays = "yes" if min(shares) >= 0.10 else "no" if max(shares) < 0.10 else "unclear: the measures disagree"
        print(f"{row} {stays} |")
    print()
    shutil.rmtree(PRIVATE_CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
