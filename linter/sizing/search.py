"""Layout search: for each candidate GPU, the parallel layouts (tensor within the NVLink
domain, pipeline with its interleaved chunks, context, expert and data parallelism, ZeRO stage,
recompute, micro-batch) that fit GPU memory and meet the deadline, each with the fewest whole
nodes that launch.

Memory per GPU and time to train come from `facts.layout_facts`, the same code the review's
GPU001 and GPU006 read; the search only proposes layouts and inverts the facts by calling
them over the GPU counts each layout launches on (`launch_counts`: whole nodes and whole
micro-batches per data-parallel rank), so a better time or memory model flows in here unchanged.
Whether a layout can be launched at all (heads over tensor parallelism, layers over pipeline
stages, the global batch over micro-batch x data) is asked of the rule pack's own plan rules
(`review.plan_errors`, GPU009-GPU011 among them), so the sizer proposes nothing `check` refuses.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from linter.engine.review import plan_errors, plan_rules
from linter.engine.rules import RulePack
from linter.manifest.catalog import _spec, load_catalog
from linter.manifest.loader import plain_copy
from linter.physics.facts import layout_facts, layout_memory, node_facts
from linter.physics.plan import plan_settings
from linter.physics.values import Unknown
from linter.sizing.goal import Goal

RECOMPUTE = ("none", "selective", "full")
RC_INDEX = {rc: i for i, rc in enumerate(RECOMPUTE)}
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
    v: int = 1  # interleaved pipeline chunks per GPU
    c: int = 1  # context-parallel degree
    e: int = 1  # expert-parallel degree (carved out of the data-parallel ranks)

    @property
    def text(self) -> str:
        extra = "".join(f" {k}{n}" for k, n in (("v", self.v), ("c", self.c), ("e", self.e)) if n > 1)
        return f"t{self.t} p{self.p} d{self.d}{extra} z{self.zero} {self.recompute} mb{self.mb}"

    @property
    def summary(self) -> str:
        extra = "".join(f" {k}{n}" for k, n in (("v", self.v), ("c", self.c), ("e", self.e)) if n > 1)
        return f"t{self.t} p{self.p} d{self.d}{extra} ZeRO-{self.zero} recompute {self.recompute}"

    @property
    def degrees(self) -> str:
        """t/p/d, with /vN, /cN, /eN where they are used."""
        extra = "".join(f"/{k}{n}" for k, n in (("v", self.v), ("c", self.c), ("e", self.e)) if n > 1)
        return f"{self.t}/{self.p}/{self.d}{extra}"

    def parallelism(self) -> dict[str, Any]:
        """plan.parallelism of this layout (the keys left at their defaults left out)."""
        out: dict[str, Any] = {"tensor": self.t, "pipeline": self.p, "data": self.d, "zero_stage": self.zero,
                               "sequence_parallel": self.t > 1, "activation_recompute": self.recompute}
        for key, value in (("pipeline_chunks", self.v), ("context", self.c), ("expert", self.e)):
            if value > 1:
                out[key] = value
        return out


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


KEPT_PARALLELISM = ("offload", "offload_params")  # what the draft's plan.parallelism fixes beside the searched degrees


def plan_data(goal: Goal) -> dict[str, Any]:
    """The plan the sizer searches with: the draft's own plan (MoE, fine-tuning method, GQA,
    attention kernel and every other field it gives) under the goal's values."""
    draft_plan = plain_copy(goal.draft.get("plan") or {})
    kept = {k: v for k, v in (draft_plan.pop("parallelism", None) or {}).items() if k in KEPT_PARALLELISM}
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
        **({"parallelism": kept} if kept else {}),
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


CHUNKS = (1, 2, 3, 4, 6, 8)  # interleaved chunks tried per stage [narayanan-2021] §2.2.2; GPU010 wants L % (p*v) == 0
CONTEXT = (1, 2, 4, 8, 16)  # context-parallel degrees; the sequence splits into 2c chunks [megatron-context-parallel]


