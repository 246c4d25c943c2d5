"""Layout search: for each candidate GPU, the parallel layouts (tensor within the NVLink
domain, pipeline, data, ZeRO stage, recompute, micro-batch) that fit GPU memory and meet the
deadline, each with the fewest whole nodes that do.

Memory per GPU and time to train come from `facts.layout_facts`, the same code the review's
GPU001 and GPU006 read; the search only proposes layouts and inverts the facts by calling
them (`formulas.smallest_meeting`), so a better time or memory model flows in here unchanged.
Whether a layout can be launched at all (heads over tensor parallelism, layers over pipeline
stages, the global batch over micro-batch x data) is asked of the rule pack's own plan rules
(`review.plan_errors`, GPU009-GPU011 among them), so the sizer proposes nothing `check` refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from linter.engine.review import plan_errors, plan_rules
from linter.engine.rules import RulePack
from linter.manifest.catalog import _spec, load_catalog
from linter.manifest.loader import plain_copy
from linter.physics import formulas as physics
from linter.physics.facts import layout_facts
from linter.physics.values import Unknown
from linter.sizing.goal import Goal

RECOMPUTE = ("none", "selective", "full")
MICRO_BATCHES = (1, 2, 4, 8)
MAX_PIPELINE = 128
SEARCH_CAP = 100_000  # GPUs: above the largest published training clusters; restarts make more GPUs slower well before it
ASSUMED_PER_NODE = 8  # servers for a GPU with no catalog system: the common 8-GPU board (an assumption, said so)
TP_LINKS = ("nvlink", "nvswitch", "infinity-fabric")  # the link kinds LNK001 accepts for tensor parallelism


@dataclass(frozen=True)
class Layout:
    t: int
    p: int
    d: int
    zero: int
    recompute: str
    mb: int

    @property
    def text(self) -> str:
        return f"t{self.t} p{self.p} d{self.d} z{self.zero} {self.recompute} mb{self.mb}"


@dataclass
class Row:
    gpu: str
    system: str | None
    per_node: int
    nodes: int
    layout: Layout
    days: float
    seconds: float
    breakdown: dict[str, Any]
    memory_gb: float
    usable_gb: float
    design: dict[str, Any] = field(default_factory=dict)  # filled by linter.sizing.design
    problem: str = ""  # why the design or the review refused this row
    confirmed: bool = False
    rank: int = 0

    @property
    def gpus(self) -> int:
        return self.nodes * self.per_node

    @property
    def ident(self) -> str:
        return f"{self.gpu}#{self.rank}"


@dataclass
class Candidate:
    """One GPU model: its rows, or why it was dropped."""

    gpu: str
    system: str | None
    per_node: int
    notes: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    dropped: str = ""
    closest: str = ""
    needed: int = 0  # GPUs it would take without --max-gpus (0: not computed)


def plan_data(goal: Goal) -> dict[str, Any]:
    """The plan the sizer searches with: the draft's own plan (MoE, fine-tuning method, GQA,
    attention kernel and every other field it gives) under the goal's values."""
    draft_plan = plain_copy(goal.draft.get("plan") or {})
    draft_plan.pop("parallelism", None)
    draft_plan.pop("micro_batch_size", None)
    model = {**goal.model_keys, **(draft_plan.get("model") or {}),
             "parameters_billion": goal.params_b, "layers": goal.layers, "hidden_size": goal.hidden,
             "attention_heads": goal.heads, "sequence_length": goal.seq}
    plan: dict[str, Any] = {
        **draft_plan,
        "goal": goal.goal,
        "model": model,
        "precision": goal.precision,
        "optimizer": goal.optimizer,
        "training_tokens_billion": goal.tokens_b,
        "target_duration_days": goal.days,
    }
    model.pop("hf_config", None)  # read once by the goal; the written manifest carries its values
    if goal.model_name and "name" not in model and goal.model_name in _model_names():
        model["name"] = goal.model_name
    if goal.method:
        plan["finetune"] = {**(draft_plan.get("finetune") or {}), "method": goal.method}
    if goal.global_batch:
        plan["global_batch_size"] = goal.global_batch
    if goal.dataset_tb or goal.dataset_tokens_b:
        plan["dataset"] = {k: v for k, v in (("size_tb", goal.dataset_tb), ("tokens_billion", goal.dataset_tokens_b)) if v}
    if goal.start_date:
        plan["start_date"] = goal.start_date
    return plan


