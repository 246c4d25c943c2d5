"""The time model against published training runs: each run of models/runs.yaml (the paper's own
layout, model and GPUs) is written as a manifest, `hwlint check` estimates its time to train,
and the estimate must come within 10% of the figure the paper's table prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from linter.physics.formulas import training_seconds_achieved

ROOT = Path(__file__).resolve().parent.parent
RUNS = yaml.safe_load((ROOT / "models" / "runs.yaml").read_text())["runs"]
TOLERANCE = 0.10


def manifest(run: dict) -> dict:
    plan, gpu = run["plan"], run["gpu"]
    model = run["model"] if isinstance(run["model"], dict) else {"name": run["model"]}
    if "system" in gpu:
        pool = {"system": gpu["system"], "count": gpu["gpus"] // 8}
    else:
        pool = {"gpu": {"model": gpu["model"], "count": gpu["per_node"]}, "count": gpu["gpus"] // gpu["per_node"],
                "nics": gpu["nics"]}
    layout = {k: plan[k] for k in ("tensor", "pipeline", "pipeline_chunks", "zero_stage", "activation_recompute") if k in plan}
    return {
        "manifest_version": 1, "name": run["name"], "owner": "test@example.com", "date": "2026-11-01",
        "plan": {"goal": "pretrain", "model": {**model, "attention": "flash"}, "precision": "bf16", "optimizer": "adamw",
                 "micro_batch_size": plan["micro_batch_size"], "global_batch_size": plan["global_batch_size"],
                 "parallelism": {**layout, "sequence_parallel": plan["tensor"] > 1},
                 "training_tokens_billion": plan["tokens_billion"], "target_duration_days": 1000},
        "node_pools": [{"name": "gpus", "role": "compute", **pool}],
        "storage": {"checkpoint": {"interval_minutes": 60}},
        "policy": {"interruptions_per_1000_gpu_days": 0},
    }


def estimate(hwlint, tmp_path: Path, run: dict) -> tuple[float, float]:
    """(days, MFU) of `hwlint check`'s GPU006 for the run."""
    path = tmp_path / "run.hw.yaml"
    path.write_text(yaml.safe_dump(manifest(run), sort_keys=False))
    report = json.loads(hwlint("check", path, "--format", "json").out)
    gpu006 = next(r for r in report["manifests"][0]["results"] if r["rule_id"] == "GPU006")
    assert gpu006["status"] == "pass", gpu006
    mfu = re.search(r"([0-9.]+)% MFU", gpu006["evidence"])
    return gpu006["facts"]["facts.training.days"], float(mfu.group(1)) / 100


def published_days(run: dict) -> float | None:
    pub, plan, gpus = run["published"], run["plan"], run["gpu"]["gpus"]
    if "days" in pub:
        return pub["days"]
    if "gpu_hours" in pub:
        return pub["gpu_hours"] / gpus / 24
    if "tokens_per_gpu_second" in pub:
        return plan["tokens_billion"] * 1e9 / (pub["tokens_per_gpu_second"] * gpus) / 86400
    if "tflops_per_gpu_with_recompute" in pub:  # Megatron's eq. 4, the paper's own conversion
        params = run["model"].get("parameters_billion") if isinstance(run["model"], dict) else None
        params = params or yaml.safe_load((ROOT / "models" / "models.yaml").read_text())
        if isinstance(params, dict):
            params = next(m for m in params["models"] if m["name"] == run["model"])["parameters_billion"]
        return training_seconds_achieved(params * 1e9, plan["tokens_billion"] * 1e9, gpus,
                                         pub["tflops_per_gpu_with_recompute"] * 1e12) / 86400
    return None


def test_at_least_six_runs_with_their_tables():
    assert len(RUNS) >= 6
    for run in RUNS:
        assert run["source"]["url"].startswith("https://") and re.search(r"Table|§", run["source"]["section"])


@pytest.mark.parametrize("run", RUNS, ids=[r["name"] for r in RUNS])
def test_the_time_model_reproduces_the_published_run(hwlint, tmp_path, run):
    days, mfu = estimate(hwlint, tmp_path, run)
    if "mfu" in run["published"]:
        assert mfu == pytest.approx(run["published"]["mfu"], rel=TOLERANCE), (days, mfu)
    else:
        assert days == pytest.approx(published_days(run), rel=TOLERANCE), (days, mfu, published_days(run))
