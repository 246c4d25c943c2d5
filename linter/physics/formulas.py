"""The formulas behind hwlint's derived facts: pure, typed, each naming its source.

Symbols follow the sources: P parameters, d data-parallel degree, t tensor-parallel,
p pipeline-parallel, s sequence length, b micro-batch, h hidden size, a attention heads,
L layers, v interleaved chunks. Results are in bytes, FLOPs, seconds, kW or ports; callers
convert units. Reference keys (in brackets) resolve in rules/references.yaml.
"""

from __future__ import annotations

import datetime as dt
import math

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Callable

# Bytes per trainable parameter for (weights, gradients, optimizer state), by precision and optimizer.
# [zero-2020] §3.1: mixed-precision Adam keeps 16-bit weights and gradients (2 + 2) and
# fp32 master weights, momentum and variance (12): 16 bytes/param. This is the ZeRO
# paper's convention; DeepSpeed's estimators count 18 (fp32 gradients kept).
# Pure fp32 Adam keeps 4 + 4 and momentum + variance (8). Single-state optimizers (SGD with
# momentum, Lion) keep one fp32 state instead of two, by the same accounting.
_ADAM_STATE = {"mixed": (2, 2, 12), "fp32": (4, 4, 8)}
_ONE_STATE = {"mixed": (2, 2, 8), "fp32": (4, 4, 4)}
# 8-bit Adam: fp32 master (4) + two 8-bit moments (2) [adam8bit-2022]. Adafactor: fp32 master only,
# its factored statistics are sublinear in the parameters [adafactor-2018].
_ADAM_8BIT = {"mixed": (2, 2, 6), "fp32": (4, 4, 2)}
_ADAFACTOR = {"mixed": (2, 2, 4), "fp32": (4, 4, 0)}
OPTIMIZER_BYTES = {"adam": _ADAM_STATE, "adamw": _ADAM_STATE, "sgd": _ONE_STATE, "lion": _ONE_STATE,
                   "adamw-8bit": _ADAM_8BIT, "adafactor": _ADAFACTOR}


def state_bytes(precision: str, optimizer: str, gradients: str = "16-bit",
                optimizer_bytes: float | None = None) -> tuple[float, float, float] | None:
    """(weight, gradient, optimizer) bytes per trainable parameter, or None when unknown.

    Two conventions for mixed-precision Adam: the ZeRO paper's 16 bytes/param (16-bit
    gradients, [zero-2020] §3.1) and the 18 of DeepSpeed's estimators and llm-analysis (fp32
    gradients, [deepspeed-estimators]); `gradients` chooses. 8-bit Adam keeps both moments in
    8 bits, 2 bytes instead of 8 [adam8bit-2022]; Adafactor keeps factored row and column
    statistics only (sublinear, counted as 0 per parameter; no first moment by default)
    [adafactor-2018]; mixed precision adds the 4-byte fp32 master copy to each.
    `optimizer_bytes` (the plan's own figure, master weights included) overrides the table.
    """
    table = OPTIMIZER_BYTES.get(optimizer)
    if table is None and optimizer_bytes is None:
        return None
    fp32 = precision in ("fp32", "tf32")
    w, g, k = (table or _ADAM_STATE)["fp32" if fp32 else "mixed"]
    if gradients == "fp32" and not fp32:
        g = 4
    return (w, g, k if optimizer_bytes is None else optimizer_bytes)


