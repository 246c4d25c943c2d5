"""Escaping for text that came from a manifest, a file name or the command line.

- `markdown`: inert inline Markdown for GitHub (no links, HTML, mentions, code, table breaks,
  bare-URL autolinks).
- `terminal`: every human format (text, Markdown, checklist, verify, GitHub annotations) is
  passed through it on the way out: terminal control characters (ESC, so no screen clears,
  OSC 8 links or OSC 52 clipboard writes; BEL; NUL; the other C0 and C1 controls and DEL),
  Unicode line and paragraph separators and bidirectional overrides become visible `\\xNN` /
  `\\uNNNN` text. Tab and line feed stay: they are the formats' own layout.
- `path`: a file name or a command-line value inside a line: line breaks and tabs visible
  too, so a name cannot start a line of its own.
- `lines`: no line of a human report may start a GitHub workflow command (`::error ...`,
  `##[error]`); such a line (a file named `::error title=X::a.hw.yaml`) gains `./` in front,
  which names the same file.
"""

from __future__ import annotations

import re

from linter.results import one_line

_MD = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;",
    "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]",
    "|": "\\|", "#": "\\#", "!": "\\!", "~": "\\~",
}
_MD_RE = re.compile("[" + re.escape("".join(_MD)) + "]")
# GitHub turns `scheme://...` and `www.` in plain text into links; an entity in place of the
# `:` or `.` that triggers it leaves the text as it reads, unlinked.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<![a-z0-9])(www)(\.)")

_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_TERMINAL_RE = re.compile(f"[{_CONTROL}]")
_PATH_RE = re.compile(f"[{_CONTROL}\t\n]")
_COMMAND_LINE = re.compile(r"^(?=::|##\[)", re.M)


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _unlink(match: re.Match) -> str:
    return "&#58;" if match.group(1) else match.group(2) + "&#46;"


def markdown(value: object) -> str:
    """Make `value` inert inline Markdown: no links, HTML, mentions, code or table breaks."""
    return _AUTOLINK.sub(_unlink, _MD_RE.sub(lambda m: _MD[m.group(0)], one_line(value)))


def terminal(text: str) -> str:
    """`text` with control characters and Unicode line separators made visible."""
    return _TERMINAL_RE.sub(_visible, text)


def path(value: object) -> str:
    """A file name or command-line value to show inside one line."""
    return _PATH_RE.sub(_visible, str(value))


def lines(text: str) -> str:
    """`text` with no line that starts a GitHub workflow command."""
    return _COMMAND_LINE.sub("./", text)


def human(text: str) -> str:
    """The last step of every human format: `terminal`, then `lines`."""
    return lines(terminal(text))
