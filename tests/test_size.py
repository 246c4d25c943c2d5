"""`hwlint size`: from a training goal to a manifest that `hwlint check` passes."""

from __future__ import annotations

import json
import re

import pytest

# GPT-3's global batch: 3.2M tokens = 1,536 sequences of 2,048 (Brown et al. 2020, Table 2.1).
GPT3 = ["--params", "175", "--layers", "96", "--hidden", "12288", "--heads", "96", "--seq", "2048", "--global-batch", "1536"]
LLAMA7B = ["--params", "7", "--layers", "32", "--hidden", "4096", "--heads", "32", "--global-batch", "128"]
ONE_T = ["--params", "1000", "--layers", "128", "--hidden", "25600", "--heads", "160", "--seq", "2048", "--global-batch", "3072"]
SEVENTY_B = ["--params", "70", "--layers", "80", "--hidden", "8192", "--heads", "64", "--seq", "4096", "--global-batch", "1024"]


def flat(text: str) -> str:
    """The text with its line wrapping undone (the output wraps at 100 columns)."""
    return " ".join(text.split())


def size_json(hwlint, *args: str) -> dict:
    run = hwlint("size", *args, "--format", "json")
    assert run.code in (0, 1), run.err
    return json.loads(run.out)


def best_row(report: dict) -> dict:
    return next(r for m in report["models"] for r in m["rows"] if r["id"] == report["best"])


def test_gpt3_175b_in_34_days_points_to_about_1000_a100s(hwlint):
    # Narayanan et al. 2021 (Megatron-LM), §5.1: GPT-3 175B on 300B tokens trains in about 34
    # days on 1,024 A100 GPUs at 140 TFLOP/s per GPU, with Megatron's layout (t = 8 inside the
    # node, full recompute, no ZeRO); the time model's compute_efficiency is calibrated on it.
    # The published 34 days is the run's own time: no schedule margin on top (policy schedule_margin_pct 0).
    report = size_json(hwlint, *GPT3, "--tokens", "300", "--days", "34", "--gpu", "A100-SXM4-80GB",
                       "--tensor", "8", "--recompute", "full", "--zero", "0", "--policy", "schedule_margin_pct=0")
    row = best_row(report)
    assert 950 <= row["gpus"] <= 1100
    assert row["days"] <= 34 and set(row["days_breakdown"]) >= {"compute", "recompute", "bubble"}
    assert row["reviewed"]
    # left free, the search finds a leaner layout (no recompute, ZeRO-1): fewer GPUs for the same date
    free = best_row(size_json(hwlint, *GPT3, "--tokens", "300", "--days", "34", "--gpu", "A100-SXM4-80GB",
                              "--policy", "schedule_margin_pct=0"))
    assert free["gpus"] < row["gpus"] and free["tensor"] <= 8


def test_7b_fine_tune_points_to_one_8_gpu_node(hwlint):
    # Stanford Alpaca (Taori et al., 2023, crfm.stanford.edu/2023/03/13/alpaca.html): "Fine-tuning
    # a 7B LLaMA model took 3 hours on 8 80GB A100s"; 52K demonstrations, 3 epochs, at most 512
    # tokens each: at most 0.08B tokens.
    report = size_json(hwlint, *LLAMA7B, "--seq", "512", "--tokens", "0.08", "--days", "0.125",
                       "--goal", "finetune", "--gpu", "A100-SXM4-80GB")
    row = best_row(report)
    assert row["nodes"] == 1 and row["gpus"] == 8
    assert row["switches"] is None  # one node: no inter-node fabric


