"""The training plan's settings, with what current frameworks do where the plan is silent.

Read through `facts.plan` by GPU001 (the assumptions it prints); the memory and training-time
modules and the sizer start from `plan_settings`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.physics import formulas as physics
from linter.physics.values import Unknown


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


def expert_params(cfg: dict) -> Any:
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
