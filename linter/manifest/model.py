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

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    title: Text = Field(description="title of the document the values come from (datasheet, paper, standard)")
    publisher: Text | None = Field(None, description="who published it, e.g. NVIDIA")
    url: Text | None = Field(None, description="web address of the document")
    year: int | None = Field(None, description="year of publication")
    section: Text | None = Field(None, description="section, table or page the value is read from")


# --- identity, plan, procurement -------------------------------------------------------


class Moe(Strict):
    """Mixture-of-experts FFN layers (Fedus et al. 2022, Switch Transformers)."""

    experts: Count = Field(description="E, experts per MoE layer")
    active_experts: SmallCount = Field(description="k, experts each token runs (top-k routing)")
    every_n_layers: SmallCount | None = Field(
        None, description="one MoE layer every n layers; default 1 (every layer, as Megatron-LM and Mixtral)"
    )
    capacity_factor: Annotated[float, Field(ge=1, le=64)] | None = Field(
        None, description="expert capacity as a multiple of the even share of tokens; default 1 (dropless routing "
                          "has no fixed capacity; 1 counts the even share)"
    )


class ModelShape(Strict):
    """The network being trained (transformer symbols from Korthikanti et al. 2022)."""

    name: Text | None = Field(
        None, description="a published model in hwlint's models/ folder (`hwlint models list`); its shape fills every key "
                          "left out here", examples=["Llama-3.1-70B", "Mixtral-8x7B"])
    hf_config: Text | None = Field(
        None, description="path to a Hugging Face config.json, relative to this manifest; its shape fills every key left "
                          "out here (after name's)", examples=["models/config.json"])
    parameters_billion: Positive | None = Field(
        None, description="P, in billions of parameters; required unless name or hf_config gives it")
    layers: Count | None = Field(None, description="L, transformer layers")
    hidden_size: Count | None = Field(None, description="h, hidden dimension")
    attention_heads: Count | None = Field(None, description="a, attention heads")
    sequence_length: Count | None = Field(None, description="s, tokens per sequence")
    kv_heads: Count | None = Field(
        None, description="key/value heads (grouped-query attention; 1 is multi-query); default: attention_heads"
    )
    ffn_hidden_size: Count | None = Field(
        None, description="f, FFN inner width; default as Megatron-LM: 4h (GELU), int(8h/3 / 64) * 64 (SwiGLU)"
    )
    ffn_activation: Literal["gelu", "swiglu", "geglu"] | None = Field(
        None, description="FFN kind: GELU (two h x f matrices), SwiGLU or GeGLU (three); default gelu"
    )
    vocabulary_size: Count | None = Field(None, description="V, tokens in the vocabulary (logits memory, embeddings)")
    tied_embeddings: bool | None = Field(None, description="input embedding and output layer share one matrix; default false",
                                          examples=[False])
    attention: Literal["standard", "flash"] | None = Field(
        None, description="attention kernel: flash (FlashAttention or another fused kernel that never stores the "
                          "s x s scores) or standard; default flash"
    )
    moe: Moe | None = Field(None, description="mixture-of-experts FFN layers")


class Parallelism(Strict):
    tensor: SmallCount = Field(1, description="t, tensor-parallel degree (GPUs per tensor-parallel group)")
    pipeline: SmallCount = Field(1, description="p, pipeline-parallel degree (pipeline stages)")
    data: Count | None = Field(None, description="d, data-parallel degree (model replicas)")
    zero_stage: Literal[0, 1, 2, 3] = Field(
        0, description="ZeRO stage; FSDP FULL_SHARD is 3, SHARD_GRAD_OP is 2"
    )
    sequence_parallel: bool = Field(False, description="Megatron sequence parallelism: layer-norm and dropout activations split across the t tensor-parallel GPUs (true / false)")
    activation_recompute: Literal["none", "selective", "full"] = Field("none", description="activation recomputation: none keeps all activations, selective recomputes attention, full keeps only layer inputs")
    pipeline_chunks: SmallCount = Field(1, description="v, interleaved pipeline chunks per GPU")
    offload: Literal["none", "cpu", "nvme"] = Field(
        "none", description="ZeRO-Offload / ZeRO-Infinity target for optimizer state"
    )
    offload_params: bool = Field(
        False, description="ZeRO-3 parameter offload: the 16-bit weights live in host memory too (zero_stage 3 only)"
    )
    context: SmallCount = Field(1, description="c, context-parallel degree: the sequence is split over c GPUs")
    expert: SmallCount = Field(1, description="e, expert-parallel degree: each MoE layer's experts are split over e GPUs")


