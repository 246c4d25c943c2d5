"""What a check imports: the clean path (a valid manifest, the rule-pack cache warm) needs
neither pydantic nor jsonschema, and building a valid rule pack (no cache, or a fresh one)
needs neither either; those only word the errors of invalid input (a manifest, a rule file,
a team catalog). Jinja2 parses only a team's own rule sources, when their pack is built.
Measured in a fresh interpreter, as a user's command runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, ROOT, TEAM_RULE, TODAY

ONLY_FOR_ERRORS = ("pydantic", "jsonschema")
PROBE = (
    "import json, sys\n"
    "from linter.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "print(json.dumps([m for m in sys.argv[1].split(',') if m in sys.modules]), file=sys.stderr)\n"
)


def imported(*args: object, cache, watch: tuple[str, ...] = ONLY_FOR_ERRORS) -> list[str]:
    env = {**os.environ, "HWLINT_TODAY": TODAY, "HWLINT_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", PROBE, ",".join(watch), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=120)
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    assert imported("rules", "list", cache=cache) == []  # building a valid pack needs neither
    return cache


@pytest.mark.parametrize("cache_off", [True, False], ids=["cache off", "fresh cache dir"])
def test_a_cold_check_builds_the_pack_without_pydantic_jsonschema_or_jinja2(tmp_path, monkeypatch, cache_off):
    """The built-in rules come translated (rules/compiled.json): building their pack parses none."""
    if cache_off:
        monkeypatch.setenv("HWLINT_CACHE", "off")
    assert imported("check", EXAMPLES / "multi-node-pretrain.hw.yaml", cache=tmp_path / "fresh",
                    watch=(*ONLY_FOR_ERRORS, "jinja2")) == []
    if not cache_off:
        assert list((tmp_path / "fresh").glob("pack-*.pickle"))  # and it was stored


def test_jinja2_parses_a_team_rule_folder_once_when_its_pack_is_built(tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "ops.yaml").write_text(TEAM_RULE)
    args = ("check", "--rules", folder, EXAMPLES / "multi-node-pretrain.hw.yaml")
    assert imported(*args, cache=tmp_path / "cache", watch=("jinja2",)) == ["jinja2"]
    assert imported(*args, cache=tmp_path / "cache", watch=("jinja2",)) == []  # the cached pack runs without it


def test_a_team_rule_file_with_a_schema_error_brings_in_jsonschema_to_explain(tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "ops.yaml").write_text("rules:\n  - id: OPS901\n    severity: fatal\n")
    assert "jsonschema" in imported("check", "--rules", folder, EXAMPLES / "multi-node-pretrain.hw.yaml",
                                    cache=tmp_path / "cache")


@pytest.mark.parametrize("manifest", sorted(EXAMPLES.glob("*.hw.yaml")), ids=lambda p: p.name)
def test_a_valid_manifest_is_reviewed_without_pydantic_or_jsonschema(warm, manifest):
    assert imported("check", manifest, "--format", "json", cache=warm) == []


@pytest.mark.parametrize("manifest", sorted(EXAMPLES.glob("*.hw.yaml")), ids=lambda p: p.name)
def test_a_cached_pack_runs_its_rules_without_jinja2(warm, manifest):
    """Jinja2 parses rule sources when a pack is built; the compiled rules run without it,
    whether they pass (text) or fail and render their messages (every example, both formats)."""
    for fmt in ("text", "json"):
        assert imported("check", manifest, "--format", fmt, cache=warm, watch=("jinja2",)) == []


def test_a_clean_check_does_not_import_typing_or_dataclasses(warm):
    """`typing` is only for readers and type checkers in the modules a text check runs (each
    import of it under `if TYPE_CHECKING:`): importing it would be 2-4 ms of every hook run.
    Their record classes come from linter.record: dataclasses (and inspect) would be about
    15% of a warm check (bench/standins.py)."""
    assert imported("check", EXAMPLES / "multi-node-pretrain.hw.yaml", cache=warm,
                    watch=("typing", "dataclasses", "inspect")) == []


def test_a_clean_check_does_not_load_openssl(warm):
    """A check hashes a few kB (the manifest, its configs, a team's rule files): CPython's own
    SHA-256 does that without hashlib's 4 ms of loading OpenSSL (linter.digest)."""
    assert imported("check", EXAMPLES / "multi-node-pretrain.hw.yaml", cache=warm,
                    watch=("hashlib", "_hashlib")) == []


def test_help_and_rules_list_need_neither(warm):
    assert imported("--help", cache=warm) == []
    assert imported("rules", "list", cache=warm) == []


def test_a_team_catalog_is_checked_when_the_pack_is_built_not_on_every_run(tmp_path):
    """pydantic checks a team catalog's entries once, with the pack the cache then keeps."""
    from test_team_catalog import TEAM_GPU, manifest_with_gpu, team

    folder, manifest = team(tmp_path, TEAM_GPU), manifest_with_gpu(tmp_path, "ACME-X1-96GB")
    assert imported("check", "--catalog", folder, manifest, cache=tmp_path / "cache") == ["pydantic"]
    assert imported("check", "--catalog", folder, manifest, cache=tmp_path / "cache") == []


def test_an_invalid_manifest_brings_them_in_to_explain(warm, tmp_path):
    bad = tmp_path / "bad.hw.yaml"
    bad.write_text((EXAMPLES / "multi-node-pretrain.hw.yaml").read_text().replace("count: 32", "count: -3", 1))
    assert "jsonschema" in imported("check", bad, cache=warm)


def test_a_plain_check_and_rules_list_run_without_click(warm):
    """The commands a hook or an editor starts over and over skip click's import; options
    beyond the plain ones still go through click."""
    manifest = EXAMPLES / "multi-node-pretrain.hw.yaml"
    assert imported("check", manifest, "-q", cache=warm, watch=("click",)) == []
    assert imported("rules", "list", cache=warm, watch=("click",)) == []
    assert imported("check", manifest, "--format", "json", cache=warm, watch=("click",)) == ["click"]


def test_hwlint_size_designs_and_reviews_its_rows_without_pydantic(warm):
    """The sizer's plans and designs take the models' dump as a check does (review.plain_plan,
    design.facts_of): importing pydantic and building the models would be a tenth of its run."""
    assert imported("size", "--params", "7", "--tokens", "2", "--days", "3", "--goal", "finetune", cache=warm) == []
