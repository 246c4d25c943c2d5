"""Shared helpers: run hwlint's real command line in-process or as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# Reviews mention dates (waiver expiry, spec age): pin "today" so outputs are reproducible.
TODAY = "2026-11-30"

# A team's rule file of one valid rule, as the rule-folder tests write it.
TEAM_RULE = """\
rules:
  - id: OPS901
    title: The plan names a goal
    severity: info
    tiers: all
    require: "manifest.plan.goal in ['pretrain', 'finetune']"
    message: "goal is {{ manifest.plan.goal }}"
    fix: "name a goal"
    cite: [seed-hardware-layers]
    at: plan.goal
"""
os.environ["HWLINT_TODAY"] = TODAY


HOSTILE_MANIFESTS = ROOT / "tests" / "hostile_manifests"


def hostile_manifest(name: str, folder: Path) -> Path:
    """tests/hostile_manifests/NAME.recipe.yaml written out as folder/NAME.hw.yaml (its README
    says how a recipe reads)."""
    import random
    import string

    import yaml

    recipe = yaml.safe_load((HOSTILE_MANIFESTS / f"{name}.recipe.yaml").read_text())
    pick = random.Random(recipe.get("seed", 0)).choice
    line = recipe["line"]
    copies = []
    for i in range(recipe["times"]):
        text = line.replace("{i}", str(i))
        if "{random64}" in text:
            text = text.replace("{random64}", "".join(pick(string.ascii_letters) for _ in range(64)))
        copies.append(text)
    base = (ROOT / recipe["base"]).read_text()
    assert recipe["before"] in base, f"{name}: {recipe['base']} has no line {recipe['before']!r}"
    path = folder / f"{name}.hw.yaml"
    path.write_text(base.replace(recipe["before"], "".join(copies) + recipe["before"], 1))
    return path


def twice_over(tmp_path: Path) -> list[str]:
    """Every example, twice: as itself and as a copy under `tmp_path` (a file named twice is
    reviewed once), for reports twice the examples' size."""
    copies = tmp_path / "copies"
    copies.mkdir()
    examples = sorted(EXAMPLES.glob("*.hw.yaml"))
    for example in examples:
        (copies / example.name).write_bytes(example.read_bytes())
    return [str(p) for p in examples] + [str(copies / p.name) for p in examples]


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def hwlint(capsys):
    """Call `hwlint ARGS...` in-process through linter.cli.main (fast; same code path)."""
    from linter.cli import main

    def run(*args: str) -> Run:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def hwlint_process(*args: str, cwd: Path | None = None, env: dict | None = None) -> Run:
    """Run the installed console script in a subprocess, as a user would."""
    full_env = {**os.environ, "HWLINT_TODAY": TODAY, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "linter.cli", *map(str, args)],
        capture_output=True, text=True, cwd=cwd or ROOT, env=full_env, timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