class Finetune(Strict):
    """How the weights are trained: all of them, or low-rank adapters on a frozen base."""

    method: Literal["full", "lora", "qlora"] = Field(
        "full", description="full: every weight trains; lora: frozen 16-bit base + adapters (Hu et al. 2022); "
                            "qlora: frozen 4-bit base + adapters (Dettmers et al. 2023)"
    )
    lora_rank: Annotated[int, Field(ge=1, le=65536)] | None = Field(None, description="r, adapter rank; default 8 (PEFT)")
    lora_targets: list[Literal["q", "k", "v", "o", "gate", "up", "down"]] | None = Field(
        None, description="matrices that get adapters; default q and v (PEFT for Llama-style models)"
    )
    base_bits: Literal[4, 8, 16] | None = Field(
        None, description="bits per frozen base weight; default 16 for lora, 4 (NF4) for qlora"
    )


class Dataset(Strict):
    size_tb: Positive | None = Field(None, description="raw training data on disk, TB (10^12 bytes)")
    tokens_billion: Positive | None = Field(None, description="tokens in the training data set, in billions")


class Plan(Strict):
    goal: Goal = Field(description="what the cluster is bought for; sets which rules apply")
    model: ModelShape | None = Field(None, description="shape of the network being trained")
    micro_batch_size: Count | None = Field(None, description="b, sequences per GPU per micro-batch")
    global_batch_size: Count | None = Field(None, description="sequences per optimizer step")
    gradient_accumulation_steps: Count | None = Field(
        None, description="micro-batches each data-parallel replica runs per optimizer step (Megatron-LM's number of "
                          "micro-batches): global_batch_size = micro_batch_size x data x this; a count, no unit"
    )
    precision: Precision | None = Field(
        None, description="compute precision: bf16/fp16/fp8 mean mixed precision with fp32 master weights"
    )
    optimizer: Literal["adam", "adamw", "adamw-8bit", "sgd", "adafactor", "lion"] | None = Field(
        None, description="optimizer; it sets how much optimizer state each parameter needs. adamw-8bit: both moments "
                          "in 8 bits (Dettmers et al. 2022); sgd means SGD with momentum"
    )
    optimizer_bytes_per_param: Annotated[float, Field(ge=0, le=64)] | None = Field(
        None, description="optimizer state per trainable parameter in bytes, fp32 master weights included; "
                          "overrides the optimizer's own figure (mixed-precision AdamW: 12)", examples=[12]
    )
    gradient_precision: Literal["16-bit", "fp32"] | None = Field(
        None, description="gradients kept in 16 bits (the ZeRO paper's 16 bytes/param) or fp32 (DeepSpeed's "
                          "estimators and llm-analysis: 18 bytes/param); default 16-bit"
    )
    finetune: Finetune | None = Field(None, description="full fine-tune or adapters (LoRA, QLoRA); default full")
    parallelism: Parallelism = Field(Parallelism(), description="how the model and batch are split across GPUs")
    training_tokens_billion: Positive | None = Field(None, description="D, tokens seen in training, in billions")
    target_duration_days: Annotated[float, Field(ge=0.01, le=1e15, allow_inf_nan=False)] | None = Field(
        None, description="wall-clock time the training run should take, days; at least 0.01 (about 15 minutes)")
    start_date: dt.date | None = Field(None, description="when training should start (YYYY-MM-DD)")
    dataset: Dataset | None = Field(None, description="the training data")


Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]


class RentalCapacity(Strict):
    """What a rental quote's monthly price buys, so renting is compared like with like."""

    gpus: Count = Field(description="GPUs the rental provides in total")
    gpu_model: Text = Field(description="GPU model rented, as the catalog names it (e.g. H100-SXM5-80GB)")


class Quote(Strict):
    item: Text = Field(description="what is quoted, e.g. \"8x DGX H100\" or \"GPU rental\"")
    vendor: Text | None = Field(None, description="who quoted it")
    kind: Literal["purchase", "rental", "support"] = Field(
        "purchase", description="purchase (a one-off price), rental or support (prices per month)"
    )
    price: NonNegative | None = Field(
        None, description="total price (purchase) or price per month (rental, support), in the quote's currency"
    )
    currency: Currency | None = Field(None, description="ISO 4217 currency code of the price, e.g. USD or EUR", examples=["USD", "EUR"])
    quote_date: dt.date | None = Field(None, description="date of the quote (YYYY-MM-DD); old quotes are flagged")
    lead_time_weeks: NonNegative | None = Field(None, description="weeks from the order to delivery, weeks")
    delivery_date: dt.date | None = Field(None, description="committed delivery date (YYYY-MM-DD); wins over the lead time",
                                         examples=["2027-03-01"])
    pool: Text | None = Field(None, description="name of the node pool this quote prices")
    fabric: Text | None = Field(None, description="name of the network fabric this quote prices")
    storage_tier: Text | None = Field(None, description="name of the storage tier this quote prices", examples=["nas"])
    quantity: Positive | None = Field(
        None, description="how much of what it names the quote prices: nodes of a pool, switches of a fabric, "
        "TB of a storage tier"
    )
    capacity: RentalCapacity | None = Field(None, description="rental: the GPUs the monthly price buys")
    term_months: Positive | None = Field(None, description="rental or support: contract term, months")


