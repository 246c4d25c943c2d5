"""What the layout search leans on to skip layouts without deriving their facts
(linter/sizing/search.py): each skip is exact only while the facts keep these properties, so
each is checked here on the facts themselves, over the catalog GPUs and a grid of layouts.
A change to the memory or time model that breaks one fails here, not as a silently worse answer."""

from __future__ import annotations

import itertools

import pytest

from linter.engine.rules import load_pack
from linter.physics.facts import layout_facts
from linter.physics.values import Unknown
from linter.sizing.goal import from_inputs
from linter.sizing.search import RECOMPUTE, Layouts, launch_counts, node_shape
from linter.sizing.sizer import policy_values

GOALS = {
    "175B": {"params": 175, "layers": 96, "hidden": 12288, "heads": 96, "seq": 2048, "global_batch": 1536,
             "tokens": 300, "days": 34},
    "70B QLoRA": {"model": "Llama-3.1-70B", "method": "qlora", "tokens": 1, "days": 5},
    "Mixtral": {"model": "Mixtral-8x22B", "tokens": 2000, "days": 90, "seq": 4096},
}
GPUS = ("H100-SXM5-80GB", "MI250X", "A100-SXM4-40GB")  # MI250X: the catalog lacks its link bandwidth


def layouts(goal_name: str, gpu: str, **policy: float) -> tuple:
    pack = load_pack([])
    goal = from_inputs(dict(GOALS[goal_name]), None, None, {k: v["default"] for k, v in pack.policy.items()})
    _, spec, per_node, _ = node_shape(gpu)
    values = {**policy_values(pack, goal), **policy}
    return goal, Layouts(goal, spec, per_node, values), per_node


def grid(goal, per_node: int):
    """(shape, GPU counts) over a spread of layouts: tensor, pipeline, chunks, context, expert,
    ZeRO, recompute, micro-batch, each with the counts it launches on."""
    experts = (1, 2) if goal.model_keys.get("moe") else (1,)
    for t, p, v, c, e, zero, rc, mb in itertools.product((1, 8), (1, 4), (1, 2), (1, 2), experts, (0, 1, 3), RECOMPUTE, (1, 2)):
        if (p == 1 and v > 1) or (p > 1 and zero > 1) or goal.layers % (p * v):
            continue
        shape = (t, p, v, c, e, zero, rc, mb)
        counts = launch_counts(goal, shape, per_node, 4096)
        if counts:
            yield shape, counts[:: max(1, len(counts) // 4)]


def states(f: dict) -> float:
    return f["memory"]["model_states_gb"]


@pytest.mark.parametrize("goal_name", GOALS)
@pytest.mark.parametrize("gpu", GPUS)
def test_what_the_search_skips_by_is_true_of_the_facts(goal_name, gpu):
    goal, lay, per_node = layouts(goal_name, gpu)
    by_split: dict[tuple, float] = {}
    timeless: dict[tuple, bool] = {}
    floor = None
    checked = 0
    for shape, counts in grid(goal, per_node):
        t, p, v, c, e, zero, rc, mb = shape
        for n in counts:
            mem = lay.memory(shape, n)["memory"]
            f = lay.facts(shape, n)
            assert f["memory"] == mem  # the memory alone is the whole facts' memory
            lay._lay_out(shape, n)  # and what Layouts keeps (node facts, memory, plan settings) changes nothing
            assert layout_facts(lay.data, lay.policy, choose_interval=lay.choose_interval) == f, (shape, n)
            # model states depend on the model-parallel split, ZeRO and the count alone
            assert by_split.setdefault((t, p, e, zero, n), states(f)) == states(f), (shape, n)
            # what the time lacks does not depend on ZeRO, recompute, micro-batch or chunks
            unknown = isinstance(f["training"]["days"], Unknown)
            assert timeless.setdefault((t, p, c, e, n), unknown) == unknown, (shape, n)
            if not unknown:
                # the model FLOPs' time is the same for every layout: floor / n days
                gpu_days = f["training"]["compute_seconds"] * n / 86400
                floor = floor or gpu_days
                assert gpu_days == pytest.approx(floor, rel=1e-12)
                assert f["training"]["days"] >= floor / n - 0.05
            if v > 1:  # interleaving only adds activations
                plain = lay.memory((t, p, 1, c, e, zero, rc, mb), n)["memory"]["total_gb"]
                assert isinstance(plain, Unknown) or mem["total_gb"] >= plain
            if mb > 1:  # a larger micro-batch only adds activations
                smaller = lay.memory((t, p, v, c, e, zero, rc, mb // 2), n)["memory"]["total_gb"]
                assert isinstance(smaller, Unknown) or mem["total_gb"] >= smaller
            if not unknown:
                # more recompute never makes a step faster; ZeRO below 3 does not change it
                # (ZeRO-3's gathers are overlapped differently: faster or slower)
                others = [(t, p, v, c, e, z, r, mb) for z in ((3,) if zero == 3 else (0, 1, 2) if p == 1 else (0, 1))
                          for r in RECOMPUTE[:RECOMPUTE.index(rc) + 1]]
                for less in others:
                    assert f["training"]["days"] >= lay.facts(less, n)["training"]["days"], (shape, less, n)
            checked += 1
        for smaller, larger in zip(counts, counts[1:]):  # memory falls with more GPUs
            a, b = lay.memory(shape, smaller)["memory"]["total_gb"], lay.memory(shape, larger)["memory"]["total_gb"]
            assert isinstance(a, Unknown) or b <= a
            assert states(lay.memory(shape, larger)) <= states(lay.memory(shape, smaller))
    assert checked > 100
    if gpu == "MI250X":
        assert any(timeless.values())  # the case the `timeless` skip is for
