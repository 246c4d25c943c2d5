"""The training goal the sizer works back from, read from flags or from a partial manifest.

Everything the goal leaves out stays out: the sizer chooses the layout, the node count and
the parts, and says which values it chose; it never invents a model shape, a price or a
facility limit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from linter.manifest.catalog import load_catalog
from linter.manifest.validate import suggest

GOALS = ("pretrain", "continued-pretrain", "finetune", "experiment")
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")
OPTIMIZERS = ("adam", "adamw", "adamw-8bit", "sgd", "adafactor", "lion")


class GoalError(Exception):
    """A usage error: the goal is incomplete or makes no sense. The message says what to give."""


@dataclass
class Price:
    """What one node (a catalog system, or a server of one GPU model) costs, from a quote."""

    item: str
    currency: str
    purchase: float | None = None
    rental_per_month: float | None = None
    vendor: str | None = None
    quote_date: str | None = None
    lead_time_weeks: float | None = None


@dataclass
class Goal:
    params_b: float
    tokens_b: float
    days: float
    layers: int
    hidden: int
    heads: int
    seq: int
    goal: str = "pretrain"
    precision: str = "bf16"
    optimizer: str = "adamw"
    chosen: list[str] = field(default_factory=list)  # what the sizer chose because the goal did not say
    global_batch: int | None = None
    dataset_tb: float | None = None
    dataset_tokens_b: float | None = None
    start_date: str | None = None
    gpus: list[str] | None = None  # candidate GPU models (catalog names); None: every data-centre part
    max_gpus: int | None = None
    rack_kw: float | None = None
    facility_kw: float | None = None
    mode: str | None = None  # buy or rent
    prices: dict[str, Price] = field(default_factory=dict)  # catalog system or GPU name -> price per node
    policy: dict[str, float] = field(default_factory=dict)  # overrides of rules/policy.yaml
    keep_checkpoints: int = 2
    checkpoint_minutes: float | None = None  # None: each layout's own (physics chosen_checkpoint_interval)
    fixed: dict[str, Any] = field(default_factory=dict)  # layout parts the goal fixes: tensor, pipeline, zero_stage, activation_recompute, micro_batch_size
    draft: dict[str, Any] = field(default_factory=dict)  # the partial manifest, as given
    draft_path: str | None = None
    model_keys: dict[str, Any] = field(default_factory=dict)  # plan.model keys beyond the goal's own (KV heads, FFN, vocabulary, MoE)
    model_name: str | None = None  # the models/ entry or config.json the shape came from
    method: str | None = None  # fine-tuning method: full, lora or qlora


# flag name -> (goal attribute, type, the manifest path a draft gives it at)
FIELDS = {
    "params": ("params_b", float, "plan.model.parameters_billion"),
    "layers": ("layers", int, "plan.model.layers"),
    "hidden": ("hidden", int, "plan.model.hidden_size"),
    "heads": ("heads", int, "plan.model.attention_heads"),
    "seq": ("seq", int, "plan.model.sequence_length"),
    "tokens": ("tokens_b", float, "plan.training_tokens_billion"),
    "days": ("days", float, "plan.target_duration_days"),
    "goal": ("goal", str, "plan.goal"),
    "precision": ("precision", str, "plan.precision"),
    "optimizer": ("optimizer", str, "plan.optimizer"),
    "global_batch": ("global_batch", int, "plan.global_batch_size"),
    "dataset_tb": ("dataset_tb", float, "plan.dataset.size_tb"),
    "dataset_tokens": ("dataset_tokens_b", float, "plan.dataset.tokens_billion"),
    "start_date": ("start_date", str, "plan.start_date"),
    "checkpoint_minutes": ("checkpoint_minutes", float, "storage.checkpoint.interval_minutes"),
    "rack_kw": ("rack_kw", float, "facility.racks[0].power_budget_kw"),
    "facility_kw": ("facility_kw", float, "facility.it_capacity_kw"),
    "mode": ("mode", str, "procurement.mode"),
}
REQUIRED = ("tokens", "days")
SHAPE = {"layers": "layers", "hidden": "hidden_size", "heads": "attention_heads", "seq": "sequence_length",
         "params": "parameters_billion"}  # flag -> plan.model key a model's shape fills
METHODS = ("full", "lora", "qlora")
DEFAULTS = {"goal": "pretrain", "precision": "bf16", "optimizer": "adamw", "checkpoint_minutes": None}
_SAID = {"checkpoint_minutes": (
    "a checkpoint interval for each layout: Young's optimum sqrt(2 x pause x MTBF) (Young 1974), the pause being each "
    "GPU's checkpoint share copied to host memory over PCIe and the MTBF the policy's interruptions_per_1000_gpu_days "
    "at its GPUs, never shorter than the checkpoint_write_minutes the checkpoint tier is built to write one in (the "
    "time model counts the work lost at each restart)")}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _at(data: Any, path: str) -> Any:
    node = data
    for part in path.replace("]", "").replace("[", ".").split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def from_inputs(options: dict[str, Any], draft: dict[str, Any] | None, draft_path: str | None,
                policy_defaults: dict[str, float]) -> Goal:
    """The goal from flags (which win) and a draft manifest (which fills what the flags leave out)."""
    draft = draft or {}
    if draft and not isinstance(draft.get("plan"), dict):
        raise GoalError(f"{draft_path}: the draft has no plan: section; give at least plan.model and plan.training_tokens_billion")
    values: dict[str, Any] = {}
    where: dict[str, str] = {}
    for name, (_, kind, path) in FIELDS.items():
        given = options.get(name)
        if given is None and draft:
            given = _at(draft, path)
            where[name] = f"{draft_path}: {path}"
        else:
            where[name] = _flag(name)
        if given is None:
            continue
        if isinstance(given, bool) or (kind in (int, float) and not isinstance(given, (int, float))):
            raise GoalError(f"{where[name]}: expected a number, got {given!r}")
        values[name] = str(given) if kind is str else given
    missing = [n for n in REQUIRED if n not in values]
    if missing:
        flags = ", ".join(_flag(n) for n in missing)
        raise GoalError(f"the goal needs {flags} (the tokens in billions and the deadline in days); "
                        "give them as flags or in a draft manifest's plan: section")
    chosen: list[str] = []
    model_keys, model_name = _model(options, draft, draft_path, values, where, chosen)
    method = options.get("method") or _at(draft, "plan.finetune.method")
    if method is not None:
        if method not in METHODS:
            raise GoalError(f"--method: {method!r} is not one of {', '.join(METHODS)}")
        method = str(method)
        if method != "full" and "goal" not in values:
            values["goal"] = "finetune"
            chosen.append(f"goal finetune ({method} trains adapters on a frozen base; give --goal to change)")
    for name, default in DEFAULTS.items():
        if name not in values:
            if default is not None:
                values[name] = default
            chosen.append(f"{_SAID.get(name, f'{name} {default}')} (give {_flag(name)} to change)")
    for name in ("params", "tokens", "days", "dataset_tb", "dataset_tokens", "rack_kw", "facility_kw", "checkpoint_minutes"):
        if name in values and not values[name] > 0:
            raise GoalError(f"{where[name]}: must be more than 0, got {values[name]:g}")
    for name in ("layers", "hidden", "heads", "seq", "global_batch"):
        if name in values and (int(values[name]) != values[name] or values[name] < 1):
            raise GoalError(f"{where[name]}: must be a whole number of at least 1, got {values[name]!r}")
        if name in values:
            values[name] = int(values[name])
    for name, allowed in (("goal", GOALS), ("precision", PRECISIONS), ("optimizer", OPTIMIZERS), ("mode", ("buy", "rent"))):
        if name in values and values[name] not in allowed:
            raise GoalError(f"{where[name]}: {values[name]!r} is not one of {', '.join(allowed)}")
    if values["hidden"] % values["heads"]:
        raise GoalError(f"{where['hidden']}: hidden size {values['hidden']} is not a multiple of the {values['heads']} attention heads")
    if values["params"] > 1e6 or values["tokens"] > 1e9 or values["days"] > 36500:
        raise GoalError("the goal is out of range: at most 1,000,000B parameters, 1e9 B tokens and 36,500 days")
    if "start_date" in values:
        try:
            dt.date.fromisoformat(values["start_date"])
        except ValueError:
            raise GoalError(f"{where['start_date']}: {values['start_date']!r} is not a date (YYYY-MM-DD)") from None
    goal = Goal(**{FIELDS[n][0]: v for n, v in values.items()}, chosen=chosen, draft=draft, draft_path=draft_path,
                model_keys=model_keys, model_name=model_name, method=method)
    goal.gpus = _gpus(options.get("gpus") or _draft_gpus(draft))
    if options.get("max_gpus") is not None:
        if options["max_gpus"] < 1:
            raise GoalError(f"--max-gpus: must be at least 1, got {options['max_gpus']}")
        goal.max_gpus = options["max_gpus"]
    if options.get("keep_checkpoints") is not None:
        if options["keep_checkpoints"] < 1:
            raise GoalError(f"--keep-checkpoints: must be at least 1, got {options['keep_checkpoints']}")
        goal.keep_checkpoints = options["keep_checkpoints"]
    elif _at(draft, "storage.checkpoint.retained"):
        goal.keep_checkpoints = int(_at(draft, "storage.checkpoint.retained"))
    else:
        goal.chosen.append(f"{goal.keep_checkpoints} checkpoints kept on the checkpoint tier (give --keep-checkpoints to change)")
    goal.fixed = _fixed(options, draft, draft_path)
    goal.policy = _policy(options.get("policy") or (), draft.get("policy") or {}, policy_defaults, draft_path)
    return goal


def _model(options: dict[str, Any], draft: dict, draft_path: str | None, values: dict[str, Any], where: dict[str, str],
           chosen: list[str]) -> tuple[dict[str, Any], str | None]:
    """Fill the goal's shape from --model (a models/ name or a config.json), the draft's
    plan.model.name or hf_config, or, from --params alone, the nearest published shape scaled;
    then the sequence length and global batch a published run used. Returns the other plan.model
    keys the shape gives and the model's name. What the flags or the draft give always wins."""
    import os

    from linter.sizing import shape as shapes

    spec, base_dir = options.get("model"), None
    draft_model = _at(draft, "plan.model") if draft else None
    draft_model = draft_model if isinstance(draft_model, dict) else {}
    if spec is None and (draft_model.get("name") or draft_model.get("hf_config")):
        spec = str(draft_model.get("name") or draft_model["hf_config"])
        base_dir = os.path.dirname(draft_path) if draft_path and not draft_model.get("name") else None
    moe = _moe(options.get("moe"))
    entry = None
    keys: dict[str, Any] = {}
    if spec is not None:
        try:
            found, entry, notes = shapes.named(str(spec), base_dir)
        except shapes.ShapeError as exc:
            raise GoalError(f"--model: {exc}") from None
        context = found.pop("context_length", None)
        chosen.extend(notes)
        if "sequence_length" not in found and context and "seq" not in values:
            found["sequence_length"] = context
            chosen.append(f"sequence length {context:,}, the model's context length (no pretraining length is published "
                          "for it; give --seq to change)")
    elif "params" in values and not any(k in values for k in ("layers", "hidden", "heads")):
        found, how = shapes.scaled(values["params"], moe)
        chosen.append(f"model shape: {how} (give --layers --hidden --heads, or --model, to change)")
    else:
        found = {}
    for flag, key in SHAPE.items():
        if flag not in values and key in found:
            values[flag] = found[key]
            where[flag] = "--model" if spec else "--params"
    keys = {k: v for k, v in found.items() if k not in SHAPE.values() and k not in draft_model}
    if moe:
        keys["moe"] = {"experts": moe[0], "active_experts": moe[1]}
    missing = [_flag(n) for n in ("params", "layers", "hidden", "heads", "seq") if n not in values]
    if missing:
        raise GoalError(f"the goal needs {', '.join(missing)} (or --model NAME, or --params alone for a published shape "
                        "scaled to it): the model's size and shape set its memory and time")
    if "global_batch" not in values:
        values["global_batch"], why = shapes.batch_rule(values["params"], values["seq"], entry)
        where["global_batch"] = "--global-batch"
        chosen.append(why)
    name = entry["name"] if entry else (str(spec) if spec else None)
    return keys, name


