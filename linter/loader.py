"""Load a YAML file into plain data plus the source position of every key and list item.

ruamel.yaml's round-trip loader keeps line/column marks; we copy the document into plain
dicts/lists (so later stages never see YAML types) and a `positions` map from a path tuple
such as ("node_pools", 0, "gpu", "count") to a 1-based (line, column). The copy is bounded
in size and depth, so an alias "billion laughs" or a pathologically nested file ends in a
clear error instead of exhausting memory.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Path_ = tuple  # a path into the document: keys (str) and list indexes (int)

MAX_BYTES = 5_000_000
MAX_NODES = 100_000
MAX_DEPTH = 50


class InputError(Exception):
    """The file could not be read as YAML: the message is for the user, as is."""

    def __init__(self, message: str, line: int = 1, column: int = 1, code: str = "YAML"):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.code = code


@dataclass
class Document:
    path: str
    data: Any
    positions: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    # keys given with no value: the user has listed them as still to be confirmed
    blanks: set[Path_] = field(default_factory=set)
    raw: bytes = b""

    def position(self, path: Path_) -> tuple[int, int]:
        """Position of `path`, or of its nearest ancestor that the file spells out."""
        path = tuple(path)
        while path:
            if path in self.positions:
                return self.positions[path]
            path = path[:-1]
        return self.positions.get((), (1, 1))


def read_bytes(path: str) -> bytes:
    p = Path(path)
    if not p.exists():
        raise InputError(f"no such file: {path}", code="IO")
    if p.is_dir():
        raise InputError(f"{path} is a directory; give a manifest file", code="IO")
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise InputError(
                f"file is {size:,} bytes; manifests are limited to {MAX_BYTES:,} bytes", code="IO"
            )
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", code="IO") from None


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8", line, column) from None


def load_file(path: str) -> Document:
    raw = read_bytes(path)
    doc = load_text(decode(raw), path)
    doc.raw = raw
    return doc


def load_text(text: str, path: str = "<string>") -> Document:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as exc:
        raise _marked(exc) from None
    except YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise InputError(f"nesting is too deep (limit {MAX_DEPTH} levels)") from None
    if tree is None:
        raise InputError("the file is empty (or only comments); run `hwlint init` for a starter manifest", code="SCHEMA")
    doc = Document(path=path, data=None)
    doc.positions[()] = (1, 1)
    doc.data = _Copier(doc).copy(tree, (), 0)
    return doc


def _marked(exc: Any) -> InputError:
    from ruamel.yaml.constructor import DuplicateKeyError

    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    if isinstance(exc, DuplicateKeyError):
        key = str(exc.problem).split('"')[1] if '"' in str(exc.problem) else "?"
        first = exc.context_mark.line + 1 if exc.context_mark else "?"
        return InputError(f'duplicate key "{key}" (the mapping that starts on line {first} already has it); keep one', line, column)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if "expected a single document" in problem or "expected '<document start>'" in problem:
        return InputError("the file holds several YAML documents; a manifest is one document", line, column)
    if "found character '\\t'" in problem or "\t" in problem:
        return InputError("a tab character is used for indentation; YAML needs spaces", line, column)
    text = f"not valid YAML: {problem}" + (f" ({context})" if context else "")
    return InputError(text, line, column)


class _Copier:
    """Copy ruamel nodes into plain Python, recording positions, within budget."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.nodes = 0

    def copy(self, value: Any, path: Path_, depth: int) -> Any:
        self.nodes += 1
        line, column = self.doc.position(path)
        if self.nodes > MAX_NODES:
            raise InputError(f"the document expands to more than {MAX_NODES:,} values (aliases?); refusing", line, column)
        if depth > MAX_DEPTH:
            raise InputError(f"nesting is deeper than {MAX_DEPTH} levels", line, column)
        if isinstance(value, dict):
            return self._mapping(value, path, depth)
        if isinstance(value, list):
            out = []
            for index, item in enumerate(value):
                self._mark(path + (index,), value.lc.item(index) if hasattr(value, "lc") else None)
                out.append(self.copy(item, path + (index,), depth + 1))
            return out
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise InputError(f"{value} is not a finite number; give a real value", line, column, code="SCHEMA")
            return float(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, (dt.date, dt.datetime)):
            return value.isoformat()
        return str(value)

    def _mapping(self, value: dict, path: Path_, depth: int) -> dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = key if isinstance(key, str) else str(key)
            child = path + (name,)
            self._mark(child, value.lc.key(key) if hasattr(value, "lc") else None)
            if item is None:
                self.doc.blanks.add(child)
                continue
            out[name] = self.copy(item, child, depth + 1)
        return out

    def _mark(self, path: Path_, mark: Any) -> None:
        if mark is not None:
            self.doc.positions[path] = (mark[0] + 1, mark[1] + 1)
