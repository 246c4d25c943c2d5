"""The recipes in tests/hostile_manifests/ are data for named tests: each names one that
writes it, and the manifest it writes is valid YAML of the size its comment says."""

from __future__ import annotations

import pytest
import yaml

from conftest import HOSTILE_MANIFESTS, ROOT, hostile_manifest

RECIPES = sorted(p.name.removesuffix(".recipe.yaml") for p in HOSTILE_MANIFESTS.glob("*.recipe.yaml"))


@pytest.mark.parametrize("name", RECIPES)
def test_each_recipe_is_written_by_the_test_it_names(name, tmp_path):
    recipe = yaml.safe_load((HOSTILE_MANIFESTS / f"{name}.recipe.yaml").read_text())
    file, test = recipe["used_by"].split("::")
    source = (ROOT / file).read_text()
    assert f"def {test}(" in source and f'hostile_manifest("{name}"' in source
    path = hostile_manifest(name, tmp_path)
    data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    assert len(data["facility"]["racks"]) > recipe["times"]  # every copy is a rack group of its own


def test_the_sign_off_recipe_is_past_half_the_read_limit(tmp_path):
    size = hostile_manifest("signoff-past-the-read-limit", tmp_path).stat().st_size
    assert 2_500_000 < size < 5_000_000  # one compressed copy fits, a second does not