def chunk_degrees(layers: int, p: int) -> list[int]:
    """Interleaved chunks per stage for a pipeline of p stages (one without a pipeline has none)."""
    return [v for v in CHUNKS if v == 1 or (p > 1 and layers % (p * v) == 0)]


def context_degrees(seq: int) -> list[int]:
    """Context-parallel degrees whose 2c chunks split the sequence evenly."""
    return [c for c in CONTEXT if seq % (2 * c) == 0 or c == 1]


def expert_degrees(goal: Goal) -> list[int]:
    """Expert-parallel degrees that split the experts of each MoE layer evenly (1 for a dense model)."""
    moe = goal.model_keys.get("moe") or ((goal.draft.get("plan") or {}).get("model") or {}).get("moe")
    experts = moe.get("experts") if isinstance(moe, dict) else None
    if not experts:
        return [1]
    return [e for e in (1, 2, 4, 8, 16, 32, 64) if e <= experts and experts % e == 0]


class Plan:
    """The plan rules of the pack (review.plan_rules), asked once per layout: may a plan with
    this tensor, pipeline, micro-batch and data degree be launched? A value the rules need
    and the layout leaves out (data, while the GPU count is not chosen yet) does not refuse it."""

    def __init__(self, pack: RulePack, plan: dict[str, Any]):
        self.plan = plain_copy(plan)
        self.rules = plan_rules(pack, {**self.plan, "micro_batch_size": 1,
                                       "parallelism": {"tensor": 2, "pipeline": 2, "data": 1}})
        self.cache: dict[tuple, list] = {}

    def errors(self, t: int, p: int, mb: int, d: int | None = None, v: int = 1, c: int = 1) -> list:
        key = (t, p, mb, d, v, c)
        if key not in self.cache:
            par = {"tensor": t, "pipeline": p, **({"data": d} if d else {}), **({"pipeline_chunks": v} if v > 1 else {}),
                   **({"context": c} if c > 1 else {})}
            self.cache[key] = plan_errors(self.rules, {**self.plan, "micro_batch_size": mb, "parallelism": par})
        return self.cache[key]

    def allows(self, t: int, p: int, mb: int, d: int | None = None, v: int = 1, c: int = 1) -> bool:
        return not self.errors(t, p, mb, d, v, c)


def launch_rules(goal: Goal, pack: RulePack) -> Plan:
    """The plan rules for the goal's plan: the same for every GPU model, so built once a run."""
    plan = plan_data(goal)
    del plan["target_duration_days"]
    return Plan(pack, plan)


