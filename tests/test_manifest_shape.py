"""schemas/manifest.shape.json, the models' shape a pack is built with (linter.manifest.dump),
is exactly what the pydantic models give."""

from __future__ import annotations

from conftest import ROOT


def test_the_committed_shape_is_current():
    from linter.schema import render_shape

    committed = (ROOT / "schemas" / "manifest.shape.json").read_text(encoding="utf-8")
    assert committed == render_shape(), "run: python -m linter.schema"


def test_the_shape_read_back_is_the_models_own():
    from linter.manifest.dump import model_shape, shape

    def kinds(node):  # tuples stay tuples, a default list stays a list
        if isinstance(node, (list, tuple)):
            return (type(node).__name__, [kinds(item) for item in node])
        if isinstance(node, dict):
            return {key: kinds(value) for key, value in node.items()}
        return type(node).__name__

    read, built = shape(), model_shape()
    assert read == built
    assert kinds(read) == kinds(built)