# --- nodes -----------------------------------------------------------------------------


class Link(Strict):
    kind: LinkKind | None = Field(None, description="GPU-to-GPU interconnect: nvlink, nvswitch, nvlink-bridge, infinity-fabric or pcie")
    bandwidth_gb_s: Positive | None = Field(None, description="bidirectional per GPU, GB/s")
    max_gpus: SmallCount | None = Field(None, description="GPUs one link domain can join (count)")


class Pcie(Strict):
    generation: Annotated[int, Field(ge=1, le=7)] | None = Field(None, description="PCIe generation (4 = 16 GT/s per lane, 5 = 32 GT/s)")
    lanes: Literal[1, 2, 4, 8, 16] | None = Field(None, description="PCIe lanes per GPU (x16 is 16)")


class DenseTflops(Strict):
    fp32: Positive | None = Field(None, description="dense FP32 throughput per GPU, TFLOPS (without sparsity)")
    tf32: Positive | None = Field(None, description="dense TF32 tensor-core throughput per GPU, TFLOPS (without sparsity)")
    fp16: Positive | None = Field(None, description="dense FP16 tensor-core throughput per GPU, TFLOPS (without sparsity)")
    bf16: Positive | None = Field(None, description="dense BF16 tensor-core throughput per GPU, TFLOPS (without sparsity)")
    fp8: Positive | None = Field(None, description="dense FP8 tensor-core throughput per GPU, TFLOPS (without sparsity)")


class GpuSpec(Strict):
    """A GPU: `model` names a catalog entry; every other key overrides the catalog."""

    model: Text | None = Field(None, description="catalog GPU name; its values fill every key left out here", examples=["H100-SXM5-80GB", "A100-SXM4-80GB"])
    count: SmallCount | None = Field(None, description="GPUs per node")
    vendor: Text | None = Field(None, description="GPU maker, e.g. NVIDIA or AMD")
    architecture: Literal["volta", "ampere", "hopper", "blackwell", "ada-lovelace", "cdna2", "cdna3", "gaudi3"] | None = Field(
        None, description="GPU generation; the time model takes the policy's compute efficiency for it where the policy has one "
                          "(compute_efficiency_hopper), else compute_efficiency")
    class_: Literal["datacenter", "workstation", "consumer"] | None = Field(None, alias="class", description="product class: datacenter, workstation or consumer")
    form_factor: Literal["sxm", "pcie", "oam"] | None = Field(None, description="module form: sxm, oam (mezzanine) or pcie (card)")
    memory_gb: Positive | None = Field(None, description="memory per GPU, GB (10^9 bytes)")
    memory_bandwidth_tb_s: Positive | None = Field(None, description="memory bandwidth per GPU, TB/s")
    precisions: list[Precision | Literal["fp64"]] | None = Field(None, description="number formats the tensor cores support")
    dense_tflops: DenseTflops | None = Field(None, description="dense throughput per GPU by precision, TFLOPS")
    ecc: bool | None = Field(None, description="GPU memory has error correction (true / false)")
    link: Link | None = Field(None, description="the GPU-to-GPU link inside a node")
    pcie: Pcie | None = Field(None, description="the GPU's host PCIe connection")
    gpudirect_rdma: bool | None = Field(None, description="NICs can read and write GPU memory directly (GPUDirect RDMA), true / false")
    max_power_w: Positive | None = Field(None, description="maximum power per GPU (TDP / TBP), W")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Cpu(Strict):
    model: Text | None = Field(None, description="CPU model, e.g. \"Intel Xeon Platinum 8480C\"")
    sockets: SmallCount | None = Field(None, description="CPU sockets per node")
    cores_per_socket: SmallCount | None = Field(None, description="cores per CPU socket")


class LocalDisk(Strict):
    drives: SmallCount | None = Field(None, description="local drives per node")
    drive_capacity_tb: Positive | None = Field(None, description="capacity of one drive, TB (10^12 bytes)")
    kind: Literal["nvme", "sata-ssd", "hdd"] | None = Field(None, description="drive type: nvme, sata-ssd or hdd")
    raid: Literal["none", "raid0", "raid1", "raid5", "raid6", "raid10"] | None = Field(None, description="how the drives are combined")


