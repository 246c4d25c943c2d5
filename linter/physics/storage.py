"""Storage: checkpoint size, local drives, and the shared tiers' read rate, checkpoint write
time and capacity.

Facts `checkpoint_tb` (MEM004, STO002, STO003), `local_disk` (MEM003-MEM005) and `storage`
(STO001-STO003).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.physics import formulas as physics
from linter.physics.values import (
    GB, TB, MISSING, NO_GPU_POOL, Unknown, apply, difference, fact, get, maybe_rounded, rounded, sum_of
)


def checkpoint_tb(data: dict, cfg: dict | None = None) -> Any:
    """One full checkpoint of the plan's model, in TB (F13). A LoRA or QLoRA run checkpoints its
    adapters and their optimizer state only: the frozen base is the released model, never
    rewritten [lora-2022] §4."""
    if cfg and cfg["method"] in ("lora", "qlora"):
        shape = [("layers", cfg["layers"]), ("hidden_size", cfg["hidden"]), ("attention_heads", cfg["heads"])]
        needs = tuple(f"plan.model.{k}" for k, v in shape if v is None)
        if needs:
            return Unknown(needs)
        adapters = physics.lora_parameters(cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"], cfg["ffn"],
                                           cfg["lora_rank"], cfg["lora_targets"])
        return fact(data, ["plan.precision"],
                    lambda prec: rounded(physics.checkpoint_bytes(adapters, prec not in ("fp32", "tf32")) / TB, 6))
    return fact(
        data, ["plan.model.parameters_billion", "plan.precision"],
        lambda p, prec: rounded(physics.checkpoint_bytes(p * 1e9, prec not in ("fp32", "tf32")) / TB, 3),
    )


def local_disk(data: dict, primary: int | None, checkpoint_tb: Any, nodes: int, copies: float = 1,
               offload_gb: Any = 0.0) -> dict[str, Any]:
    """Local drives of one node of the largest compute pool: usable space after RAID
    [snia-ddf], the node's share of one full checkpoint (F13 spread over the compute nodes,
    each writing its own shards), the room staging `copies` of it takes, and the room it needs
    in all: that staging plus the model states ZeRO-Infinity offloads to the node's NVMe
    (`offload_gb`, memory's nvme_offload_gb_per_node) [zero-infinity-2021] §5."""
    keys = ("usable_tb", "kind", "checkpoint_shard_tb", "staging_tb", "offload_tb", "need_tb")
    if primary is None:
        return {"path": "node_pools", **{k: NO_GPU_POOL for k in keys}}
    at = f"node_pools[{primary}].local_nvme"
    shard = apply(lambda c: rounded(c / max(nodes, 1), 4), checkpoint_tb)
    staging = apply(lambda s: rounded(s * copies, 4), shard)
    offload = apply(lambda gb: rounded(gb * GB / TB, 4), offload_gb)
    return {
        "path": at,
        "usable_tb": fact(data, [f"{at}.drives", f"{at}.drive_capacity_tb", f"{at}.raid"],
                          lambda n, tb, raid: rounded(physics.raid_usable_tb(n, tb, raid), 2)),
        "kind": fact(data, [f"{at}.kind"], lambda k: k),
        "checkpoint_shard_tb": shard,
        "staging_tb": staging,
        "offload_tb": offload,
        "need_tb": apply(lambda s, o: rounded(s + o, 4), staging, offload),
    }


_DATA_TIER_KINDS = ("parallel-fs", "nfs", "local-nvme")  # where training reads from, first found wins


def storage_facts(data: dict, checkpoint_tb: Any, training: dict[str, Any]) -> dict[str, Any]:
    """Where the training data and the checkpoints live, the read rate the plan implies, the
    time to write one checkpoint and the capacity each tier needs.

    The training data is read from the first parallel file system, else NFS, else local-NVMe
    tier (object stores hold cold data). Read rate: [kaplan-2020] time estimate and the
    dataset's own bytes per token (physics.data_read_bytes_per_second)."""
    tiers = get(data, "storage.tiers")
    tiers = [] if tiers is MISSING else tiers
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
            ("storage.checkpoint.tier",) if named is MISSING else (f"storage.checkpoint.tier (no tier is named {named})",)),
    }
    out["bytes_per_token"] = fact(data, ["plan.dataset.size_tb", "plan.dataset.tokens_billion"],
                                  lambda size, tokens: rounded(size * TB / (tokens * 1e9), 2))
    # The pace: the time-to-train estimate (how fast the GPUs will actually consume tokens);
    # without it, the plan's own target duration.
    if isinstance(training["seconds"], Unknown) and not isinstance(training["target_days"], Unknown):
        seconds, out["read_pace_from"] = training["target_days"] * 86400, "the target duration"
    else:
        seconds, out["read_pace_from"] = training["seconds"], "the time-to-train estimate"
    out["read_pace_days"] = apply(lambda s: rounded(s / 86400, 1), seconds)
    out["read_needed_gb_s"] = fact(
        data, ["plan.training_tokens_billion"],
        lambda tokens: apply(lambda bpt, s: round(physics.data_read_bytes_per_second(tokens * 1e9, bpt, s) / GB, 6),
                              out["bytes_per_token"], seconds),
    )
    write_gb_s = out["checkpoint_tier"]["write_gb_s"] if ckpt_idx is not None else out["checkpoint_tier"]
    out["checkpoint_write_minutes"] = apply(
        lambda size, rate: rounded(physics.write_seconds(size * TB, rate * GB) / 60, 1), checkpoint_tb, write_gb_s)
    out["checkpoints_tb"] = fact(data, ["storage.checkpoint.retained"],
                                 lambda n: apply(lambda c: rounded(n * c, 2), checkpoint_tb))
    if data_idx is None or ckpt_idx is None:
        out["capacity"] = sum_of(*(v for v in (out["dataset_tier"], out["checkpoint_tier"]) if isinstance(v, Unknown)))
        return out
    dataset_tb = fact(data, ["plan.dataset.size_tb"], lambda tb: tb)
    rows = []
    for i in sorted({data_idx, ckpt_idx}):
        held = {"dataset_tb": dataset_tb if i == data_idx else 0, "checkpoints_tb": out["checkpoints_tb"] if i == ckpt_idx else 0}
        need = maybe_rounded(sum_of(*held.values()))
        tier = record(i)
        rows.append({"name": tier["name"], "path": tier["path"], "capacity_tb": tier["capacity_tb"], "need_tb": need,
                     "margin_tb": maybe_rounded(difference(tier["capacity_tb"], need)), **held})
    out["capacity"] = rows
    return out
