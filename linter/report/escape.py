"""Escaping for text that came from a manifest, a file name or the command line.

- `markdown`: inert inline Markdown for GitHub (no links, HTML, mentions, issue references,
  math, code, table breaks, bare-URL or e-mail autolinks). GitHub finds @mentions and #123
  references in the rendered text, after `&#64;` is `@` again, and outside code only: so a
  run of `@` or of `#` before a digit goes in a code span of its own (`@`alice), which also
  breaks an e-mail address's autolink. `$` is `\\$`, as GitHub's math asks.
- `terminal`: every human format (text, Markdown, checklist, verify, GitHub annotations) is
  passed through it on the way out: terminal control characters (ESC, so no screen clears,
  OSC 8 links or OSC 52 clipboard writes; BEL; NUL; the other C0 and C1 controls and DEL),
  Unicode line and paragraph separators, bidirectional overrides and isolates, and invisible
  characters (zero-width spaces and joiners, other format characters, fillers) become
  visible `\\xNN` / `\\uNNNN` / `\\UNNNNNNNN` text. Tab and line feed stay: they are the formats' own layout.
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
    "&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "\\$",
    "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]",
    "|": "\\|", "#": "\\#", "!": "\\!", "~": "\\~",
}
# runs of @ (mentions, e-mail autolinks) and of # before a digit (issue references): code spans
_MD_RE = re.compile("(@+|#+(?=[0-9]))|[" + re.escape("".join(_MD)) + "]")
# GitHub turns `scheme://...` and `www.` in plain text into links; an entity in place of the
# `:` or `.` that triggers it leaves the text as it reads, unlinked.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<![a-z0-9])(www)(\.)")

# C0 controls but tab and line feed, DEL and C1; every format character (Unicode category Cf:
# zero-width space and joiners, soft hyphen, bidirectional marks, embeddings, overrides and
# isolates, byte order mark, tags); the line and paragraph separators; and the other default-
# ignorable code points a reader cannot see (Hangul fillers, the combining grapheme joiner,
# tag-block selectors). Variation selectors U+FE00-FE0F stay: they only choose how the
# character before them is drawn, and hwlint's own emoji carry U+FE0F.
# tests/test_escape_matrix.py checks the Cf part against the running Python's Unicode database.
_CONTROL = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_TERMINAL_RE = re.compile(f"[{_CONTROL}]")
_PATH_RE = re.compile(f"[{_CONTROL}\t\n]")
_COMMAND_LINE = re.compile(r"^(?=::|##\[)", re.M)


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _unlink(match: re.Match) -> str:
    return "&#58;" if match.group(1) else match.group(2) + "&#46;"


def _md(match: re.Match) -> str:
    return f"`{match.group(1)}`" if match.group(1) else _MD[match.group(0)]


def markdown(value: object) -> str:
    """Make `value` inert inline Markdown: no links, HTML, mentions, references, math, code or
    table breaks."""
    return _AUTOLINK.sub(_unlink, _MD_RE.sub(_md, one_line(value)))


def code(value: object) -> str:
    """`value` (a file name) as an inline code span on one line: fenced by one backtick more
    than its longest run of them, so no backtick in it ends the span, and shown as it is."""
    text = " ".join(str(value).split()).replace("|", "\\|")  # a table cell's pipe, escaped even in code
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def cell(text: object) -> str:
    """Our own text (a rule's or a model's description) as one Markdown table cell: on one
    line, its pipes escaped. Text from a manifest goes through `markdown` instead."""
    return one_line(text).replace("|", "\\|")


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
