"""Model shapes by name (models/*.yaml) and from a Hugging Face config.json.

`plan.model: {name: Llama-3.1-70B}` (and `hwlint size --model NAME`) takes the published
shape from the models/ folder; `plan.model.hf_config` (and `--model path/config.json`)
reads one from a Hugging Face configuration. The manifest's own keys always win, as with the
hardware catalog. Every entry carries `source` and `as_of`, as catalog/ does.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.paths import data_dir

# The keys a models/ entry shares with the manifest's plan.model (what `name` fills in).
SHAPE_KEYS = ("parameters_billion", "layers", "hidden_size", "attention_heads", "sequence_length", "kv_heads",
              "ffn_hidden_size", "ffn_activation", "vocabulary_size", "tied_embeddings", "moe")
# Hugging Face model types whose FFN is gated (three matrices: gate, up, down), and those
# with the two-matrix FFN of GPT-2; any other type must say its FFN kind itself.
GATED_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
               "deepseek_v2", "deepseek_v3", "phi3", "olmo", "olmo2", "granite", "cohere", "internlm2")
PLAIN_TYPES = ("gpt2", "opt", "bloom", "gpt_neox", "falcon", "gptj", "gpt_bigcode", "mpt", "phi")


class ModelError(Exception):
    """A model name or config file that cannot be used; the message says what to do."""


@lru_cache(maxsize=1)
def load_models() -> dict[str, dict[str, Any]]:
    """{name: entry} of every models/*.yaml file, in file order."""
    from linter.manifest.loader import load_file

    out: dict[str, dict[str, Any]] = {}
    for path in sorted(data_dir("models").glob("*.yaml")):
        for entry in (load_file(str(path)).data or {}).get("models", []) or []:
            entry["as_of"] = str(entry.get("as_of", ""))
            out[entry["name"]] = entry
    return out


def _norm(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


@lru_cache(maxsize=1)
def _index() -> dict[str, str]:
    index = {}
    for name, entry in load_models().items():
        for alias in [name, *entry.get("aliases", [])]:
            index[_norm(alias)] = name
    return index


def find(name: str) -> dict[str, Any] | None:
    canonical = _index().get(_norm(name))
    return load_models()[canonical] if canonical else None


def names() -> list[str]:
    return list(load_models())


def shape_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The plan.model keys an entry fills: its published shape; the pretraining sequence
    length where published."""
    return {k: entry[k] for k in SHAPE_KEYS if entry.get(k) is not None}


def read_hf_config(path: str, inside: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """(plan.model keys, notes) from a Hugging Face config.json. The parameter count is not in
    the file, so it is not among the keys (the sizer computes it from the shape and says so).
    `inside`: the folder the file must lie in, links resolved (a manifest's repository: a
    manifest under review may not make hwlint read a file outside it). Only a regular file of
    at most 1 MB is read, as the loader reads manifests (no pipe, device or link out)."""
    from linter.manifest.loader import InputError, read_bytes

    if inside is not None:
        real, root = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, root]) != root:
            raise ModelError(f"{path} lies outside {os.path.relpath(root)}; a manifest may name a Hugging Face config "
                             "only inside its own repository (or its folder, outside a repository)")
    try:
        raw = read_bytes(path, inside, 1_000_000, "Hugging Face configs")
    except InputError as exc:
        raise ModelError(f"cannot read the Hugging Face config: {exc.message}") from None
    try:
        config = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path}: not JSON ({exc})") from None
    if not isinstance(config, dict):
        raise ModelError(f"{path}: a config.json is a JSON object")
    config = config.get("text_config") if isinstance(config.get("text_config"), dict) else config

    def first(*keys: str) -> Any:
        for key in keys:
            value = config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return None

    kind = str(config.get("model_type", ""))
    shape: dict[str, Any] = {
        "layers": first("num_hidden_layers", "n_layer", "num_layers"),
        "hidden_size": first("hidden_size", "n_embd", "d_model"),
        "attention_heads": first("num_attention_heads", "n_head", "num_heads"),
        "kv_heads": 1 if config.get("multi_query") is True else first("num_key_value_heads"),
        "vocabulary_size": first("vocab_size"),
    }
    missing = [k for k in ("layers", "hidden_size", "attention_heads") if shape[k] is None]
    if missing:
        raise ModelError(f"{path}: no {', '.join(missing)} found (num_hidden_layers, hidden_size, num_attention_heads)")
    notes = []
    experts = first("num_local_experts", "num_experts", "n_routed_experts")
    active = first("num_experts_per_tok", "num_experts_per_token", "moe_top_k")
    ffn = first("moe_intermediate_size") if experts else None
    shape["ffn_hidden_size"] = ffn or first("intermediate_size", "ffn_dim", "n_inner")
    if kind in GATED_TYPES:
        act = str(config.get("hidden_activation") or config.get("hidden_act") or "silu")
        shape["ffn_activation"] = "geglu" if act.startswith("gelu") else "swiglu"
    elif kind in PLAIN_TYPES:
        shape["ffn_activation"] = "gelu"
        shape["ffn_hidden_size"] = shape["ffn_hidden_size"] or 4 * shape["hidden_size"]
    else:
        raise ModelError(f"{path}: model_type {kind!r} is not one hwlint knows the FFN of; give plan.model.ffn_activation "
                         "(gelu, swiglu or geglu) and the shape keys in the manifest instead")
    if experts and active:
        shape["moe"] = {"experts": experts, "active_experts": active}
        if config.get("n_shared_experts"):
            notes.append(f"{config['n_shared_experts']} shared experts per layer are not modelled")
    shape["tied_embeddings"] = bool(config.get("tie_word_embeddings", True))  # the transformers default
    context = first("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")
    out = {k: v for k, v in shape.items() if v is not None}
    if context:
        out["context_length"] = context
    return out, notes