def sharded_state_bytes(
    params: float, zero_stage: int, d: int, bytes_per_param: tuple[float, float, float],
    offload_optimizer: bool = False, offload_params: bool = False, deepspeed: bool = False,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes on one GPU for `params` parameters already divided
    by the model-parallel degree [zero-2020] §5: stage 1 shards the optimizer state over the d
    data-parallel ranks, stage 2 also the gradients, stage 3 also the weights.

    With optimizer offload (ZeRO-Offload [zero-offload-2021] §4, ZeRO-Infinity [zero-infinity-2021]
    to NVMe) the optimizer state and the gradients leave the GPU (each gradient goes to host
    memory as it is reduced) and the GPU keeps the 16-bit weights; ZeRO-3 parameter offload
    takes those too (the working buffer for one layer is counted by the caller).

    `deepspeed`: DeepSpeed's estimators' convention (fp32 gradients, [deepspeed-estimators]):
    stages 1 and 2 keep the 16-bit gradients whole besides the fp32 gradient shard, 4P + 16P/N for
    mixed-precision Adam (estimate_zero2_model_states_mem_needs); stage 3 shards all 18 bytes."""
    w, g, k = bytes_per_param
    weights = w * params / (d if zero_stage >= 3 else 1)
    if deepspeed and zero_stage in (1, 2):
        grads = 2 * params + g * params / d
    else:
        grads = g * params / (d if zero_stage >= 2 else 1)
    optim = k * params / (d if zero_stage >= 1 else 1)
    if offload_optimizer:
        return (0.0 if offload_params else weights, 0.0, 0.0)
    return (0.0 if offload_params else weights, grads, optim)


def model_state_bytes_per_gpu(
    params: float, zero_stage: int, d: int, t: int = 1, p: int = 1,
    bytes_per_param: tuple[float, float, float] = (2, 2, 12), offload: bool = False,
) -> float:
    """Model-state memory per GPU [zero-2020] §5 and Fig. 1, with P/(t*p) [transformer-math].

    Stage 0: (w+g+k)P; stage 1 shards the optimizer: (w+g)P + kP/d; stage 2 also the
    gradients: wP + (g+k)P/d; stage 3 everything: (w+g+k)P/d. With optimizer offload
    [zero-offload-2021] the optimizer state and the gradients live in host memory (g = k = 0 on the GPU).
    """
    return sum(sharded_state_bytes(params / (t * p), zero_stage, d, bytes_per_param, offload))


GATED = ("swiglu", "geglu")  # FFNs of three matrices (gate, up, down) [glu-2020]


def default_ffn_width(h: int, activation: str) -> int:
    """Megatron-LM's default FFN width: 4h, or int(8h/3 / 64) * 64 with SwiGLU [megatron-lm-defaults]."""
    return int((4 * h * 2 / 3) / 64) * 64 if activation in GATED else 4 * h


def layer_parameters(h: int, a: int, kv_heads: int, f: int, activation: str) -> tuple[float, float]:
    """(attention, FFN) weights of one transformer layer, biases and norms left out: Q and the
    output projection h x h each, K and V h x h*n_kv/a each [gqa-2023]; the FFN two h x f
    matrices (GELU) or three (SwiGLU) [glu-2020]."""
    attention = 2 * h * h + 2 * h * h * kv_heads / a
    ffn = (3 if activation in GATED else 2) * h * f
    return attention, ffn


def transformer_parameters(layers: int, h: int, a: int, kv_heads: int, f: int, activation: str, vocab: int,
                           tied: bool, experts: int = 1) -> float:
    """Weights of a decoder-only transformer: L layers of attention and E FFNs (layer_parameters)
    plus the V x h input embedding and, untied, as many in the output layer; biases and norms
    left out. With E = 1, GELU and f = 4h this is Kaplan's N = 12*L*h^2 plus the embeddings
    [kaplan-2020] §2.1."""
    attention, ffn = layer_parameters(h, a, kv_heads, f, activation)
    return layers * (attention + experts * ffn) + vocab * h * (1 if tied else 2)


def lora_parameters(layers: int, h: int, a: int, kv_heads: int, f: int, rank: int, targets: list[str]) -> float:
    """Trainable LoRA weights: r*(d + k) for each adapted d x k matrix, in every layer [lora-2022] §4."""
    kv = h * kv_heads // a
    shapes = {"q": (h, h), "k": (h, kv), "v": (h, kv), "o": (h, h), "gate": (h, f), "up": (h, f), "down": (f, h)}
    return layers * sum(rank * sum(shapes[name]) for name in targets)


# Bytes per frozen base weight: 16-bit; 8-bit (one byte); 4-bit NormalFloat with one 32-bit
# constant per block of 64 weights, 4 + 0.5 bits [qlora-2023] §3 (double quantization, which
# bitsandbytes leaves off by default, brings the constants to 0.127 bit).
BASE_WEIGHT_BYTES = {16: 2.0, 8: 1.0, 4: 4.5 / 8}


def activation_bytes_per_layer(
    s: int, b: int, h: int, a: int, t: int = 1, sequence_parallel: bool = False, recompute: str = "none", *,
    attention: str = "standard", kv_heads: int | None = None, ffn: int | None = None, activation: str = "gelu",
    expert_tokens: float = 1.0, context: int = 1,
) -> float:
    """Activation memory of one transformer layer in 16-bit [korthikanti-2022] §4-5, Table 2.

    Korthikanti's 34*s*b*h + 5*a*s^2*b, term by term: layer-norm inputs 4sbh, attention and
    FFN inputs 2sbh each, two dropout masks 2sbh (these 10 are not split by tensor
    parallelism unless sequence parallelism is on); Q 2sbh, K and V 2sbh each, the output
    projection's input 2sbh; the FFN's 4h-wide GELU input and output 16sbh; the attention
    scores, softmax and its dropout 5*a*s^2*b. The general shape replaces:
    - K and V by 2sbh * n_kv/a each (grouped-query attention [gqa-2023]);
    - 16sbh by 4*s*b*f (GELU) or 6*s*b*f (SwiGLU: gate and up outputs and the down
      projection's input, the same accounting applied to its three matrices [glu-2020]);
    - the FFN part by k * capacity factor for MoE layers (each token runs k experts [switch-2022]);
    - 5*a*s^2*b by FlashAttention's 4*a*s*b of fp32 softmax statistics: the scores are never
      stored [flashattention-2022] §3 (selective recompute drops them too [korthikanti-2022] §5);
    and divides the whole by c with context parallelism [megatron-context-parallel].
    With the defaults (n_kv = a, f = 4h, GELU, standard attention) this is Table 2 exactly.
    """
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh / context
    n_kv = a if kv_heads is None else kv_heads
    f = 4 * h if ffn is None else ffn
    unsplit = 10 * sbh
    mlp = (6 if activation in GATED else 4) * s * b * f * expert_tokens
    split = (2 + 4 * n_kv / a + 2) * sbh + mlp
    if attention == "flash":
        scores = 4 * a * s * b
    elif recompute == "selective":
        scores = 0.0
    else:
        scores = 5 * a * s * s * b
    if sequence_parallel:
        total = (unsplit + split + scores) / t
    else:
        total = unsplit + (split + scores) / t
    return total / context


def activation_bytes_per_gpu(per_layer: float, layers: int, p: int = 1, v: int = 1) -> float:
    """The first 1F1B pipeline stage holds about L layers' activations; interleaving with v
    chunks multiplies that by (1 + (p-1)/(p*v)) [korthikanti-2022] §4.2.3."""
    factor = 1 + (p - 1) / (p * v) if v > 1 else 1
    return per_layer * layers * factor


def training_flops(params: float, tokens: float) -> float:
    """C = 6PD [kaplan-2020] §2.1."""
    return 6 * params * tokens


def training_seconds_achieved(params: float, tokens: float, gpus: int, achieved_flops_per_gpu: float, full_recompute: bool = True) -> float:
    """End-to-end time 8TP/(nX) with full recompute (6TP/(nX) without) [narayanan-2021] eq. 4,
    where X is the achieved hardware FLOP/s per GPU."""
    factor = 8 if full_recompute else 6
    return factor * tokens * params / (gpus * achieved_flops_per_gpu)


def training_seconds_at_mfu(params: float, tokens: float, gpus: int, peak_flops_per_gpu: float, mfu: float) -> float:
    """6PD over the cluster's useful FLOP/s: model FLOPs utilization counts only the 6PD
    model FLOPs [kaplan-2020], so recompute is already inside the MFU figure [palm-2022] App. B."""
    return training_flops(params, tokens) / (gpus * peak_flops_per_gpu * mfu)


def model_flops(active_params: float, tokens: float, layers: int | None = None, seq: int | None = None,
                hidden: int | None = None, frozen: bool = False) -> float:
    """Model FLOPs of a training run: 6 per active parameter per token [kaplan-2020] §2.1, plus
    the attention scores' 12*l*s*h per token when the shape is known. For a GPT layer
    (12h^2 weights) and a V x h output layer this is [narayanan-2021] eq. 3 without
    recompute: 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)). For MoE only the k active experts of
    each layer count [switch-2022]. Frozen weights (LoRA, QLoRA) need no weight gradients: 4
    FLOPs per parameter per token (forward 2, input gradients 2) [lora-2022] §4.2; the
    adapters' own FLOPs are left out (r << h)."""
    attention = 12 * layers * seq * hidden * tokens if None not in (layers, seq, hidden) else 0.0
    return (4 if frozen else 6) * active_params * tokens + attention


def recompute_flops(recompute: str, flops: float, tokens: float, layers: int | None = None, seq: int | None = None,
                    hidden: int | None = None, frozen: bool = False) -> float:
    """FLOPs spent recomputing activations: full recompute runs the forward pass again (a third
    of the model FLOPs; [narayanan-2021] eq. 3 counts 96 instead of 72); selective recompute
    [korthikanti-2022] §5 only the attention scores, 4*l*s*h per token."""
    if recompute == "full":
        return flops / (2 if frozen else 3)  # the forward pass: 2 of 6 FLOPs per parameter (2 of 4 when frozen)
    if recompute == "selective" and None not in (layers, seq, hidden):
        return 4 * layers * seq * hidden * tokens
    return 0.0


def ring_allreduce_bytes(buffer_bytes: float, n: int) -> float:
    """Bytes one GPU sends in a ring all-reduce of `buffer_bytes` over n GPUs: 2(n-1)/n of the
    buffer [ring-allreduce]; time = this / the per-GPU bandwidth in one direction (NCCL busbw)."""
    return 2 * (n - 1) / n * buffer_bytes if n > 1 else 0.0


def goodput(interruptions_per_gpu_second: float, gpus: int, cost_seconds: float) -> float:
    """Share of wall time spent training: each interruption costs the restart plus the work
    since the last checkpoint; interruptions come at a rate proportional to the GPUs
    ([llama3-reliability]: 466 in 54 days on 16,384 H100). 0 when restarts outpace training."""
    return max(0.0, 1 - interruptions_per_gpu_second * gpus * cost_seconds)


def young_interval_seconds(pause_seconds: float, mtbf_seconds: float) -> float:
    """The first-order optimum time between checkpoints, sqrt(2 x checkpoint time x mean time
    between failures) [young-1974]; Daly's higher-order estimate [daly-2006] is within a few
    percent while the checkpoint is short against the MTBF (his Fig. 3: M = 24 h, 5 minutes:
    117 minutes, Young's 120)."""
    return math.sqrt(2 * pause_seconds * mtbf_seconds)


def checkpoint_interval_seconds(pause_seconds: float, write_seconds: float, interruptions_per_second: float) -> float:
    """The checkpoint interval a plan is sized with when it gives none: Young's optimum for the
    time training pauses per checkpoint, never shorter than the time the checkpoint takes to
    write (asynchronous checkpointing copies the state to host memory and writes it while
    training goes on; the next checkpoint waits for the last [pytorch-async-checkpoint]). Without
    interruptions there is nothing to optimise: the write time."""
    if interruptions_per_second <= 0:
        return write_seconds
    return max(young_interval_seconds(pause_seconds, 1 / interruptions_per_second), write_seconds)


DATA_REACH = 4  # a suggested GPU count may be up to this many times the fewest that meet the deadline, to reach a data degree the batch divides by


def micro_batches(global_batch: int, micro_batch: int, data: int) -> float:
    """m, the micro-batches each data-parallel replica runs per optimizer step (its gradient
    accumulation steps): the global batch B = b x d x m [narayanan-2021] §2.2, so m = B / (b x d).
    A launchable layout has a whole m [megatron-lm-validate]."""
    return global_batch / (micro_batch * data)


def training_time(
    *, params: float, tokens: float, gpus: int, peak_flops: float, efficiency: float,
    t: int = 1, p: int = 1, d: int = 1, c: int = 1, v: int = 1, e: int = 1,
    micro_batch: int | None = None, global_batch: int | None = None,
    seq: int | None = None, hidden: int | None = None, layers: int | None = None,
    recompute: str = "none", active_params: float | None = None,
    moe_layers: int = 0, active_experts: int = 1, capacity_factor: float = 1.0,
    gpus_per_node: int = 8, link_bytes_per_s: float | None = None, fabric_bytes_per_s: float | None = None,
    gradient_bytes: float = 2.0, expert_params: float = 0.0, zero_stage: int = 0, kv_fraction: float = 1.0,
    interruptions_per_gpu_second: float = 0.0, interruption_cost_s: float = 0.0, frozen: bool = False,
) -> dict[str, float]:
    """Seconds to train, term by term, for one parallel layout. Pure: the sizer calls it for
    candidate layouts. Every term names its source:

    - compute: model FLOPs (model_flops) at the dense peak times `efficiency`;
    - recompute: recompute_flops at the same rate [korthikanti-2022];
    - bubble: (p-1)/(v*m) of the pipeline's busy time, m = global batch / (micro-batch * d)
      micro-batches per iteration [narayanan-2021] §2.2;
    - tensor parallel: two all-reduces of the s*b*h activations per layer forward and two
      backward (two more with full recompute) [narayanan-2021] §2.3, ring volume
      [ring-allreduce], over the intra-node link when t fits in a node, else the fabric;
    - data parallel: one gradient all-reduce per iteration over d*c ranks, over the fabric when
      the group spans nodes, overlapped with the backward pass as the frameworks do: the buckets
      of the last micro-batch's backward reduce while it runs (PyTorch DDP [pytorch-ddp-2020]
      §3.2.3, gradient accumulation skipping the earlier ones; Megatron's overlap-grad-reduce
      [megatron-lm-overlap]), so only what outlasts that backward is counted. ZeRO-3 / FSDP
      gathers the weights and reduce-scatters the gradients every micro-batch (1.5x an
      all-reduce's volume [zero-2020] §7), prefetched under the forward and backward compute
      [pytorch-fsdp-2023] §3.3: what outlasts all of it is counted;
    - context parallel: ring attention passes each rank's keys and values around the c ranks,
      (c-1)/c of the 2 x (h x n_kv/a) 16-bit values per token and layer, once forward and twice
      backward (the gradients of K and V come back) [megatron-context-parallel]; counted as not
      overlapped with the attention compute (an upper bound);
    - MoE: four all-to-alls per MoE layer (dispatch and combine, forward and backward; six with
      full recompute) of k * capacity factor * h 16-bit values per token, (e-1)/e of it leaving
      the GPU [switch-2022];
    - restarts: wall time / goodput - the rest (goodput()).
    Tensor-parallel and MoE traffic is counted as not overlapped (it sits on the critical path
    of each layer); pipeline point-to-point traffic and the optimizer step are left out.
    A micro-batch size of None counts micro-batches of one sequence (the least overlap).
    Bandwidths are bytes/s per GPU in one direction; None where the layout needs none.
    """
    active = params if active_params is None else active_params
    rate = gpus * peak_flops * efficiency
    flops = model_flops(active, tokens, layers, seq, hidden, frozen)
    out = {"compute": flops / rate,
           "recompute": recompute_flops(recompute, flops, tokens, layers, seq, hidden, frozen) / rate}
    tokens_per_rank = tokens / (d * c)  # every data- and context-parallel rank sees its share; TP ranks share theirs
    extra_forward = 1 if recompute == "full" else 0

    def over(group_span: int, what: str) -> float:
        bandwidth = link_bytes_per_s if group_span <= gpus_per_node else fabric_bytes_per_s
        if not bandwidth:
            raise ValueError(f"{what}: no bandwidth given")
        return bandwidth

    out["tensor_parallel"] = 0.0
    if t > 1:
        per_layer = (4 + 2 * extra_forward) * ring_allreduce_bytes(2 * hidden, t)  # per token
        out["tensor_parallel"] = tokens_per_rank * per_layer * layers / p / over(t, "tensor parallel")
    out["context_parallel"] = 0.0
    if c > 1:
        per_layer = 3 * 2 * 2 * hidden * kv_fraction * (c - 1) / c  # K and V, 2 bytes each, forward once, backward twice
        out["context_parallel"] = tokens_per_rank * per_layer * layers / p / over(t * c, "context parallel")
    out["moe_all_to_all"] = 0.0
    if moe_layers and e > 1:
        per_layer = (4 + 2 * extra_forward) * active_experts * capacity_factor * 2 * hidden * (e - 1) / e
        out["moe_all_to_all"] = tokens_per_rank * per_layer * moe_layers / p / over(t * c * e, "expert parallel")
    out["bubble"] = 0.0
    if p > 1:
        m = micro_batches(global_batch, micro_batch, d)
        busy = out["compute"] + out["recompute"] + out["tensor_parallel"] + out["context_parallel"] + out["moe_all_to_all"]
        out["bubble"] = busy * (p - 1) / (v * m)
    out["data_parallel"] = 0.0
    if d * c > 1:
        iterations = tokens / (global_batch * seq)
        dense = (params - expert_params) / (t * p)
        experts = expert_params / (t * p * e)
        volume = ring_allreduce_bytes(gradient_bytes * dense, d * c)
        if experts:
            volume += ring_allreduce_bytes(gradient_bytes * experts, max(d * c // e, 1))
        m = max(micro_batches(global_batch, micro_batch or 1, d), 1)
        work = out["compute"] + out["recompute"] + out["tensor_parallel"] + out["context_parallel"] + out["moe_all_to_all"]
        if zero_stage >= 3:
            volume *= 1.5 * m
            window = work
        else:
            backward = out["compute"] * (0.5 if frozen else 2 / 3) + out["recompute"] \
                + (out["tensor_parallel"] + out["moe_all_to_all"]) / 2
            window = backward / m
        out["data_parallel"] = max(0.0, iterations * volume / over(t * c * d, "data parallel") - window)
    busy = sum(out.values())
    share = goodput(interruptions_per_gpu_second, gpus, interruption_cost_s)
    out["restarts"] = busy / share - busy if share > 0 else math.inf
    out["total"] = busy + out["restarts"]
    out["mfu"] = flops / (out["total"] * gpus * peak_flops) if out["total"] not in (0, math.inf) else 0.0
    return out


def checkpoint_bytes(params: float, mixed_precision: bool = True) -> float:
    """Full checkpoint with optimizer state: 16-bit weights + fp32 master + m + v = 14 bytes
    per parameter [zero-2020] §3.1 (BLOOM-176B: 2.3 TB); pure fp32 keeps 4 + 8 = 12."""
    return (14 if mixed_precision else 12) * params


def circuit_kva(voltage_v: float, breaker_a: float, phases: int) -> float:
    """Apparent power of one branch circuit: V*I for single phase, sqrt(3)*V_LL*I for three."""
    return voltage_v * breaker_a * (math.sqrt(3) if phases == 3 else 1) / 1000


def continuous_limit_kw(circuits: int, kva_each: float, ab_redundant: bool, continuous_pct: float) -> float:
    """Continuous load the circuits may carry [nec-210]: at most 80% of the rating (the
    policy value), and with A/B feeds one side alone must carry the whole load."""
    usable = circuits // 2 if ab_redundant else circuits
    return usable * kva_each * continuous_pct / 100


def uplinks_needed(downlinks: int, oversubscription: float) -> int:
    """Leaf uplink ports for a given oversubscription, host-facing : uplink [al-fares-2008] §2.1."""
    return math.ceil(downlinks / oversubscription)


def nonblocking_two_tier_endpoints(k: int) -> int:
    """Largest two-tier non-blocking leaf/spine of k-port switches: k^2/2 hosts [al-fares-2008] §3."""
    return two_tier_max_endpoints(k, 1.0)


def two_tier_max_endpoints(k: int, oversubscription: float = 1.0) -> int:
    """Most endpoints a leaf/spine of k-port switches reaches [al-fares-2008] §3: every leaf
    has one uplink to each spine, so at most k leaves (a spine's ports) and k*o/(1+o) hosts per
    leaf at o:1 (k/2 at 1:1: k^2/2 in all)."""
    return int(k * k * oversubscription // (1 + oversubscription))


def three_tier_max_endpoints(k: int, oversubscription: float = 1.0) -> int:
    """Most endpoints a three-tier k-ary fat tree reaches: k^3/4 at 1:1 [al-fares-2008] §3, with
    the leaves' o:1 applied to their host ports (k*o/(1+o) of k)."""
    return int(k ** 3 / 4 * 2 * oversubscription // (1 + oversubscription))


def liquid_heat_kw(kw: float, liquid_pct: float) -> float:
    """The heat a liquid-cooled system's loop carries: every watt drawn leaves as heat, the
    documented share of it in liquid and the rest in the room air [nvidia-dgx-gb200-guide]."""
    return kw * liquid_pct / 100


def ups_kw(capacity_kva: float, power_factor: float) -> float:
    """kW = kVA * power factor [ups-sizing]."""
    return capacity_kva * power_factor


def offload_host_bytes_per_node(params: float, zero_stage: int, gpus: int, nodes: int, offload_params: bool = False,
                                buffer_factor: float = 1.5) -> float:
    """Host RAM one node needs for ZeRO-Offload, in the form of DeepSpeed's own estimators
    [deepspeed-estimators]: ZeRO-1/2 P * max(4G, 16) * 1.5; ZeRO-3 with zero_init 16P
    (optimizer offload) or 18P (parameters too) spread over the nodes, * 1.5. The 1.5 is
    DeepSpeed's additional_buffer_factor. G here is the GPUs of one node (each loads a fp32
    copy); DeepSpeed's code multiplies by all GPUs, the same number on the single node
    offload is usually run on."""
    if zero_stage >= 3:
        return params * (18 if offload_params else 16) / nodes * buffer_factor
    return params * max(4 * gpus, 16) * buffer_factor


def pcie_gb_s(generation: int, lanes: int) -> float:
    """Nominal bidirectional PCIe bandwidth as datasheets print it: x16 is 32 GB/s at Gen3,
    64 at Gen4 and 128 at Gen5, doubling each generation [nvidia-a100-datasheet]
    [nvidia-h100-datasheet]; lanes scale it linearly."""
    return lanes * 2.0 ** (generation - 2)


# Usable share of a RAID set of n equal drives [snia-ddf]: striping keeps all of them,
# mirroring half, single parity n-1 drives, double parity n-2.
def raid_usable_tb(drives: int, drive_tb: float, raid: str) -> float:
    if raid in ("none", "raid0"):
        data = drives
    elif raid in ("raid1", "raid10"):
        data = drives / 2
    elif raid == "raid5":
        data = max(drives - 1, 0)
    else:  # raid6
        data = max(drives - 2, 0)
    return data * drive_tb


def data_read_bytes_per_second(tokens: float, bytes_per_token: float, seconds: float) -> float:
    """Average read rate that keeps the GPUs fed: every training token is read once per use,
    at the pace of the time-to-train estimate (C = 6PD at the assumed MFU, [kaplan-2020]), or
    of the plan's target duration when no estimate can be made. Bytes per token = dataset
    bytes on disk / dataset tokens (the manifest's own numbers)."""
    return tokens * bytes_per_token / seconds


def write_seconds(size_bytes: float, bytes_per_second: float) -> float:
    """Time to write `size_bytes` at a sustained aggregate rate."""
    return size_bytes / bytes_per_second


HOURS_PER_MONTH = 730.0  # 8,760 hours a year / 12


def electricity_per_month(it_kw: float, pue: float, price_per_kwh: float) -> float:
    """Monthly power bill at full load: IT power * PUE (facility power = IT power * PUE
    [green-grid-pue]) * 730 hours * price per kWh."""
    return it_kw * pue * HOURS_PER_MONTH * price_per_kwh


def colocation_per_month(it_kw: float, price_per_kw_month: float) -> float:
    """Colocation rent: the IT power the cluster draws at full load times the price per kW and
    month (colocation is priced by contracted power)."""
    return it_kw * price_per_kw_month


def owned_opex_per_month(electricity: float, colocation: float, support: float, staff: float) -> float:
    """What owning costs each month: the power bill, colocation, support contracts and the
    operations staff. The seed article counts procurement, upkeep and power as the price of a
    self-built cluster [seed-hardware-layers]."""
    return electricity + colocation + support + staff


def payback_months(purchase: float, rental_per_month: float, running_per_month: float) -> float | None:
    """Months until buying costs less than renting the same capacity: purchase price (capex)
    over the monthly saving (rent avoided minus the owner's running cost, opex). None: buying
    never pays back. A project shorter than this should rent [seed-hardware-layers]."""
    saving = rental_per_month - running_per_month
    return purchase / saving if saving > 0 else None


def project_cost(purchase: float, per_month: float, months: float) -> float:
    """What an option costs over the whole project: the purchase price (capex) plus its running
    cost each month (opex: the rent when renting) for the project's months. The seed article
    has long, steady loads "do the three-year accounts" (total cost of ownership) before buying
    [seed-hardware-layers]."""
    return purchase + per_month * months


SEARCH_CAP = 10**7  # the most GPUs smallest_meeting tries: far beyond any cluster built


def smallest_meeting(meets: Callable[[int], bool], guess: int, step: int = 1, cap: int = SEARCH_CAP) -> int | None:
    """The smallest multiple of `step` (at least `step`) for which `meets` holds, assuming it
    keeps holding above that point (more GPUs never make a run slower, more data-parallel ranks
    never need more memory per GPU). Starts from `guess`, gallops up or down, then bisects, so a
    forward model (training time, memory) is inverted by calling it, never by a second copy of
    its formula. None when even `cap` does not meet it."""
    k_cap = max(cap // step, 1)
    k = min(max(-(-guess // step), 1), k_cap)
    if meets(k * step):
        hi, lo, width = k, 0, 1
        while k - width >= 1 and meets((k - width) * step):
            hi, width = k - width, width * 2
        lo = max(hi - width, 0)
    else:
        lo, width = k, 1
        while True:
            if lo == k_cap:
                return None
            hi = min(lo + width, k_cap)
            if meets(hi * step):
                break
            lo, width = hi, width * 2
    while hi - lo > 1:  # meets(hi) holds; meets(lo) fails (or lo == 0)
        mid = (lo + hi) // 2
        if meets(mid * step):
            hi = mid
        else:
            lo = mid
    return hi * step


def nonblocking_fabric_switches(endpoints: int, k: int) -> dict[str, int]:
    """Switches of a non-blocking (1:1) folded-Clos fabric of k-port switches [al-fares-2008] §3:
    every leaf gives half its ports to hosts and half to uplinks; two tiers reach k^2/2
    endpoints with k/2-down spines, beyond that the spines also split half up to a core tier
    (three tiers reach k^3/4). A single switch serves up to k endpoints."""
    if endpoints <= k:
        return {"single": 1, "leaf": 0, "spine": 0, "core": 0}
    half = k // 2
    leaves = -(-endpoints // half)
    uplinks = uplinks_needed(endpoints, 1)
    if endpoints <= nonblocking_two_tier_endpoints(k):
        # every leaf wires the same number of links to every spine: the spine count divides a leaf's uplinks
        per_leaf = -(-uplinks // leaves)
        fewest = -(-uplinks // k)
        spines = min(s for s in range(fewest, per_leaf + 1) if per_leaf % s == 0) if fewest <= per_leaf else fewest
        return {"single": 0, "leaf": leaves, "spine": spines, "core": 0}
    spines = -(-uplinks // half)  # half the spine ports face the leaves, half the core
    return {"single": 0, "leaf": leaves, "spine": spines, "core": -(-spines * half // k)}


def converted(price: float, rate: float) -> float:
    """A price in another currency, at `rate` units of the report currency per unit."""
    return price * rate


def ready_date(ordered: dt.date, lead_weeks: float | None, delivered: dt.date | None,
               installation_days: int, burn_in_days: int) -> tuple[dt.date, dt.date]:
    """(delivery, ready for training): delivery is the committed date, else the order date
    plus the lead time; training can start only after installation and burn-in
    [seed-hardware-layers]. A date beyond the calendar is date.max (never)."""
    try:
        arrives = delivered if delivered is not None else ordered + dt.timedelta(weeks=lead_weeks or 0)
        return arrives, arrives + dt.timedelta(days=installation_days + burn_in_days)
    except OverflowError:
        return dt.date.max, dt.date.max
