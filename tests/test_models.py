"""models/: published model shapes by name, Hugging Face config.json files, and `hwlint models`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from linter.manifest.model import CatalogModel
from linter.physics.formulas import transformer_parameters

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = yaml.safe_load((ROOT / "models" / "models.yaml").read_text())["models"]
BASE = ROOT / "examples" / "qlora-70b-one-node.hw.yaml"
MODEL_BLOCK = re.compile(r"  model:\n(?:    .*\n)+")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_entry_is_sourced_dated_and_valid(entry):
    CatalogModel.model_validate(entry)
    assert entry["source"].get("url", "").startswith("https://")
    assert entry["hidden_size"] % entry["attention_heads"] == 0


def test_names_and_aliases_find_one_entry_each():
    seen: dict[str, str] = {}
    for entry in ENTRIES:
        for alias in [entry["name"], *entry.get("aliases", [])]:
            key = "".join(c for c in alias.lower() if c.isalnum())
            assert seen.setdefault(key, entry["name"]) == entry["name"], alias


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.get("vocabulary_size")],
                         ids=[e["name"] for e in ENTRIES if e.get("vocabulary_size")])
def test_each_shape_adds_up_to_its_published_parameter_count(entry):
    # the shape and the count come from different lines of the sources: they must agree
    experts = (entry.get("moe") or {}).get("experts", 1)
    counted = transformer_parameters(entry["layers"], entry["hidden_size"], entry["attention_heads"],
                                     entry.get("kv_heads") or entry["attention_heads"], entry["ffn_hidden_size"],
                                     entry["ffn_activation"], entry["vocabulary_size"], bool(entry.get("tied_embeddings")),
                                     experts)
    assert counted / 1e9 == pytest.approx(entry["parameters_billion"], rel=0.04)


def test_models_list_and_show(hwlint):
    listed = hwlint("models", "list")
    assert listed.code == 0
    assert re.search(r"^Mixtral-8x7B +Mixtral +46.7B .*8x top-2 +as of 2024-01-08$", listed.out, re.M)
    assert len(listed.out.splitlines()) == len(ENTRIES)
    shown = hwlint("models", "show", "meta-llama/Llama-2-70b-hf")
    assert shown.code == 0 and "Llama-2-70B (model, Llama 2)" in shown.out
    assert "kv_heads: 8" in shown.out and "source: " in shown.out and "as_of" in shown.out
    missing = hwlint("models", "show", "Lama-2-70B")
    assert missing.code == 2 and 'did you mean "Llama-2-70B"' in missing.err


def _gpu_lines(out: str) -> list[tuple]:
    """What the memory, time and checkpoint rules found, from check's JSON report."""
    results = json.loads(out)["manifests"][0]["results"]
    return [(r["rule_id"], r["status"], r["evidence"], json.dumps(r["facts"], sort_keys=True)) for r in results
            if re.fullmatch(r"GPU00[1-8]|MEM002|STO00[23]", r["rule_id"])]


def _with_model(tmp_path: Path, block: str, name: str = "m.hw.yaml") -> Path:
    path = tmp_path / name
    path.write_text(MODEL_BLOCK.sub(block, BASE.read_text(), count=1))
    return path


def test_a_named_model_reviews_as_its_shape_written_out(hwlint, tmp_path):
    entry = next(e for e in ENTRIES if e["name"] == "Llama-2-70B")
    keys = ("parameters_billion", "layers", "hidden_size", "attention_heads", "kv_heads", "ffn_hidden_size",
            "ffn_activation", "vocabulary_size", "tied_embeddings", "sequence_length")
    written = "  model:\n" + "".join(f"    {k}: {str(entry[k]).lower()}\n" for k in keys) + "    attention: flash\n"
    by_name = _with_model(tmp_path, "  model:\n    name: Llama 2 70B\n    attention: flash\n", "named.hw.yaml")
    spelled = _with_model(tmp_path, written, "spelled.hw.yaml")
    named, explicit = hwlint("check", by_name, "--format", "json"), hwlint("check", spelled, "--format", "json")
    assert named.code == explicit.code
    assert _gpu_lines(named.out) and _gpu_lines(named.out) == _gpu_lines(explicit.out)
    # the manifest's own key wins over the named shape
    shorter = _with_model(tmp_path, "  model:\n    name: Llama-2-70B\n    sequence_length: 1024\n    attention: flash\n")
    assert _gpu_lines(hwlint("check", shorter, "--format", "json").out) != _gpu_lines(named.out)


