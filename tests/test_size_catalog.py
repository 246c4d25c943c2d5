"""No catalog GPU crashes the sizer: a property test over every catalog GPU and a grid of goals
(named models, goals of parameters alone, MoE, fine-tuning methods, tight and loose deadlines)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

ROOT = Path(__file__).resolve().parent.parent
GPUS = [g["name"] for g in yaml.safe_load((ROOT / "catalog" / "gpus.yaml").read_text())["gpus"]]
GOALS = [
    ["--model", "Llama-2-70B", "--goal", "finetune", "--tokens", "1", "--days", "3"],  # the MI250X TypeError
    ["--model", "Llama-3.1-70B", "--method", "qlora", "--tokens", "0.5", "--days", "2", "--seq", "4096"],
    ["--model", "Mixtral-8x7B", "--tokens", "500", "--days", "60", "--seq", "4096"],
    ["--model", "Llama-3.1-8B", "--method", "lora", "--tokens", "0.2", "--days", "1", "--seq", "2048"],
    ["--params", "34", "--tokens", "1500", "--days", "60"],
    ["--params", "13", "--moe", "16x2", "--tokens", "300", "--days", "20"],
    ["--params", "7", "--tokens", "100", "--days", "0.5"],  # too tight for most
    ["--model", "GPT-3-175B", "--tokens", "300", "--days", "34", "--max-gpus", "64"],  # capped: a closest row
]


@pytest.mark.slow
@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gpu=st.sampled_from(GPUS), goal=st.sampled_from(GOALS))
def test_no_catalog_gpu_crashes_the_sizer(hwlint, gpu, goal):
    run = hwlint("size", *goal, "--gpu", gpu)
    assert run.code in (0, 1), run.err
    assert "internal error" not in run.err and "Traceback" not in run.err
    assert f"{gpu}" in run.out  # a table for it, or the reason it was dropped