def _moe(text: Any) -> tuple[int, int] | None:
    """--moe EXPERTSxACTIVE (8x2: 8 experts per MoE layer, each token runs 2)."""
    if text is None:
        return None
    parts = str(text).lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) >= 1 for p in parts) or int(parts[1]) > int(parts[0]):
        raise GoalError(f"--moe: give EXPERTSxACTIVE, such as 8x2 (8 experts, 2 active per token), got {text!r}")
    return int(parts[0]), int(parts[1])


LAYOUT = {"tensor": "plan.parallelism.tensor", "pipeline": "plan.parallelism.pipeline",
          "zero_stage": "plan.parallelism.zero_stage", "activation_recompute": "plan.parallelism.activation_recompute",
          "micro_batch_size": "plan.micro_batch_size"}


def _fixed(options: dict[str, Any], draft: dict, draft_path: str | None) -> dict[str, Any]:
    """Layout parts the flags (--tensor, --pipeline, --zero, --recompute, --micro-batch) or the
    draft's plan fix; the search varies only the rest."""
    out = {}
    flags = {"tensor": "tensor", "pipeline": "pipeline", "zero_stage": "zero", "activation_recompute": "recompute",
             "micro_batch_size": "micro_batch"}
    for key, path in LAYOUT.items():
        value = options.get(flags[key])
        where = _flag(flags[key])
        if value is None and draft:
            value, where = _at(draft, path), f"{draft_path}: {path}"
        if value is None:
            continue
        if key == "activation_recompute":
            if value not in ("none", "selective", "full"):
                raise GoalError(f"{where}: {value!r} is not one of none, selective, full")
        elif key == "zero_stage":
            if value not in (0, 1, 2, 3):
                raise GoalError(f"{where}: ZeRO stage is 0, 1, 2 or 3, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GoalError(f"{where}: must be a whole number of at least 1, got {value!r}")
        out[key] = value
    return out


def _draft_gpus(draft: dict) -> list[str] | None:
    names = []
    for pool in draft.get("node_pools") or []:
        if isinstance(pool, dict) and pool.get("role", "compute") == "compute":
            model = _at(pool, "gpu.model")
            system = pool.get("system")
            if model:
                names.append(str(model))
            elif system:
                entry = load_catalog().find("systems", str(system))
                if entry is None:
                    raise GoalError(f"draft: node pool system {system!r} is not in the catalog")
                names.append(entry["gpu"]["model"])
    return names or None


def _gpus(names: Any) -> list[str] | None:
    if not names:
        return None
    catalog = load_catalog()
    out = []
    for name in names:
        entry = catalog.find("gpus", name)
        if entry is None:
            hint = suggest(str(name), catalog.names("gpus"))
            raise GoalError(f"--gpu: {name!r} is not a catalog GPU{hint}; `hwlint size --help` lists where the catalog is")
        if entry["name"] not in out:
            out.append(entry["name"])
    return out


def _policy(pairs: Any, draft_policy: dict, defaults: dict[str, float], draft_path: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    items = list(draft_policy.items()) + [tuple(p.split("=", 1)) if "=" in p else (p, None) for p in pairs]
    for name, value in items:
        if name not in defaults or name == "signoff_roles":
            if name == "signoff_roles":
                continue
            raise GoalError(f"--policy: {name!r} is not a policy value{suggest(str(name), sorted(defaults))}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise GoalError(f"--policy {name}: expected NAME=NUMBER, got {value!r}") from None
        low, strict = _policy_floor(name)
        if number < low or (strict and number == low):
            raise GoalError(f"--policy {name}: must be {'more than' if strict else 'at least'} {low:g}, got {value}")
        out[name] = int(number) if number == int(number) and not isinstance(defaults[name], float) else number
    return out


def _policy_floor(name: str) -> tuple[float, bool]:
    """(lowest value, whether it is excluded) the manifest schema allows for a policy value: a
    restart rate of 0 is a goal, a compute efficiency of 0 is not."""
    from linter.paths import manifest_schema_json

    spec = manifest_schema_json()["$defs"]["Policy"]["properties"].get(name, {})
    spec = next((b for b in spec.get("anyOf", [spec]) if "minimum" in b or "exclusiveMinimum" in b), spec)
    if "exclusiveMinimum" in spec:
        return float(spec["exclusiveMinimum"]), True
    return float(spec.get("minimum", 0)), "minimum" not in spec


def read_prices(path: str) -> dict[str, Price]:
    """A price file: `currency:` and `prices:` [{item, purchase and/or rental_per_month (per node),
    vendor, quote_date, lead_time_weeks}], item naming a catalog system or GPU."""
    from linter.manifest.loader import InputError, load_file

    try:
        data = load_file(path).data
    except InputError as exc:
        raise GoalError(f"{path}:{exc.line}: {exc.message}") from None
    if not isinstance(data, dict) or not isinstance(data.get("prices"), list):
        raise GoalError(f"{path}: expected `currency: USD` and `prices:` as a list of {{item, purchase, rental_per_month}}")
    currency = data.get("currency")
    if not (isinstance(currency, str) and len(currency) == 3 and currency.isupper()):
        raise GoalError(f"{path}: currency: give a three-letter code such as USD, got {currency!r}")
    catalog = load_catalog()
    out = {}
    for i, row in enumerate(data["prices"]):
        at = f"{path}: prices[{i}]"
        if not isinstance(row, dict) or "item" not in row:
            raise GoalError(f"{at}: each price needs item: (a catalog system or GPU name)")
        entry = catalog.find("systems", str(row["item"])) or catalog.find("gpus", str(row["item"]))
        if entry is None:
            raise GoalError(f"{at}.item: {row['item']!r} is not a catalog system or GPU"
                            f"{suggest(str(row['item']), catalog.names('systems') + catalog.names('gpus'))}")
        for key in ("purchase", "rental_per_month", "lead_time_weeks"):
            value = row.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise GoalError(f"{at}.{key}: expected a number of at least 0, got {value!r}")
        if row.get("purchase") is None and row.get("rental_per_month") is None:
            raise GoalError(f"{at}: give purchase (per node) or rental_per_month (per node), or both")
        out[entry["name"]] = Price(item=entry["name"], currency=currency, purchase=row.get("purchase"),
                                   rental_per_month=row.get("rental_per_month"), vendor=row.get("vendor"),
                                   quote_date=str(row["quote_date"]) if row.get("quote_date") else None,
                                   lead_time_weeks=row.get("lead_time_weeks"))
    return out