GRID = [
    ("7B fine-tune, one node", [*LLAMA7B, "--seq", "2048", "--tokens", "1", "--days", "2", "--goal", "finetune",
                                "--gpu", "H100-SXM5-80GB"]),
    ("70B on 2T tokens in 120 days, 55 kW racks", [*SEVENTY_B, "--tokens", "2000", "--days", "120", "--rack-kw", "55",
                                                   "--gpu", "H100-SXM5-80GB", "--dataset-tb", "60", "--dataset-tokens", "2000"]),
    ("34B on 1.5T tokens in 60 days on B200, capped facility", ["--params", "34", "--layers", "48", "--hidden", "8192",
                                                                 "--heads", "64", "--seq", "4096", "--tokens", "1500",
                                                                 "--global-batch", "1024",
                                                                 "--days", "60", "--gpu", "B200-SXM-180GB", "--rack-kw", "40",
                                                                 "--facility-kw", "1000"]),
    ("GPT-3 on A100 80GB", [*GPT3, "--tokens", "300", "--days", "34", "--gpu", "A100-SXM4-80GB", "--rack-kw", "50"]),
    ("1T on 450B tokens, every GPU", [*ONE_T, "--tokens", "450", "--days", "84", "--rack-kw", "60", "--dataset-tb", "200"]),
    ("13B fine-tune on L40S (no catalog server)", ["--params", "13", "--layers", "40", "--hidden", "5120", "--heads", "40",
                                                   "--seq", "4096", "--tokens", "2", "--days", "3", "--goal", "finetune",
                                                   "--global-batch", "64", "--gpu", "L40S"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,args", GRID, ids=[g[0] for g in GRID])
def test_what_size_writes_passes_check(hwlint, tmp_path, name, args):
    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", *args, "--write", out)
    assert run.code == 0, run.out + run.err
    text = out.read_text()
    assert "# derived:" in text and "node_pools:" in text
    check = hwlint("check", out)
    assert check.code == 0, check.out  # no error
    assert " error " not in check.out


def test_over_buying_is_said_with_the_sizers_own_time_model(hwlint, tmp_path):
    # Size 70B for 60 days, then give the same cluster 120 days: the review's GPU008 names the
    # node count the sizer finds for 120 days (both invert the one time fact).
    layout = ["--tensor", "8", "--pipeline", "4", "--zero", "0", "--recompute", "selective", "--micro-batch", "1"]
    short = tmp_path / "short.hw.yaml"
    assert hwlint("size", *SEVENTY_B, *layout, "--tokens", "2000", "--days", "60", "--gpu", "H100-SXM5-80GB", "--write", short).code == 0
    long_nodes = best_row(size_json(hwlint, *SEVENTY_B, *layout, "--tokens", "2000", "--days", "120",
                                    "--gpu", "H100-SXM5-80GB"))["nodes"]
    relaxed = tmp_path / "relaxed.hw.yaml"
    relaxed.write_text(short.read_text().replace("target_duration_days: 60", "target_duration_days: 120"))
    check = hwlint("check", relaxed)
    line = next(l for l in check.out.splitlines() if "GPU008" in l)
    assert "of 120 days" in line and f"({long_nodes} nodes like these)" in line


@pytest.mark.slow
def test_impossible_goal_names_the_closest_and_the_limit(hwlint):
    run = hwlint("size", *ONE_T, "--tokens", "450", "--days", "1", "--max-gpus", "8")
    assert "Traceback" not in run.err
    assert run.code == 1
    assert "No configuration meets it." in run.out
    closest = flat(run.out).split("Closest: ", 1)[1].split(" Give more days")[0]
    # even without the cap no layout is fast enough; within it, memory is what limits
    assert closest.startswith("not even without --max-gpus 8: time:") and "what limits it: memory" in closest
    assert "V100-SXM2-32GB: does not support bf16" in run.out


def test_time_limited_goal_says_time(hwlint):
    run = hwlint("size", *SEVENTY_B, "--tokens", "2000", "--days", "10", "--max-gpus", "64", "--gpu", "H100-SXM5-80GB")
    assert run.code == 1
    assert "H100-SXM5-80GB: time:" in run.out and "over the 10-day deadline" in run.out


@pytest.mark.parametrize("args,message", [
    (["--params", "-7", "--layers", "32", "--hidden", "4096", "--heads", "32", "--seq", "512", "--tokens", "1", "--days", "1", "--global-batch", "8"],
     "--params: must be more than 0"),
    ([*LLAMA7B, "--seq", "512", "--days", "1"], "the goal needs --tokens"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--moe", "2x8"], "--moe: give EXPERTSxACTIVE"),
    (["--params", "7", "--layers", "32", "--tokens", "1", "--days", "1"], "the goal needs --hidden, --heads, --seq"),
    (["--tokens", "1", "--days", "1", "--model", "GPT-5"], "'GPT-5' is not a model in models/"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--zero", "4"], "ZeRO stage is 0, 1, 2 or 3"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "0"], "--days: must be more than 0"),
    (["--params", "7", "--layers", "32", "--hidden", "4096", "--heads", "30", "--seq", "512", "--tokens", "1", "--days", "1", "--global-batch", "8"],
     "not a multiple of the 30 attention heads"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--gpu", "H100-SXM5-80G"], 'did you mean "H100-SXM5-80GB"'),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--policy", "compute_eficiency=0.5"], 'did you mean "compute_efficiency"'),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--policy", "compute_efficiency=lots"], "expected NAME=NUMBER"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--max-gpus", "0"], "--max-gpus: must be at least 1"),
    ([*LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--choose", "H100#9"], "--choose H100#9: no such row"),
])
def test_nonsense_is_a_usage_error(hwlint, args, message):
    run = hwlint("size", *args)
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err


@pytest.mark.slow
def test_output_is_identical_on_every_run(hwlint):
    args = [*ONE_T, "--tokens", "450", "--days", "84", "--rack-kw", "60"]
    first, second = hwlint("size", *args), hwlint("size", *args)
    assert first.code == 0 and first.out == second.out
    assert max(len(line) for line in first.out.splitlines()) <= 100  # one compact table
    assert "Ranked by: reviewed by the rule pack without an error first" in first.out
    table = first.out.split("(--all: every layout, with its network, storage and racks):\n", 1)[1].split("\n  #1 ")[0]
    gpus = [line.split()[1] for line in table.splitlines()[1:]]
    assert {"H100-SXM5-80GB", "B200-SXM-180GB", "H200-SXM-141GB", "A100-SXM4-40GB"} <= set(gpus)
    assert len(gpus) == len(set(gpus))  # the best row of each GPU model, once
    every = hwlint("size", *args, "--all")
    for gpu in ("H100-SXM5-80GB", "B200-SXM-180GB", "H200-SXM-141GB", "A100-SXM4-40GB"):
        assert f"\n{gpu} (" in every.out  # --all: a table per GPU model
    # the catalog gives no MI250X link bandwidth: no time for layouts that need it, and it says so
    assert "MI250X: time" in first.out and "link.bandwidth_gb_s" in flat(first.out)
    assert "RTX-4090: a consumer part" in first.out


def test_equal_rows_share_a_rank_and_a_name_never_decides(hwlint):
    # H100 SXM and H200 need the same GPUs, power and days for a 70B goal: the H200's larger memory leaves
    # more to spare, so it ranks first whatever the names; fully equal rows would share a rank (=).
    report = size_json(hwlint, *SEVENTY_B, "--tokens", "2000", "--days", "120", "--gpu", "H100-SXM5-80GB",
                       "--gpu", "H200-SXM-141GB")
    rows = {r["id"].split("#")[0]: r for m in report["models"] for r in m["rows"] if r["id"].endswith("#1")}
    h100, h200 = rows["H100-SXM5-80GB"], rows["H200-SXM-141GB"]
    if (h100["gpus"], h100["it_kw"], h100["days"]) == (h200["gpus"], h200["it_kw"], h200["days"]):
        assert report["ranked"].index(h200["id"]) < report["ranked"].index(h100["id"])
    assert "a name never decides" in report["ranking"]


def test_a_draft_manifest_gives_the_goal_and_keeps_its_own_values(hwlint, tmp_path):
    draft = tmp_path / "draft.hw.yaml"
    draft.write_text(
        "manifest_version: 1\nname: orion-34b\nowner: ml@example.com\n"
        "plan:\n  goal: pretrain\n  model: {parameters_billion: 34, layers: 48, hidden_size: 8192, attention_heads: 64,"
        " sequence_length: 4096}\n  training_tokens_billion: 1500\n  target_duration_days: 60\n"
        "  global_batch_size: 1024\n  dataset: {size_tb: 40, tokens_billion: 1500}\n"
        "node_pools:\n  - {name: gpu, count: 1, system: DGX-H100}\n"
        "facility:\n  racks:\n    - {name: r, count: 1, power_budget_kw: 45}\n"
        "operations: {monitoring: true, failure_recovery_plan: true, burn_in_test: true}\n"
    )
    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", draft, "--write", out, "--all")
    assert run.code == 0, run.err
    assert "H100-SXM5-80GB (DGX-H100)" in run.out and "B200" not in run.out  # the draft's GPU only
    text = out.read_text()
    assert "name: orion-34b" in text and "owner: ml@example.com" in text and "monitoring: true" in text
    assert "power_budget_kw: 45" in text
    check = hwlint("check", "-v", out)
    assert check.code == 0, check.out
    assert "pending" in check.out  # -v lists what is still to confirm ...
    assert not re.search(r"\b(STO001|STO002|STO003|OPS002|PWR002)\b \w+ ?pending", check.out)  # ... and these are decided
    # flags win over the draft
    faster = hwlint("size", draft, "--days", "30", "--format", "json")
    assert json.loads(faster.out)["goal"]["days"] == 30


def test_draft_without_a_plan_is_a_usage_error(hwlint, tmp_path):
    draft = tmp_path / "draft.hw.yaml"
    draft.write_text("manifest_version: 1\nname: x\n")
    run = hwlint("size", draft)
    assert run.code == 2 and "the draft has no plan: section" in run.err


def test_prices_give_money_and_quotes_that_check_reads(hwlint, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nprices:\n"
                      "  - {item: DGX-H100, purchase: 400000, rental_per_month: 18000, vendor: Example, quote_date: 2026-11-20,"
                      " lead_time_weeks: 8}\n")
    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", *SEVENTY_B, "--tokens", "2000", "--days", "120", "--gpu", "H100-SXM5-80GB", "--mode", "buy",
                 "--prices", prices, "--write", out)
    assert run.code == 0, run.err
    report = size_json(hwlint, *SEVENTY_B, "--tokens", "2000", "--days", "120", "--gpu", "H100-SXM5-80GB", "--mode", "buy",
                       "--prices", prices)
    row = best_row(report)
    assert row["money"]["capex"] == 400000 * row["nodes"] and row["money"]["currency"] == "USD"
    assert f"{row['nodes']}x DGX-H100" in out.read_text()
    assert hwlint("check", out).code == 0


def test_bad_price_file_is_a_usage_error(hwlint, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: dollars\nprices: []\n")
    run = hwlint("size", *LLAMA7B, "--seq", "512", "--tokens", "1", "--days", "1", "--prices", prices)
    assert run.code == 2 and "three-letter code" in run.err


def _statuses(run) -> dict[str, str]:
    return {r["rule_id"]: r["status"] for r in json.loads(run.out)["manifests"][0]["results"]}


def test_a_data_degree_the_batch_does_not_divide_gives_way_to_the_next_that_launches(hwlint, tmp_path):
    # 70B at t8 p4 for 60 days: 14 or 15 data-parallel replicas already meet the deadline, but a
    # global batch of 1,024 cannot be split into whole micro-batches over them (GPU011); the sizer
    # takes 16 replicas (64 nodes) and writes the 64 accumulation steps that make 1,024.
    layout = ["--tensor", "8", "--pipeline", "4", "--zero", "0", "--recompute", "selective", "--micro-batch", "1"]
    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", *SEVENTY_B, *layout, "--tokens", "2000", "--days", "60", "--gpu", "H100-SXM5-80GB", "--write", out)
    assert run.code == 0, run.out + run.err
    text = out.read_text()
    assert "    data: 16  # derived: 8 x 4 x 16 = 512 GPUs" in text
    assert "  gradient_accumulation_steps: 64  # derived: global batch 1,024 = micro-batch 1 x data 16 x 64" in text
    check = hwlint("check", "--format", "json", out)
    assert check.code == 0, check.out
    status = _statuses(check)
    assert [status[r] for r in ("GPU005", "GPU006", "GPU009", "GPU010", "GPU011")] == ["pass"] * 5
    for d in (15, 14):  # the counts the deadline alone would take: they meet it, but do not launch
        fewer = tmp_path / f"d{d}.hw.yaml"
        fewer.write_text(text.replace("    data: 16 ", f"    data: {d} ").replace("    count: 64 ", f"    count: {4 * d} ")
                         .replace("  gradient_accumulation_steps: 64", "  # accumulation steps left out"))
        status = _statuses(hwlint("check", "--format", "json", fewer))
        assert status["GPU005"] == "pass" and status["GPU006"] == "pass" and status["GPU011"] == "fail", (d, status)


def test_a_tensor_degree_the_heads_do_not_divide_is_refused_by_the_rule(hwlint):
    # 36 heads over tensor 8 is 4.5 heads per GPU: the sizer asks GPU009 and says its words
    run = hwlint("size", "--params", "7", "--layers", "32", "--hidden", "4608", "--heads", "36", "--seq", "4096",
                 "--global-batch", "128", "--tokens", "100", "--days", "10", "--gpu", "H100-SXM5-80GB", "--tensor", "8")
    assert run.code == 1
    assert "no layout has tensor 8: GPU009 36 attention heads do not divide over tensor parallelism 8" in flat(run.out)
    free = size_json(hwlint, "--params", "7", "--layers", "32", "--hidden", "4608", "--heads", "36", "--seq", "4096",
                     "--global-batch", "128", "--tokens", "100", "--days", "10", "--gpu", "H100-SXM5-80GB")
    rows = [r for m in free["models"] for r in m["rows"]]
    assert rows and all(36 % r["tensor"] == 0 and 32 % r["pipeline"] == 0 and 128 % (r["micro_batch_size"] * r["data"]) == 0
                        for r in rows)


def _written(hwlint, tmp_path, *args):
    from ruamel.yaml import YAML

    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", *args, "--write", out)
    assert run.code == 0, run.out + run.err
    return YAML(typ="safe", pure=True).load(out.read_text()), out


def test_an_air_cooled_dgx_h100_is_cooled_by_air_and_its_switches_are_racked(hwlint, tmp_path):
    data, out = _written(hwlint, tmp_path, *SEVENTY_B, "--tokens", "2000", "--days", "120", "--rack-kw", "55",
                         "--gpu", "H100-SXM5-80GB")
    racks = data["facility"]["racks"]
    assert {r["cooling"] for r in racks} <= {"air", "rear-door"}  # never direct-liquid for an air-cooled system
    gpu_racks = [r for r in racks if r.get("contents")]
    assert all(r["cooling"] == ("air" if 10.2 * r["contents"][0]["nodes"] <= 30 else "rear-door") for r in gpu_racks)
    placed = sum(s["count"] * r["count"] for r in racks for s in r.get("switches", []))
    bought = sum(s["count"] for f in data["network"]["fabrics"] for s in f["switches"])
    assert placed == bought > 0
    check = hwlint("check", "--select", "PWR008,PWR004,PWR005", "--format", "json", out)
    statuses = {r["rule_id"]: r["status"] for r in json.loads(check.out)["manifests"][0]["results"]}
    assert statuses == {"PWR008": "pass", "PWR004": "pass", "PWR005": "pass"}, statuses


def test_a_liquid_cooled_rack_scale_system_gets_liquid_and_air_cooling_that_pass(hwlint, tmp_path):
    data, out = _written(hwlint, tmp_path, *SEVENTY_B[:-2], "--global-batch", "1152", "--tokens", "2000", "--days", "30",
                         "--gpu", "GB200-186GB", "--rack-kw", "150")
    nvl72 = next(r for r in data["facility"]["racks"] if r.get("contents"))
    assert nvl72["cooling"] == "direct-liquid"
    assert nvl72["liquid_cooling_kw"] == 108 and nvl72["air_cooling_kw"] == 42  # 86.4 and 33.6 kW with 20% margin
    check = hwlint("check", "--select", "PWR011,PWR012,PWR008,PWR010", "--format", "json", out)
    statuses = {r["rule_id"]: r["status"] for r in json.loads(check.out)["manifests"][0]["results"]}
    assert statuses == {"PWR011": "pass", "PWR012": "pass", "PWR008": "pass", "PWR010": "pass"}, statuses


def test_the_schedule_margin_and_restarts_are_policy_values(hwlint):
    goal = [*SEVENTY_B, "--tokens", "2000", "--days", "60", "--gpu", "H100-SXM5-80GB"]
    kept = best_row(size_json(hwlint, *goal))
    assert kept["days"] <= 60 * 0.9  # the default 10% margin is kept free
    none = best_row(size_json(hwlint, *goal, "--policy", "schedule_margin_pct=0",
                              "--policy", "interruptions_per_1000_gpu_days=0"))
    assert none["gpus"] <= kept["gpus"] and none["days"] <= 60
    assert "restarts" not in {k for k, v in none["days_breakdown"].items() if v}
    refused = hwlint("size", *goal, "--policy", "compute_efficiency=0")
    assert refused.code == 2 and "compute_efficiency: must be more than 0" in refused.err


def _rows(report: dict) -> list[dict]:
    return [r for m in report["models"] for r in m["rows"]]


def test_a_llama_3_405b_goal_on_h100_comes_near_the_16384_gpus_meta_used(hwlint, tmp_path):
    # Llama 3 (Dubey et al. 2024): 405B on 15.6T tokens, 16,384 H100 (Table 4), about 54 days of a
    # snapshot with more than 90% effective training time (§3.3.4): 466 interruptions cost at most
    # ~17 minutes each. With the defaults alone (no restart or checkpoint flags): the policy's
    # restart_minutes derived from that bound, and each layout's checkpoint interval chosen.
    args = ["--model", "Llama-3.1-405B", "--tokens", "15600", "--days", "75", "--gpu", "H100-SXM5-80GB"]
    report = size_json(hwlint, *args)
    row = best_row(report)
    assert 16384 / 1.5 <= row["gpus"] <= 16384 * 1.5, row
    assert row["pipeline"] > 1 and row["tensor"] > 1
    assert any(r["pipeline_chunks"] > 1 for r in _rows(report))  # the interleaved schedule is searched
    assert any("Young's optimum" in c and "Young 1974" in c for c in report["goal"]["chosen"])
    # at this scale an interruption comes every ~2 hours: Young's interval for a sub-second pause is under
    # the 10 minutes the checkpoint tier takes to write one, so a checkpoint every 10 minutes (the restart
    # then costs 12 + 10 / 2 = 17 minutes, the most Llama 3's figures allow)
    data, _ = _written(hwlint, tmp_path, *args)
    assert data["storage"]["checkpoint"]["interval_minutes"] == 10


def test_a_mixtral_goal_uses_expert_parallelism(hwlint):
    report = size_json(hwlint, "--model", "Mixtral-8x22B", "--tokens", "2000", "--days", "90", "--seq", "4096",
                       "--gpu", "H100-SXM5-80GB")
    assert best_row(report)["expert"] > 1
    # a flags-only MoE goal is an MoE goal: its shape is a published MoE shape, and it writes moe:
    flags = size_json(hwlint, "--params", "141", "--moe", "8x2", "--tokens", "2000", "--days", "90", "--seq", "4096",
                      "--gpu", "H100-SXM5-80GB")
    assert flags["goal"]["model_keys"]["moe"] == {"experts": 8, "active_experts": 2}
    assert any("Mixtral-8x22B" in c and "MoE" in c for c in flags["goal"]["chosen"])


@pytest.mark.parametrize("args", [
    [*ONE_T, "--tokens", "450", "--days", "84", "--gpu", "H100-SXM5-80GB"],
    ["--model", "Llama-3.1-405B", "--tokens", "15600", "--days", "75", "--gpu", "H100-SXM5-80GB"],
    ["--params", "34", "--tokens", "1500", "--days", "60", "--gpu", "A100-SXM4-80GB"],
], ids=["1T", "405B", "34B goal only"])
def test_every_row_and_the_closest_can_be_launched(hwlint, args):
    report = size_json(hwlint, *args)
    batch = report["goal"]["global_batch"]
    for row in _rows(report):
        assert row["gpus"] == row["tensor"] * row["pipeline"] * row["context"] * row["data"]
        assert batch % (row["micro_batch_size"] * row["data"]) == 0 and row["data"] % row["expert"] == 0, row
    for model in report["models"]:
        found = re.search(r"\((\d[\d,]*) GPUs t(\d+) p(\d+) d(\d+)", model["closest"] or model["dropped"] or "")
        if found:
            gpus, t, p, d = (int(x.replace(",", "")) for x in found.groups())
            assert batch % d == 0 and gpus % (t * p * d) == 0, model


def test_a_goal_of_parameters_alone_is_sized_with_a_stated_shape_and_batch(hwlint):
    run = hwlint("size", "--params", "34", "--tokens", "1500", "--days", "60", "--gpu", "H100-SXM5-80GB")
    assert run.code == 0, run.err
    assert "model shape: the shape of LLaMA-33B (32.5B" in flat(run.out)
    assert "4M tokens per step as LLaMA-33B" in flat(run.out) and "rounded to a multiple of" in flat(run.out)
    scaled = size_json(hwlint, "--params", "20", "--tokens", "400", "--days", "30", "--gpu", "H100-SXM5-80GB")
    shape = next(c for c in scaled["goal"]["chosen"] if c.startswith("model shape"))
    assert "scaled to 20B" in shape and "[kaplan-2020]" in shape
    assert scaled["goal"]["hidden"] % scaled["goal"]["heads"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--params", "34", "--tokens", "1500", "--days", "60"],
    [*ONE_T, "--tokens", "450", "--days", "30", "--max-gpus", "2048"],
], ids=["34B on every GPU", "1T capped"])
def test_every_drop_reason_is_true(hwlint, args):
    # a GPU dropped for time names a launchable layout slower than the deadline, never one within it
    report = size_json(hwlint, *args)
    days = report["goal"]["days"]
    for model in report["models"]:
        for text in (model["dropped"] or "", model["closest"] or ""):
            found = re.search(r"still takes ([\d,.]+) days, over the ([\d,.]+)-day deadline", text)
            if found:
                assert float(found.group(1).replace(",", "")) > days * 0.9, (model["gpu"], text)
                assert float(found.group(2).replace(",", "")) == days
    gb200 = next(m for m in report["models"] if m["gpu"] == "GB200-186GB")
    assert gb200["rows"] or not gb200["dropped"].startswith("time")


@pytest.mark.parametrize("pool, drives", [("system: DGX-H100", None), ("gpu: {model: MI300X, count: 8}", 1)],
                         ids=["the server's own drives", "no catalog drives"])
def test_a_draft_offloading_to_nvme_gets_local_nvme_that_holds_the_states(hwlint, tmp_path, pool, drives):
    # ZeRO-Infinity (Rajbhandari et al. 2021 §5): 13B x 14 bytes of gradients and optimizer state leave
    # the 8 GPUs for the node's NVMe (0.182 TB), besides MEM004's two staged checkpoint shares (0.364 TB)
    draft = tmp_path / "draft.hw.yaml"
    draft.write_text(
        "manifest_version: 1\nname: offload\nplan:\n  goal: finetune\n"
        "  model: {parameters_billion: 13, layers: 40, hidden_size: 5120, attention_heads: 40, sequence_length: 4096}\n"
        "  training_tokens_billion: 2\n  target_duration_days: 3\n  parallelism: {offload: nvme, zero_stage: 3}\n"
        f"node_pools:\n  - {{name: gpu, count: 1, {pool}}}\n")
    out = tmp_path / "cluster.hw.yaml"
    run = hwlint("size", draft, "--write", out)
    assert run.code == 0, run.out + run.err
    assert "0.182 TB of states offloaded to it (ZeRO-Infinity" in flat(run.out)
    text = out.read_text()
    assert "offload: nvme" in text
    if drives:  # sized: the need with the policy's 25% storage_growth_pct headroom, 0.546 x 1.25 = 0.69 TB
        assert "local_nvme: {drives: 1, drive_capacity_tb: 0.69, kind: nvme, raid: raid0}" in text
    assert "ZeRO-Infinity" in text and "storage_growth_pct" in text
    check = hwlint("check", "--select", "MEM004,MEM005,GPU001", "--format", "json", out)
    statuses = {r["rule_id"]: r["status"] for r in json.loads(check.out)["manifests"][0]["results"]}
    assert statuses == {"MEM004": "pass", "MEM005": "pass", "GPU001": "pass"}, statuses


def test_the_checkpoint_interval_is_youngs_optimum_where_it_exceeds_the_write_time(hwlint, tmp_path):
    # 768 A100 for GPT-3: one interruption every 86,400 x 1,000 / (0.527 x 768) s = 3,558 minutes; each
    # GPU's share copied to host memory over PCIe Gen4 x16 (32 GB/s one way) pauses training ~1.6 s, and
    # Young's sqrt(2 x 1.6 s x 3,558 min) = 13.8 minutes, above the 10-minute write
    data, out = _written(hwlint, tmp_path, *GPT3, "--tokens", "300", "--days", "34", "--gpu", "A100-SXM4-80GB",
                         "--policy", "schedule_margin_pct=0")
    minutes = data["storage"]["checkpoint"]["interval_minutes"]
    t, p = data["plan"]["parallelism"]["tensor"], data["plan"]["parallelism"]["pipeline"]
    gpus = data["node_pools"][0]["count"] * 8
    pause = 175e9 * 14 / (t * p) / 32e9
    mtbf = 86400 * 1000 / (0.527 * gpus)
    assert minutes == pytest.approx((2 * pause * mtbf) ** 0.5 / 60, abs=0.1) and minutes > 10
    text = out.read_text()
    assert "chosen: every" in text and "Young 1974" in text and "MTBF" in text
    check = hwlint("check", "--select", "GPU006", "--format", "json", out)
    assert json.loads(check.out)["manifests"][0]["results"][0]["status"] == "pass"
    # a goal that names its interval keeps it
    (tmp_path / "fixed").mkdir()
    fixed, _ = _written(hwlint, tmp_path / "fixed", *GPT3, "--tokens", "300", "--days", "34", "--gpu", "A100-SXM4-80GB",
                        "--policy", "schedule_margin_pct=0", "--checkpoint-minutes", "45")
    assert fixed["storage"]["checkpoint"]["interval_minutes"] == 45
