"""Derive the quantities rules reason about from a resolved manifest.

Every fact is either a value or `Unknown(needs)`, naming the manifest fields that would
decide it; a rule that reads an unknown fact is *pending* on exactly those fields. The
arithmetic lives in linter.physics.formulas; this module only gathers its inputs.
"""

from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.physics import formulas as physics
from linter.numbers import num
from linter.record import record
from linter.results import undotted

GB = 1e9
TB = 1e12


@record(frozen=True)
class Unknown:
    needs: tuple[str, ...]


_MISSING = object()
NO_GPU_POOL = Unknown(("node_pools[].gpu",))  # no compute pool names a GPU: nothing per GPU is known


def unknowns(values: Any) -> tuple[str, ...]:
    """Every field the Unknown values among `values` need."""
    out: tuple[str, ...] = ()
    for v in values:
        if isinstance(v, Unknown):
            out += v.needs
    return out


def _apply(compute: Callable[..., Any], *values: Any) -> Any:
    """compute(*values), or Unknown naming everything the unknown values need."""
    for v in values:
        if isinstance(v, Unknown):
            missing = unknowns(values)
            return Unknown(missing) if missing else compute(*values)
    return compute(*values)


@lru_cache(maxsize=4096)  # the same few paths, read for every manifest
def _steps(path: str) -> tuple:
    return undotted(path)


