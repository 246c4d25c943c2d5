"""Escaping for text that came from a manifest and lands in Markdown rendered by GitHub."""

from __future__ import annotations

import re

from linter.results import one_line

_MD = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;",
    "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]",
    "|": "\\|", "#": "\\#", "!": "\\!", "~": "\\~",
}
_MD_RE = re.compile("[" + re.escape("".join(_MD)) + "]")


def markdown(value: object) -> str:
    """Make `value` inert inline Markdown: no links, HTML, mentions, code or table breaks."""
    return _MD_RE.sub(lambda m: _MD[m.group(0)], one_line(value))