class Nic(Strict):
    model: Text | None = Field(None, description="NIC model, e.g. ConnectX-7", examples=["ConnectX-7"])
    count: SmallCount | None = Field(None, description="NICs (ports) of this kind per node; left out, not known")
    rate_gbps: Positive | None = Field(None, description="per port, Gb/s")
    kind: FabricKind | None = Field(None, description="network technology: infiniband, roce or ethernet")
    purpose: Purpose = Field("compute", description="traffic this NIC carries: compute, storage, management or converged")
    fabric: Text | None = Field(None, description="name of the network fabric this NIC joins")
    gpudirect_rdma: bool | None = Field(None, description="this NIC supports GPUDirect RDMA (true / false)")


class Psu(Strict):
    count: SmallCount | None = Field(None, description="power supplies per node")
    redundancy: Annotated[str, Field(pattern=r"^N(\+[0-9]+)?$|^[0-9]+\+[0-9]+$|^2N$")] | None = Field(None, description="power-supply redundancy, e.g. N+1, 4+2 or 2N", examples=["N+1", "4+2", "2N"])


class RackScale(Strict):
    """A rack-scale system (GB200 NVL72): one node of the pool is a whole rack of trays."""

    compute_trays: SmallCount = Field(description="compute trays (servers) in one rack, each running its own OS")
    switch_trays: SmallCount | None = Field(None, description="NVLink switch trays in one rack")
    supply_kw: Positive | None = Field(
        None, description="what the rack's power shelves deliver together, kW (a rating: the rack draws no more)")


class Server(Strict):
    """What one server is made of: a node pool's nodes, or a catalog system."""

    gpu: GpuSpec | None = Field(None, description="the GPUs in each node")
    intra_node_link: Link | None = Field(None, description="GPU-to-GPU link inside the node (overrides gpu.link)")
    cpu: Cpu | None = Field(None, description="the CPUs in each node")
    host_ram_gb: Positive | None = Field(None, description="host (CPU) memory per node, GB")
    local_nvme: LocalDisk | None = Field(None, description="local drives in each node")
    nics: list[Nic] | None = Field(None, description="network adapters in each node")
    max_power_kw: Positive | None = Field(None, description="maximum power draw per node, kW")
    psu: Psu | None = Field(None, description="power supplies in each node")
    rack_units: SmallCount | None = Field(None, description="height of one node, rack units (U)")
    cooled_by: Literal["air", "liquid"] | None = Field(
        None, description="how the system sheds its heat: air (fans; air or rear-door racks) or liquid (cold plates "
                          "on a facility water loop, the rest of its heat to the room air)")
    liquid_heat_pct: Percent | None = Field(
        None, description="share of the system's heat its liquid loop carries, % (the rest goes to the room air), as "
                          "the system's document gives it; left out, a liquid-cooled system's GPUs are taken as its "
                          "liquid heat (an estimate)")
    rack_scale: RackScale | None = Field(None, description="a rack-scale system: one node of this pool is a whole rack")


class NodePool(Server):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = Field(description="name of this pool, used by racks: contents: pool")
    role: Literal["compute", "storage", "management", "login"] = Field("compute", description="what these nodes do: compute, storage, management or login")
    count: Count = Field(description="nodes in this pool")
    spares: NonNegCount | None = Field(
        None, description="hot-spare nodes among count: racked, powered and cabled (counted in power, ports and the "
                          "budget) but left out of the parallel layout (tensor x pipeline x context x data); nodes", examples=[2]
    )
    system: Text | None = Field(None, description="catalog system whose values this pool inherits", examples=["DGX-H100"])


# --- network, storage, facility, operations ------------------------------------------


class Switch(Strict):
    model: Text | None = Field(None, description="switch model, e.g. \"NVIDIA QM9700\"")
    role: Literal["single", "leaf", "spine", "core"] = Field(description="place in the topology: single, leaf, spine or core")
    count: Count = Field(description="switches of this kind")
    ports: SmallCount | None = Field(None, description="ports per switch")
    port_rate_gbps: Positive | None = Field(None, description="rate of one port, Gb/s")
    max_power_w: Positive | None = Field(
        None, description="maximum power draw per switch, W (the catalog's when the model is named); counted in the facility load"
    )


