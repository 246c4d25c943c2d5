"""The model a goal names or implies: a models/ entry by name, a Hugging Face config.json, or,
from a parameter count alone, the nearest published shape scaled to it; and the global batch
a published run of that scale used.

Kaplan et al. 2020 §3.1: at a fixed parameter count the loss depends only weakly on the
shape (depth, width, heads), so the nearest published family's proportions scaled to the
count are a fair shape to size hardware with. The result is always said as chosen.
"""

from __future__ import annotations

import math
import os
from typing import Any

from linter.manifest import models
from linter.physics import formulas

EXACT = 0.10  # a published shape within 10% of the goal's parameters is taken as it is, not scaled


class ShapeError(Exception):
    """The model cannot be found or read; the message says what to give instead."""


def named(spec: str, base_dir: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None, list[str]]:
    """(plan.model keys, the models/ entry or None, notes) for `--model NAME` or a config.json path."""
    path = spec if base_dir is None or os.path.isabs(spec) else os.path.join(base_dir, spec)
    if spec.lower().endswith(".json") or os.path.isfile(path):
        try:
            shape, notes = models.read_hf_config(path)
        except models.ModelError as exc:
            raise ShapeError(str(exc)) from None
        experts = (shape.get("moe") or {}).get("experts", 1)
        params = formulas.transformer_parameters(
            shape["layers"], shape["hidden_size"], shape["attention_heads"], shape.get("kv_heads") or shape["attention_heads"],
            shape["ffn_hidden_size"], shape["ffn_activation"], shape.get("vocabulary_size") or 0, shape["tied_embeddings"],
            experts)
        shape["parameters_billion"] = round(params / 1e9, 3)
        notes.append(f"parameters {shape['parameters_billion']:g}B counted from the shape (weights only; biases and norms "
                     "left out) [kaplan-2020], as a config.json does not give the count (give --params to change)")
        return shape, None, [f"shape read from {spec}"] + notes
    entry = models.find(spec)
    if entry is None:
        from linter.manifest.validate import suggest

        raise ShapeError(f"{spec!r} is not a model in models/{suggest(spec, models.names(), cutoff=0.4)}; "
                         "`hwlint models list` shows them, or give a path to a Hugging Face config.json")
    shape = models.shape_of(entry)
    shape["context_length"] = entry["context_length"]
    return shape, entry, [f"shape of {entry['name']} from models/ ({_cite(entry)})"]


def _cite(entry: dict[str, Any]) -> str:
    source = entry.get("source", {})
    return ", ".join(str(source[k]) for k in ("title", "section") if source.get(k))


def nearest(params_b: float, moe: bool, key: str = "parameters_billion") -> dict[str, Any]:
    """The published entry closest to `params_b` on a log scale, dense or MoE as the goal is;
    ties go to the earlier entry in models/ (file order), never to a name."""
    kind = [e for e in models.load_models().values() if bool(e.get("moe")) == moe]
    pool = [e for e in kind if e.get(key) is not None] or kind
    return min(pool, key=lambda e: abs(math.log(params_b / e["parameters_billion"])))


