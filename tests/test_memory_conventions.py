"""Memory conventions: DeepSpeed's documented estimator tables (models/memory_examples.yaml),
ZeRO-Offload keeping only the 16-bit weights on the GPU, ZeRO-Infinity's NVMe, and LoRA/QLoRA
checkpoints of the adapters alone, all through `hwlint check`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOC = yaml.safe_load((ROOT / "models" / "memory_examples.yaml").read_text())
GIB = 2 ** 30


def manifest(params_b: float, zero: int, offload: str, offload_params: bool, gradients: str = "fp32",
             extra_plan: dict | None = None) -> dict:
    # the documented examples' size, with a T0-like shape whose largest layer (vocabulary x hidden) is ~32M
    return {
        "manifest_version": 1, "name": "memory", "owner": "t@example.com", "date": "2026-11-01",
        "plan": {"goal": "finetune", "precision": "bf16", "optimizer": "adamw", "gradient_precision": gradients,
                 "model": {"parameters_billion": params_b, "layers": 24, "hidden_size": 1024, "attention_heads": 32,
                           "ffn_hidden_size": 16384, "vocabulary_size": 31250, "sequence_length": 512},
                 "micro_batch_size": 1, "training_tokens_billion": 1, "target_duration_days": 10,
                 "parallelism": {"data": 8, "zero_stage": zero, "offload": offload, "offload_params": offload_params},
                 **(extra_plan or {})},
        "node_pools": [{"name": "gpu", "role": "compute", "count": 1, "system": "DGX-A100"}],
    }


def review(hwlint, tmp_path: Path, data: dict) -> dict[str, dict]:
    path = tmp_path / "m.hw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    report = json.loads(hwlint("check", path, "--format", "json").out)
    return {r["rule_id"]: r for r in report["manifests"][0]["results"]}


def model_states_gb(results: dict) -> float:
    return float(re.search(r"model states ([0-9.,]+) GB", results["GPU001"]["evidence"] or results["GPU001"]["message"])
                 .group(1).replace(",", ""))


@pytest.mark.parametrize("example", DOC["examples"], ids=lambda e: f"zero{e['zero_stage']}-{e['offload']}"
                         + ("-params" if e["offload_params"] else ""))
def test_deepspeeds_documented_estimates_are_reproduced(hwlint, tmp_path, example):
    results = review(hwlint, tmp_path, manifest(DOC["parameters_million"] / 1000, example["zero_stage"], example["offload"],
                                                example["offload_params"]))
    assert model_states_gb(results) * 1e9 / GIB == pytest.approx(example["per_gpu_gib"], abs=0.06)
    assert "DeepSpeed's estimators' convention" in results["GPU001"]["evidence"]
    if "per_cpu_gib" in example:
        host = next(v for r in results.values() for k, v in r["facts"].items() if k == "facts.memory.host_offload_gb_per_node")
        assert host * 1e9 / GIB == pytest.approx(example["per_cpu_gib"], rel=0.01)


def test_zero_offload_keeps_only_the_16_bit_weights_on_the_gpu(hwlint, tmp_path):
    # Ren et al. 2021 §4: a 10B model trains on one 32 GB V100 with ZeRO-Offload (the tutorial's claim);
    # only its 2 bytes/param of 16-bit weights stay on the GPU: 20 GB
    data = manifest(10, 2, "cpu", False, gradients="16-bit")
    data["plan"]["parallelism"]["data"] = 1
    data["plan"]["precision"] = "fp16"
    data["node_pools"] = [{"name": "gpu", "role": "compute", "count": 1, "gpu": {"model": "V100-SXM2-32GB", "count": 1},
                           "host_ram_gb": 768}]
    results = review(hwlint, tmp_path, data)
    assert model_states_gb(results) == pytest.approx(20.0, abs=0.1)
    assert "offloaded to host memory (ZeRO-Offload, Ren et al. 2021 §4), the GPU keeps the 16-bit weights" \
        in results["GPU001"]["evidence"]


def test_zero_infinity_puts_the_states_on_nvme_not_in_host_ram(hwlint, tmp_path):
    results = review(hwlint, tmp_path, manifest(2.851, 3, "nvme", True))
    # the GPU keeps one layer's buffer (4 bytes x ~32M), as with CPU offload; host RAM is not asked for
    assert model_states_gb(results) == pytest.approx(0.1, abs=0.05)
    assert "offloaded to NVMe (ZeRO-Infinity" in results["GPU001"]["evidence"]
    assert results["MEM002"]["status"] != "fail"


def test_lora_and_qlora_checkpoint_the_adapters_only(hwlint, tmp_path):
    base = ROOT / "examples" / "qlora-70b-one-node.hw.yaml"
    report = json.loads(hwlint("check", base, "--format", "json").out)
    facts = {k: v for r in report["manifests"][0]["results"] for k, v in r["facts"].items()}
    # rank-64 adapters on q, k, v, o, gate, up and down of the 80-layer 70B shape (h 8,192, KV 1,024,
    # FFN 28,672): 80 x 64 x (16,384 + 9,216 + 9,216 + 16,384 + 3 x 36,864) = 828M parameters, 14 bytes each
    # with their optimizer state: 11.6 GB on the one node, not the full model's 966 GB
    adapters = 80 * 64 * (16384 + 9216 + 9216 + 16384 + 3 * 36864)
    # MEM004 reads the staging of the policy's two copies of the node's share
    assert facts["facts.local_disk.staging_tb"] == pytest.approx(2 * adapters * 14 / 1e12, rel=0.01)


def _nvme_offload(tmp_path: Path, local_nvme: dict | None) -> Path:
    """The bundled 13B fine-tune (ZeRO-3 over one DGX H100's 8 GPUs) with ZeRO-Infinity's NVMe offload."""
    data = yaml.safe_load((ROOT / "examples" / "single-node-finetune.hw.yaml").read_text())
    data["plan"]["parallelism"]["offload"] = "nvme"
    if local_nvme is None:
        del data["node_pools"][0]["local_nvme"]
    else:
        data["node_pools"][0]["local_nvme"] = local_nvme
    path = tmp_path / "offload.hw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _results(hwlint, path: Path) -> dict[str, dict]:
    report = json.loads(hwlint("check", path, "--format", "json").out)
    return {r["rule_id"]: r for r in report["manifests"][0]["results"]}


def test_zero_infinity_nvme_too_small_for_the_offloaded_states_and_the_staging_fails(hwlint, tmp_path):
    # 13B x 14 bytes (2 gradient + 12 optimizer) / 8 GPUs = 22.75 GB per GPU offloaded, x 8 GPUs = 0.182 TB
    # per node, plus MEM004's two staged copies of the node's 0.182 TB checkpoint share: 0.546 TB; 2 x 0.2 TB
    # striped holds MEM004's staging alone but not both
    path = _nvme_offload(tmp_path, {"drives": 2, "drive_capacity_tb": 0.2, "kind": "nvme", "raid": "raid0"})
    results = _results(hwlint, path)
    assert results["MEM004"]["status"] == "pass"
    mem005 = results["MEM005"]
    assert mem005["status"] == "fail" and mem005["severity"] == "error"
    assert "node_pools[0].local_nvme" in mem005["path"]
    text = " ".join(mem005["message"].split())
    for number in ("8 x 22.8 GB = 0.182 TB", "0.364 TB of checkpoint staging", "0.546 TB", "0.4 TB usable",
                   "2 x 0.2 TB, raid0", "ZeRO-Infinity"):
        assert number in text, text
    assert "0.55 TB" in mem005["fix"]
    run = hwlint("check", path)
    assert run.code == 1 and "MEM005" in run.out and "Traceback" not in run.out + run.err


def test_zero_infinity_nvme_right_sized_passes_and_the_review_shows_the_share(hwlint, tmp_path):
    results = _results(hwlint, _nvme_offload(tmp_path, {"drives": 2, "drive_capacity_tb": 0.28, "kind": "nvme",
                                                       "raid": "raid0"}))
    assert results["MEM005"]["status"] == "pass", results["MEM005"]
    assert "182 GB of them per node on its NVMe" in " ".join(results["GPU001"]["evidence"].split())


def test_zero_infinity_without_local_nvme_is_pending_never_a_pass(hwlint, tmp_path):
    results = _results(hwlint, _nvme_offload(tmp_path, None))
    assert results["MEM005"]["status"] == "pending"
    # without offload, or offloading to host memory, the rule does not apply
    data = yaml.safe_load((ROOT / "examples" / "single-node-finetune.hw.yaml").read_text())
    assert _results(hwlint, ROOT / "examples" / "single-node-finetune.hw.yaml")["MEM005"]["status"] == "skipped"
    data["plan"]["parallelism"]["offload"] = "cpu"
    path = tmp_path / "cpu.hw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert _results(hwlint, path)["MEM005"]["status"] == "skipped"
