"""rules/loaded.json and catalog/loaded.json (linter.manifest.prebuilt): the loader's own
Documents of the built-in YAML files, current, used only while a file's bytes are the ones
they were generated from, and never read from a team folder."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from conftest import EXAMPLES, ROOT, TEAM_RULE, hwlint_process

FILES = [(folder, path) for folder in ("rules", "catalog") for path in sorted((ROOT / folder).glob("*.yaml"))]


@pytest.mark.parametrize("folder", ["rules", "catalog"])
def test_the_committed_loaded_json_is_current(folder):
    from linter.manifest.prebuilt import LOADED, render

    committed = (ROOT / folder / LOADED).read_text(encoding="utf-8")
    assert committed == render(ROOT / folder), "run: python -m linter.schema"


def kinds(value):
    """The value's structure with each leaf's type: 1, 1.0 and True differ."""
    if isinstance(value, dict):
        return {key: kinds(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return (type(value).__name__, [kinds(item) for item in value])
    return type(value).__name__


@pytest.mark.parametrize("folder, path", FILES, ids=[f"{f}/{p.name}" for f, p in FILES])
def test_every_built_in_file_is_served_as_the_loader_reads_it(folder, path, monkeypatch):
    from linter.manifest import loader, prebuilt

    served = prebuilt.load_file(str(path), str(ROOT / folder))
    parsed = loader.load_file(str(path), str(ROOT / folder))
    assert served == parsed
    assert kinds(served.data) == kinds(parsed.data)
    assert [kinds(k) for k in served.positions] == [kinds(k) for k in parsed.positions]  # same order, same key types
    # and it was served, not parsed again
    monkeypatch.setattr(prebuilt, "load_bytes", lambda *args: pytest.fail("parsed as YAML"))
    assert prebuilt.load_file(str(path), str(ROOT / folder)) == parsed


def test_each_load_gets_data_of_its_own():
    from linter.manifest import prebuilt

    path = str(ROOT / "catalog" / "gpus.yaml")
    first = prebuilt.load_file(path)
    first.data["gpus"][0]["name"] = "edited"
    assert prebuilt.load_file(path).data["gpus"][0]["name"] != "edited"


def copied_checkout(tmp_path):
    for name in ("linter", "rules", "schemas", "templates", "catalog"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return {"HWLINT_CACHE": "off", "PYTHONPATH": str(tmp_path)}


def test_an_edited_built_in_rule_is_read_from_its_yaml(tmp_path):
    env = copied_checkout(tmp_path)
    manifest = tmp_path / "finetune.hw.yaml"  # the example without its BUY004 waiver: the finding shows
    manifest.write_text((EXAMPLES / "single-node-finetune.hw.yaml").read_text().split("\nwaivers:")[0] + "\n")
    before = hwlint_process("check", manifest, cwd=tmp_path, env=env)
    rules = [p for p in (tmp_path / "rules").glob("*.yaml") if "The review takes values from catalog" in p.read_text()]
    assert len(rules) == 1 and "The review takes values from catalog" in before.out
    rules[0].write_text(rules[0].read_text().replace("The review takes values from catalog", "Edited: values from catalog"))
    after = hwlint_process("check", manifest, cwd=tmp_path, env=env)
    assert "Edited: values from catalog" in after.out and "The review takes values from catalog" not in after.out
    assert after.out.replace("Edited: values from catalog", "The review takes values from catalog") == before.out


def test_an_edited_built_in_catalog_file_is_read_from_its_yaml(tmp_path):
    env = copied_checkout(tmp_path)
    manifest = EXAMPLES / "multi-node-pretrain.hw.yaml"
    assert hwlint_process("check", manifest, cwd=tmp_path, env=env).code == 0
    systems = tmp_path / "catalog" / "systems.yaml"
    systems.write_text(systems.read_text().replace("name: DGX-H100\n", "name: DGX-H100-renamed\n"))
    second = hwlint_process("check", manifest, cwd=tmp_path, env=env)
    assert second.code != 0 and "DGX-H100" in second.out, second.out + second.err


def test_a_team_folders_loaded_json_is_not_read(hwlint, tmp_path, monkeypatch):
    """A loaded.json beside team rules, even one naming the file's own sha256, is ignored:
    only the built-in folders have one that hwlint wrote."""
    from linter.manifest.prebuilt import LOADED

    monkeypatch.setenv("HWLINT_CACHE", "off")
    folder = tmp_path / "team"
    folder.mkdir()
    rule = folder / "ops.yaml"
    rule.write_text(TEAM_RULE)
    forged = [{"rules": [{"id": "OPS999", "title": "forged", "severity": "error", "tiers": "all", "require": "false",
                          "message": "forged", "fix": "x", "cite": ["seed-hardware-layers"], "at": "plan.goal"}]},
              [], [[1, 1]]]
    (folder / LOADED).write_text("{}\n" + f"ops.yaml\t{hashlib.sha256(rule.read_bytes()).hexdigest()}\t{json.dumps(forged)}\n")
    run = hwlint("check", "-v", "--rules", folder, "--select", "OPS901", EXAMPLES / "single-node-finetune.hw.yaml")
    assert run.code == 0 and "1 passed" in run.out, run.err
    listed = hwlint("rules", "list", "--rules", folder).out
    assert "OPS901" in listed and "OPS999" not in listed and "forged" not in listed