class Fabric(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = Field(description="name of this fabric, used by nics: fabric")
    purpose: Purpose = Field("compute", description="traffic this fabric carries: compute, storage, management or converged")
    kind: FabricKind | None = Field(None, description="network technology: infiniband, roce or ethernet")
    topology: Literal["single-switch", "leaf-spine", "fat-tree", "rail-optimized"] | None = Field(None, description="how the switches are connected")
    managed_by: Literal["owner", "provider"] | None = Field(
        None, description="who builds and runs the switches: the owner (default) or the provider of rented capacity"
    )
    oversubscription: Annotated[float, Field(ge=1, le=64)] | None = Field(
        None, description="host-facing : uplink bandwidth at the leaf, as a number (2 means 2:1); left out, it is not known"
    )
    switches: list[Switch] | None = Field(None, description="switches in this fabric; left out, not known (`[]`: none)")


class Network(Strict):
    fabrics: list[Fabric] | None = Field(None, description="the cluster's networks (compute, storage, management); left out, not known")


class StorageTier(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = Field(description="name of this tier, used by storage.checkpoint.tier")
    kind: Literal["parallel-fs", "nfs", "object", "local-nvme"] = Field(description="storage kind: parallel-fs, nfs, object or local-nvme")
    product: Text | None = Field(None, description="product or service, e.g. \"Lustre\" or \"VAST\"")
    capacity_tb: Positive | None = Field(None, description="usable capacity, TB (10^12 bytes)")
    read_gb_s: Positive | None = Field(None, description="aggregate read throughput, GB/s")
    write_gb_s: Positive | None = Field(None, description="aggregate write throughput, GB/s")


class Checkpointing(Strict):
    interval_minutes: Positive | None = Field(None, description="minutes between checkpoints, minutes")
    retained: Count | None = Field(None, description="checkpoints kept")
    tier: Text | None = Field(None, description="storage tier the checkpoints are written to")
    restore_rehearsed: bool | None = Field(None, description="a restore from checkpoint has been tried (true / false)")


class Backup(Strict):
    copies: NonNegCount | None = Field(None, description="copies of the data kept outside the training storage")
    offsite: bool | None = Field(None, description="a copy is kept at another site (true / false)")


class Storage(Strict):
    tiers: list[StorageTier] | None = Field(None, description="storage tiers: shared file systems, object stores, local NVMe; left out, not known")
    checkpoint: Checkpointing | None = Field(None, description="how training checkpoints are written and kept")
    backup: Backup | None = Field(None, description="backup of data and checkpoints")


class Circuits(Strict):
    count: Count = Field(description="branch circuits feeding each rack")
    voltage_v: Positive = Field(description="circuit voltage, V (line-to-line for three-phase)", examples=[208, 415])
    phases: Literal[1, 3] = Field(1, description="phases per circuit: 1 or 3")
    breaker_a: Positive = Field(description="breaker rating of one circuit, A", examples=[30, 60])
    ab_redundant: bool | None = Field(
        None,
        description="circuits split over A and B feeds, each half carrying the rack alone; left out, it follows facility.ab_feeds",
    )
    continuous_rated: bool = Field(False, description="breaker assembly listed for 100% continuous load")


class RackContent(Strict):
    pool: Text = Field(description="node pool name (node_pools: name)")
    nodes: Count = Field(description="nodes of that pool in each rack of this group")


class RackSwitches(Strict):
    fabric: Text = Field(description="network fabric the switches belong to (network.fabrics: name)")
    role: Literal["single", "leaf", "spine", "core"] = Field(description="their role in that fabric: single, leaf, spine or core")
    model: Text | None = Field(None, description="switch model, when the fabric has several of this role")
    count: Count = Field(description="switches of that fabric and role in each rack of this group")


class RackGroup(Strict):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] = Field(description="name of this group of identical racks")
    count: Count = Field(description="racks in this group")
    contents: list[RackContent] | None = Field(None, description="which nodes each rack holds; left out, none when the other racks hold every node, else not known")
    switches: list[RackSwitches] | None = Field(None, description="which network switches each rack holds (their power and heat "
                                                                    "count in the rack's load, circuits and cooling); left out, none: "
                                                                    "a switch placed in no rack is named (PWR008)")
    other_kw: NonNegative = Field(
        0, description="gear per rack not listed as a node pool or a switch (PDUs, KVM, patch panels), kW; counted in the facility load"
    )
    power_budget_kw: Positive | None = Field(None, description="power the facility allows per rack, kW")
    cooling: Literal["air", "rear-door", "direct-liquid", "immersion"] | None = Field(None, description="rack cooling: air, rear-door, direct-liquid or immersion")
    cooling_capacity_kw: Positive | None = Field(None, description="heat the cooling can remove per rack, kW")
    liquid_cooling_kw: Positive | None = Field(
        None, description="heat the rack's liquid loop (its share of the CDU or facility water) removes per rack, kW")
    air_cooling_kw: Positive | None = Field(None, description="heat the room air (CRAH, in-row or rear door) removes per rack, kW")
    circuits: Circuits | None = Field(None, description="the branch circuits feeding each rack")


class Ups(Strict):
    capacity_kva: Positive | None = Field(None, description="UPS apparent-power rating, kVA")
    power_factor: Fraction | None = Field(None, description="UPS output power factor (kW per kVA), 0 to 1")
    runtime_minutes: Positive | None = Field(None, description="minutes the UPS carries the load on battery, minutes")


class Facility(Strict):
    it_capacity_kw: Positive | None = Field(None, description="IT power the site can deliver, kW")
    pue: Annotated[float, Field(ge=1, le=5)] | None = Field(None, description="power usage effectiveness: total facility power / IT power (1.0 or more)", examples=[1.3])
    electricity_price_per_kwh: NonNegative | None = Field(None, description="electricity price per kWh, in facility.currency")
    colocation_per_kw_month: NonNegative | None = Field(
        None, description="colocation price per kW of IT power per month, in facility.currency"
    )
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = Field(None, description="ISO 4217 currency code of the electricity and colocation prices, e.g. USD", examples=["USD", "EUR"])
    ab_feeds: bool | None = Field(None, description="racks get two independent (A and B) power feeds (true / false)")
    ups: Ups | None = Field(None, description="the uninterruptible power supply")
    racks: list[RackGroup] | None = Field(None, description="groups of identical racks; left out, not known")


class Operations(Strict):
    monitoring: bool | None = Field(None, description="GPU, node and fabric health is monitored (true / false)")
    failure_recovery_plan: bool | None = Field(None, description="there is a written plan for failed nodes and jobs (true / false)")
    spare_parts: bool | None = Field(None, description="spare parts (GPUs, NICs, cables, PSUs) are kept on hand (true / false)")
    burn_in_test: bool | None = Field(None, description="new hardware is burn-in tested before use (true / false)")


class Policy(Strict):
    """Thresholds a team may tune. Defaults live in rules/policy.yaml, with their reasons."""

    power_headroom_pct: Percent | None = None
    circuit_continuous_pct: Percent | None = None
    host_power_w_per_gpu: NonNegative | None = Field(
        None, description="host power (CPUs, memory, NICs, fans) allowed per GPU when a node's power is estimated, W"
    )
    node_power_plausible_kw: Positive | None = Field(None, description="largest believable max_power_kw for one node, kW")
    gpu_power_plausible_w: Positive | None = Field(None, description="largest believable max_power_w for one GPU, W")
    gpu_memory_reserve_pct: Percent | None = None
    host_ram_ratio: Annotated[float, Field(gt=0, le=100)] | None = None
    compute_efficiency: Fraction | None = None
    compute_efficiency_hopper: Fraction | None = None
    schedule_margin_pct: Annotated[float, Field(ge=0, lt=100)] | None = None
    storage_growth_pct: Annotated[float, Field(ge=0, le=1000)] | None = None
    interruptions_per_1000_gpu_days: Annotated[float, Field(ge=0, le=1000)] | None = None
    restart_minutes: NonNegative | None = None
    air_cooling_limit_kw: Positive | None = None
    cooling_margin_pct: Percent | None = None
    spec_max_age_days: Count | None = None
    quote_max_age_days: Count | None = None
    waiver_max_days: Count | None = Field(None, description="furthest a waiver's expiry may lie ahead of the review day, days")
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
    spare_time_pct: Percent | None = Field(None, description="share of the target duration, %, a plan may leave unused before the review notes spare capacity")
    installation_days: NonNegCount | None = Field(None, description="days from delivery to racked and cabled")
    burn_in_days: NonNegCount | None = Field(None, description="days of burn-in and acceptance before training")
    signoff_roles: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = Field(
        None, description="roles that must sign off the purchase (default: technical lead, facilities, finance)",
        examples=[["technical lead", "facilities", "finance", "legal"]]
    )


# --- procurement options (they change nodes, fabrics and storage, so they come after them) ---


class PoolChange(Server):
    """An option's change to a node pool, by name: the keys given replace the pool's own."""

    name: Name = Field(description="the node pool this option changes")
    count: Count | None = Field(None, description="nodes in the pool under this option")
    system: Text | None = Field(None, description="catalog system whose values the changed pool inherits")


class FabricChange(Strict):
    """An option's change to a network fabric, by name."""

    name: Name = Field(description="the fabric this option changes")
    kind: FabricKind | None = Field(None, description="infiniband, roce or ethernet under this option")
    topology: Literal["single-switch", "leaf-spine", "fat-tree", "rail-optimized"] | None = Field(
        None, description="fabric topology under this option")
    managed_by: Literal["owner", "provider"] | None = Field(None, description="who runs the switches under this option")
    oversubscription: Annotated[float, Field(ge=1, le=64)] | None = Field(
        None, description="host-facing : uplink bandwidth at the leaf under this option (2 means 2:1)")
    switches: list[Switch] | None = Field(None, description="the switches this option offers (replace the fabric's)")


class TierChange(Strict):
    """An option's change to a storage tier, by name."""

    name: Name = Field(description="the storage tier this option changes")
    product: Text | None = Field(None, description="storage product under this option")
    capacity_tb: Positive | None = Field(None, description="usable capacity under this option, TB")
    read_gb_s: Positive | None = Field(None, description="aggregate read throughput, GB/s")
    write_gb_s: Positive | None = Field(None, description="aggregate write throughput, GB/s")


class Option(Strict):
    """One alternative offer: its quotes and, where it differs, what it changes."""

    name: Name = Field(description="the option's name, as procurement.chosen names it")
    mode: Literal["buy", "rent"] | None = Field(None, description="buy or rent; procurement.mode when left out")
    provider: Text | None = Field(None, description="who rents the capacity out, when this option rents")
    quotes: list[Quote] = Field([], description="this option's own quotes (added to procurement.quotes)")
    node_pools: list[PoolChange] = Field([], description="pools this option changes, by name")
    fabrics: list[FabricChange] = Field([], description="network fabrics this option changes, by name")
    storage_tiers: list[TierChange] = Field([], description="storage tiers this option changes, by name")


class Procurement(Strict):
    mode: Literal["buy", "rent"] | None = Field(None, description="buy the hardware or rent it")
    provider: Text | None = Field(
        None, description="who rents the capacity out (cloud or hosting provider); with mode rent, the facility "
        "and any compute fabric not listed as the owner's are the provider's"
    )
    project_duration_months: Positive | None = Field(None, description="how long the cluster is needed, months")
    operations_team: bool | None = Field(None, description="an in-house team runs the cluster")
    order_date: dt.date | None = Field(
        None, description="planned purchase-order date; delivery counts from it (today when left out)"
    )
    currency: Currency | None = Field(
        None, description="currency the review reports money in (default: the quotes' own currency)"
    )
    exchange_rates: dict[Currency, Positive] = Field(
        {}, description="units of `currency` one unit of another currency buys, e.g. {EUR: 1.08}"
    )
    staff_per_month: NonNegative | None = Field(
        None, description="operations staff cost per month of owning the cluster, in `currency` (owned capacity only)"
    )
    quotes: list[Quote] | None = Field(None, description="quotes every option shares (or the only quotes); left out, not known (`[]`: none)")
    options: list[Option] = Field([], description="alternative offers; the review judges each by the whole rule pack, "
                                  "compares them and recommends one")
    chosen: Text | None = Field(None, description="name of the option this manifest buys (needed with options)")


class Waiver(Strict):
    rule: Annotated[str, Field(pattern=r"^[A-Z]{2,5}[0-9]{3}$")] = Field(description="id of the rule waived, e.g. PWR003", examples=["PWR003"])
    path: Text | None = Field(None, description="manifest field the waiver covers (e.g. facility.racks[0]); all of the rule's findings when left out",
                              examples=["facility.racks[0]"])
    reason: Text | None = Field(None, description="why the finding is accepted")
    approver: Text | None = Field(None, description="who accepted it")
    expires: dt.date | None = Field(None, description="date the waiver stops applying (YYYY-MM-DD)")


Sha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]


