"""The manifest format: pydantic models are the single source of truth.

`schemas/manifest.schema.json` is generated from `Manifest` (see linter.schema), and a
test fails when the committed copy is stale. Units are part of every field name:
GB = 10^9 bytes, TB = 10^12 bytes, Gb/s for network rates, GB/s for bus and disk rates,
kW / W for power. A key the manifest leaves out, or gives with no value, is "not known
yet": rules that need it report *pending* instead of guessing.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

# Bounds keep absurd input (1e30 GPUs) a schema finding instead of an overflow later.
Count = Annotated[int, Field(ge=1, le=1_000_000)]
SmallCount = Annotated[int, Field(ge=1, le=1024)]
NonNegCount = Annotated[int, Field(ge=0, le=1_000_000)]
Positive = Annotated[float, Field(gt=0, le=1e15, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, le=1e15, allow_inf_nan=False)]
Percent = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]
Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Text = Annotated[str, Field(min_length=1, max_length=500)]

Goal = Literal["pretrain", "continued-pretrain", "finetune", "experiment"]
Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8"]
LinkKind = Literal["nvlink", "nvswitch", "nvlink-bridge", "infinity-fabric", "pcie"]
FabricKind = Literal["infiniband", "roce", "ethernet"]
Purpose = Literal["compute", "storage", "management", "converged"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Source(Strict):
    title: Text
    publisher: Text | None = None
    url: Text | None = None
    year: int | None = None
    section: Text | None = None


# --- identity, plan, procurement -------------------------------------------------------


class ModelShape(Strict):
    """The network being trained (transformer symbols from Korthikanti et al. 2022)."""

    parameters_billion: Positive = Field(description="P, in billions of parameters")
    layers: Count | None = Field(None, description="L, transformer layers")
    hidden_size: Count | None = Field(None, description="h, hidden dimension")
    attention_heads: Count | None = Field(None, description="a, attention heads")
    sequence_length: Count | None = Field(None, description="s, tokens per sequence")


class Parallelism(Strict):
    tensor: SmallCount = Field(1, description="t, tensor-parallel degree")
    pipeline: SmallCount = Field(1, description="p, pipeline-parallel degree")
    data: Count | None = Field(None, description="d, data-parallel degree")
    zero_stage: Literal[0, 1, 2, 3] = Field(
        0, description="ZeRO stage; FSDP FULL_SHARD is 3, SHARD_GRAD_OP is 2"
    )
    sequence_parallel: bool = False
    activation_recompute: Literal["none", "selective", "full"] = "none"
    pipeline_chunks: SmallCount = Field(1, description="v, interleaved pipeline chunks per GPU")
    offload: Literal["none", "cpu", "nvme"] = Field(
        "none", description="ZeRO-Offload / ZeRO-Infinity target for optimizer state"
    )


class Dataset(Strict):
    size_tb: Positive | None = Field(None, description="raw training data on disk, TB")
    tokens_billion: Positive | None = None


class Plan(Strict):
    goal: Goal
    model: ModelShape | None = None
    micro_batch_size: Count | None = Field(None, description="b, sequences per GPU per micro-batch")
    global_batch_size: Count | None = Field(None, description="sequences per optimizer step")
    precision: Precision | None = Field(
        None, description="compute precision: bf16/fp16/fp8 mean mixed precision with fp32 master weights"
    )
    optimizer: Literal["adam", "adamw", "sgd", "adafactor", "lion"] | None = None
    parallelism: Parallelism = Parallelism()
    training_tokens_billion: Positive | None = Field(None, description="D, tokens seen in training")
    target_duration_days: Positive | None = None
    start_date: dt.date | None = None
    dataset: Dataset | None = None


class Quote(Strict):
    item: Text
    vendor: Text | None = None
    kind: Literal["purchase", "rental"] = "purchase"
    price: NonNegative | None = Field(None, description="total price (purchase) or price per month (rental)")
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    quote_date: dt.date | None = None
    lead_time_weeks: NonNegative | None = None
    delivery_date: dt.date | None = None


class Procurement(Strict):
    mode: Literal["buy", "rent"] | None = None
    provider: Text | None = Field(
        None, description="who rents the capacity out (cloud or hosting provider); with mode rent, the facility "
        "and any compute fabric not listed as the owner's are the provider's"
    )
    project_duration_months: Positive | None = None
    operations_team: bool | None = Field(None, description="an in-house team runs the cluster")
    quotes: list[Quote] = []


# --- nodes -----------------------------------------------------------------------------


class Link(Strict):
    kind: LinkKind | None = None
    bandwidth_gb_s: Positive | None = Field(None, description="bidirectional per GPU, GB/s")
    max_gpus: SmallCount | None = Field(None, description="GPUs one link domain can join")


class Pcie(Strict):
    generation: Annotated[int, Field(ge=1, le=7)] | None = None
    lanes: Literal[1, 2, 4, 8, 16] | None = None


class DenseTflops(Strict):
    fp32: Positive | None = None
    tf32: Positive | None = None
    fp16: Positive | None = None
    bf16: Positive | None = None
    fp8: Positive | None = None


class GpuSpec(Strict):
    """A GPU: `model` names a catalog entry; every other key overrides the catalog."""

    model: Text | None = Field(None, description="catalog name, e.g. H100-SXM5-80GB")
    count: SmallCount | None = Field(None, description="GPUs per node")
    vendor: Text | None = None
    class_: Literal["datacenter", "workstation", "consumer"] | None = Field(None, alias="class")
    form_factor: Literal["sxm", "pcie", "oam"] | None = None
    memory_gb: Positive | None = None
    memory_bandwidth_tb_s: Positive | None = None
    precisions: list[Precision | Literal["fp64"]] | None = None
    dense_tflops: DenseTflops | None = None
    ecc: bool | None = None
    link: Link | None = None
    pcie: Pcie | None = None
    gpudirect_rdma: bool | None = None
    max_power_w: Positive | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Cpu(Strict):
    model: Text | None = None
    sockets: SmallCount | None = None
    cores_per_socket: SmallCount | None = None


class LocalDisk(Strict):
    drives: SmallCount | None = None
    drive_capacity_tb: Positive | None = None
    kind: Literal["nvme", "sata-ssd", "hdd"] | None = None
    raid: Literal["none", "raid0", "raid1", "raid5", "raid6", "raid10"] | None = None


class Nic(Strict):
    model: Text | None = None
    count: SmallCount = 1
    rate_gbps: Positive | None = Field(None, description="per port, Gb/s")
    kind: FabricKind | None = None
    purpose: Purpose = "compute"
    fabric: Text | None = Field(None, description="name of the network fabric this NIC joins")
    gpudirect_rdma: bool | None = None


class Psu(Strict):
    count: SmallCount | None = None
    redundancy: Annotated[str, Field(pattern=r"^N(\+[0-9]+)?$|^[0-9]+\+[0-9]+$|^2N$")] | None = None


class Server(Strict):
    """What one server is made of: a node pool's nodes, or a catalog system."""

    gpu: GpuSpec | None = None
    intra_node_link: Link | None = None
    cpu: Cpu | None = None
    host_ram_gb: Positive | None = None
    local_nvme: LocalDisk | None = None
    nics: list[Nic] | None = None
    max_power_kw: Positive | None = Field(None, description="maximum power draw per node, kW")
    psu: Psu | None = None
    rack_units: SmallCount | None = None


