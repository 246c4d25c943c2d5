"""The formulas behind hwlint's derived facts: pure, typed, each naming its source.

Symbols follow the sources: P parameters, d data-parallel degree, t tensor-parallel,
p pipeline-parallel, s sequence length, b micro-batch, h hidden size, a attention heads,
L layers, v interleaved chunks. Results are in bytes, FLOPs, seconds, kW or ports; callers
convert units. Reference keys (in brackets) resolve in rules/references.yaml.
"""

from __future__ import annotations

import math
from typing import Callable

# Bytes per parameter for (weights, gradients, optimizer state), by precision and optimizer.
# [zero-2020] §3.1: mixed-precision Adam keeps 16-bit weights and gradients (2 + 2) and
# fp32 master weights, momentum and variance (12): 16 bytes/param. This is the ZeRO
# paper's convention; DeepSpeed's estimators count 18 (fp32 gradients kept).
# Pure fp32 Adam keeps 4 + 4 and momentum + variance (8). Single-state optimizers (SGD with
# momentum, Lion) keep one fp32 state instead of two, by the same accounting.
_ADAM_STATE = {"mixed": (2, 2, 12), "fp32": (4, 4, 8)}
_ONE_STATE = {"mixed": (2, 2, 8), "fp32": (4, 4, 4)}
OPTIMIZER_BYTES = {"adam": _ADAM_STATE, "adamw": _ADAM_STATE, "sgd": _ONE_STATE, "lion": _ONE_STATE}


def state_bytes(precision: str, optimizer: str) -> tuple[int, int, int] | None:
    """(weight, gradient, optimizer) bytes per parameter, or None when unknown."""
    table = OPTIMIZER_BYTES.get(optimizer)
    if table is None:
        return None
    return table["fp32" if precision in ("fp32", "tf32") else "mixed"]


def model_state_bytes_per_gpu(
    params: float, zero_stage: int, d: int, t: int = 1, p: int = 1,
    bytes_per_param: tuple[int, int, int] = (2, 2, 12), offload: bool = False,
) -> float:
    """Model-state memory per GPU [zero-2020] §5 and Fig. 1, with P/(t*p) [transformer-math].

    Stage 0: (w+g+k)P; stage 1 shards the optimizer: (w+g)P + kP/d; stage 2 also the
    gradients: wP + (g+k)P/d; stage 3 everything: (w+g+k)P/d. With optimizer offload
    [zero-offload-2021] the optimizer state lives in host memory (k = 0 on the GPU).
    """
    w, g, k = bytes_per_param
    if offload:
        k = 0
    shard = params / (t * p)
    if zero_stage == 0:
        return (w + g + k) * shard
    if zero_stage == 1:
        return (w + g) * shard + k * shard / d
    if zero_stage == 2:
        return w * shard + (g + k) * shard / d
    return (w + g + k) * shard / d


def optimizer_bytes_in_host(params: float, zero_stage: int, d: int, t: int, p: int, bytes_per_param: tuple[int, int, int]) -> float:
    """Per-GPU optimizer state moved to host memory by ZeRO-Offload [zero-offload-2021]."""
    k = bytes_per_param[2]
    shard = params / (t * p)
    return k * shard / d if zero_stage >= 1 else k * shard


def activation_bytes_per_layer(s: int, b: int, h: int, a: int, t: int = 1, sequence_parallel: bool = False, recompute: str = "none") -> float:
    """Activation memory of one transformer layer in 16-bit [korthikanti-2022] §4-5, Table 2."""
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh
    if recompute == "selective":
        return 34 * sbh / t if sequence_parallel else sbh * (10 + 24 / t)
    if sequence_parallel:
        return sbh * (34 / t + 5 * a * s / (h * t))
    if t > 1:
        return sbh * (10 + 24 / t + 5 * a * s / (h * t))
    return sbh * (34 + 5 * a * s / h)


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
    return k * k // 2


def ups_kw(capacity_kva: float, power_factor: float) -> float:
    """kW = kVA * power factor [ups-sizing]."""
    return capacity_kva * power_factor


def offload_host_bytes_per_gpu(
    params: float, zero_stage: int, d: int, t: int, p: int, bytes_per_param: tuple[int, int, int],
) -> float:
    """Host memory one GPU's ZeRO-Offload needs [zero-offload-2021] §3-4: the gradients and the
    optimizer state (fp32 master weights, momentum, variance) live in CPU memory, partitioned
    across the d data-parallel ranks from ZeRO stage 1 on; 16-bit weights stay on the GPU."""
    _, g, k = bytes_per_param
    shard = params / (t * p)
    return (g + k) * shard / (d if zero_stage >= 1 else 1)


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


def payback_months(purchase: float, rental_per_month: float, running_per_month: float) -> float | None:
    """Months until buying costs less than renting the same capacity: purchase price over the
    monthly saving (rent avoided minus the owner's running cost). None: buying never pays back.
    A project shorter than this should rent [seed-hardware-layers]."""
    saving = rental_per_month - running_per_month
    return purchase / saving if saving > 0 else None


def smallest_meeting(meets: Callable[[int], bool], guess: int, step: int = 1, cap: int = 10**7) -> int | None:
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
        return {"single": 0, "leaf": leaves, "spine": -(-uplinks // k), "core": 0}
    spines = -(-uplinks // half)  # half the spine ports face the leaves, half the core
    return {"single": 0, "leaf": leaves, "spine": spines, "core": -(-spines * half // k)}
