"""Reporters: each turns a list of Reviews into text. Registered by format name."""

from __future__ import annotations

from importlib import import_module
from typing import Callable

# format name -> "module:function"; imported only when that format is asked for
REGISTRY: dict[str, str] = {
    "text": "linter.report.text:render",
    "markdown": "linter.report.markdown:render",
}


def reporter(name: str) -> Callable[..., str]:
    module, function = REGISTRY[name].split(":")
    return getattr(import_module(module), function)