WRITTEN = "(written by hwlint signoff)"  # a sign-off's digests and blobs: their example in docs/manifest.md


class Signoff(Strict):
    """A sign-off recorded by `hwlint signoff` (see linter.signoff.records); edit it by signing again."""

    role: Text = Field(description="the role signing, one of policy.signoff_roles", examples=["finance"])
    name: Text = Field(description="who signed", examples=["carol@example.com"])
    date: dt.date = Field(description="date of the sign-off (YYYY-MM-DD)", examples=["2026-12-01"])
    manifest_digest: Sha256 = Field(description="sha256 of the manifest's content without `signoffs`", examples=[WRITTEN])
    sections: dict[str, Annotated[str, Field(pattern=r"^[0-9a-f]{12}$")]] = Field(
        {}, description="short digest of each top-level section, to tell which changed"
    )
    rule_pack_digest: Sha256 = Field(description="sha256 of the rule pack the review used", examples=[WRITTEN])
    tool: Text | None = Field(None, description="the hwlint version that judged the manifest, e.g. \"hwlint 0.1.0\"",
                              examples=["hwlint 0.1.0"])
    tool_digest: Sha256 | None = Field(None, description="sha256 of that hwlint build's code; another build makes the sign-off stale",
                                       examples=[WRITTEN])
    snapshot: Annotated[str, Field(min_length=1, max_length=5_000_000)] | None = Field(
        None, description="the signed content (canonical JSON, zlib, base64), to list the fields changed since",
        examples=[WRITTEN])
    config_digest: Sha256 | None = Field(
        None, description="sha256 of the effective config's settings the sign-off was made under; a relaxing change makes it stale",
        examples=[WRITTEN])
    config: Annotated[str, Field(min_length=1, max_length=100_000)] | None = Field(
        None, description="those settings (canonical JSON, zlib, base64), to tell a relaxing config change from a tightening one",
        examples=[WRITTEN])
    signature: Annotated[str, Field(min_length=1, max_length=20_000)] | None = Field(
        None, description="ssh-keygen -Y sign signature (namespace hwlint) of the sign-off statement",
        examples=[WRITTEN])