def _model_names() -> set[str]:
    from linter.manifest.models import names

    return set(names())


def chosen_nics(per_node: int, policy: dict[str, float]) -> list[dict[str, Any]]:
    """Compute NICs for a server the catalog gives none for: ConnectX-7 ports at their top rate,
    enough per GPU for the policy's pretraining bandwidth (NET005)."""
    nic = load_catalog().nics["ConnectX-7"]
    rate = nic["max_port_rate_gbps"]
    per_gpu = max(1, math.ceil(policy["pretrain_gbps_per_gpu"] / rate))
    return [{"model": nic["name"], "count": per_gpu * per_node, "rate_gbps": rate, "kind": "infiniband",
             "purpose": "compute", "gpudirect_rdma": nic.get("gpudirect_rdma")}]


def has_compute_nics(spec: dict[str, Any]) -> bool:
    return any(n.get("purpose", "compute") in ("compute", "converged") and n.get("rate_gbps") for n in spec.get("nics") or [])


def node_shape(gpu_name: str) -> tuple[str | None, dict[str, Any], int, list[str]]:
    """(catalog system or None, the pool's server spec, GPUs per node, notes)."""
    catalog = load_catalog()
    systems = [s for s in catalog.systems.values() if s["gpu"]["model"] == gpu_name]
    if systems:
        system = sorted(systems, key=lambda s: s["name"])[0]
        spec = _spec(system)
        spec["gpu"] = {**_spec(catalog.gpus[gpu_name]), **spec["gpu"]}
        return system["name"], spec, spec["gpu"]["count"], []
    gpu = _spec(catalog.gpus[gpu_name])
    gpu["count"] = ASSUMED_PER_NODE
    note = (f"no catalog system has the {gpu_name}: a server of {ASSUMED_PER_NODE} is assumed with chosen NICs; its power "
            "is what the review estimates or lacks, its host RAM and disks are unknown until you name the server")
    return None, {"gpu": gpu}, ASSUMED_PER_NODE, [note]


def tensor_degrees(spec: dict[str, Any], per_node: int, goal: Goal) -> list[int]:
    """Tensor-parallel degrees inside one NVLink domain [narayanan-2021] §3.2 (LNK001, LNK002)
    that split the hidden size evenly; whether the heads divide is GPU009's (Plan.allows)."""
    link = spec.get("intra_node_link") or spec["gpu"].get("link") or {}
    kind = link.get("kind") or spec["gpu"].get("link", {}).get("kind")
    domain = min(per_node, link.get("max_gpus") or spec["gpu"].get("link", {}).get("max_gpus") or per_node)
    if kind == "nvlink-bridge":
        domain = min(domain, 2)
    elif kind not in TP_LINKS:
        domain = 1
    out, t = [], 1
    while t <= domain:
        if goal.hidden % t == 0:
            out.append(t)
        t *= 2
    return out


def pipeline_degrees(layers: int) -> list[int]:
    """Every pipeline depth up to one layer per stage; whether the layers divide is GPU010's (Plan.allows)."""
    return list(range(1, min(layers, MAX_PIPELINE) + 1))


class Plan:
    """The plan rules of the pack (review.plan_rules), asked once per layout: may a plan with
    this tensor, pipeline, micro-batch and data degree be launched? A value the rules need
    and the layout leaves out (data, while the GPU count is not chosen yet) does not refuse it."""

    def __init__(self, pack: RulePack, plan: dict[str, Any]):
        self.plan = plain_copy(plan)
        self.rules = plan_rules(pack, {**self.plan, "micro_batch_size": 1,
                                       "parallelism": {"tensor": 2, "pipeline": 2, "data": 1}})
        self.cache: dict[tuple, list] = {}

    def errors(self, t: int, p: int, mb: int, d: int | None = None) -> list:
        key = (t, p, mb, d)
        if key not in self.cache:
            par = {"tensor": t, "pipeline": p, **({"data": d} if d else {})}
            self.cache[key] = plan_errors(self.rules, {**self.plan, "micro_batch_size": mb, "parallelism": par})
        return self.cache[key]

    def allows(self, t: int, p: int, mb: int, d: int | None = None) -> bool:
        return not self.errors(t, p, mb, d)


