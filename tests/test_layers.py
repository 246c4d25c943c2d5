"""The folder tree is the pipeline: a stage may import the package root's vocabulary and the
stages below it, never one above, and no two modules import each other (even lazily)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "linter"

# Lower number = lower stage. The root modules named here are shared vocabulary.
STAGES = {
    "vocabulary": 0,  # linter/__init__, results, paths, numbers, record, digest
    "manifest": 1,
    "physics": 2,
    "engine": 3,
    "report": 4,
    "signoff": 5,
    "sizing": 5,  # goal to configuration: may use physics and the engine, never report or cli
    "top": 6,  # cli, commands, console, schema (the generator reads models of two stages)
}
VOCABULARY = {"linter", "linter.results", "linter.paths", "linter.numbers", "linter.record", "linter.digest"}


def stage(module: str) -> str:
    if module in VOCABULARY:
        return "vocabulary"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in STAGES:
        return parts[1]
    return "top"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every linter module `path` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            pytest.fail(f"{path}: relative import; this package uses absolute imports")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "linter":
            found.add(node.module)
            for alias in node.names:  # `from linter.physics import formulas` imports a module
                candidate = f"{node.module}.{alias.name}"
                if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists():
                    found.add(candidate)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "linter"}
    return found


GRAPH = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py") if "_data" not in p.parts}


def test_every_module_has_a_known_stage() -> None:
    unplaced = [m for m in GRAPH if stage(m) == "top" and m not in ("linter.cli", "linter.commands", "linter.console", "linter.schema")]
    assert not unplaced, f"modules outside the pipeline folders: {unplaced}"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_upward_import(module: str) -> None:
    upward = [t for t in GRAPH[module] if STAGES[stage(t)] > STAGES[stage(module)]]
    assert not upward, f"{module} ({stage(module)}) imports a higher stage: {upward}"


def test_no_import_cycle() -> None:
    # parents import their package's __init__ implicitly; only edges written in code count
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(GRAPH.get(node, ())):
            if target not in GRAPH or target == node:
                continue
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)


def test_the_walker_sees_a_planted_upward_import(tmp_path: Path) -> None:
    """The walker itself can fail: an import of the CLI from a manifest module is seen."""
    planted = tmp_path / "bad.py"
    planted.write_text("def f():\n    from linter.cli import main\n", encoding="utf-8")
    assert imports(planted) == {"linter.cli"}
    assert STAGES[stage("linter.cli")] > STAGES[stage("linter.manifest.loader")]