class NodePool(Server):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    role: Literal["compute", "storage", "management", "login"] = "compute"
    count: Count
    system: Text | None = Field(None, description="catalog system (e.g. DGX-H100) whose values this pool inherits")


# --- network, storage, facility, operations ------------------------------------------


class Switch(Strict):
    model: Text | None = None
    role: Literal["single", "leaf", "spine", "core"]
    count: Count
    ports: SmallCount | None = None
    port_rate_gbps: Positive | None = None


class Fabric(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    purpose: Purpose = "compute"
    kind: FabricKind | None = None
    topology: Literal["single-switch", "leaf-spine", "fat-tree", "rail-optimized"] | None = None
    managed_by: Literal["owner", "provider"] | None = Field(
        None, description="who builds and runs the switches: the owner (default) or the provider of rented capacity"
    )
    oversubscription: Annotated[float, Field(ge=1, le=64)] = Field(
        1.0, description="host-facing : uplink bandwidth at the leaf, as a number (2 means 2:1)"
    )
    switches: list[Switch] = []


class Network(Strict):
    fabrics: list[Fabric] = []


class StorageTier(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    kind: Literal["parallel-fs", "nfs", "object", "local-nvme"]
    product: Text | None = None
    capacity_tb: Positive | None = None
    read_gb_s: Positive | None = Field(None, description="aggregate read throughput, GB/s")
    write_gb_s: Positive | None = Field(None, description="aggregate write throughput, GB/s")


class Checkpointing(Strict):
    interval_minutes: Positive | None = None
    retained: Count | None = Field(None, description="checkpoints kept")
    tier: Text | None = Field(None, description="storage tier the checkpoints are written to")
    restore_rehearsed: bool | None = None


class Backup(Strict):
    copies: NonNegCount | None = None
    offsite: bool | None = None


class Storage(Strict):
    tiers: list[StorageTier] = []
    checkpoint: Checkpointing | None = None
    backup: Backup | None = None


class Circuits(Strict):
    count: Count
    voltage_v: Positive = Field(description="line-to-line for three-phase")
    phases: Literal[1, 3] = 1
    breaker_a: Positive
    ab_redundant: bool = Field(False, description="A and B feeds: half the circuits must carry the rack alone")
    continuous_rated: bool = Field(False, description="breaker assembly listed for 100% continuous load")


class RackContent(Strict):
    pool: Text
    nodes: Count


class RackGroup(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    count: Count
    contents: list[RackContent] = []
    other_kw: NonNegative = Field(0, description="switches and other gear per rack, kW")
    power_budget_kw: Positive | None = None
    cooling: Literal["air", "rear-door", "direct-liquid", "immersion"] | None = None
    cooling_capacity_kw: Positive | None = None
    circuits: Circuits | None = None


class Ups(Strict):
    capacity_kva: Positive | None = None
    power_factor: Fraction | None = None
    runtime_minutes: Positive | None = None


class Facility(Strict):
    it_capacity_kw: Positive | None = Field(None, description="IT power the site can deliver, kW")
    pue: Annotated[float, Field(ge=1, le=5)] | None = None
    electricity_price_per_kwh: NonNegative | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    ab_feeds: bool | None = None
    ups: Ups | None = None
    racks: list[RackGroup] = []


class Operations(Strict):
    monitoring: bool | None = None
    failure_recovery_plan: bool | None = None
    spare_parts: bool | None = None
    burn_in_test: bool | None = None


class Policy(Strict):
    """Thresholds a team may tune. Defaults live in rules/policy.yaml, with their reasons."""

    power_headroom_pct: Percent | None = None
    circuit_continuous_pct: Percent | None = None
    gpu_memory_reserve_pct: Percent | None = None
    host_ram_ratio: Annotated[float, Field(gt=0, le=100)] | None = None
    mfu: Fraction | None = None
    air_cooling_limit_kw: Positive | None = None
    spec_max_age_days: Count | None = None
    quote_max_age_days: Count | None = None
    checkpoint_write_minutes: Positive | None = None
    long_run_days: Positive | None = None
    tokens_per_param_optimum: Positive | None = None
    tokens_per_param_factor: Annotated[float, Field(ge=1, le=1000)] | None = None
    pcie_min_gb_s: Positive | None = None
    pretrain_gbps_per_gpu: Positive | None = None
    nic_min_gbps: Positive | None = None
    oversubscription_max: Annotated[float, Field(ge=1, le=64)] | None = None
    data_read_margin: Annotated[float, Field(ge=1, le=100)] | None = None
    local_checkpoint_copies: SmallCount | None = None
    cold_tier_dataset_tb: Positive | None = None
    signoff_roles: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = Field(
        None, description="roles that must sign off the purchase (default: technical lead, facilities, finance)"
    )


class Waiver(Strict):
    rule: Annotated[str, Field(pattern=r"^[A-Z]{3}[0-9]{3}$")]
    path: Text | None = None
    reason: Text | None = None
    approver: Text | None = None
    expires: dt.date | None = None


Sha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


class Signoff(Strict):
    """A sign-off recorded by `hwlint signoff` (see linter.signoff.records); edit it by signing again."""

    role: Text
    name: Text
    date: dt.date
    manifest_digest: Sha256 = Field(description="sha256 of the manifest's content without `signoffs`")
    sections: dict[str, Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]] = Field(
        {}, description="short digest of each top-level section, to tell which changed"
    )
    rule_pack_digest: Sha256
    signature: Annotated[str, Field(min_length=1, max_length=20_000)] | None = Field(
        None, description="ssh-keygen -Y sign signature (namespace hwlint) of the sign-off statement"
    )


class Manifest(Strict):
    """A purchase manifest for an AI-training cluster."""

    manifest_version: Literal[1] = Field(description="format version of this file")
    name: Text
    owner: Text | None = None
    date: dt.date | None = None
    tier: Literal["single-gpu", "single-node", "multi-node", "large-cluster"] | None = Field(
        None, description="declared scale tier; inferred from the manifest when left out"
    )
    plan: Plan
    procurement: Procurement | None = None
    node_pools: Annotated[list[NodePool], Field(min_length=1, max_length=10_000)]
    network: Network | None = None
    storage: Storage | None = None
    facility: Facility | None = None
    operations: Operations | None = None
    policy: Policy | None = None
    waivers: list[Waiver] = []
    signoffs: list[Signoff] = []


# --- catalog ---------------------------------------------------------------------------


class CatalogEntry(Strict):
    """What every catalog entry carries: its name and where its values come from."""

    name: Text
    source: Source
    as_of: dt.date
    notes: Text | None = None


class CatalogGpu(GpuSpec, CatalogEntry):
    aliases: list[Text] = []
    memory_type: Text | None = None


class CatalogNic(CatalogEntry):
    vendor: Text
    class_: Literal["datacenter", "workstation", "consumer"] | None = Field(None, alias="class")
    kinds: list[FabricKind] = []
    max_port_rate_gbps: Positive | None = None
    ports: SmallCount | None = None
    gpudirect_rdma: bool | None = None


class CatalogSwitch(CatalogEntry):
    vendor: Text
    kind: FabricKind
    ports: SmallCount | None = None
    port_rate_gbps: Positive | None = None
    max_power_w: Positive | None = None
    rack_units: SmallCount | None = None


class CatalogSystem(Server, CatalogEntry):
    vendor: Text