def search_gpu(goal: Goal, gpu_name: str, policy: dict[str, float], cap: int, pack: RulePack, top: int = 5) -> Candidate:
    system, spec, per_node, notes = node_shape(gpu_name)
    cand = Candidate(gpu=gpu_name, system=system, per_node=per_node, notes=notes)
    gpu = spec["gpu"]
    if goal.precision not in (gpu.get("precisions") or []):
        cand.dropped = f"does not support {goal.precision} (the catalog lists {', '.join(gpu.get('precisions') or ['nothing'])})"
        return cand
    if not (gpu.get("dense_tflops") or {}).get(goal.precision):
        cand.dropped = f"the catalog has no dense {goal.precision} TFLOPS figure, so its time to train is unknown"
        return cand
    plan = plan_data(goal)
    del plan["target_duration_days"]
    launchable = Plan(pack, plan)
    pool: dict[str, Any] = {"name": "gpu", "count": 1, **spec}
    if not has_compute_nics(spec):
        pool["nics"] = chosen_nics(per_node, policy)
    data = {"plan": plan, "node_pools": [pool], "storage": {"checkpoint": {"interval_minutes": goal.checkpoint_minutes}}}

    def at(layout: tuple, n: int) -> dict[str, Any]:
        t, p, zero, recompute, mb = layout
        plan["parallelism"] = {"tensor": t, "pipeline": p, "data": n // (t * p), "zero_stage": zero,
                               "sequence_parallel": t > 1, "activation_recompute": recompute}
        plan["micro_batch_size"] = mb
        pool["count"] = n // per_node
        return layout_facts(data, policy)

    def fits(f: dict) -> bool:
        m = f["memory"]
        return not isinstance(m["total_gb"], Unknown) and m["total_gb"] <= m["usable_gb"]

    deadline = goal.days * (1 - policy["schedule_margin_pct"] / 100)  # the margin the policy keeps free

    def meets(f: dict) -> bool:  # GPU006's comparison; the target stays out of the search data (no GPU008 inside)
        days = f["training"]["days"]
        return not isinstance(days, Unknown) and days <= deadline

    def launchable_at(layout: tuple, n: int) -> bool:
        t, p, _, _, mb = layout
        return launchable.allows(t, p, mb, n // (t * p))

    # Ordered so that, for each (t, p, mb), less ZeRO and less recompute come first: neither ever
    # makes a step faster, so once a (zero, rc) meets the deadline with memory to spare (time-bound),
    # every layout with at least that ZeRO stage and that much recompute is dominated and skipped.
    fixed = goal.fixed
    shape_mbs = (fixed["micro_batch_size"],) if "micro_batch_size" in fixed else MICRO_BATCHES
    shapes = [(t, p, zero, rc, mb)
              for t in tensor_degrees(spec, per_node, goal) if fixed.get("tensor", t) == t
              for p in pipeline_degrees(goal.layers) if t * p <= cap and fixed.get("pipeline", p) == p
              and launchable.allows(t, p, shape_mbs[0])
              for mb in shape_mbs
              for zero in ((0, 1, 2, 3) if p == 1 else (0, 1))  # DeepSpeed's pipeline engine takes ZeRO 0-1 only
              if fixed.get("zero_stage", zero) == zero
              for rc in RECOMPUTE if fixed.get("activation_recompute", rc) == rc]
    if not shapes:
        refused = launchable.errors(fixed.get("tensor", 1), fixed.get("pipeline", 1), shape_mbs[0])
        cand.dropped = ("no layout has " + ", ".join(f"{k} {v}" for k, v in fixed.items())
                        + (": " + "; ".join(f"{e.rule_id} {e.message}" for e in refused) if refused else
                           f" (tensor parallelism up to {max(tensor_degrees(spec, per_node, goal))} here)"))
        return cand
    guess = per_node
    too_big: set[tuple] = set()  # (t, p, zero, rc) whose smaller micro-batch already missed memory
    bound: dict[tuple, list[tuple[int, int]]] = {}  # (t, p, mb) -> time-bound (zero, rc index) points
    best: dict[tuple, int] = {}  # (t, p, zero, rc) -> fewest GPUs found
    first_mb: dict[tuple, int] = {}  # (t, p, zero, rc) -> GPUs the smallest micro-batch needs
    rows: list[Row] = []
    for shape in shapes:
        t, p, zero, rc, mb = shape
        key, rc_i = (t, p, zero, rc), RECOMPUTE.index(rc)
        if key in too_big or any(zero >= z and rc_i >= r for z, r in bound.get((t, p, mb), ())):
            continue
        step = math.lcm(t * p, per_node)
        if step > cap:
            continue
        cache: dict[int, dict] = {}

        def facts_at(n: int) -> dict:
            if n not in cache:
                cache[n] = at(shape, n)
            return cache[n]

        # Only the `top` best layouts are shown: one that needs more GPUs than the top-th best
        # so far cannot enter, so its search stops there.
        kept = sorted(best.values())
        limit = kept[top - 1] if len(kept) >= top else cap
        if mb != shape_mbs[0]:
            # A larger micro-batch only needs more memory; it is searched only where it could
            # need fewer GPUs than the smallest one did (one step below its count).
            n1 = first_mb.get(key)
            if n1 is None or n1 - step < step or not (fits(facts_at(n1 - step)) and meets(facts_at(n1 - step))):
                continue
        if limit < step:
            continue
        top_n = limit // step * step
        if not fits(facts_at(top_n)):  # more GPUs than the limit would be needed to hold it
            too_big.add(key)  # and a larger micro-batch needs more still
            continue
        if isinstance(facts_at(top_n)["training"]["days"], Unknown) and isinstance(facts_at(step)["training"]["days"], Unknown):
            continue  # no time estimate for this layout at any size (a catalog value is missing): said when dropped
        first = facts_at(max(step, -(-guess // step) * step))
        first_days = first["training"]["days"]
        if not isinstance(first_days, Unknown) and 0 < first_days < 1e8 and math.isfinite(first_days):
            n0 = max(step, -(-guess // step) * step)  # time ~ 1/n is the guess only; the facts decide
            guess = min(math.ceil(n0 * first_days / goal.days), limit)
        n_time = physics.smallest_meeting(lambda n: meets(facts_at(n)), guess, step, limit)
        if n_time is None and guess > step:  # time is not monotone (restarts grow with the GPUs): from the bottom
            n_time = physics.smallest_meeting(lambda n: meets(facts_at(n)), step, step, limit)
        if n_time is None:
            continue
        n = n_time
        if fits(facts_at(n)):
            bound.setdefault((t, p, mb), []).append((zero, rc_i))
        else:
            if zero == 0:  # without ZeRO, more ranks do not shrink the per-GPU state
                too_big.add(key)
                continue
            n = physics.smallest_meeting(lambda n: fits(facts_at(n)), memory_guess(facts_at, n, step), step, limit)
            if n is None:
                continue
        if not launchable_at(shape, n):
            # The fewest GPUs give a data degree the batch does not divide by (GPU011): the
            # next sizes up that the plan rules accept, while time and memory still hold.
            reach = min(limit, physics.DATA_REACH * n)
            n = next((k for k in range(n + step, reach + 1, step)
                      if launchable_at(shape, k) and fits(facts_at(k)) and meets(facts_at(k))), None)
            if n is None:
                continue
        guess = n
        best[key] = min(best.get(key, n), n)
        if mb == shape_mbs[0]:
            first_mb[key] = n
        f = facts_at(n)
        rows.append(Row(gpu=gpu_name, system=system, per_node=per_node, nodes=n // per_node,
                        layout=Layout(t, p, n // (t * p), zero, rc, mb), days=f["training"]["days"],
                        seconds=f["training"]["seconds"],
                        breakdown=breakdown(f["training"]), memory_gb=f["memory"]["total_gb"],
                        usable_gb=f["memory"]["usable_gb"]))
    rows.sort(key=rank_key)
    seen, kept = set(), []
    for row in rows:
        key = (row.layout.t, row.layout.p, row.layout.zero, row.layout.recompute)
        if key not in seen:
            seen.add(key)
            kept.append(row)
    cand.rows = kept
    if not kept:
        cand.dropped, cand.closest = closest(goal, shapes, at, fits, per_node, cap, policy)
    return cand


def memory_guess(facts_at: Any, n: int, step: int) -> int:
    """Where the per-GPU memory meets the usable memory if it falls like a + b/n (ZeRO shards
    over the data-parallel ranks): a starting point only; the facts decide."""
    m1, m2 = facts_at(n)["memory"], facts_at(2 * n)["memory"]
    a_plus = 2 * m2["total_gb"] - m1["total_gb"]  # a, from m(n) = a + b/n at n and 2n
    b = (m1["total_gb"] - m2["total_gb"]) * 2 * n
    room = m1["usable_gb"] - a_plus
    if b <= 0 or room <= 0:
        return 4 * n
    return max(step, math.ceil(b / room))


def rank_key(row: Row) -> tuple:
    """Fewest GPUs, then soonest done, then the simplest layout (no ZeRO, no recompute, least
    model parallelism), then the smallest micro-batch."""
    lay = row.layout
    return (row.gpus, row.days, lay.zero, RECOMPUTE.index(lay.recompute), lay.t * lay.p, lay.p, lay.mb)


def breakdown(training: dict[str, Any]) -> dict[str, Any]:
    """The parts of the time to train the facts give (every known `*_days` key but `days` and
    `target_days`), or the one figure there is."""
    parts = {k[:-5]: v for k, v in training.items()
             if k.endswith("_days") and k not in ("target_days",) and not isinstance(v, Unknown)}
    if isinstance(training.get("breakdown"), dict):
        parts.update(training["breakdown"])
    return parts or {"compute at MFU": training["days"]}


def closest(goal: Goal, shapes: list[tuple], at: Any, fits: Any, per_node: int, cap: int,
            policy: dict[str, float]) -> tuple[str, str]:
    """Why no layout of this GPU meets the goal, and the nearest miss."""
    best_days: tuple[float, int, tuple] | None = None
    needs: set[str] = set()
    least_memory: tuple[float, float, int] | None = None
    for shape in shapes:
        if shape[4] != MICRO_BATCHES[0]:
            continue
        step = math.lcm(shape[0] * shape[1], per_node)
        if step > cap:
            continue
        n = cap // step * step
        f = at(shape, n)
        mem = f["memory"]
        if not fits(f):
            if not isinstance(mem["total_gb"], Unknown) and (least_memory is None or mem["total_gb"] < least_memory[0]):
                least_memory = (mem["total_gb"], mem["usable_gb"], n)
            continue
        # Time is not monotone in the GPU count (restarts grow with it): try a ladder of sizes (x4).
        k = n
        while k >= step:
            f = at(shape, k)
            days = f["training"]["days"]
            if isinstance(days, Unknown):
                needs.update(days.needs)
                break
            if fits(f) and not isinstance(days, Unknown) and (best_days is None or days < best_days[0]):
                best_days = (days, k, shape)
            k = (k // 4) // step * step
    limit = f"--max-gpus {goal.max_gpus}" if goal.max_gpus == cap else f"{cap:,} GPUs"
    unknown = ""
    if needs:
        unknown = ("; layouts that need it have no time estimate: the catalog lacks "
                   + ", ".join(sorted(n.replace("node_pools[0].", "") for n in needs)))
    if best_days is None and needs:
        return "time unknown" + unknown, ""
    if best_days is None:
        if least_memory is None:
            return "no layout could be assessed", ""
        need, usable, n = least_memory
        return (f"memory: even on {n:,} GPUs ({limit}) the leanest layout needs {need:,.1f} GB per GPU, "
                f"{usable:,.1f} GB usable", "")
    days, n, shape = best_days
    t, p, zero, rc, mb = shape
    return (f"time: the fastest layout found ({n:,} GPUs t{t} p{p} d{n // (t * p)} ZeRO-{zero} {rc}, "
            f"within {limit}) still takes {days:,.1f} days, over the {goal.days:g}-day deadline" + unknown, "")


def candidates(goal: Goal) -> tuple[list[str], list[tuple[str, str]]]:
    """The GPU models to search, and the catalog GPUs left out with the reason."""
    catalog = load_catalog()
    if goal.gpus:
        return goal.gpus, []
    chosen, skipped = [], []
    for name in catalog.names("gpus"):
        klass = catalog.gpus[name].get("class")
        if klass == "datacenter":
            chosen.append(name)
        else:
            skipped.append((name, f"a {klass or 'unclassified'} part, not a data-centre one (name it with --gpu to include it)"))
    return chosen, skipped