class Manifest(Strict):
    """A purchase manifest for an AI-training cluster."""

    manifest_version: Literal[1] = Field(description="format version of this file")
    name: Text = Field(description="name of the cluster or purchase")
    owner: Text | None = Field(None, description="who answers for this manifest (name or e-mail)")
    date: dt.date | None = Field(None, description="date of this version of the manifest (YYYY-MM-DD)")
    tier: Literal["single-gpu", "single-node", "multi-node", "large-cluster"] | None = Field(
        None, description="declared scale tier; inferred from the manifest when left out"
    )
    plan: Plan = Field(description="the training the cluster is for")
    procurement: Procurement | None = Field(None, description="how the hardware is bought or rented, and the quotes")
    node_pools: Annotated[list[NodePool], Field(min_length=1, max_length=10_000)] = Field(description="groups of identical servers")
    network: Network | None = Field(None, description="the network fabrics")
    storage: Storage | None = Field(None, description="storage tiers, checkpointing and backup")
    facility: Facility | None = Field(None, description="site power, cooling and racks")
    operations: Operations | None = Field(None, description="how the cluster is run")
    policy: Policy | None = Field(None, description="thresholds this manifest tunes (defaults in the rule pack's policy.yaml)")
    waivers: list[Waiver] = Field([], description="findings accepted on purpose, with reason and expiry")
    signoffs: list[Signoff] = Field([], description="sign-offs recorded by `hwlint signoff`; do not edit by hand")


