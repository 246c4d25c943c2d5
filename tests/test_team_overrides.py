"""Issue 24, item 3: a team catalog cannot silently replace a built-in part. A team entry named
like a built-in part is a reported override (BUY010) at the line where the manifest names the
part, listed with the manifest's own overrides (JSON catalog_overrides, the Markdown review), its
values held to the built-in part's bounds (BUY008); a team name or alias that would capture
another part's name refuses the catalog, naming file, line, alias and the part."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import EXAMPLES, ROOT

OVERRIDE = EXAMPLES / "team-catalog"
FLAWED = EXAMPLES / "flawed-cluster.hw.yaml"
PRETRAIN = EXAMPLES / "multi-node-pretrain.hw.yaml"


def line_of(path: Path, fragment: str) -> int:
    return next(i for i, row in enumerate(path.read_text().splitlines(), 1) if fragment in row)


def team(tmp_path: Path, name: str, text: str, folder: str = "team") -> Path:
    where = tmp_path / folder
    where.mkdir(exist_ok=True)
    (where / name).write_text(text)
    return where


def entry_of(kind_file: str, name: str) -> str:
    """The built-in catalog entry `name` of catalog/`kind_file`, as its own YAML lines."""
    text = (ROOT / "catalog" / kind_file).read_text()
    start = text.index(f"  - name: {name}\n")
    end = text.find("\n  - name: ", start + 1)
    return text[start:end if end > 0 else len(text)].rstrip() + "\n"


def finding(out: str, rule: str) -> str:
    return next(row for row in out.splitlines() if f" {rule} " in row)


def test_a_team_v100_with_200_gb_and_bf16_is_a_reported_override_held_to_the_built_in_bounds(hwlint):
    run = hwlint("check", "--catalog", OVERRIDE, FLAWED)
    assert run.code == 1, run.out
    at = f"{FLAWED}:{line_of(FLAWED, 'gpu: {model: V100-SXM2-32GB')}:"
    override = finding(run.out, "BUY010")
    assert override.startswith(at) and "BUY010 warning" in override, override
    for fragment in ("node_pools[0].gpu.model names V100-SXM2-32GB, a built-in part that the team catalog entry at "
                     f"{OVERRIDE / 'gpus.yaml'}:{line_of(OVERRIDE / 'gpus.yaml', 'name: V100-SXM2-32GB')} overrides", "memory_gb 200 (built-in 32)",
                     "precisions [fp64, fp32, fp16, bf16] (built-in [fp64, fp32, fp16])",
                     "dense_tflops.bf16 125 (built-in none)", '"Team lab notes, V100 (not a vendor document)"',
                     '"NVIDIA Tesla V100 GPU Accelerator datasheet (r5)" (dated 2020-01-01)'):
        assert fragment in override, (fragment, override)
    bound = finding(run.out, "BUY008")
    assert bound.startswith(at) and "BUY008 error" in bound, bound
    assert "gives memory (GB) of 200 (the team catalog entry at" in bound and "V100-SXM2-32GB has at most 32" in bound


def test_the_team_values_are_listed_with_the_manifest_overrides_in_json_and_markdown(hwlint):
    report = json.loads(hwlint("check", "--catalog", OVERRIDE, "--format", "json", FLAWED).out)
    rows = [o for o in report["manifests"][0]["catalog_overrides"] if o.get("by")]
    memory = next(o for o in rows if o["path"] == "node_pools[0].gpu.memory_gb")
    assert (memory["manifest"], memory["catalog"], memory["entry"], memory["kind"]) == (200, 32, "V100-SXM2-32GB", "gpus")
    at = line_of(OVERRIDE / "gpus.yaml", "name: V100-SXM2-32GB")
    assert memory["by"] == f"team catalog {OVERRIDE / 'gpus.yaml'}:{at}" and memory["as_of"] == "2020-01-01"
    markdown = hwlint("check", "--catalog", OVERRIDE, "--format", "markdown", FLAWED).out
    section = markdown[markdown.index("## Values set over the catalog"):]
    row = next(r for r in section.splitlines() if r.startswith("| node\\_pools\\[0\\].gpu.memory\\_gb"))
    assert "| 200 (*team catalog" in row and "| 32 | V100-SXM2-32GB | 2020-01-01 |" in row, row
    used = next(r for r in markdown.splitlines() if r.startswith("| GPU | V100-SXM2-32GB ("))
    assert "(team override of the built-in part, " in used, used


def test_a_team_qm8700_with_128_ports_fails_the_built_in_bounds_at_the_switch(hwlint, tmp_path):
    folder = team(tmp_path, "network.yaml", "switches:\n" + entry_of("network.yaml", "QM8700").replace(
        "    ports: 40\n", "    ports: 128\n"))
    run = hwlint("check", "--catalog", folder, FLAWED, "--select", "BUY008,BUY010,NET002,NET003")
    assert run.code == 1, run.out
    at = f"{FLAWED}:{line_of(FLAWED, '{model: QM8700, role: leaf')}:"
    bound = finding(run.out, "BUY008")
    assert bound.startswith(at), bound
    assert "network.fabrics[0].switches[0].model gives ports x port rate (Gb/s) of 128 x 200 = 25,600" in bound
    assert "QM8700 has at most 40 x 200 = 8,000" in bound
    assert "network.fabrics[0].switches[1].model gives ports x port rate" in bound  # the spine names it too
    assert "ports 128 (built-in 40)" in finding(run.out, "BUY010")


def test_a_team_dgx_h100_at_9_kw_is_reported_where_the_pool_names_it(hwlint, tmp_path):
    folder = team(tmp_path, "systems.yaml", "systems:\n" + entry_of("systems.yaml", "DGX-H100").replace(
        "    max_power_kw: 10.2\n", "    max_power_kw: 9\n"))
    run = hwlint("check", "--catalog", folder, PRETRAIN, "--select", "BUY010,PWR001")
    override = finding(run.out, "BUY010")
    assert override.startswith(f"{PRETRAIN}:{line_of(PRETRAIN, 'system: DGX-H100')}:"), override
    assert "node_pools[0].system names DGX-H100" in override and "max_power_kw 9 (built-in 10.2)" in override
    report = json.loads(hwlint("check", "--catalog", folder, "--format", "json", PRETRAIN).out)
    power = next(o for o in report["manifests"][0]["catalog_overrides"] if o["path"] == "node_pools[0].max_power_kw")
    assert (power["manifest"], power["catalog"]) == (9, 10.2)


def test_an_alias_that_captures_a_built_in_name_refuses_the_catalog(hwlint, tmp_path):
    text = (OVERRIDE / "gpus.yaml").read_text().split("  - name: ACME-X1-96GB")[1]
    text = "gpus:\n  - name: ACME-X1-96GB" + text.replace('aliases: ["ACME-900-0001"]', 'aliases: ["ACME-900-0001", "H100 SXM"]')
    folder = team(tmp_path, "gpus.yaml", text)
    run = hwlint("check", "--catalog", folder, PRETRAIN)
    assert run.code == 2 and "Traceback" not in run.err, run.err
    line = line_of(folder / "gpus.yaml", "aliases:")
    assert re.search(rf"{re.escape(str(folder / 'gpus.yaml'))}:{line}:\d+: gpus\[0\] \(ACME-X1-96GB\) alias \"H100 SXM\" "
                     r"would capture the built-in part H100-SXM5-80GB", run.err), run.err


def test_an_alias_that_captures_another_team_entry_refuses_the_catalog(hwlint, tmp_path):
    text = (OVERRIDE / "gpus.yaml").read_text().split("  - name: ACME-X1-96GB")[1]
    first = "gpus:\n  - name: ACME-X1-96GB" + text
    second = "gpus:\n  - name: ACME-X2-96GB" + text.replace('aliases: ["ACME-900-0001"]', 'aliases: ["ACME X1 96GB"]')
    folder = team(tmp_path, "a.yaml", first)
    team(tmp_path, "b.yaml", second)
    run = hwlint("catalog", "list", "--catalog", folder)
    assert run.code == 2 and "Traceback" not in run.err, run.err
    assert f"{folder / 'b.yaml'}:" in run.err
    assert f'alias "ACME X1 96GB" would capture the team entry at {folder / "a.yaml"}:2 ACME-X1-96GB' in run.err


def test_a_team_name_that_is_a_built_in_alias_refuses_the_catalog(hwlint, tmp_path):
    text = "gpus:\n  - name: V100-SXM2" + (OVERRIDE / "gpus.yaml").read_text().split("  - name: V100-SXM2-32GB")[1].split(
        "  - name: ACME")[0]
    folder = team(tmp_path, "gpus.yaml", text)
    run = hwlint("check", "--catalog", folder, FLAWED)
    assert run.code == 2 and "Traceback" not in run.err, run.err
    assert f'{folder / "gpus.yaml"}:2:' in run.err
    assert 'name "V100-SXM2" is already a name or alias of the built-in part V100-SXM2-32GB' in run.err


def test_a_team_part_of_its_own_stays_allowed_and_is_named_a_team_part(hwlint, tmp_path):
    text = (EXAMPLES / "single-gpu-experiment.hw.yaml").read_text().replace("model: RTX-6000-Ada", "model: ACME-900-0001")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text)
    run = hwlint("check", "-v", "--catalog", OVERRIDE, path, "--select", "BUY010")
    assert "BUY010 warning" not in run.out and "1 passed" in run.out, run.out
    markdown = hwlint("check", "--catalog", OVERRIDE, "--format", "markdown", path).out
    row = next(r for r in markdown.splitlines() if r.startswith("| GPU | ACME-X1-96GB ("))
    assert "(team part, " in row, row
    assert "team catalog" not in markdown[markdown.find("## Values set over the catalog"):] or \
        "## Values set over the catalog" not in markdown


def test_catalog_list_and_show_name_team_parts_and_team_overrides(hwlint):
    listed = hwlint("catalog", "list", "--catalog", OVERRIDE, "--kind", "gpus").out.splitlines()
    assert next(r for r in listed if " V100-SXM2-32GB " in r).endswith(f"team override of the built-in part, {OVERRIDE}")
    assert next(r for r in listed if " ACME-X1-96GB " in r).endswith(f"team part, {OVERRIDE}")
    assert next(r for r in listed if " H100-SXM5-80GB " in r).endswith("built-in")
    shown = hwlint("catalog", "show", "--catalog", OVERRIDE, "V100-SXM2").out
    assert shown.startswith(f"V100-SXM2-32GB (GPU, NVIDIA; team override of the built-in part, {OVERRIDE})"), shown