class Layouts:
    """One GPU model's facts over layouts and GPU counts, each derived once: the memory alone
    (`layout_memory`, asked far more often) or memory and time (`layout_facts`). A shape is
    (t, p, v, c, e, zero, recompute, micro-batch); n is the GPU count."""

    def __init__(self, goal: Goal, spec: dict[str, Any], per_node: int, policy: dict[str, float]):
        self.plan = plan_data(goal)
        del self.plan["target_duration_days"]
        self.offload = self.plan.get("parallelism") or {}  # what the draft fixes beside the searched degrees
        self.choose_interval = goal.checkpoint_minutes is None  # each layout gets its own (layout_facts)
        self.pool: dict[str, Any] = {"name": "gpu", "count": 1, **spec}
        if not has_compute_nics(spec):
            self.pool["nics"] = chosen_nics(per_node, policy)
        self.data = {"plan": self.plan, "node_pools": [self.pool],
                     "storage": {"checkpoint": {"interval_minutes": goal.checkpoint_minutes}}}
        self.per_node, self.policy = per_node, policy
        self.node = node_facts(self.data)
        self.known: dict[tuple, dict] = {}  # (shape, n) -> layout_facts
        self.memories: dict[tuple, dict] = {}  # (shape, n) -> layout_memory
        self.settings: dict[tuple, dict] = {}  # shape -> plan_settings (the same for every count)
        # The model FLOPs' time alone, in GPU-days: the same for every layout (the layout
        # changes what is added to it, not the FLOPs), so n GPUs take at least floor / n days.
        # Known once one layout's time is.
        self.floor = 0.0

    def _lay_out(self, shape: tuple, n: int) -> dict[str, Any]:
        """Lay the data out as `shape` on n GPUs; its plan settings."""
        t, p, v, c, e, zero, recompute, mb = shape
        self.plan["parallelism"] = {**self.offload, **Layout(t, p, n // (t * p * c), zero, recompute, mb, v, c, e).parallelism()}
        self.plan["micro_batch_size"] = mb
        self.pool["count"] = n // self.per_node
        if shape not in self.settings:
            self.settings[shape] = plan_settings(self.data)
        return self.settings[shape]

    def facts(self, shape: tuple, n: int) -> dict[str, Any]:
        if (shape, n) not in self.known:
            cfg = self._lay_out(shape, n)
            self.known[shape, n] = f = layout_facts(self.data, self.policy, self.node, self.memories.get((shape, n)), cfg,
                                                    self.choose_interval)
            if not self.floor and not isinstance(f["training"]["days"], Unknown):
                self.floor = f["training"]["compute_seconds"] * n / 86400
        return self.known[shape, n]

    def memory(self, shape: tuple, n: int) -> dict[str, Any]:
        """{"memory": ...}: from the whole facts where they are there."""
        if (shape, n) in self.known:
            return self.known[shape, n]
        if (shape, n) not in self.memories:
            self.memories[shape, n] = layout_memory(self.data, self.policy, self._lay_out(shape, n))
        return self.memories[shape, n]


def unsupported(goal: Goal, gpu: dict[str, Any]) -> str:
    """Why the GPU cannot train the goal at all, or "" when it may."""
    if goal.precision not in (gpu.get("precisions") or []):
        return f"does not support {goal.precision} (the catalog lists {', '.join(gpu.get('precisions') or ['nothing'])})"
    if not (gpu.get("dense_tflops") or {}).get(goal.precision):
        return f"the catalog has no dense {goal.precision} TFLOPS figure, so its time to train is unknown"
    return ""


def micro_batches(goal: Goal) -> tuple[int, ...]:
    return (goal.fixed["micro_batch_size"],) if "micro_batch_size" in goal.fixed else MICRO_BATCHES


def model_parallel(goal: Goal, spec: dict[str, Any], per_node: int, cap: int, launchable: Plan) -> list[tuple[int, int]]:
    """The (tensor, pipeline) degrees a layout on this server may take: what the goal fixes,
    within the cap, and what the plan rules allow at the first micro-batch."""
    fixed, mb = goal.fixed, micro_batches(goal)[0]
    return [(t, p) for t in tensor_degrees(spec, per_node, goal) if fixed.get("tensor", t) == t
            for p in pipeline_degrees(goal.layers) if t * p <= cap and fixed.get("pipeline", p) == p
            and launchable.allows(t, p, mb)]


def warm(goal: Goal, names: list[str], cap: int, launchable: Plan) -> None:
    """Ask the plan rules, once here, what every model's search asks first (each tensor and
    pipeline degree, `model_parallel`): a forked helper then starts with the answers in
    `launchable`'s cache instead of asking again (linter.engine.forked.share)."""
    for name in names:
        _, spec, per_node, _ = node_shape(name)
        if not unsupported(goal, spec["gpu"]):
            model_parallel(goal, spec, per_node, cap, launchable)


def search_gpu(goal: Goal, gpu_name: str, policy: dict[str, float], cap: int, pack: RulePack, top: int = 5,
               launchable: Plan | None = None) -> Candidate:
    system, spec, per_node, notes = node_shape(gpu_name)
    cand = Candidate(gpu=gpu_name, system=system, per_node=per_node, notes=notes)
    cand.dropped = unsupported(goal, spec["gpu"])
    if cand.dropped:
        return cand
    layouts = Layouts(goal, spec, per_node, policy)
    launchable = launchable or Plan(pack, layouts.plan)
    at, memory = layouts.facts, layouts.memory

    def fits(f: dict) -> bool:
        m = f["memory"]
        return not isinstance(m["total_gb"], Unknown) and m["total_gb"] <= m["usable_gb"]

    deadline = goal.days * (1 - policy["schedule_margin_pct"] / 100)  # the margin the policy keeps free

    def meets(f: dict) -> bool:  # GPU006's comparison; the target stays out of the search data (no GPU008 inside)
        days = f["training"]["days"]
        return not isinstance(days, Unknown) and days <= deadline

    def launchable_at(shape: tuple, n: int) -> bool:
        t, p, v, c, e, _, _, mb = shape
        d = n // (t * p * c)
        return d % e == 0 and launchable.allows(t, p, mb, d, v, c)

    # Ordered so that, for each (t, p, v, e, mb), less ZeRO, less recompute and less context
    # parallelism come first: none of them ever makes a step faster, so once a (zero, rc, c) meets
    # the deadline with memory to spare (time-bound), every layout with at least that ZeRO stage,
    # that much recompute and that context degree is dominated and skipped.
    fixed = goal.fixed
    shape_mbs = micro_batches(goal)
    experts, contexts = expert_degrees(goal), context_degrees(goal.seq)
    shapes = [(t, p, v, c, e, zero, rc, mb)
              for t, p in model_parallel(goal, spec, per_node, cap, launchable)
              for v in chunk_degrees(goal.layers, p)  # the plan rules judge v with the data degree (launchable_at)
              for e in experts if t * p * e <= cap
              for mb in shape_mbs
              for zero in ((0, 1, 2, 3) if p == 1 else (0, 1))  # DeepSpeed's pipeline engine takes ZeRO 0-1 only
              if fixed.get("zero_stage", zero) == zero
              for rc in RECOMPUTE if fixed.get("activation_recompute", rc) == rc
              for c in contexts if t * p * c * e <= cap]
    if not shapes:
        refused = launchable.errors(fixed.get("tensor", 1), fixed.get("pipeline", 1), shape_mbs[0])
        cand.dropped = ("no layout has " + ", ".join(f"{k} {v}" for k, v in fixed.items())
                        + (": " + "; ".join(f"{e.rule_id} {e.message}" for e in refused) if refused else
                           f" (tensor parallelism up to {max(tensor_degrees(spec, per_node, goal))} here)"))
        return cand
    counted: dict[tuple, list[int]] = {}

    def counts_of(shape: tuple) -> list[int]:  # launch_counts reads t x p x c, e and mb alone
        t, p, v, c, e, _, _, mb = shape
        if (t * p * c, e, mb) not in counted:
            counted[t * p * c, e, mb] = launch_counts(goal, shape, per_node, cap)
        return counted[t * p * c, e, mb]

    too_big: set[tuple] = set()  # (t, p, v, c, e, zero, rc) whose smaller micro-batch already missed memory
    bound: dict[tuple, list[tuple[int, int, int]]] = {}  # (t, p, v, e, mb) -> time-bound (zero, rc index, c) points
    slow: dict[tuple, list[tuple[int, int, int]]] = {}  # (t, p, v, e, mb) -> (zero, rc index, c) that miss the deadline within the cap
    best: dict[tuple, int] = {}  # (t, p, v, c, e, zero, rc) -> fewest GPUs found
    first_mb: dict[tuple, int] = {}  # (t, p, v, c, e, zero, rc) -> GPUs the smallest micro-batch needs
    # (t, p, c, e, zero, rc) -> the smallest micro-batch without interleaving that missed memory:
    # interleaving only adds activations (facts: 1 + (p-1)/(p*v) of them), so with it, at that
    # micro-batch or a larger one, on as many GPUs or fewer, it misses too
    unfit: dict[tuple, int] = {}
    # (t, p, e, zero) -> the most GPUs on which the model states alone missed memory: they depend on
    # the model-parallel split, ZeRO and the GPU count only (not on recompute, micro-batch,
    # interleaving or context parallelism: tests/test_size_search.py), and fall with more GPUs
    states_miss: dict[tuple, int] = {}
    # (t, p, c, e, fewest, most GPUs): layouts with no time estimate at either end; what the time
    # model lacks does not depend on ZeRO, recompute, micro-batch or interleaving either
    timeless: set[tuple] = set()
    slower: dict[tuple, list[int]] = {}  # ((t, p, v, e, mb), c, ZeRO-3) -> recompute indexes that met no count up to the limit
    rows: list[Row] = []
    guess, limit = per_node, cap
    for shape in shapes:
        t, p, v, c, e, zero, rc, mb = shape
        if c > 1 and (t, p, v, 1, e, zero, rc) not in too_big and (t, p, v, 1, e, zero, rc) in best:
            continue  # context parallelism is for what does not fit without it: without it this one fits
        counts = counted.get((t * p * c, e, mb)) or counts_of(shape)  # some 130,000 shapes: no call for most
        if not counts or counts[0] > limit:
            continue
        key, rc_i = (t, p, v, c, e, zero, rc), RC_INDEX[rc]
        family = (t, p, v, e, mb)
        if key in too_big:
            continue
        marked, missed, no_count = bound.get(family), slow.get(family), slower.get((family, c, zero == 3))
        if (marked and any(zero >= z and rc_i >= r and c >= k for z, r, k in marked)) \
                or (missed and any(zero >= z and rc_i >= r and c >= k for z, r, k in missed)) \
                or (no_count and any(rc_i >= r for r in no_count)):
            continue
        sizes = counts[:bisect.bisect_right(counts, limit)]

        facts_at, memory_at = partial(at, shape), partial(memory, shape)

        def may_meet(n: int) -> bool:  # a count whose floor is past the deadline cannot meet it
            return layouts.floor / n <= deadline + ROUNDING

        misses = (v > 1 and mb >= unfit.get((t, p, c, e, zero, rc), mb + 1)) or states_miss.get((t, p, e, zero), 0) >= sizes[-1]
        if mb != shape_mbs[0]:
            # A larger micro-batch only needs more memory; it is searched only where it could
            # need fewer GPUs than the smallest one did.
            n1 = first_mb.get(key)
            below = [n for n in sizes if n < n1] if n1 else []
            if misses or not below or not (fits(memory_at(below[-1])) and meets(facts_at(below[-1]))):
                continue
        if limit < cap and not may_meet(sizes[-1]) and (c > 1 or key not in best):
            continue  # as below; a miss in memory would tell more only of a found layout without context parallelism (the c > 1 rule)
        if misses or not fits(memory_at(sizes[-1])):  # more GPUs than the limit would be needed to hold it
            too_big.add(key)  # and a larger micro-batch needs more still
            if v == 1:
                unfit.setdefault((t, p, c, e, zero, rc), mb)
            states = None if misses else memory_at(sizes[-1])["memory"]
            if states and not isinstance(states["model_states_gb"], Unknown) and states["model_states_gb"] > states["usable_gb"]:
                states_miss[t, p, e, zero] = max(states_miss.get((t, p, e, zero), 0), sizes[-1])
            continue
        if limit < cap and not may_meet(sizes[-1]):
            continue  # no count meets it (below the cap, the search marks no slow layout, so nothing else to learn)
        ends = (t, p, c, e, sizes[0], sizes[-1])
        if ends in timeless or (isinstance(facts_at(sizes[-1])["training"]["days"], Unknown)
                                and isinstance(facts_at(sizes[0])["training"]["days"], Unknown)):
            timeless.add(ends)
            continue  # no time estimate for this layout at any size (a catalog value is missing): said when dropped
        i_time = first_index(lambda n: may_meet(n) and meets(facts_at(n)), sizes, guess)
        if i_time is None:
            if limit == cap:  # no count up to the cap meets it: more ZeRO, recompute or context parallelism is slower still
                slow.setdefault(family, []).append((zero, rc_i, c))
            # none up to the limit, which only falls: on the same counts, with more recompute, or
            # another ZeRO stage below 3 (the time model tells them apart only by ZeRO-3's
            # gathers), each step takes at least as long
            slower.setdefault((family, c, zero == 3), []).append(rc_i)
            continue
        if fits(memory_at(sizes[i_time])):
            bound.setdefault(family, []).append((zero, rc_i, c))
            i = i_time
        elif zero == 0 and c == 1 and e == 1:  # without ZeRO, more ranks do not shrink the per-GPU state
            too_big.add(key)
            continue
        else:  # memory falls with more ranks (ZeRO, context and expert sharding): the first that fits
            rest = sizes[i_time:]
            j = first_index(lambda n: fits(memory_at(n)), rest, rest[0])
            if j is None:
                continue
            i = i_time + j
        # what the search proposes, the plan rules accept (GPU009-GPU011 and the rest), and its time is known
        n = next((n for n in sizes[i:i + DATA_TRIES]
                  if launchable_at(shape, n) and fits(memory_at(n)) and meets(facts_at(n))), None)
        if n is None:
            continue
        guess = n
        best[key] = min(best.get(key, n), n)
        # Only the `top` best layouts are shown: one that needs more GPUs than the top-th best
        # so far cannot enter, so its search stops there.
        ranked = sorted(best.values())
        limit = ranked[top - 1] if len(ranked) >= top else cap
        if mb == shape_mbs[0]:
            first_mb[key] = n
        f = facts_at(n)
        rows.append(Row(gpu=gpu_name, system=system, per_node=per_node, nodes=n // per_node,
                        layout=Layout(t, p, n // (t * p * c), zero, rc, mb, v, c, e), days=f["training"]["days"],
                        seconds=f["training"]["seconds"],
                        breakdown=breakdown(f["training"]), memory_gb=f["memory"]["total_gb"],
                        usable_gb=f["memory"]["usable_gb"]))
    rows.sort(key=rank_key)
    seen, kept = set(), []
    for row in rows:
        lay = row.layout
        key = (lay.t, lay.p, lay.v, lay.c, lay.e, lay.zero, lay.recompute)
        if key not in seen:
            seen.add(key)
            kept.append(row)
    cand.rows = kept
    if not kept:
        cand.dropped, cand.closest = closest(goal, shapes, at, memory, fits, launchable_at, counts_of, cap, deadline)
    return cand


ROUNDING = 0.05  # days: the facts round the time to train to 0.1 day

DATA_TRIES = 4  # launchable counts tried above the fewest that meet time and memory, should a plan rule refuse one


def launch_counts(goal: Goal, shape: tuple, per_node: int, cap: int) -> list[int]:
    """The GPU counts, up to `cap`, a layout launches on: whole nodes, a data-parallel degree the
    expert degree divides, and whole micro-batches of the global batch on every data-parallel rank
    (B = b x d x m with a whole m, [narayanan-2021] §2.2; GPU011 holds the plan to it)."""
    t, p, v, c, e, _, _, mb = shape
    group = t * p * c
    if goal.global_batch is None:
        step = math.lcm(group * e, per_node)
        return list(range(step, cap + 1, step))
    if goal.global_batch % mb:
        return []
    sequences = goal.global_batch // mb  # d must divide it: m = B / (b x d) whole
    ranks = {k for i in range(1, math.isqrt(sequences) + 1) if sequences % i == 0 for k in (i, sequences // i)}
    return sorted(group * d for d in ranks if d % e == 0 and group * d % per_node == 0 and group * d <= cap)


def first_index(holds: Any, sizes: list[int], guess: int) -> int | None:
    """The index of the smallest size for which `holds` is true, assuming it keeps holding above
    it (more GPUs are faster and hold less each), bisected from the size nearest `guess`. Time is
    not quite monotone (restarts grow with the GPUs): when the largest size fails, a ladder of
    sizes below it is tried before giving up."""
    hi = len(sizes) - 1
    if not holds(sizes[hi]):
        rungs = [i for i in range(hi - 1, -1, -max(1, len(sizes) // 8))]
        hit = next((i for i in rungs if holds(sizes[i])), None)
        if hit is None:
            return None
        hi = hit
    start = min(range(hi + 1), key=lambda i: abs(sizes[i] - guess))
    lo = -1
    if holds(sizes[start]):
        hi = start
    else:
        lo = start
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(sizes[mid]):
            hi = mid
        else:
            lo = mid
    return hi


def rank_key(row: Row) -> tuple:
    """Fewest GPUs, then soonest done, then the simplest layout (no ZeRO, no recompute, least
    model parallelism, fewest interleaved chunks), then the smallest micro-batch."""
    lay = row.layout
    return (row.gpus, row.days, lay.zero, RECOMPUTE.index(lay.recompute), lay.t * lay.p * lay.c * lay.e, lay.p, lay.v,
            lay.c, lay.e, lay.mb)


def breakdown(training: dict[str, Any]) -> dict[str, Any]:
    """The parts of the time to train the facts give (every known `*_days` key but `days` and
    `target_days`), or the one figure there is."""
    parts = {k[:-5]: v for k, v in training.items()
             if k.endswith("_days") and k not in ("target_days",) and not isinstance(v, Unknown)}
    if isinstance(training.get("breakdown"), dict):
        parts.update(training["breakdown"])
    return parts or {"compute at MFU": training["days"]}


def closest(goal: Goal, shapes: list[tuple], at: Any, memory: Any, fits: Any, launchable_at: Any, counts_of: Any,
            cap: int, deadline: float) -> tuple[str, str]:
    """Why no layout of this GPU meets the goal, and the nearest miss: among the GPU counts each
    layout launches on (launch_counts), the fastest one found."""
    best_days: tuple[float, int, tuple] | None = None
    needs: set[str] = set()
    least_memory: tuple[float, float, int] | None = None
    launchable_sizes = 0
    for shape in shapes:
        if shape[7] != shapes[0][7] or shape[3] != 1:  # the smallest micro-batch, no context parallelism
            continue
        sizes = counts_of(shape)
        launchable_sizes += len(sizes)
        if not sizes:
            continue
        f = memory(shape, sizes[-1])
        mem = f["memory"]
        if not fits(f):
            if not isinstance(mem["total_gb"], Unknown) and (least_memory is None or mem["total_gb"] < least_memory[0]):
                least_memory = (mem["total_gb"], mem["usable_gb"], sizes[-1])
            continue
        # Time is not monotone in the GPU count (restarts grow with it): a ladder of sizes.
        for n in sizes[::-max(1, len(sizes) // 6)]:
            f = at(shape, n)
            days = f["training"]["days"]
            if isinstance(days, Unknown):
                needs.update(days.needs)
                break
            if fits(f) and launchable_at(shape, n) and (best_days is None or days < best_days[0]):
                best_days = (days, n, shape)
    limit = f"--max-gpus {goal.max_gpus}" if goal.max_gpus == cap else f"{cap:,} GPUs"
    unknown = ""
    if needs:
        unknown = ("; layouts that need it have no time estimate: the catalog lacks "
                   + ", ".join(sorted(n.replace("node_pools[0].", "") for n in needs)))
    if best_days is None and needs:
        return "time unknown" + unknown, ""
    if best_days is None:
        if least_memory is not None:
            need, usable, n = least_memory
            return (f"memory: even on {n:,} GPUs ({limit}) the leanest layout needs {need:,.1f} GB per GPU, "
                    f"{usable:,.1f} GB usable", "")
        if not launchable_sizes:
            return (f"launch: no GPU count within {limit} gives every data-parallel rank whole micro-batches of the "
                    f"global batch ({goal.global_batch:,} sequences) on whole nodes; give another --global-batch", "")
        return "no layout could be assessed", ""
    days, n, shape = best_days
    lay = Layout(shape[0], shape[1], n // (shape[0] * shape[1] * shape[3]), shape[5], shape[6], shape[7],
                 shape[2], shape[3], shape[4])
    margin = f" ({deadline:,.1f} with the policy's {100 - 100 * deadline / goal.days:g}% schedule margin)" \
        if deadline < goal.days else ""
    if days <= deadline:
        return (f"design: {lay.summary} on {n:,} GPUs meets the deadline in {days:,.1f} days, but none of the "
                f"layouts the search kept could be built or reviewed" + unknown, "")
    return (f"time: the fastest launchable layout found ({n:,} GPUs {lay.summary}, within {limit}) still takes "
            f"{days:,.1f} days, over the {goal.days:g}-day deadline{margin}" + unknown, "")


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