def test_an_unknown_model_name_is_named_with_its_line(hwlint, tmp_path):
    path = _with_model(tmp_path, "  model:\n    name: Llama-9-70B\n")
    run = hwlint("check", path)
    assert run.code != 0
    assert re.search(r"m\.hw\.yaml:\d+:\d+.*plan\.model\.name names \"Llama-9-70B\", which is not in models/", run.out + run.err)


def _hf_config(entry: dict) -> dict:
    return {"model_type": "llama", "hidden_act": "silu", "num_hidden_layers": entry["layers"],
            "hidden_size": entry["hidden_size"], "num_attention_heads": entry["attention_heads"],
            "num_key_value_heads": entry["kv_heads"], "intermediate_size": entry["ffn_hidden_size"],
            "vocab_size": entry["vocabulary_size"], "max_position_embeddings": entry["context_length"],
            "tie_word_embeddings": False}


def test_a_hugging_face_config_beside_the_manifest_gives_the_shape(hwlint, tmp_path):
    entry = next(e for e in ENTRIES if e["name"] == "Llama-2-70B")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(json.dumps(_hf_config(entry)))
    from_config = _with_model(tmp_path, "  model:\n    hf_config: cfg/config.json\n    parameters_billion: 70\n"
                                        "    sequence_length: 4096\n    attention: flash\n", "hf.hw.yaml")
    by_name = _with_model(tmp_path, "  model:\n    name: Llama-2-70B\n    attention: flash\n", "named.hw.yaml")
    assert _gpu_lines(hwlint("check", from_config, "--format", "json").out) == _gpu_lines(hwlint("check", by_name, "--format", "json").out)
    broken = _with_model(tmp_path, "  model:\n    hf_config: cfg/missing.json\n", "broken.hw.yaml")
    run = hwlint("check", broken)
    assert run.code != 0 and "plan.model.hf_config" in run.out + run.err and "Traceback" not in run.err


def test_size_by_model_name_and_by_config_json(hwlint, tmp_path):
    entry = next(e for e in ENTRIES if e["name"] == "Llama-2-70B")
    (tmp_path / "config.json").write_text(json.dumps(_hf_config(entry)))
    goal = ["--tokens", "2000", "--days", "120", "--gpu", "H100-SXM5-80GB", "--format", "json"]
    named = json.loads(hwlint("size", "--model", "Llama-2-70B", *goal).out)
    config = json.loads(hwlint("size", "--model", str(tmp_path / "config.json"), "--params", "70", "--seq", "4096", *goal).out)
    for report in (named, config):
        assert report["goal"]["layers"] == 80 and report["goal"]["hidden"] == 8192
        assert report["goal"]["model_keys"]["kv_heads"] == 8
        assert report["best"]
    # Llama 2 §2.2: 4M tokens per step, 1,024 sequences of 4,096
    assert named["goal"]["global_batch"] == 1024
    assert any("4M tokens per step as published for it" in c for c in named["goal"]["chosen"])
    unknown = hwlint("size", "--model", "Mixtrel-8x7B", "--tokens", "1", "--days", "1")
    assert unknown.code == 2 and 'did you mean "Mixtral-8x7B"' in unknown.err


def test_a_manifest_may_not_make_hwlint_read_a_config_outside_its_repository_or_a_pipe(hwlint, tmp_path):
    """plan.model.hf_config is the manifest's to name, and the manifest is what is under review:
    a path out of its repository (or a link out) is a CATALOG finding that names the path and
    reads nothing; a named pipe is refused from its metadata instead of blocking the run."""
    import os

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    entry = next(e for e in ENTRIES if e["name"] == "Llama-2-70B")
    (outside / "config.json").write_text(json.dumps(_hf_config(entry)))
    escaping = _with_model(repo, "  model:\n    hf_config: ../outside/config.json\n    parameters_billion: 70\n", "out.hw.yaml")
    run = hwlint("check", escaping)
    assert run.code == 1 and "Traceback" not in run.err, run.out + run.err  # a CATALOG error, as a missing file is
    assert "plan.model.hf_config" in run.out + run.err and "lies outside" in run.out + run.err, run.out + run.err
    (repo / "link.json").symlink_to(outside / "config.json")
    linked = _with_model(repo, "  model:\n    hf_config: link.json\n    parameters_billion: 70\n", "link.hw.yaml")
    assert "lies outside" in (lambda r: r.out + r.err)(hwlint("check", linked))
    os.mkfifo(repo / "pipe.json")
    piped = _with_model(repo, "  model:\n    hf_config: pipe.json\n    parameters_billion: 70\n", "pipe.hw.yaml")
    run = hwlint("check", piped)  # would block on open() if it were read
    assert run.code == 1 and "not a regular file" in run.out + run.err, run.out + run.err