def scaled(params_b: float, experts: tuple[int, int] | None) -> tuple[dict[str, Any], str]:
    """(plan.model keys, what was done) for a goal that gives only its parameter count (and
    perhaps --moe EXPERTSxACTIVE): the nearest published shape, scaled when it is more than 10%
    away, keeping its width-to-depth ratio, head size, FFN and KV-head ratios, FFN kind and
    vocabulary [kaplan-2020]."""
    base = nearest(params_b, experts is not None, "sequence_length")  # a published pretraining recipe where there is one
    e_count = experts[0] if experts else 1
    keep = {k: base[k] for k in ("ffn_activation", "vocabulary_size", "tied_embeddings") if base.get(k) is not None}
    base_params = formulas.transformer_parameters(
        base["layers"], base["hidden_size"], base["attention_heads"], base.get("kv_heads") or base["attention_heads"],
        base["ffn_hidden_size"], base["ffn_activation"], base.get("vocabulary_size") or 0, bool(base.get("tied_embeddings")),
        e_count)
    if experts is None or (base.get("moe") and tuple(base["moe"].values()) == experts):
        if abs(params_b / base["parameters_billion"] - 1) <= EXACT:
            shape = models.shape_of(base)
            shape.pop("parameters_billion")
            shape.setdefault("sequence_length", base["context_length"])
            return shape, (f"the shape of {base['name']} ({base['parameters_billion']:g}B, the nearest published "
                           f"{'MoE' if experts else 'dense'} model in models/ with a pretraining recipe, within {EXACT:.0%})")
    head = base["hidden_size"] // base["attention_heads"]
    aspect = base["hidden_size"] / base["layers"]
    ffn_ratio = base["ffn_hidden_size"] / base["hidden_size"]
    kv_ratio = (base.get("kv_heads") or base["attention_heads"]) / base["attention_heads"]
    target = params_b * 1e9 * (base_params / (base["parameters_billion"] * 1e9))  # the same counting convention as the base
    best: tuple[float, dict[str, Any]] | None = None
    for layers in range(2, 257):
        heads = max(1, round(layers * aspect / head))
        hidden = heads * head
        kv = max(1, round(heads * kv_ratio))
        while heads % kv:
            kv -= 1
        ffn = max(64, round(hidden * ffn_ratio / 64) * 64)
        count = formulas.transformer_parameters(layers, hidden, heads, kv, ffn, base["ffn_activation"],
                                                base.get("vocabulary_size") or 0, bool(base.get("tied_embeddings")), e_count)
        miss = abs(math.log(count / target))
        if best is None or miss < best[0]:
            best = (miss, {"layers": layers, "hidden_size": hidden, "attention_heads": heads, "kv_heads": kv,
                           "ffn_hidden_size": ffn, **keep})
    shape = best[1]
    shape["sequence_length"] = base.get("sequence_length") or base["context_length"]
    return shape, (f"{base['name']}'s shape ({base['parameters_billion']:g}B, the nearest published "
                   f"{'MoE' if experts else 'dense'} model in models/) scaled to {params_b:g}B: L{shape['layers']} "
                   f"h{shape['hidden_size']} a{shape['attention_heads']} (kv {shape['kv_heads']}) f{shape['ffn_hidden_size']}, "
                   f"keeping its h/L ratio of {aspect:.0f}, head size {head}, FFN and KV-head ratios and its "
                   f"{'pretraining sequence' if base.get('sequence_length') else 'context'} length; the loss depends "
                   "only weakly on shape at a fixed parameter count [kaplan-2020] §3.1")


def batch_rule(params_b: float, seq: int, entry: dict[str, Any] | None) -> tuple[int, str]:
    """(global batch in sequences, why): the tokens per step the named model was trained with,
    else those of the published run nearest in parameters (GPT-3 Table 2.1, OPT Table 1, BLOOM,
    LLaMA Table 2, Llama 2 §2.2, Llama 3 §3.4.1), over the sequence length, at least 1."""
    source = entry if entry and entry.get("batch_tokens_million") else nearest(params_b, False, "batch_tokens_million")
    tokens = source["batch_tokens_million"] * 1e6
    exact = tokens / seq
    unit = 2 ** max(0, int(math.log2(max(exact / 4, 1))))  # a multiple of a power of two: many data degrees divide it
    sequences = max(1, round(exact / unit)) * unit
    how = "as published for it" if source is entry else f"as {source['name']} ({source['parameters_billion']:g}B, the nearest published run) used"
    return sequences, (f"global batch {sequences:,} sequences of {seq:,} tokens: {source['batch_tokens_million']:g}M tokens "
                       f"per step {how} ({_cite(source)}), rounded to a multiple of {unit} so that many data-parallel "
                       "degrees divide it (give --global-batch to change)")