# --- catalog ---------------------------------------------------------------------------


class CatalogEntry(Strict):
    """What every catalog entry carries: its name and where its values come from."""

    name: Text
    source: Source
    as_of: dt.date | None = Field(None, description="the date printed on the source document (first day of the month "
                                                    "or year when only those are printed); left out (null) when the "
                                                    "document prints none, with `undated` saying so")
    undated: Text | None = Field(None, description="why the entry has no as_of: what was looked for and not printed "
                                                   "(the review reports its date as unknown, to confirm)")
    read_on: dt.date | None = Field(None, description="the day the source was read or last re-checked")
    aliases: list[Text] = Field([], description="other names and ordering part numbers that find this entry")
    notes: Text | None = None

    @model_validator(mode="after")
    def _dated_or_why(self) -> "CatalogEntry":
        if self.as_of is None and not self.undated:
            raise ValueError("as_of (the date printed on the document) is missing: give it, or say in `undated` "
                             "why the document prints no date")
        if self.as_of is not None and self.undated:
            raise ValueError("as_of and undated are both given: an entry is either dated by its document or not")
        return self


class CatalogGpu(GpuSpec, CatalogEntry):
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
    max_port_rate_gbps: Positive | None = Field(
        None, description="the fastest rate one port runs at, Gb/s (a manifest's port_rate_gbps above it is beyond the part)")
    max_power_w: Positive | None = None
    rack_units: SmallCount | None = None


class CatalogSystem(Server, CatalogEntry):
    vendor: Text


class CatalogModel(CatalogEntry):
    """A published model shape in models/*.yaml (the keys plan.model takes, and what only the
    source gives: context length, active parameters, batch and tokens)."""

    family: Text
    parameters_billion: Positive
    active_parameters_billion: Positive | None = None
    layers: Count
    hidden_size: Count
    attention_heads: Count
    kv_heads: Count | None = None
    ffn_activation: Literal["gelu", "swiglu", "geglu"]
    ffn_hidden_size: Count
    vocabulary_size: Count | None = None
    tied_embeddings: bool | None = None
    sequence_length: Count | None = Field(None, description="sequence length of the main pretraining stage")
    context_length: Count = Field(description="the longest context the released model takes")
    batch_tokens_million: Positive | None = Field(None, description="pretraining global batch, millions of tokens per step")
    training_tokens_billion: Positive | None = None
    moe: Moe | None = None