def get(data: Any, path: str) -> Any:
    node = data
    for part in _steps(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return node


def fact(data: dict, paths: list[str], compute: Callable[..., Any]) -> Any:
    """compute(*values at paths), or Unknown naming every path the manifest leaves out."""
    values = [get(data, p) for p in paths]
    if _MISSING in values:
        return Unknown(tuple(p for p, v in zip(paths, values) if v is _MISSING))
    result = _apply(compute, *values)
    if isinstance(result, float) and not (math.isfinite(result) and abs(result) < 1e300):
        # a value the schema accepts (5e-324 as a divisor) drove the result out of range
        return Unknown((f"{' and '.join(paths)} (realistic values: these give a result out of range)",))
    return result


def _round(x: float, digits: int = 2) -> float:
    return round(x, digits)


def derive(data: dict, policy: dict[str, float], today: str | None = None) -> dict[str, Any]:
    """Every fact about `data`; `today` (ISO date) is when an order without a date is placed."""
    pools = data.get("node_pools", [])
    compute_idx = [i for i, p in enumerate(pools) if p.get("role", "compute") == "compute" and "gpu" in p]
    facts: dict[str, Any] = {"policy": policy}
    facts.update(_counts(data, pools, compute_idx))
    primary = max(compute_idx, key=lambda i: pools[i]["count"] * pools[i]["gpu"].get("count", 0), default=None)
    facts["primary_pool"] = f"node_pools[{primary}]" if primary is not None else NO_GPU_POOL
    cfg = plan_settings(data)
    facts["plan"] = {"assumed": cfg["assumed"], "attention": cfg["attention"], "method": cfg["method"]}
    facts["memory"] = _memory(data, primary, policy, cfg)
    facts["host_ram_ratio"] = _host_ram_ratio(data, compute_idx)
    facts["link"] = _link(data, primary)
    facts["power"] = _power(data, pools, policy)
    facts["fabric"] = _fabric(data, pools)
    facts["fabrics"] = _fabric_checks(data, pools)
    facts["checkpoint_tb"] = fact(
        data, ["plan.model.parameters_billion", "plan.precision"],
        lambda p, prec: _round(physics.checkpoint_bytes(p * 1e9, prec not in ("fp32", "tf32")) / TB, 3),
    )
    facts["nics"] = _nics(data, primary)
    facts["training"] = _training(data, primary, facts, policy, cfg)
    facts["local_disk"] = _local_disk(data, primary, facts["checkpoint_tb"], facts["compute_nodes"])
    facts["storage"] = _storage(data, facts["checkpoint_tb"], facts["training"])
    gpu_model = get(data, f"{facts['primary_pool']}.gpu.model") if primary is not None else _MISSING
    facts["decision"] = _decision(data, facts["gpus_total"], gpu_model)
    facts["procurement"] = _procurement(
        data, facts["power"]["it_kw"], facts["gpus_total"],
        NO_GPU_POOL if primary is None else gpu_model if gpu_model is not _MISSING
        else Unknown((f"{facts['primary_pool']}.gpu.model",)), policy, today)
    return facts


def _counts(data: dict, pools: list[dict], compute_idx: list[int]) -> dict[str, Any]:
    gpus_per_node = [get(data, f"node_pools[{i}].gpu.count") for i in compute_idx]
    known = [g for g in gpus_per_node if g is not _MISSING]
    counts: dict[str, Any] = {
        "compute_nodes": sum(pools[i]["count"] for i in compute_idx),
        "nodes_total": sum(p["count"] for p in pools),
        "spare_nodes": sum(pools[i].get("spares") or 0 for i in compute_idx),
    }
    if len(known) < len(gpus_per_node) or not compute_idx:
        needs = tuple(f"node_pools[{i}].gpu.count" for i, g in zip(compute_idx, gpus_per_node) if g is _MISSING)
        unknown = Unknown(needs) if needs else NO_GPU_POOL
        counts.update(gpus_total=unknown, gpus_training=unknown, gpus_per_node_min=unknown, gpus_per_node_max=unknown)
    else:
        counts["gpus_total"] = sum(pools[i]["count"] * g for i, g in zip(compute_idx, known))
        # hot spares are bought, powered and cabled, but the parallel layout runs without them
        counts["gpus_training"] = sum(max(pools[i]["count"] - (pools[i].get("spares") or 0), 0) * g
                                      for i, g in zip(compute_idx, known))
        counts["gpus_per_node_min"] = min(known)
        counts["gpus_per_node_max"] = max(known)
    mem = [fact(data, [f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"], lambda m, c: m * c) for i in compute_idx]
    counts["gpu_memory_total_gb"] = _sum(*(_scale(m, pools[i]["count"]) for i, m in zip(compute_idx, mem))) \
        if compute_idx else NO_GPU_POOL
    return counts


def plan_settings(data: dict) -> dict[str, Any]:
    """The plan's model, fine-tuning and parallel settings with what current frameworks do
    where the plan is silent, and the list of those defaults (the review prints them among
    its assumptions). Pure data in, pure data out: the sizer calls it for draft plans."""
    plan = data.get("plan", {})
    model = plan.get("model", {}) or {}
    par = plan.get("parallelism", {}) or {}
    tune = plan.get("finetune", {}) or {}
    moe = model.get("moe")
    assumed: list[dict[str, str]] = []

    def pick(path: str, given: Any, default: Any, why: str) -> Any:
        if given is not None:
            return given
        if default is not None:
            shown = ", ".join(default) if isinstance(default, list) else str(default).lower() if isinstance(default, bool) else str(default)
            assumed.append({"field": path, "value": shown, "why": why})
        return default

    h, a = model.get("hidden_size"), model.get("attention_heads")
    out: dict[str, Any] = {"hidden": h, "heads": a, "layers": model.get("layers"), "seq": model.get("sequence_length"),
                           "vocab": model.get("vocabulary_size")}
    out["attention"] = pick("plan.model.attention", model.get("attention"), "flash",
                            "fused attention is the default in Megatron Core, PyTorch SDPA and Hugging Face")
    out["kv_heads"] = pick("plan.model.kv_heads", model.get("kv_heads"), a, "multi-head attention: one key/value head per attention head")
    out["activation"] = pick("plan.model.ffn_activation", model.get("ffn_activation"), "gelu", "Megatron-LM's default FFN")
    default_f = physics.default_ffn_width(h, out["activation"]) if h else None
    out["ffn"] = pick("plan.model.ffn_hidden_size", model.get("ffn_hidden_size"), default_f,
                      "Megatron-LM: 4h for GELU, int(8h/3 / 64) * 64 for SwiGLU")
    if out["vocab"] is None:
        assumed.append({"field": "plan.model.vocabulary_size", "value": "not given",
                        "why": "the logits' memory (6*s*b*V/t bytes) is left out of the estimate"})
    out["tied"] = pick("plan.model.tied_embeddings", model.get("tied_embeddings"), False,
                       "separate input embedding and output layer (Megatron-LM, Llama)")
    out["moe"] = None
    if moe:
        out["moe"] = {
            "experts": moe["experts"], "active": moe["active_experts"],
            "every": pick("plan.model.moe.every_n_layers", moe.get("every_n_layers"), 1, "every layer is an MoE layer (Megatron Core, Mixtral)"),
            "capacity": pick("plan.model.moe.capacity_factor", moe.get("capacity_factor"), 1.0,
                             "tokens spread evenly over the experts (dropless routing has no fixed capacity)"),
        }
    method = tune.get("method", "full") if plan.get("finetune") else "full"
    if not plan.get("finetune"):
        pick("plan.finetune.method", None, "full", "every weight trains")
    out["method"] = method
    if method in ("lora", "qlora"):
        out["lora_rank"] = pick("plan.finetune.lora_rank", tune.get("lora_rank"), 8, "PEFT's LoraConfig default")
        out["lora_targets"] = pick("plan.finetune.lora_targets", tune.get("lora_targets"), ["q", "v"],
                                   "PEFT's default for Llama-style models: q_proj and v_proj")
        out["base_bits"] = pick("plan.finetune.base_bits", tune.get("base_bits"), 4 if method == "qlora" else 16,
                                "QLoRA's 4-bit NormalFloat" if method == "qlora" else "LoRA keeps the base in 16 bits")
    out["gradients"] = pick("plan.gradient_precision", plan.get("gradient_precision"), "16-bit",
                            "the ZeRO paper's 16 bytes/param for mixed-precision Adam; DeepSpeed's estimators and "
                            "llm-analysis count 18 (fp32 gradients): set fp32 to use theirs")
    out["t"], out["p"], out["v"] = par.get("tensor", 1), par.get("pipeline", 1), par.get("pipeline_chunks", 1)
    out["c"], out["e"] = par.get("context", 1), par.get("expert", 1)
    out["zero"] = par.get("zero_stage", 0)
    out["offload"] = par.get("offload", "none") != "none"
    out["offload_params"] = bool(par.get("offload_params", False))
    out["sequence_parallel"] = par.get("sequence_parallel", False)
    out["recompute"] = par.get("activation_recompute", "none")
    out["assumed"] = assumed
    return out


def _expert_params(cfg: dict) -> Any:
    """Weights in the experts of all MoE layers: E FFNs per MoE layer [switch-2022]."""
    moe = cfg["moe"]
    if not moe:
        return 0.0
    needs = tuple(f"plan.model.{k}" for k, v in (("layers", cfg["layers"]), ("hidden_size", cfg["hidden"]),
                                                 ("attention_heads", cfg["heads"])) if v is None)
    if needs:
        return Unknown(needs)
    _, ffn = physics.layer_parameters(cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["activation"])
    return (cfg["layers"] // moe["every"]) * moe["experts"] * ffn


def _memory(data: dict, primary: int | None, policy: dict[str, float], cfg: dict) -> dict[str, Any]:
    """Per-GPU memory of the largest compute pool: model states (F1-F3, F15-F22) + activations (F4, F5, F14-F17)."""
    keys = ("model_states_gb", "activations_gb", "total_gb", "capacity_gb", "usable_gb", "bytes_per_param",
            "host_offload_gb_per_node", "states", "logits_gb", "convention")
    if primary is None:
        return {k: NO_GPU_POOL for k in keys}
    pool = f"node_pools[{primary}]"
    t, p, v, c, e, zero = cfg["t"], cfg["p"], cfg["v"], cfg["c"], cfg["e"], cfg["zero"]
    plan = data["plan"]

    def per_param(precision: str, optimizer: str) -> Any:
        found = physics.state_bytes(precision, optimizer, cfg["gradients"], plan.get("optimizer_bytes_per_param"))
        return found if found else Unknown((f"plan.optimizer (no memory model for {optimizer})",))

    bpp = fact(data, ["plan.precision", "plan.optimizer"], per_param)
    experts = _expert_params(cfg)
    data_degree = fact(data, ["plan.parallelism.data"], lambda d: d) if zero else 1
    lora = None
    if cfg["method"] in ("lora", "qlora"):
        shape = [("layers", cfg["layers"]), ("hidden_size", cfg["hidden"]), ("attention_heads", cfg["heads"])]
        needs = tuple(f"plan.model.{k}" for k, val in shape if val is None)
        lora = Unknown(needs) if needs else physics.lora_parameters(
            cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["lora_rank"], cfg["lora_targets"])

    def states(params_b: float) -> Any:
        def compute(b: tuple, expert: float, d: int, adapters: Any) -> dict[str, float]:
            total = params_b * 1e9
            dp = d * c  # Megatron's distributed optimizer shards over the data- and context-parallel ranks
            parts = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0, "frozen": 0.0, "buffer": 0.0}

            def add(count: float, shard: int, ranks: int, per: tuple) -> None:
                w, g, k = physics.sharded_state_bytes(count / shard, zero, max(ranks, 1), per, cfg["offload"], cfg["offload_params"])
                parts["weights"] += w
                parts["gradients"] += g
                parts["optimizer"] += k

            if adapters is None:
                add(total - expert, t * p, dp, b)
                if expert:
                    add(expert, t * p * e, dp // e, b)
            else:  # frozen base at its bits, sharded like weights; adapters train with the optimizer [lora-2022]
                base = physics.BASE_WEIGHT_BYTES[cfg["base_bits"]]
                parts["frozen"] = base * ((total - expert) / (t * p) + expert / (t * p * e)) / (dp if zero >= 3 else 1)
                add(adapters, t * p, dp, b)
            if cfg["offload_params"] and zero >= 3 and None not in (cfg["hidden"], cfg["ffn"]):
                # DeepSpeed keeps 4 bytes x the largest layer on the GPU [deepspeed-estimators]
                largest = max(cfg["hidden"] * cfg["ffn"], cfg["hidden"] * (cfg["vocab"] or 0))
                parts["buffer"] = 4 * largest
            return {k: _round(val / GB, 3) for k, val in parts.items()}
        return _apply(compute, bpp, experts, data_degree, lora)

    breakdown = fact(data, ["plan.model.parameters_billion"], states)
    model_states = _apply(lambda parts: _round(sum(parts.values())), breakdown)

    def activations(s: int, b: int, h: int, a: int, L: int) -> Any:
        common = dict(attention=cfg["attention"], kv_heads=cfg["kv_heads"], ffn=cfg["ffn"], activation=cfg["activation"],
                      context=c)
        args = (s, b, h, a, t, cfg["sequence_parallel"], cfg["recompute"])
        dense = physics.activation_bytes_per_layer(*args, **common)
        moe = cfg["moe"]
        if moe:
            moe_layers = L // moe["every"]
            sparse = physics.activation_bytes_per_layer(*args, **common, expert_tokens=moe["active"] * moe["capacity"])
            per_layer = (dense * (L - moe_layers) + sparse * moe_layers) / L
        else:
            per_layer = dense
        return physics.activation_bytes_per_gpu(per_layer, L, p, v) / GB

    acts = fact(data, ["plan.model.sequence_length", "plan.micro_batch_size", "plan.model.hidden_size",
                       "plan.model.attention_heads", "plan.model.layers"], activations)
    # Logits: 16-bit and an fp32 copy for the cross-entropy, split over t (vocabulary-parallel
    # output layer); on the first stage only when there is one stage.
    logits = 0.0
    if cfg["vocab"] and p == 1:
        logits = fact(data, ["plan.model.sequence_length", "plan.micro_batch_size"],
                      lambda s, b: _round(6 * s * b * cfg["vocab"] / t / c / GB, 3))
    acts_total = _sum(acts, logits)
    nodes = sum(pl["count"] for pl in data["node_pools"] if pl.get("role", "compute") == "compute" and "gpu" in pl)

    def host(params_b: float, gpus: int) -> Any:
        return _round(physics.offload_host_bytes_per_node(params_b * 1e9, zero, gpus, max(nodes, 1), cfg["offload_params"]) / GB)

    offload_host = fact(data, ["plan.model.parameters_billion", f"{pool}.gpu.count"], host)
    capacity = fact(data, [f"{pool}.gpu.memory_gb"], lambda m: m)
    reserve = policy["gpu_memory_reserve_pct"]
    total = _sum(model_states, acts_total)
    usable = _apply(lambda cap: _round(cap * (1 - reserve / 100)), capacity)
    per_param = _apply(lambda b: sum(b), bpp)
    return {
        "model_states_gb": _maybe_round(model_states),
        "states": breakdown,
        "activations_gb": _maybe_round(acts_total),
        "logits_gb": logits,
        "total_gb": _maybe_round(total),
        "capacity_gb": capacity,
        "usable_gb": usable,
        "bytes_per_param": per_param,
        "convention": "fp32 gradients (DeepSpeed's estimators' convention: 18 bytes/param for Adam)" if cfg["gradients"] == "fp32"
        else "16-bit gradients (the ZeRO paper's convention: 16 bytes/param for Adam; DeepSpeed's estimators count 18)",
        "host_offload_gb_per_node": offload_host,
    }


def _difference(a: Any, b: Any) -> Any:
    return _apply(lambda x, y: x - y, a, b)


def _sum(*values: Any) -> Any:
    return _apply(lambda *known: sum(known), *values)


def _maybe_round(value: Any) -> Any:
    return _apply(_round, value)


def _link(data: dict, primary: int | None) -> dict[str, Any]:
    """The primary pool's GPU-to-GPU link: the node's own (`intra_node_link`, e.g. an NVSwitch
    baseboard) when given, else the GPU's (`gpu.link`)."""
    if primary is None:
        return {k: NO_GPU_POOL for k in ("kind", "bandwidth_gb_s", "max_gpus", "pcie_gb_s")}
    pool = f"node_pools[{primary}]"
    out = {"pcie_gb_s": fact(data, [f"{pool}.gpu.pcie.generation", f"{pool}.gpu.pcie.lanes"], physics.pcie_gb_s)}
    for key in ("kind", "bandwidth_gb_s", "max_gpus"):
        node_value, gpu_value = get(data, f"{pool}.intra_node_link.{key}"), get(data, f"{pool}.gpu.link.{key}")
        value = node_value if node_value is not _MISSING else gpu_value
        out[key] = value if value is not _MISSING else Unknown((f"{pool}.intra_node_link.{key}", f"{pool}.gpu.link.{key}"))
    return out


def _host_ram_ratio(data: dict, compute_idx: list[int]) -> Any:
    ratios = [
        fact(data, [f"node_pools[{i}].host_ram_gb", f"node_pools[{i}].gpu.memory_gb", f"node_pools[{i}].gpu.count"],
             lambda ram, mem, n: ram / (mem * n))
        for i in compute_idx
    ]
    if not ratios:
        return Unknown(("node_pools[].host_ram_gb",))
    return _apply(lambda *known: _round(min(known)), *ratios)


def _node_power(i: int, pool: dict, policy: dict[str, float]) -> dict[str, Any]:
    """One node's maximum draw: the manifest's (or catalog system's) max_power_kw, else an
    estimate from its GPUs (count x max_power_w) plus the policy's host allowance per GPU."""
    at = f"node_pools[{i}]"
    gpu = pool.get("gpu") or {}
    count, watts = gpu.get("count"), gpu.get("max_power_w")
    gpus_kw = _round(count * watts / 1000, 3) if count and watts else None
    gpus_basis = f"{count} x {num(watts)} W" if gpus_kw is not None else ""
    out: dict[str, Any] = {"pool": pool["name"], "path": at, "gpus_kw": gpus_kw, "estimate": False, "basis": "",
                           "given": "max_power_kw" in pool, "gpus_basis": gpus_basis}
    if "max_power_kw" in pool:
        out["kw"] = pool["max_power_kw"]
    elif gpus_kw is not None:
        host = policy["host_power_w_per_gpu"]
        out.update(kw=_round(count * (watts + host) / 1000, 3), estimate=True,
                   basis=f"{count} x {num(watts)} W GPUs + {count} x {num(host)} W host allowance")
    else:
        out["kw"] = Unknown((f"{at}.max_power_kw",) + ((f"{at}.gpu.max_power_w",) if gpu else ()))
    return out


def _total(values: list[Any]) -> tuple[Any, float]:
    """(the sum, or Unknown when any value is unknown; the sum of the known values)."""
    known = sum(v for v in values if not isinstance(v, Unknown))
    return _apply(lambda *_: _round(known, 3), *values), _round(known, 3)


def _feeds(data: dict, at: str, circuits: dict) -> tuple[Any, str]:
    """Whether a rack's circuits are judged per feed (each half carries the rack alone), and why."""
    declared = circuits.get("ab_redundant")
    if declared is not None:
        return declared, (f"per feed ({at}.circuits.ab_redundant: true)" if declared
                          else f"all circuits together ({at}.circuits.ab_redundant: false)")
    if circuits["count"] < 2:
        return False, "as one circuit (a single circuit cannot be split over two feeds)"
    feeds = get(data, "facility.ab_feeds")
    if feeds is True:
        return True, "per feed (assumed from facility.ab_feeds: true; set circuits.ab_redundant: false if not)"
    if feeds is False:
        return False, "all circuits together (facility.ab_feeds: false)"
    return Unknown(("facility.ab_feeds", f"{at}.circuits.ab_redundant")), "not known (facility.ab_feeds not given)"


def _power(data: dict, pools: list[dict], policy: dict[str, float]) -> dict[str, Any]:
    """IT power at full load (maximum draw per node, per switch, and the racks' other gear),
    per rack and for the facility. Every limit is given with a lower-bound slack (the known
    load against the most generous reading of the limit), so a load that cannot fit fails
    even when parts of it are still unknown."""
    nodes = [_node_power(i, p, policy) for i, p in enumerate(pools)]
    by_name = {n["pool"]: n for n in nodes}
    compute = [n["kw"] if isinstance(n["kw"], Unknown) else n["kw"] * p["count"]
               for n, p in zip(nodes, pools) if p.get("role", "compute") == "compute"]
    others = [n["kw"] if isinstance(n["kw"], Unknown) else n["kw"] * p["count"]
              for n, p in zip(nodes, pools) if p.get("role", "compute") != "compute"]
    fabrics = get(data, "network.fabrics")
    switches = [
        s["count"] * s["max_power_w"] / 1000 if "max_power_w" in s else Unknown((f"network.fabrics[{i}].switches[{j}].max_power_w",))
        for i, f in enumerate(fabrics if fabrics is not _MISSING else []) for j, s in enumerate(f.get("switches", []))
    ]
    racks = get(data, "facility.racks")
    racks = racks if racks is not _MISSING else []
    rack_other = [r.get("other_kw", 0) * r["count"] for r in racks]
    parts, parts_known = {}, {}
    for key, values in (("compute_kw", compute), ("other_nodes_kw", others), ("switches_kw", switches), ("rack_other_kw", rack_other)):
        parts[key], parts_known[key] = _total(values)
    it_kw, it_known = _total(list(parts.values()))
    labels = {"compute_kw": "compute nodes", "other_nodes_kw": "other nodes", "switches_kw": "switches", "rack_other_kw": "other rack gear"}
    parts_text = " + ".join(
        f"{labels[k]} {num(v)} kW" if not isinstance(v, Unknown) else f"{labels[k]} not known ({', '.join(v.needs[:3])}{' ...' if len(v.needs) > 3 else ''})"
        for k, v in parts.items() if isinstance(v, Unknown) or v)
    estimates = [f"{n['pool']} {num(n['kw'])} kW per node, estimated from {n['basis']}" for n in nodes if n["estimate"]]
    estimated_pools = {n["pool"] for n in nodes if n["estimate"]}
    racks_out = []
    for r, rack in enumerate(racks):
        at = f"facility.racks[{r}]"
        contents = [
            by_name[c["pool"]]["kw"] * c["nodes"] if c["pool"] in by_name and not isinstance(by_name[c["pool"]]["kw"], Unknown)
            else by_name[c["pool"]]["kw"] if c["pool"] in by_name
            else Unknown((f"{at}.contents[{j}].pool (no such node pool)",))
            for j, c in enumerate(rack.get("contents", []))
        ]
        load, load_known = _total(contents + [rack.get("other_kw", 0)])
        circuits = rack.get("circuits")
        row: dict[str, Any] = {
            "name": rack["name"], "path": at, "count": rack["count"], "load_kw": load, "load_kw_known": load_known,
            "estimate": any(c["pool"] in estimated_pools for c in rack.get("contents", [])),
            "budget_kw": rack.get("power_budget_kw", Unknown((f"{at}.power_budget_kw",))),
            "cooling_capacity_kw": rack.get("cooling_capacity_kw", Unknown((f"{at}.cooling_capacity_kw",))),
            "cooling": rack.get("cooling", Unknown((f"{at}.cooling",))),
            "circuit_rating_needed_kw": _round(load_known * 100 / policy["circuit_continuous_pct"]),
        }
        if circuits is None:
            row.update(per_feed=Unknown((f"{at}.circuits",)), feed_basis="circuits not described",
                       circuit_limit_kw=Unknown((f"{at}.circuits",)), circuit_limit_max_kw=Unknown((f"{at}.circuits",)))
        else:
            pct = 100 if circuits.get("continuous_rated") else policy["circuit_continuous_pct"]
            kva = physics.circuit_kva(circuits["voltage_v"], circuits["breaker_a"], circuits.get("phases", 1))
            per_feed, row["feed_basis"] = _feeds(data, at, circuits)
            row["per_feed"] = per_feed
            row["circuit_limit_max_kw"] = _round(physics.continuous_limit_kw(circuits["count"], kva, per_feed is True, pct))
            row["circuit_limit_kw"] = _apply(
                lambda split: _round(physics.continuous_limit_kw(circuits["count"], kva, split, pct)), per_feed)
            if per_feed is True:
                row["circuit_rating_needed_kw"] = _round(load_known * 100 / pct)
        for name, limit, upper in (("budget", "budget_kw", "budget_kw"), ("circuit", "circuit_limit_kw", "circuit_limit_max_kw"),
                                   ("cooling", "cooling_capacity_kw", "cooling_capacity_kw")):
            row[f"{name}_margin_kw"] = _maybe_round(_difference(row[limit], load))
            if name == "circuit" and circuits is not None and isinstance(row["per_feed"], Unknown):
                # feeds not known: the stricter per-feed reading decides when the rack fits it anyway
                strict = _maybe_round(_difference(_round(physics.continuous_limit_kw(circuits["count"], kva, True, pct)), load))
                if not isinstance(strict, Unknown) and strict >= 0:
                    row["circuit_margin_kw"] = strict
            row[f"{name}_slack_kw"] = _maybe_round(_difference(row[upper], load_known))
        row["estimate_note"] = " (estimate)" if row["estimate"] else ""
        row["load_complete"] = not isinstance(load, Unknown)
        row["per_feed_text"] = " on each feed" if row["per_feed"] is True else ""
        racks_out.append(row)
    racked = {}
    for rack in racks:
        for c in rack.get("contents", []):
            racked[c["pool"]] = racked.get(c["pool"], 0) + c["nodes"] * rack["count"]
    capacity = fact(data, ["facility.it_capacity_kw"], lambda kw: kw)
    headroom = 1 - policy["power_headroom_pct"] / 100
    ups = fact(data, ["facility.ups.capacity_kva", "facility.ups.power_factor"], physics.ups_kw)
    return {
        "node_kw": {n["pool"]: n["kw"] for n in nodes},
        "nodes": nodes,
        "estimates": estimates,
        "estimate_note": f" (estimate: {'; '.join(estimates)})" if estimates else "",
        "parts": parts,
        "parts_known": parts_known,
        "parts_text": parts_text,
        "rack_groups": len(racks_out) if racks_out else Unknown(("facility.racks",)),
        "it_kw": it_kw,
        "it_kw_known": it_known,
        "it_complete": not isinstance(it_kw, Unknown),
        "facility_capacity_kw": capacity,
        "facility_limit_kw": _apply(lambda kw: _round(kw * headroom), capacity),
        "racks": racks_out,
        "unracked_nodes": {p["name"]: p["count"] - racked.get(p["name"], 0) for p in pools if p["count"] > racked.get(p["name"], 0)},
        "ups_kw": ups,
        "ups_limit_kw": _apply(lambda kw: _round(kw * headroom), ups),
        "capacity_needed_kw": _round(it_known / headroom) if headroom > 0 else Unknown(
            ("policy.power_headroom_pct (below 100 leaves the facility some load)",)),
        "ups_kva_needed": fact(data, ["facility.ups.power_factor"], lambda pf: _kva_needed(it_known, headroom, pf)),
        "below_gpus": [n for n in nodes if n["given"] and n["gpus_kw"] is not None and n["kw"] < n["gpus_kw"]],
        "implausible": _implausible(pools, fabrics if fabrics is not _MISSING else [], policy),
    }


def _kva_needed(kw: float, headroom: float, power_factor: float) -> Any:
    """UPS kVA that carries `kw` at the policy's loading; Unknown when the policy leaves no room."""
    if headroom <= 0:
        return Unknown(("policy.power_headroom_pct (below 100 leaves the UPS some load)",))
    kva = kw / headroom / power_factor
    return math.ceil(kva) if math.isfinite(kva) and kva < 1e15 else Unknown(
        (f"facility.ups.power_factor (a realistic one: {num(power_factor)} would need more than 10^15 kVA)",))


def _implausible(pools: list[dict], fabrics: list[dict], policy: dict[str, float]) -> list[dict[str, Any]]:
    """Power values too large for their unit: most likely watts written where kW is asked."""
    out = []
    for i, pool in enumerate(pools):
        kw = pool.get("max_power_kw")
        if kw is not None and kw > policy["node_power_plausible_kw"]:
            out.append({"path": f"node_pools[{i}].max_power_kw", "value": kw, "unit": "kW", "limit": policy["node_power_plausible_kw"],
                        "what": f"one {pool['name']} node",
                        "hint": f"did you write W as kW? ({num(kw)} W would be {num(kw / 1000)} kW)"})
        w = (pool.get("gpu") or {}).get("max_power_w")
        if w is not None and w > policy["gpu_power_plausible_w"]:
            out.append({"path": f"node_pools[{i}].gpu.max_power_w", "value": w, "unit": "W", "limit": policy["gpu_power_plausible_w"],
                        "what": f"one GPU of {pool['name']}",
                        "hint": "did you write the whole node's power, or kW as W?"})
    return out


def _scale(value: Any, times: float) -> Any:
    return _apply(lambda v: v * times, value)


def _fabric(data: dict, pools: list[dict]) -> dict[str, Any]:
    """Ports the compute fabric needs for its topology [al-fares-2008] §2-3."""
    fabrics = get(data, "network.fabrics")
    fabrics = [] if fabrics is _MISSING else fabrics
    idx = _compute_fabric(fabrics)
    endpoints = sum(pool["count"] * nic.get("count", 1) for _, pool, _, nic in _nics_on(pools, fabrics, idx))
    out: dict[str, Any] = {"present": idx is not None, "compute_nics": endpoints}
    if idx is None:
        return out
    out.update(_fabric_record(pools, fabrics, idx))
    return out


def _compute_fabric(fabrics: list[dict]) -> int | None:
    return next((i for i, f in enumerate(fabrics) if f.get("purpose", "compute") in ("compute", "converged")), None)


def _nics_on(pools: list[dict], fabrics: list[dict], idx: int | None) -> list[tuple[int, dict, int, dict]]:
    """(pool index, pool, NIC index, NIC) of every NIC on fabric `idx`. The compute fabric takes
    the compute (and converged) NICs that name it or no fabric at all (with `idx` None: every
    compute NIC); another fabric takes the NICs that name it, and those of its purpose that name
    no fabric when it is the first fabric of that purpose."""
    compute = _compute_fabric(fabrics)
    if idx is None or idx == compute:
        name = fabrics[idx]["name"] if idx is not None else None
        return [(i, pool, j, nic) for i, pool in enumerate(pools) for j, nic in enumerate(pool.get("nics", []))
                if nic.get("purpose", "compute") in ("compute", "converged")
                and (name is None or nic.get("fabric", name) == name)]
    fabric = fabrics[idx]
    purpose = fabric.get("purpose", "compute")
    first = next(i for i, f in enumerate(fabrics) if f.get("purpose", "compute") == purpose)
    return [(i, pool, j, nic) for i, pool in enumerate(pools) for j, nic in enumerate(pool.get("nics", []))
            if nic.get("fabric") == fabric["name"]
            or ("fabric" not in nic and idx == first and nic.get("purpose", "compute") == purpose)]


def _fabric_record(pools: list[dict], fabrics: list[dict], idx: int) -> dict[str, Any]:
    """One fabric's endpoints, ports needed and present per tier, and link rates [al-fares-2008] §2-3."""
    fabric = fabrics[idx]
    at = f"network.fabrics[{idx}]"
    on = _nics_on(pools, fabrics, idx)
    endpoints = sum(pool["count"] * nic.get("count", 1) for _, pool, _, nic in on)
    out: dict[str, Any] = {"endpoints": endpoints}
    out.update(path=at, name=fabric["name"], purpose=fabric.get("purpose", "compute"),
               kind=fabric.get("kind", Unknown((f"{at}.kind",))), managed_by=fabric.get("managed_by", "owner"))
    topology = fabric.get("topology")
    out["topology"] = topology or Unknown((f"{at}.topology",))
    given = fabric.get("oversubscription")
    # Not given: unknown, unless one switch decides it (no uplinks at all).
    oversub = given if given is not None else (1.0 if topology == "single-switch" else Unknown((f"{at}.oversubscription",)))
    out["oversubscription"] = oversub
    nic_rates = [(f"node_pools[{i}].nics[{j}].rate_gbps", nic.get("rate_gbps")) for i, _, j, nic in on]
    switch_rates = [(f"{at}.switches[{j}].port_rate_gbps", s.get("port_rate_gbps")) for j, s in enumerate(fabric.get("switches", []))]
    out["nic_rate_gbps"] = _least(nic_rates, f"node_pools[].nics[] on fabric {fabric['name']}")
    out["switch_rate_gbps"] = _least(switch_rates, f"{at}.switches")
    switches = fabric.get("switches", [])

    def ports(role: str) -> Any:
        chosen = [(j, s) for j, s in enumerate(switches) if s["role"] == role]
        needs = tuple(f"{at}.switches[{j}].ports" for j, s in chosen if "ports" not in s)
        return Unknown(needs) if needs else sum(s["count"] * s["ports"] for _, s in chosen)

    def count(role: str) -> int:
        return sum(s["count"] for s in switches if s["role"] == role)

    if topology == "single-switch":
        out.update(ports_needed=endpoints, ports_present=ports("single"), uplinks_needed=0)
        return out
    uplinks = _apply(lambda o: physics.uplinks_needed(endpoints, o), oversub)
    core = count("core")
    out.update(
        leaf_down_needed=endpoints,
        uplinks_needed=uplinks,
        ports_needed=_apply(lambda u: endpoints + u, uplinks),
        ports_present=ports("leaf"),
        # with a core tier each spine splits its ports evenly, down to the leaves and up to the core [al-fares-2008] §3
        spine_ports_needed=_apply(lambda u: 2 * u if core else u, uplinks),
        spine_ports_present=ports("spine"),
        leaves=count("leaf"), spines=count("spine"), cores=core, core_present=core > 0,
        core_ports_needed=_apply(lambda u: u if core else 0, uplinks),
        core_ports_present=ports("core") if core else 0,
    )
    out["uplinks_per_leaf"] = _apply(lambda u: math.ceil(u / out["leaves"]) if out["leaves"] else 0, uplinks)
    out["links_per_spine_per_leaf"] = _apply(
        lambda per_leaf: per_leaf / out["spines"] if out["spines"] else 0, out["uplinks_per_leaf"])
    sizes = [s["ports"] for s in switches if s["role"] in ("leaf", "spine", "core") and "ports" in s]
    radix = min(sizes) if sizes and len(sizes) == sum(1 for s in switches if s["role"] in ("leaf", "spine", "core")) \
        else Unknown(tuple(f"{at}.switches[{j}].ports" for j, s in enumerate(switches) if "ports" not in s) or (f"{at}.switches",))
    out["radix"] = radix
    out["two_tier_max_endpoints"] = _apply(lambda k, o: physics.two_tier_max_endpoints(k, o), radix, oversub)
    out["three_tier_max_endpoints"] = _apply(lambda k, o: physics.three_tier_max_endpoints(k, o), radix, oversub)
    return out


def _fabric_checks(data: dict, pools: list[dict]) -> dict[str, Any]:
    """The port and rate checks of every fabric the owner builds, compute and storage alike
    (NET002, NET003, NET010): the fabrics that fail where their numbers are known, and whether
    the rest are decided (True, or Unknown naming what would decide them). A fabric other than
    the compute one is checked when NICs are on it."""
    fabrics = get(data, "network.fabrics")
    fabrics = [] if fabrics is _MISSING else fabrics
    compute = _compute_fabric(fabrics)
    records = [_fabric_record(pools, fabrics, i) for i in range(len(fabrics))
               if i == compute or _nics_on(pools, fabrics, i)]
    records = [r for r in records if r["managed_by"] == "owner"]

    def check(applies: Callable[[dict], bool], needed: str, present: str) -> dict[str, Any]:
        """The fabrics `applies` picks, those whose `needed` exceeds `present`, and whether all are decided."""
        chosen = [r for r in records if applies(r)]
        failing, needs = [], []
        for r in chosen:
            a, b = r.get(needed), r.get(present)
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                needs += unknowns([a, b])
            elif a > b:
                failing.append(r)
        return {"fabrics": chosen, "failing": failing, "decided": Unknown(tuple(needs)) if needs else True}

    single_or_leaf = check(lambda r: True, "ports_needed", "ports_present")
    spine = check(lambda r: r["topology"] != "single-switch" and not isinstance(r["topology"], Unknown),
                  "spine_ports_needed", "spine_ports_present")
    rate = check(lambda r: True, "nic_rate_gbps", "switch_rate_gbps")  # a switch slower than its NICs
    return {"count": len(records), "leaf": single_or_leaf, "spine": spine, "rate": rate}


def _least(values: list[tuple[str, Any]], empty: str) -> Any:
    """The smallest value, or Unknown naming the paths that lack one."""
    missing = tuple(path for path, v in values if v is None)
    if missing or not values:
        return Unknown(missing or (empty,))
    return min(v for _, v in values)


def _training(data: dict, primary: int | None, facts: dict[str, Any], policy: dict[str, float], cfg: dict) -> dict[str, Any]:
    """Time to train for this layout (physics.training_time), against the target duration; hot
    spares take no part in the run."""
    gpus_total = facts["gpus_training"]
    out: dict[str, Any] = {
        "flops": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                      lambda p, d: physics.training_flops(p * 1e9, d * 1e9)),
        "tokens_per_parameter": fact(data, ["plan.model.parameters_billion", "plan.training_tokens_billion"],
                                     lambda p, d: _round(d / p, 1)),
        "target_days": fact(data, ["plan.target_duration_days"], lambda d: d),
    }
    if primary is None or isinstance(gpus_total, Unknown):
        unknown = gpus_total if isinstance(gpus_total, Unknown) else NO_GPU_POOL
        out.update(days=unknown, seconds=unknown, breakdown=unknown, peak_tflops=unknown, mfu=unknown,
                   gpus_for_target=unknown, nodes_for_target=unknown)
        return out
    pool = f"node_pools[{primary}]"

    def peak(precision: str) -> Any:
        table = get(data, f"{pool}.gpu.dense_tflops")
        value = table.get(precision) if table is not _MISSING else None
        return value if value else Unknown((f"{pool}.gpu.dense_tflops.{precision}",))

    out["peak_tflops"] = fact(data, ["plan.precision"], peak)
    t, p, c, e = cfg["t"], cfg["p"], cfg["c"], cfg["e"]
    needs: list[str] = []

    def need(path: str, value: Any = _MISSING) -> Any:
        value = get(data, path) if value is _MISSING else value
        if value is _MISSING or value is None:
            needs.append(path)
            return None
        if isinstance(value, Unknown):
            needs.extend(value.needs)
            return None
        return value

    params_b = need("plan.model.parameters_billion")
    tokens_b = need("plan.training_tokens_billion")
    tflops = need("plan.precision") and need("", out["peak_tflops"])
    d = get(data, "plan.parallelism.data")
    if d is _MISSING:  # what the launcher does: the GPUs left over by t, p and c [megatron-lm-defaults]
        d = max(gpus_total // (t * p * c), 1)
    gpus_per_node = need(f"{pool}.gpu.count")
    shape: dict[str, Any] = {"layers": cfg["layers"], "seq": cfg["seq"], "hidden": cfg["hidden"]}
    wanted = {"layers": "plan.model.layers", "seq": "plan.model.sequence_length", "hidden": "plan.model.hidden_size"}
    if t > 1 or cfg["recompute"] == "selective" or cfg["moe"]:
        for key in ("layers", "seq", "hidden"):
            need(wanted[key], shape[key])
    micro = get(data, "plan.micro_batch_size")
    batch = get(data, "plan.global_batch_size")
    if p > 1:
        micro = need("plan.micro_batch_size")
    if p > 1 or d * c > 1:
        batch = need("plan.global_batch_size")
        need(wanted["seq"], shape["seq"])
    link = facts["link"]

    def link_rate() -> Any:
        """GB/s per GPU between the GPUs of a node (NVLink, else PCIe), or Unknown naming the link."""
        bw = link["bandwidth_gb_s"] if not isinstance(link["bandwidth_gb_s"], Unknown) else link["pcie_gb_s"]
        return Unknown(link["bandwidth_gb_s"].needs) if isinstance(bw, Unknown) else bw

    def fabric_rate() -> Any:
        """Bytes/s per GPU over the compute fabric, or Unknown naming what decides it."""
        per_gpu = facts["nics"]["gbps_per_gpu"]
        oversub = facts["fabric"].get("oversubscription", 1.0) if facts["fabric"].get("present") else 1.0
        missing = unknowns([per_gpu, oversub])
        if missing:
            return Unknown(missing)
        if not per_gpu:
            return Unknown((f"{pool}.nics (no compute NIC joins the nodes)",))
        return per_gpu / 8 * 1e9 / oversub

    link_bw = None
    if t > 1 or (cfg["moe"] and e > 1) or d * c > 1:
        link_bw = need("", link_rate())
    fabric_bw = None
    spans = [t, t * c * e if cfg["moe"] and e > 1 else 0, t * c * d if d * c > 1 else 0]
    if isinstance(gpus_per_node, int) and max(spans) > gpus_per_node:
        fabric_bw = need("", fabric_rate())
    interval = need("storage.checkpoint.interval_minutes")
    expert = _expert_params(cfg)
    if isinstance(expert, Unknown):
        needs.extend(expert.needs)
    if needs:
        unknown = Unknown(tuple(dict.fromkeys(n for n in needs if n)))
        out.update(days=unknown, seconds=unknown, breakdown=unknown, mfu=unknown, gpus_for_target=unknown,
                   nodes_for_target=unknown)
        return out
    params = params_b * 1e9
    active = params
    moe_layers = 0
    if cfg["moe"]:
        moe = cfg["moe"]
        active = params - expert + expert * moe["active"] / moe["experts"]
        moe_layers = cfg["layers"] // moe["every"]
    trainable_bytes = 4.0 if cfg["gradients"] == "fp32" else (4.0 if data["plan"].get("precision") in ("fp32", "tf32") else 2.0)
    if cfg["method"] in ("lora", "qlora"):
        trainable_bytes *= 0.0  # only the adapters' gradients cross the fabric: negligible, left out
    def run(gpus: int, ranks: int, link_bw: Any = link_bw, fabric_bw: Any = fabric_bw) -> dict[str, float]:
        return physics.training_time(
            params=params, tokens=tokens_b * 1e9, gpus=gpus, peak_flops=tflops * 1e12,
            efficiency=policy["compute_efficiency"], t=t, p=p, d=ranks, c=c, v=cfg["v"], e=e,
            micro_batch=micro if micro is not _MISSING else None, global_batch=batch if batch is not _MISSING else None,
            seq=shape["seq"], hidden=shape["hidden"], layers=shape["layers"], recompute=cfg["recompute"],
            active_params=active, moe_layers=moe_layers,
            active_experts=cfg["moe"]["active"] if cfg["moe"] else 1, capacity_factor=cfg["moe"]["capacity"] if cfg["moe"] else 1.0,
            gpus_per_node=gpus_per_node, link_bytes_per_s=link_bw / 2 * 1e9 if link_bw else None,
            fabric_bytes_per_s=fabric_bw, gradient_bytes=trainable_bytes, expert_params=expert, zero_stage=cfg["zero"],
            interruptions_per_gpu_second=policy["interruptions_per_1000_gpu_days"] / 1000 / 86400,
            interruption_cost_s=(policy["restart_minutes"] + interval / 2) * 60,
            frozen=cfg["method"] in ("lora", "qlora"),
        )

    result = run(gpus_total, d)
    out["seconds"] = result["total"]
    out["days"] = _round(result["total"] / 86400, 1) if result["total"] != float("inf") else 1e9
    out["mfu"] = _round(result["mfu"], 3)
    out["data_parallel_degree"] = d
    out["breakdown"] = {k: _round(result[k] / 86400, 2) for k in
                        ("compute", "recompute", "bubble", "tensor_parallel", "data_parallel", "moe_all_to_all", "restarts")}

    # GPU008: the fewest whole nodes' GPUs that meet the target by the same time model, the
    # data-parallel degree growing or shrinking with them (t, p and c stay).
    target = out["target_days"]
    if isinstance(target, Unknown):
        out["gpus_for_target"] = out["nodes_for_target"] = target
        return out
    limit = target * 86400
    group = t * p * c
    # A layout of more data-parallel ranks than the manifest's own may need what its own does
    # not: the batch and sequence length (for the gradient all-reduce), the intra-node link or
    # the fabric. Where the manifest leaves one open, that layout is not estimated, and no count
    # found around it is known to be the fewest: the fact then names what is missing.
    wide_link = link_bw if link_bw else link_rate()
    wide_fabric = fabric_bw if fabric_bw else fabric_rate()
    open_batch = tuple(path for path, v in (("plan.global_batch_size", batch), (wanted["seq"], shape["seq"]))
                       if v is _MISSING or v is None)
    blocked: list[str] = []
    known_link, known_fabric = _known(wide_link), _known(wide_fabric)

    def meets(n: int) -> bool:
        ranks = n // group
        if ranks < 1:
            return False
        if ranks * c > 1:
            lacking = open_batch + unknowns([wide_link if t * c * ranks <= gpus_per_node else wide_fabric])
            if lacking:
                blocked.extend(lacking)
                return False
        return run(ranks * group, ranks, known_link, known_fabric)["total"] <= limit

    step = math.lcm(gpus_per_node, group)
    ratio = gpus_total * result["total"] / limit
    guess = math.ceil(ratio) if math.isfinite(ratio) and ratio < 1e15 else gpus_total  # smallest_meeting caps it
    found = physics.smallest_meeting(meets, guess, step)
    if found is not None and isinstance(batch, int) and isinstance(micro, int):
        # a count to buy is one that can be launched: its data degree gives whole micro-batches per
        # step (GPU011); the next such count up, within DATA_REACH times the fewest, else the fewest
        def whole(n: int) -> bool:
            m = physics.micro_batches(batch, micro, n // group)
            return m == int(m) and m >= 1

        found = next((n for n in range(found, physics.DATA_REACH * found + 1, step) if whole(n) and meets(n)), found)
    if blocked:
        found = Unknown(tuple(dict.fromkeys(blocked)))
    elif found is None:  # GPU006 says the plan misses its target; this says more GPUs alone do not help
        found = Unknown((f"plan.target_duration_days (no GPU count of this layout, up to {num(physics.SEARCH_CAP)}, "
                         "meets it by this estimate)",))
    out["gpus_for_target"] = found
    out["nodes_for_target"] = _apply(lambda n: n // gpus_per_node, found)
    return out


def _known(value: Any) -> Any:
    """`value`, or None where it is Unknown (a bandwidth a layout does not use)."""
    return None if isinstance(value, Unknown) else value


def _nics(data: dict, primary: int | None) -> dict[str, Any]:
    """Compute-fabric NICs of one node of the largest compute pool: count, bandwidth per node
    and per GPU (the figure the Llama 3 paper reports: 400 Gb/s per GPU [llama3] §3.3.1), and
    whether every one is GPUDirect RDMA capable [gpudirect-rdma]."""
    keys = ("per_node", "gbps_per_node", "gbps_per_gpu", "min_rate_gbps", "rdma")
    if primary is None:
        return {k: NO_GPU_POOL for k in keys} | {"path": "node_pools"}
    pool = f"node_pools[{primary}]"
    nics = get(data, f"{pool}.nics")
    if nics is _MISSING:
        unknown = Unknown((f"{pool}.nics",))
        return {k: unknown for k in keys} | {"path": pool}
    compute = [(j, n) for j, n in enumerate(nics) if n.get("purpose", "compute") in ("compute", "converged")]
    out: dict[str, Any] = {"path": f"{pool}.nics", "per_node": sum(n.get("count", 1) for _, n in compute)}
    if not compute:
        return out | {"gbps_per_node": 0, "gbps_per_gpu": 0, "min_rate_gbps": 0, "rdma": False}
    rates = [(f"{pool}.nics[{j}].rate_gbps", n.get("rate_gbps")) for j, n in compute]
    out["min_rate_gbps"] = _least(rates, f"{pool}.nics")
    per_node = _apply(lambda _: sum(n.get("count", 1) * n["rate_gbps"] for _, n in compute), out["min_rate_gbps"])
    out["gbps_per_node"] = per_node
    out["gbps_per_gpu"] = fact(data, [f"{pool}.gpu.count"], lambda g: _apply(lambda bw: _round(bw / g, 1), per_node))
    flags = [(f"{pool}.nics[{j}].gpudirect_rdma", n.get("gpudirect_rdma")) for j, n in compute]
    if any(flag is False for _, flag in flags):
        out["rdma"] = False
    else:
        missing = tuple(path for path, flag in flags if flag is None)
        out["rdma"] = Unknown(missing) if missing else True
    return out


def _local_disk(data: dict, primary: int | None, checkpoint_tb: Any, nodes: int) -> dict[str, Any]:
    """Local drives of one node of the largest compute pool: usable space after RAID
    [snia-ddf], and the node's share of one full checkpoint (F13 spread over the compute
    nodes, each writing its own shards)."""
    if primary is None:
        return {"path": "node_pools", "usable_tb": NO_GPU_POOL, "kind": NO_GPU_POOL, "checkpoint_shard_tb": NO_GPU_POOL}
    at = f"node_pools[{primary}].local_nvme"
    return {
        "path": at,
        "usable_tb": fact(data, [f"{at}.drives", f"{at}.drive_capacity_tb", f"{at}.raid"],
                          lambda n, tb, raid: _round(physics.raid_usable_tb(n, tb, raid), 2)),
        "kind": fact(data, [f"{at}.kind"], lambda k: k),
        "checkpoint_shard_tb": _apply(lambda c: _round(c / max(nodes, 1), 4), checkpoint_tb),
    }


_DATA_TIER_KINDS = ("parallel-fs", "nfs", "local-nvme")  # where training reads from, first found wins


def _storage(data: dict, checkpoint_tb: Any, training: dict[str, Any]) -> dict[str, Any]:
    """Where the training data and the checkpoints live, the read rate the plan implies, the
    time to write one checkpoint and the capacity each tier needs.

    The training data is read from the first parallel file system, else NFS, else local-NVMe
    tier (object stores hold cold data). Read rate: [kaplan-2020] time estimate and the
    dataset's own bytes per token (physics.data_read_bytes_per_second)."""
    tiers = get(data, "storage.tiers")
    tiers = [] if tiers is _MISSING else tiers
    keys = ("dataset_tier", "checkpoint_tier", "bytes_per_token", "read_needed_gb_s", "read_pace_days", "read_pace_from",
            "checkpoint_write_minutes", "checkpoints_tb", "capacity")
    if not tiers:
        unknown = Unknown(("storage.tiers",))
        return {k: unknown for k in keys}

    def record(i: int) -> dict[str, Any]:
        tier, at = tiers[i], f"storage.tiers[{i}]"
        values = {k: tier.get(k, Unknown((f"{at}.{k}",))) for k in ("capacity_tb", "read_gb_s", "write_gb_s")}
        return {"name": tier["name"], "path": at, "kind": tier["kind"], **values}

    data_idx = next((i for kind in _DATA_TIER_KINDS for i, t in enumerate(tiers) if t["kind"] == kind), None)
    named = get(data, "storage.checkpoint.tier")
    ckpt_idx = next((i for i, t in enumerate(tiers) if t["name"] == named), None)
    out: dict[str, Any] = {
        "dataset_tier": record(data_idx) if data_idx is not None else Unknown(
            ("storage.tiers[] (a parallel-fs, nfs or local-nvme tier for the training data)",)),
        "checkpoint_tier": record(ckpt_idx) if ckpt_idx is not None else Unknown(
            ("storage.checkpoint.tier",) if named is _MISSING else (f"storage.checkpoint.tier (no tier is named {named})",)),
    }
    out["bytes_per_token"] = fact(data, ["plan.dataset.size_tb", "plan.dataset.tokens_billion"],
                                  lambda size, tokens: _round(size * TB / (tokens * 1e9), 2))
    # The pace: the time-to-train estimate (how fast the GPUs will actually consume tokens);
    # without it, the plan's own target duration.
    if isinstance(training["seconds"], Unknown) and not isinstance(training["target_days"], Unknown):
        seconds, out["read_pace_from"] = training["target_days"] * 86400, "the target duration"
    else:
        seconds, out["read_pace_from"] = training["seconds"], "the time-to-train estimate"
    out["read_pace_days"] = _apply(lambda s: _round(s / 86400, 1), seconds)
    out["read_needed_gb_s"] = fact(
        data, ["plan.training_tokens_billion"],
        lambda tokens: _apply(lambda bpt, s: round(physics.data_read_bytes_per_second(tokens * 1e9, bpt, s) / GB, 6),
                              out["bytes_per_token"], seconds),
    )
    write_gb_s = out["checkpoint_tier"]["write_gb_s"] if ckpt_idx is not None else out["checkpoint_tier"]
    out["checkpoint_write_minutes"] = _apply(
        lambda size, rate: _round(physics.write_seconds(size * TB, rate * GB) / 60, 1), checkpoint_tb, write_gb_s)
    out["checkpoints_tb"] = fact(data, ["storage.checkpoint.retained"],
                                 lambda n: _apply(lambda c: _round(n * c, 2), checkpoint_tb))
    if data_idx is None or ckpt_idx is None:
        out["capacity"] = _sum(*(v for v in (out["dataset_tier"], out["checkpoint_tier"]) if isinstance(v, Unknown)))
        return out
    dataset_tb = fact(data, ["plan.dataset.size_tb"], lambda tb: tb)
    rows = []
    for i in sorted({data_idx, ckpt_idx}):
        held = {"dataset_tb": dataset_tb if i == data_idx else 0, "checkpoints_tb": out["checkpoints_tb"] if i == ckpt_idx else 0}
        need = _maybe_round(_sum(*held.values()))
        tier = record(i)
        rows.append({"name": tier["name"], "path": tier["path"], "capacity_tb": tier["capacity_tb"], "need_tb": need,
                     "margin_tb": _maybe_round(_difference(tier["capacity_tb"], need)), **held})
    out["capacity"] = rows
    return out


def _decision(data: dict, gpus_total: Any, gpu_model: Any) -> dict[str, Any]:
    """The seed article's decision order, as the manifest answers it: goal, parallelism, buy
    or rent, card [seed-hardware-layers]."""
    par = get(data, "plan.parallelism")
    par = {} if par is _MISSING else par
    value = lambda path: (lambda v: Unknown((path,)) if v is _MISSING else v)(get(data, path))  # noqa: E731
    return {
        "goal": value("plan.goal"),
        "parameters_billion": value("plan.model.parameters_billion"),
        "training_tokens_billion": value("plan.training_tokens_billion"),
        "target_duration_days": value("plan.target_duration_days"),
        "tensor": par.get("tensor", 1), "pipeline": par.get("pipeline", 1),
        "data": par.get("data", Unknown(("plan.parallelism.data",))), "zero_stage": par.get("zero_stage", 0),
        "gpus": gpus_total,
        "gpu_model": gpu_model if gpu_model is not _MISSING else Unknown(("node_pools[].gpu.model",)),
        "mode": value("procurement.mode"),
        "project_duration_months": value("procurement.project_duration_months"),
        "operations_team": value("procurement.operations_team"),
    }


def _quotes(data: dict) -> list[tuple[str, dict]]:
    """(path, quote): the quotes every option shares, then the chosen option's own."""
    shared = get(data, "procurement.quotes")
    out = [(f"procurement.quotes[{i}]", q) for i, q in enumerate([] if shared is _MISSING else shared)]
    options = get(data, "procurement.options")
    chosen = get(data, "procurement.chosen")
    for o, option in enumerate([] if options is _MISSING else options):
        if option["name"] == chosen:
            out += [(f"procurement.options[{o}].quotes[{i}]", q) for i, q in enumerate(option.get("quotes", []))]
    return out


def _report_currency(data: dict, quotes: list[tuple[str, dict]]) -> Any:
    given = get(data, "procurement.currency")
    if given is not _MISSING:
        return given
    used = sorted({q["currency"] for _, q in quotes if "currency" in q})
    if len(used) == 1:
        return used[0]
    facility = get(data, "facility.currency")
    if not used and facility is not _MISSING:
        return facility
    return Unknown(("procurement.currency",) if used else ("procurement.quotes[].currency",))


def _target(data: dict, quote: dict) -> dict[str, Any] | None:
    """What a quote names and how much of it the manifest has: nodes of a pool, switches of a
    fabric, TB of a storage tier."""
    for key, where, unit in (("pool", "node_pools", "nodes"), ("fabric", "network.fabrics", "switches"),
                             ("storage_tier", "storage.tiers", "TB")):
        if key in quote:
            items = get(data, where)
            found = next((x for x in ([] if items is _MISSING else items) if x["name"] == quote[key]), None)
            if found is None:
                return None
            have = (found["count"] if key == "pool" else sum(s["count"] for s in found.get("switches", []))
                    if key == "fabric" else found.get("capacity_tb"))
            words = {"pool": "node pool", "fabric": "fabric", "storage_tier": "storage tier"}[key]
            return {"names": f"{words} {quote[key]}", "unit": unit, "manifest_quantity": have}
    return None


def _procurement(data: dict, it_kw: Any, gpus_total: Any, gpu_model: Any, policy: dict[str, float],
                 today: str | None) -> dict[str, Any]:
    """Money and dates from the quotes of the chosen option, in one currency:

    capex (purchases), the owner's opex per month (electricity at the PUE [green-grid-pue],
    colocation per kW-month, support contracts and staff, where given), the rent per month for
    the same capacity (a rental quote whose GPUs and model match the manifest's), the payback
    period [seed-hardware-layers], what each quote names and whether its quantity matches,
    and the date the last part arrives and the cluster is ready (order date, lead time,
    installation and burn-in)."""
    quotes = _quotes(data)
    currency = _report_currency(data, quotes)
    rates = get(data, "procurement.exchange_rates")
    rates = {} if rates is _MISSING else rates
    mode = get(data, "procurement.mode")
    out: dict[str, Any] = {"currency": currency, "mode": mode if mode is not _MISSING else Unknown(("procurement.mode",))}

    def price(path: str, q: dict) -> Any:
        if "price" not in q:
            return Unknown((f"{path}.price",))
        if "currency" not in q:
            return Unknown((f"{path}.currency",))
        if isinstance(currency, Unknown) or q["currency"] == currency:
            return q["price"]
        rate = rates.get(q["currency"])
        return _round(physics.converted(q["price"], rate), 2) if rate else Unknown(
            (f"procurement.exchange_rates.{q['currency']}",))

    listed = []
    for path, q in quotes:
        row = {"path": path, "item": q["item"], "kind": q.get("kind", "purchase"), "price": price(path, q)}
        target = _target(data, q)
        if target is not None:
            row.update(target, quantity=q.get("quantity", Unknown((f"{path}.quantity",))))
        listed.append(row)
    out["quotes"] = listed

    def total(kind: str, none: Any) -> Any:
        chosen = [row["price"] for row in listed if row["kind"] == kind]
        return _apply(lambda *known: _round(sum(known), 2), *chosen) if chosen else none

    mode_known = mode if mode is not _MISSING else None
    out["capex"] = total("purchase", 0 if mode_known == "rent" else Unknown(("procurement.quotes[] (a purchase quote)",)))
    out["support_per_month"] = total("support", 0)
    staff = get(data, "procurement.staff_per_month")
    out["staff_per_month"] = 0 if staff is _MISSING else staff

    def facility_money(value: float) -> Any:  # electricity and colocation prices are in facility.currency
        own = get(data, "facility.currency")
        if own is _MISSING:
            return Unknown(("facility.currency",))
        if own == currency or isinstance(currency, Unknown):
            return value
        return physics.converted(value, rates[own]) if own in rates else Unknown((f"procurement.exchange_rates.{own}",))

    out["electricity_per_month"] = fact(
        data, ["facility.electricity_price_per_kwh", "facility.pue"],
        lambda price_kwh, pue: _apply(lambda kw, p: _round(physics.electricity_per_month(kw, pue, p), 0),
                                      it_kw, facility_money(price_kwh)),
    )
    colo = get(data, "facility.colocation_per_kw_month")
    out["colocation_per_month"] = 0 if colo is _MISSING else _apply(
        lambda kw, p: _round(physics.colocation_per_month(kw, p), 0), it_kw, facility_money(colo))
    out["opex_counted"] = ", ".join(
        ["electricity at the PUE"]
        + (["colocation"] if colo is not _MISSING else [])
        + (["support"] if any(row["kind"] == "support" for row in listed) else [])
        + (["staff"] if staff is not _MISSING else []))
    out["owned_opex_per_month"] = _apply(lambda *parts: _round(physics.owned_opex_per_month(*parts), 0),
                                         out["electricity_per_month"], out["colocation_per_month"],
                                         out["support_per_month"], out["staff_per_month"])
    out["rental"] = _rental(quotes, listed, gpus_total, gpu_model)
    rent = out["rental"]
    out["rent_per_month"] = rent if isinstance(rent, Unknown) else (
        rent["price"] if rent["matches"] else Unknown((f"{rent['path']}.capacity (it rents {rent['gpus']} "
                                                       f"{rent['gpu_model']}; the manifest has {gpus_total} {gpu_model})",)))
    if mode_known == "rent":
        out["opex_per_month"] = _apply(lambda *parts: _round(sum(parts), 0), out["rent_per_month"],
                                       out["support_per_month"], out["staff_per_month"])
    else:
        out["opex_per_month"] = out["owned_opex_per_month"]
    payback = _apply(lambda buy, rent_pm, running: physics.payback_months(buy, rent_pm, running),
                     out["capex"], out["rent_per_month"], out["owned_opex_per_month"])
    if isinstance(payback, Unknown):
        out["pays_back"] = out["payback_months"] = payback
    else:
        out["pays_back"] = payback is not None
        out["payback_months"] = _round(payback, 1) if payback is not None else Unknown(
            ("procurement.quotes[] (buying never pays back against this rental quote)",))
    quantities = unknowns(row["quantity"] for row in listed if "names" in row)
    out["quote_binding"] = Unknown(quantities) if quantities else {
        "unbound": [{"path": row["path"], "item": row["item"]} for row in listed
                    if row["kind"] == "purchase" and "names" not in row],
        "mismatched": [row for row in listed if "names" in row and row["manifest_quantity"] is not None
                       and row["quantity"] != row["manifest_quantity"]],
    }
    out["project_months"] = fact(data, ["procurement.project_duration_months"], lambda m: m)
    out["start_date"] = fact(data, ["plan.start_date"], lambda d: d)
    out.update(_delivery(data, quotes, policy, today))
    out["oldest_quote"] = _pick(
        quotes, lambda path, q: str(q["quote_date"]) if "quote_date" in q else Unknown((f"{path}.quote_date",)), min)
    return out


def _rental(quotes: list[tuple[str, dict]], listed: list[dict], gpus_total: Any, gpu_model: Any) -> Any:
    """The rental quotes together: monthly price, the GPUs they rent, their term, and whether
    that is the manifest's own capacity (same GPU count and model)."""
    rentals = [(path, q, row) for (path, q), row in zip(quotes, listed) if row["kind"] == "rental"]
    if not rentals:
        return Unknown(("procurement.quotes[] (a rental quote for the same capacity)",))
    missing = tuple(f"{path}.capacity" for path, q, _ in rentals if "capacity" not in q)
    if missing:
        return Unknown(missing)
    price = _apply(lambda *known: _round(sum(known), 2), *(row["price"] for _, _, row in rentals))
    models = sorted({q["capacity"]["gpu_model"] for _, q, _ in rentals})
    gpus = sum(q["capacity"]["gpus"] for _, q, _ in rentals)
    terms = [q.get("term_months") for _, q, _ in rentals]
    out = {"path": rentals[0][0], "item": rentals[0][1]["item"], "price": price, "gpus": gpus,
           "gpu_model": " and ".join(models),
           "term_months": min(terms) if all(terms) else Unknown(tuple(f"{p}.term_months" for p, q, _ in rentals
                                                                      if "term_months" not in q))}
    out["matches"] = _apply(lambda n, model: n == gpus and models == [model], gpus_total, gpu_model)
    return out


def _delivery(data: dict, quotes: list[tuple[str, dict]], policy: dict[str, float], today: str | None) -> dict[str, Any]:
    """When the last part arrives and when the cluster is ready to train: from the planned order
    date (today when not given) plus each quote's lead time, or its committed delivery date;
    then installation (purchases) and burn-in (purchases and rentals)."""
    given = get(data, "procurement.order_date")
    order = given if given is not _MISSING else today
    out: dict[str, Any] = {
        "order_date": order if order is not None else Unknown(("procurement.order_date",)),
        "order_date_from": "procurement.order_date" if given is not _MISSING else "today (no procurement.order_date)",
        "installation_days": policy["installation_days"],
        "burn_in_days": policy["burn_in_days"],
    }

    def ready(path: str, q: dict) -> Any:
        kind = q.get("kind", "purchase")
        if kind == "support":
            return None
        if "delivery_date" not in q and "lead_time_weeks" not in q:
            return Unknown((f"{path}.lead_time_weeks",))
        if order is None:
            return Unknown(("procurement.order_date",))
        install = policy["installation_days"] if kind == "purchase" else 0
        arrives, done = physics.ready_date(
            dt.date.fromisoformat(str(order)), q.get("lead_time_weeks"),
            dt.date.fromisoformat(str(q["delivery_date"])) if "delivery_date" in q else None,
            int(install), int(policy["burn_in_days"]))
        return {"date": arrives.isoformat(), "ready": done.isoformat(), "installation_days": install,
                "burn_in_days": policy["burn_in_days"], "lead_time_weeks": q.get("lead_time_weeks"),
                "committed": "delivery_date" in q}

    dated = [(ready(path, q), path, q) for path, q in quotes]
    dated = [d for d in dated if d[0] is not None]
    missing = unknowns(d for d, _, _ in dated)
    if not dated:
        out["latest_delivery"] = out["ready_date"] = Unknown(("procurement.quotes",))
    elif missing:
        out["latest_delivery"] = out["ready_date"] = Unknown(missing)
    else:
        when, path, q = max(dated, key=lambda d: d[0]["ready"])
        out["latest_delivery"] = {**when, "item": q["item"], "path": path}
        out["ready_date"] = when["ready"]
    return out


def _pick(quotes: list[tuple[str, dict]], date_of: Callable[[str, dict], Any], choose: Callable) -> Any:
    """The quote whose date `choose` (min or max) picks: {date, item, path}."""
    if not quotes:
        return Unknown(("procurement.quotes",))
    dates = [(date_of(path, q), i) for i, (path, q) in enumerate(quotes)]
    missing = unknowns(d for d, _ in dates)
    if missing:
        return Unknown(missing)
    date, i = choose(dates)
    return {"date": date, "item": quotes[i][1]["item"], "path": quotes[i][0]}


def layout_facts(data: dict, policy: dict[str, float]) -> dict[str, Any]:
    """Memory per GPU and time to train of a manifest whose first node pool is its only compute
    pool: the part of `derive` a layout search calls thousands of times (the same code, without
    power, fabric, storage and money)."""
    pools = data["node_pools"]
    facts: dict[str, Any] = {"policy": policy}
    facts.update(_counts(data, pools, [0]))
    cfg = plan_settings(data)
    facts["memory"] = _memory(data, 0, policy, cfg)
    facts["link"] = _link(data, 0)
    facts["fabric"] = _fabric(data, pools)
    facts["nics"] = _nics(data, 0)
    facts["training"] = _training(data, 0, facts, policy, cfg)
    return facts


# Top-level fact names rules may read (checked when a rule pack loads); tier, tier_inferred,
# tier_inferred_reason and tier_rank (name -> 0 for the smallest tier) are set by the review, not here;
# so are catalog and catalog_bounds (from the catalog step).
FACT_NAMES = (
    "policy", "compute_nodes", "nodes_total", "spare_nodes", "gpus_total", "gpus_training", "gpus_per_node_min", "gpus_per_node_max",
    "gpu_memory_total_gb", "primary_pool", "memory", "host_ram_ratio", "power", "fabric", "fabrics",
    "checkpoint_tb", "training", "tier", "tier_inferred", "tier_inferred_reason", "tier_rank", "today", "catalog", "catalog_bounds", "link",
    "nics", "local_disk", "storage", "procurement", "plan", "decision",
)
