"""Write a sized manifest as YAML, with a comment on every value the sizer derived or chose."""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._/+()@-]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)
    text = str(value)
    if _DATE.match(text):
        return text
    if _PLAIN.match(text) and text.lower() not in _RESERVED and not re.match(r"^[\d.+-]+([eE][\d+-]+)?$", text) \
            and not text.endswith(" ") and ": " not in text:
        return text
    return json.dumps(text, ensure_ascii=False)


def _flow(value: dict) -> str:
    return "{" + ", ".join(f"{k}: {_inline(v)}" for k, v in value.items()) + "}"


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return _flow(value)
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return scalar(value)


def _simple(value: Any) -> bool:
    """Short enough for one flow-style line."""
    return isinstance(value, (dict, list)) and len(_inline(value)) <= 100


def _noted(notes: dict[str, str], path: str) -> bool:
    """A note sits on a key inside `path`: write it as a block so the note has its own line."""
    return any(k.startswith(path + ".") or k.startswith(path + "[") for k in notes)


def _comment(notes: dict[str, str], path: str) -> str:
    note = notes.get(path)
    return f"  # {note}" if note else ""


def dump(data: dict[str, Any], notes: dict[str, str], header: list[str]) -> str:
    lines = [f"# {h}" if h else "#" for h in header]

    def mapping(node: dict, indent: int, path: str) -> None:
        for key, value in node.items():
            at = f"{path}.{key}" if path else key
            pad = " " * indent
            if isinstance(value, dict) and value and not (_simple(value) and at not in _BLOCK and not _noted(notes, at)):
                lines.append(f"{pad}{key}:{_comment(notes, at)}")
                mapping(value, indent + 2, at)
            elif isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
                lines.append(f"{pad}{key}:{_comment(notes, at)}")
                sequence(value, indent + 2, at)
            else:
                lines.append(f"{pad}{key}: {_inline(value)}{_comment(notes, at)}")

    def sequence(items: list, indent: int, path: str) -> None:
        pad = " " * indent
        for i, item in enumerate(items):
            at = f"{path}[{i}]"
            if isinstance(item, dict) and (not _simple(item) or _noted(notes, at)):
                saved = len(lines)
                mapping(item, indent + 2, at)
                lines[saved] = pad + "- " + lines[saved][indent + 2:] + (
                    _comment(notes, at) if "#" not in lines[saved] else "")
            else:
                lines.append(f"{pad}- {_inline(item)}{_comment(notes, at)}")

    mapping(data, 0, "")
    return "\n".join(lines) + "\n"


# Sections always written as blocks, so their comments have a line to sit on.
_BLOCK = {"plan", "plan.parallelism", "plan.model", "procurement", "network", "storage", "facility", "storage.checkpoint"}


def manifest_text(row: Any) -> str:
    """The manifest of a designed row, with its header."""
    lay = row.layout
    when = f"{row.seconds / 3600:.1f} hours" if row.seconds < 86400 else f"{row.days:g} days"
    header = [
        f"Sized by `hwlint size`: {row.gpus:,} x {row.gpu} ({row.nodes:,} node{'s' if row.nodes != 1 else ''}), "
        f"{lay.summary}, about {when}.",
        "'derived:' marks a value computed from the catalog, the review's facts and rules/policy.yaml;",
        "'chosen:' one the sizer picked where the goal did not say. Check it with `hwlint check`.",
        "Not decided here (the review lists them as to confirm): operations, backup, UPS, circuits, feeds.",
    ]
    return dump(row.design["manifest"], row.design["notes"], header)
