"""The catalog from the command line: list, show, ordering part numbers, a team's own folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import EXAMPLES, Run, hwlint_process

TEAM_GPU = """\
gpus:
  - name: ACME-X1-96GB
    aliases: ["ACME-900-0001"]
    vendor: Acme
    class: datacenter
    form_factor: oam
    memory_gb: 96
    precisions: [fp32, bf16]
    dense_tflops: {bf16: 500}
    ecc: true
    source: {title: "Acme X1 datasheet rev 3", publisher: Acme, year: 2026}
    as_of: 2026-10-01
    read_on: 2026-11-20
"""


def team(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "team-catalog"
    folder.mkdir()
    (folder / "gpus.yaml").write_text(text)
    return folder


def manifest_with_gpu(tmp_path: Path, model: str) -> Path:
    text = (EXAMPLES / "single-gpu-experiment.hw.yaml").read_text().replace("model: RTX-6000-Ada", f"model: {model}")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text)
    return path


def test_catalog_list_names_every_entry_with_its_document_date(hwlint):
    run = hwlint("catalog", "list")
    assert run.code == 0
    for name in ("H200-NVL-141GB", "B300-SXM-270GB", "MI325X", "Gaudi3-HL-325L", "ConnectX-8", "SN5610",
                 "PowerEdge-XE9680", "SYS-821GE-TNHR", "Cray-XD670", "ThinkSystem-SR680a-V3", "HGX-H200-8GPU",
                 "GB200-NVL72"):
        assert name in run.out, name
    v100 = next(line for line in run.out.splitlines() if "V100-SXM2-32GB" in line)
    assert "as of 2020-01-01" in v100 and "read 2026-11-30" in v100  # the 2020 datasheet, read in 2026


def test_catalog_show_finds_an_ordering_part_number(hwlint):
    run = hwlint("catalog", "show", "MCX75310AAS-NEAT")
    assert run.code == 0
    assert run.out.startswith("ConnectX-7 (NIC, NVIDIA")
    assert "document date (as_of): 2022-07-31" in run.out and "source: NVIDIA MLNX_OFED" in run.out


def test_catalog_show_of_an_unknown_name_says_what_to_do(hwlint):
    run = hwlint("catalog", "show", "GB200-NVL73")
    assert run.code == 2
    assert 'no catalog entry "GB200-NVL73"' in run.err and "GB200-NVL72" in run.err


def test_a_manifest_can_name_a_part_by_its_ordering_number(hwlint, tmp_path):
    text = (EXAMPLES / "multi-node-pretrain.hw.yaml").read_text().replace(
        "{model: ConnectX-7, count: 8,", "{model: MCX75310AAS-NEAT, count: 8,")
    path = tmp_path / "m.hw.yaml"
    path.write_text(text)
    run = hwlint("check", "--format", "markdown", path)
    assert run.code == 0, run.out
    assert "| NIC | ConnectX-7 |" in run.out


def test_a_team_catalog_adds_parts(hwlint, tmp_path):
    folder = team(tmp_path, TEAM_GPU)
    path = manifest_with_gpu(tmp_path, "ACME-900-0001")
    without = hwlint("check", path)
    assert without.code == 1 and 'names "ACME-900-0001", which is not in the catalog' in without.out
    run = hwlint("check", "--catalog", folder, "--format", "markdown", path)
    assert "not in the catalog" not in run.out
    row = next(line for line in run.out.splitlines() if line.startswith("| GPU | ACME-X1-96GB ("))
    assert "team-catalog) | 2026-10-01 | 2026-11-20 |" in row  # the team folder, the document date, the reading day
    listed = hwlint("catalog", "list", "--catalog", folder, "--kind", "gpus")
    assert any("ACME-X1-96GB" in line and str(folder) in line for line in listed.out.splitlines())


def test_a_team_entry_replaces_a_built_in_one_of_the_same_name(hwlint, tmp_path):
    folder = team(tmp_path, TEAM_GPU.replace("ACME-X1-96GB", "RTX-6000-Ada").replace("memory_gb: 96", "memory_gb: 24"))
    run = hwlint("catalog", "show", "--catalog", folder, "RTX-6000-Ada")
    assert "memory_gb: 24" in run.out and str(folder) in run.out


def test_a_team_entry_without_source_or_date_is_refused_with_its_line(hwlint, tmp_path):
    text = TEAM_GPU.replace('    source: {title: "Acme X1 datasheet rev 3", publisher: Acme, year: 2026}\n', "")
    text = text.replace("    as_of: 2026-10-01\n", "")
    folder = team(tmp_path, text)
    run = hwlint("check", "--catalog", folder, manifest_with_gpu(tmp_path, "ACME-X1-96GB"))
    assert run.code == 2
    assert "Traceback" not in run.err
    assert f"{folder / 'gpus.yaml'}:2:" in run.err and "source: Field required" in run.err


def test_a_team_entry_without_its_document_date_or_a_reason_is_refused(hwlint, tmp_path):
    folder = team(tmp_path, TEAM_GPU.replace("    as_of: 2026-10-01\n", ""))
    run = hwlint("check", "--catalog", folder, manifest_with_gpu(tmp_path, "ACME-X1-96GB"))
    assert run.code == 2 and "Traceback" not in run.err
    assert f"{folder / 'gpus.yaml'}:2:" in run.err
    assert "as_of (the date printed on the document) is missing" in run.err and "undated" in run.err


def test_a_team_entry_of_an_undated_document_says_why_and_its_date_is_to_confirm(hwlint, tmp_path):
    folder = team(tmp_path, TEAM_GPU.replace("    as_of: 2026-10-01\n", '    undated: "the datasheet prints no date"\n'))
    run = hwlint("check", "--catalog", folder, "--format", "json", manifest_with_gpu(tmp_path, "ACME-X1-96GB"))
    assert "Traceback" not in run.err
    buy004 = next(r for r in json.loads(run.out)["manifests"][0]["results"] if r["rule_id"] == "BUY004")
    assert buy004["status"] == "pending"
    assert "ACME-X1-96GB: as_of (date unknown: the datasheet prints no date)" in buy004["reason"]


def test_a_team_catalog_entry_with_an_unknown_key_is_refused(hwlint, tmp_path):
    folder = team(tmp_path, TEAM_GPU.replace("    ecc: true\n", "    ecc: true\n    memory_gib: 89\n"))
    run = hwlint("catalog", "list", "--catalog", folder)
    assert run.code == 2 and "memory_gib: Extra inputs are not permitted" in run.err
    assert f"{folder / 'gpus.yaml'}:11:5:" in run.err


def test_a_missing_team_folder_is_a_usage_error(hwlint, tmp_path):
    run = hwlint("check", "--catalog", tmp_path / "nowhere", EXAMPLES / "single-gpu-experiment.hw.yaml")
    assert run.code == 2 and "not a folder of catalog files" in run.err


def test_a_team_catalog_is_read_again_when_it_changes(tmp_path):
    """The pack cache carries the team's entries as checked: a warm run (a new process, as
    a hook runs) sees an edited value and an entry made invalid as surely as a cold one."""
    folder = team(tmp_path, TEAM_GPU)
    path = manifest_with_gpu(tmp_path, "ACME-X1-96GB")
    env = {"HWLINT_CACHE_DIR": str(tmp_path / "cache")}

    def check(*args: object) -> Run:
        return hwlint_process("check", "--catalog", folder, *args, path, env=env)

    for _ in range(2):  # cold, then warm
        assert "86.4 GB usable of 96 GB" in check("--format", "json").out
    (folder / "gpus.yaml").write_text(TEAM_GPU.replace("memory_gb: 96", "memory_gb: 80"))
    assert "72 GB usable of 80 GB" in check("--format", "json").out
    (folder / "gpus.yaml").write_text(TEAM_GPU.replace("    ecc: true\n", "    ecc: true\n    memory_gib: 89\n"))
    run = check()
    assert run.code == 2 and "memory_gib: Extra inputs are not permitted" in run.err
    assert f"{folder / 'gpus.yaml'}:11:5:" in run.err and "Traceback" not in run.err


def test_a_team_catalog_edit_that_keeps_size_and_mtime_is_still_seen(tmp_path):
    """A repository's files are keyed by content (what hwlint installs is keyed by size and
    mtime): a checkout or a tool that keeps a file's size and time cannot bring back a pack
    built from the old values."""
    folder = team(tmp_path, TEAM_GPU)
    path = manifest_with_gpu(tmp_path, "ACME-X1-96GB")
    env = {"HWLINT_CACHE_DIR": str(tmp_path / "cache")}
    gpus = folder / "gpus.yaml"
    assert "86.4 GB usable of 96 GB" in hwlint_process("check", "--catalog", folder, "--format", "json", path,
                                                      env=env).out
    before = gpus.stat()
    gpus.write_text(TEAM_GPU.replace("memory_gb: 96", "memory_gb: 80"))
    os.utime(gpus, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert gpus.stat().st_size == before.st_size and gpus.stat().st_mtime_ns == before.st_mtime_ns
    assert "72 GB usable of 80 GB" in hwlint_process("check", "--catalog", folder, "--format", "json", path,
                                                    env=env).out


def test_an_empty_team_catalog_or_rule_file_is_named_without_manifest_advice(hwlint, tmp_path):
    """`hwlint init` makes a starter manifest: it is the advice for an empty manifest only."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "gpus.yaml").write_text("# to come\n")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "ops.yaml").write_text("")
    (tmp_path / "empty.hw.yaml").write_text("")
    manifest = EXAMPLES / "single-gpu-experiment.hw.yaml"
    run = hwlint("check", "--catalog", tmp_path / "catalog", manifest)
    assert run.code == 2 and f"{tmp_path / 'catalog' / 'gpus.yaml'}:1:1: the file is empty (or only comments)" in run.err
    assert "hwlint init" not in run.err
    run = hwlint("check", "--rules", tmp_path / "rules", manifest)
    assert run.code == 2 and f"{tmp_path / 'rules' / 'ops.yaml'}:1:1: the file is empty (or only comments)" in run.err
    assert "hwlint init" not in run.err
    assert "run `hwlint init` for a starter manifest" in hwlint("check", tmp_path / "empty.hw.yaml").out
