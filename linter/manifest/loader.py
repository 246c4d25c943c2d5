"""Load a YAML file into plain data plus the source position of every key and list item.

The manifest is read from libyaml's event stream (PyYAML's C parser; PyYAML's pure-Python
parser when libyaml is missing) and built straight into plain dicts, lists and scalars,
so later stages never see YAML types. `positions` maps a path tuple such as
("node_pools", 0, "gpu", "count") to a 1-based (line, column).

Scalars follow the YAML 1.2 core schema (`yes`, `no`, `on` and `off` stay text; `~`,
`null` and an empty value are null), plus ISO dates, which become "YYYY-MM-DD" text.
`<<` merge keys are honoured. Explicit tags other than the standard ones are refused.

Everything is bounded while it is read, before any of it is kept: the file size, the
nesting depth (with what each alias brings in at the depth it is used), the number of
values, counting every use of an alias, and what aliases may add per character of the
file, so an alias "billion laughs", a chain of aliases each nesting the one before, a chain
of `<<` merges or ten thousand nested brackets end in one clear error, fast: the work is
bounded per character read.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import stat
from functools import lru_cache

from linter.record import field, record

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

Path_ = tuple  # a path into the document: keys (str) and list indexes (int)

MAX_BYTES = 5_000_000
MAX_NODES = 500_000  # values, counting each use of an alias; keys are not counted (10,000 pools and 5,000 racks fit)
MAX_DEPTH = 50  # levels of values, counting those an alias brings in where it is used
# what aliases may add, per character of the file: a `*rack` of 8 characters brings in 20 or
# so values, a bomb of aliases of aliases millions; the floor lets a short file use them freely
ALIAS_VALUES_PER_CHARACTER = 16
ALIAS_VALUES_FLOOR = 10_000
MAX_DIGITS = 300  # a longer number is not a quantity anyone means

_YAML = "tag:yaml.org,2002:"
_STR = _YAML + "str"
_TYPED_START = frozenset("~nNtTfF-+.0123456789")  # a plain scalar starting otherwise is text
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_NULLS = frozenset(("~", "null", "Null", "NULL"))  # _NULL's words (the empty text is read before)
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# Numbers as the YAML 1.2 core schema (and so yaml-language-server) reads them: no `_`
# separators, no 0b binary, no sign before 0x or 0o. YAML 1.1 read those as numbers; here
# they are text, and the schema check says how to write the number (`legacy_number`).
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+
        |[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
    re.X,
)
# what YAML 1.1 also read as a number (PyYAML's resolver, sexagesimal left out)
_INT_1_1 = re.compile(r"^[-+]?(?:0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$")
_FLOAT_1_1 = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?$|^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}$")
_DATETIME = re.compile(
    r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
    r"(?:[ \t]*(Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?$"
)


class InputError(Exception):
    """The file could not be read as YAML: the message is for the user, as is. `what` is
    the message without `advice` that only fits a manifest (a rule or catalog file that is
    empty is not helped by `hwlint init`)."""

    def __init__(self, message: str, line: int = 1, column: int = 1, code: str = "YAML", advice: str = ""):
        self.what = message
        self.message = f"{message}; {advice}" if advice else message
        super().__init__(self.message)
        self.line = line
        self.column = column
        self.code = code


@record
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


def read_bytes(path: str, inside: str | None = None, limit: int = MAX_BYTES, what: str = "manifests") -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them.

    Only a regular file is opened: a folder, a named pipe, a socket or a device is refused
    from its metadata, before it is opened. A symbolic link is followed only to a file
    inside `inside` (by default the git repository that holds the link, or the link's own
    folder outside a repository), so a committed `leak.hw.yaml -> ~/.git-credentials` is
    refused instead of read; a refusal names the kind of file, never its content."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(f"{path} is a symbolic link to a file that does not exist", code="IO") from None
        raise InputError(f"no such file: {path}", code="IO") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", code="IO") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path} is a directory with no *.hw.yaml files under it; give a manifest file, or a folder that holds some", code="IO")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path} is {_kind(info.st_mode)}, not a regular file; refusing to read it", code="IO")
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    if real != absolute:
        from linter.paths import repository_of  # only for a link: the plain path imports nothing more

        here = os.path.dirname(absolute)
        root = inside if inside is not None else str(repository_of(here) or here)
        root = os.path.realpath(root)
        if os.path.commonpath([root, real]) != root:
            raise InputError(f"{path} is a symbolic link to a file outside {_shown(root)}; hwlint follows links only "
                             "inside the repository (or the folder given): give the file itself", code="IO")
    if info.st_size > limit:
        raise InputError(_too_big(f"{info.st_size:,} bytes", limit, what), code="IO")
    try:
        # O_NOFOLLOW on the resolved name and O_NONBLOCK: a file swapped for a link or a pipe
        # after the checks above fails or does not block; fstat says what was opened.
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise InputError(f"{path} is not a regular file; refusing to read it", code="IO")
            raw = _read_all(fd, opened.st_size, limit)
        finally:
            os.close(fd)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", code="IO") from None
    if len(raw) > limit:
        raise InputError(_too_big(f"more than {limit:,} bytes", limit, what), code="IO")
    return raw


def _read_all(fd: int, size: int, limit: int) -> bytes:
    """The bytes of an open regular file, at most `limit` + 1 of them (one more is refused by
    the caller). Read in pieces the size fstat gave, not into a buffer of `limit` bytes: that
    buffer (5 MB) was mapped, shrunk and unmapped again for every manifest of a run."""
    parts, got = [], 0
    want = min(size, limit) + 1  # one byte past the size: a file that grew since fstat is seen
    while got <= limit:
        part = os.read(fd, min(want - got if want > got else 1 << 16, limit + 1 - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_stream(stream: Any, limit: int = MAX_BYTES, what: str = "manifests") -> bytes:
    """At most `limit` bytes of a stream (standard input): one byte more is refused, as a
    file of that size is, and nothing past it is read, however much the stream holds."""
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise InputError(_too_big(f"more than {limit:,} bytes", limit, what, "standard input"), code="IO")
    return raw


def _kind(mode: int) -> str:
    for test, words in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


def _shown(folder: str) -> str:
    return folder if folder != os.path.sep else "/"


def _too_big(size: str, limit: int = MAX_BYTES, what: str = "manifests", subject: str = "file") -> str:
    return f"{subject} is {size}; {what} are limited to {limit:,} bytes"


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8", line, column) from None


def load_file(path: str, inside: str | None = None, limit: int = MAX_BYTES, what: str = "manifests") -> Document:
    """The manifest (or rule file) at `path`; see `read_bytes` for what is refused."""
    return load_bytes(read_bytes(path, inside, limit, what), path, limit, what)


def load_bytes(raw: bytes, path: str, limit: int = MAX_BYTES, what: str = "manifests") -> Document:
    """A manifest's bytes (from disk, or a base version from git) as a Document named `path`."""
    if len(raw) > limit:  # read_bytes has checked a file already; a git blob has not
        raise InputError(_too_big(f"{len(raw):,} bytes", limit, what), code="IO")
    doc = load_text(decode(raw), path)
    doc.raw = raw
    return doc


def load_text(text: str, path: str = "<string>") -> Document:
    yaml = _yaml()
    doc = Document(path=path, data=None)
    doc.positions[()] = (1, 1)
    builder = None
    try:
        builder = _Builder(doc, _parser(text), yaml, text)  # PyYAML's own reader checks the text here
        doc.data = builder.document()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        separator = builder.unquoted_separator(mark.index if mark else None) if builder else None
        raise (separator or _marked(exc, text)) from None
    except InputError as exc:  # a limit, a duplicate key...: a separator before it may be the cause
        if builder and builder.separators:
            starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
            at = starts[min(exc.line, len(starts)) - 1] + exc.column - 1
            raise (builder.unquoted_separator(at) or exc) from None
        raise
    except yaml.reader.ReaderError as exc:
        line, column = offset_position(text, exc.position)
        raise InputError(f"the control character U+{exc.character:04X} is not allowed in YAML; remove it", line, column) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}") from None
    return doc


@lru_cache(maxsize=1)
def _yaml() -> Any:
    """PyYAML, imported with the patterns its modules compile as they load (the reader's and the
    resolver's, some 9 ms of a check's start) left to compile on first use: they serve its
    pure-Python loader, which runs only where libyaml is missing, and its dumper; libyaml's
    parser and this module's own scalar rules use none of them."""
    compile_now = re.compile
    re.compile = _Pattern
    try:
        import yaml
    finally:
        re.compile = compile_now
    return yaml


class _Pattern:
    """A compiled pattern, compiled when first used."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args: Any, **kwargs: Any):
        self._args, self._compiled = (args, kwargs), None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            args, kwargs = self._args
            self._compiled = _COMPILE(*args, **kwargs)
        return getattr(self._compiled, name)


_COMPILE = re.compile


def _parser(text: str) -> Any:
    """libyaml's parser when PyYAML was built with it (about 20 times faster), else PyYAML's own."""
    yaml = _yaml()
    if getattr(yaml, "__with_libyaml__", False):
        from yaml.cyaml import CParser

        return CParser(text)
    return yaml.SafeLoader(text)


def _marked(exc: Any, text: str) -> InputError:
    """A parser error in words, at the place it was found."""
    mark = exc.problem_mark or exc.context_mark
    line, column = positions_in(text)(mark) if mark else (1, 1)
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    if mark and text[mark.index : mark.index + 1] == "\t":
        return InputError("a tab character is used for indentation; YAML needs spaces", line, column)
    if "maximum nesting depth" in problem:
        return InputError(f"nesting is deeper than {MAX_DEPTH} levels", line, column)
    return InputError(f"not valid YAML: {problem}" + (f" ({context})" if context else ""), line, column)


# A file's own line breaks; YAML parsers also break lines at U+2028, U+2029 and U+0085, which
# are only characters inside a value to an editor, git and the user reading line numbers.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_UNICODE_BREAKS = re.compile("[\u2028\u2029\x85]")


def positions_in(text: str) -> Any:
    """A function from a parser mark to the 1-based (line, column) of the file's own lines
    (CR, LF, CRLF). Where the text holds no Unicode line separator the parser's count is
    the same, and is taken as it is; otherwise the mark's character offset is counted."""
    if text.isascii() or not _UNICODE_BREAKS.search(text):  # the separators are not ASCII
        return _parser_position
    import bisect

    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    def at(mark: Any) -> tuple[int, int]:
        line = bisect.bisect_right(starts, mark.index) - 1
        return line + 1, mark.index - starts[line] + 1

    return at


def _parser_position(mark: Any) -> tuple[int, int]:
    return mark.line + 1, mark.column + 1


def offset_position(text: str, index: int) -> tuple[int, int]:
    """The 1-based (line, column) of character `index`, lines as the file's own."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text, 0, index)]
    return len(starts), index - starts[-1] + 1


class _Builder:
    """Plain data from parser events, with positions, within the limits."""

    def __init__(self, doc: Document, parser: Any, yaml: Any, text: str = ""):
        self.doc = doc
        self.text = text
        # Unicode line separators outside quotes, and the quoted scalars' spans (read only
        # when the text holds such a separator at all; none is ASCII)
        self.separators = [] if text.isascii() else [m.start() for m in _UNICODE_BREAKS.finditer(text)]
        self.where = positions_in(text) if self.separators else _parser_position
        self.quoted: list[tuple[int, int]] = []
        self.parser = parser
        self.ev = yaml.events
        self.alias_event, self.scalar_event = yaml.events.AliasEvent, yaml.events.ScalarEvent
        self.sequence_start, self.sequence_end = yaml.events.SequenceStartEvent, yaml.events.SequenceEndEvent
        self.mapping_end = yaml.events.MappingEndEvent
        self.fast_where = not self.separators  # the parser's own line count is the file's
        self.nodes = 0
        self.alias_values = 0  # values brought in by aliases, within `alias_limit`
        self.alias_limit = max(ALIAS_VALUES_FLOOR, ALIAS_VALUES_PER_CHARACTER * len(text))
        self.deepest = 0  # the deepest level reached inside the anchors now open
        # positions in the order they were read while an anchor is open (its aliases copy them)
        self.marks: list[tuple[Path_, tuple[int, int]]] = []
        # anchor -> (value, size in values, [(relative path, position)], levels below it)
        self.anchors: dict[str, tuple[Any, int, list, int]] = {}
        self.open_anchors: set[str] = set()

    def document(self) -> Any:
        self.parser.get_event()  # stream start
        if self.parser.check_event(self.ev.StreamEndEvent):
            raise _empty()
        self.parser.get_event()  # document start
        value = self.value((), 0)
        self.parser.get_event()  # document end
        if not self.parser.check_event(self.ev.StreamEndEvent):
            mark = self.parser.peek_event().start_mark
            raise InputError("the file holds several YAML documents; a manifest is one document", *self.where(mark))
        problem = self.unquoted_separator()
        if problem:
            raise problem
        if value is None:
            raise _empty()
        return value

    def note_quoted(self, event: Any) -> None:
        if self.separators and event.style in ("'", '"'):
            self.quoted.append((event.start_mark.index, event.end_mark.index))

    def unquoted_separator(self, before: int | None = None) -> InputError | None:
        """U+2028, U+2029 and U+0085 only inside quoted text. Elsewhere (a plain value, a
        block scalar, a comment) YAML parsers end the line there while editors, diffs and
        reviewers see one line: `owner: alice<U+2028>tier: single-gpu` would hide a key.
        `before`: only separators before that offset (where a parser error stopped)."""
        import bisect

        starts = [start for start, _ in self.quoted]
        for index in self.separators:
            if before is not None and index >= before:
                break
            at = bisect.bisect_right(starts, index) - 1
            if at < 0 or not self.quoted[at][0] < index < self.quoted[at][1]:
                char = self.text[index]
                name = {"\u2028": "a line separator", "\u2029": "a paragraph separator", "\x85": "a next-line character"}[char]
                return InputError(
                    f"U+{ord(char):04X} ({name}) outside quotes: YAML parsers start a new line there, editors and "
                    f"diffs do not; put the text in double quotes and write the character as \\u{ord(char):04x}, "
                    "or remove it", *offset_position(self.text, index))
        return None

    def value(self, path: Path_, depth: int) -> Any:
        event = self.parser.get_event()
        return self.node(event, path, depth, *self.where(event.start_mark))

    def node(self, event: Any, path: Path_, depth: int, line: int, column: int) -> Any:
        """The value `event` starts (already read from the parser, at `line`, `column`)."""
        kind = type(event)
        if kind is self.alias_event:
            return self.alias(event.anchor, path, depth, line, column)
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _too_many(line, column)
        if depth > MAX_DEPTH:
            raise InputError(f"nesting is deeper than {MAX_DEPTH} levels", line, column)
        if self.open_anchors and depth > self.deepest:
            self.deepest = depth
        anchor = event.anchor
        if anchor is not None:
            self.open_anchors.add(anchor)
            first_mark, first_nodes = len(self.marks), self.nodes
            outer_deepest, self.deepest = self.deepest, depth
        if kind is self.scalar_event:
            if self.separators:
                self.note_quoted(event)
            text = event.value
            if event.tag is None and event.implicit[0]:  # a plain scalar, the usual case
                value = text if text and text[0] not in _TYPED_START else _plain(text, line, column)
            else:
                value = _scalar(event, line, column)
        elif kind is self.sequence_start:
            _collection_tag(event, "seq", line, column)
            value = self.sequence(path, depth)
        else:
            _collection_tag(event, "map", line, column)
            value = self.mapping(path, depth, line)
        if anchor is not None:
            self.open_anchors.discard(anchor)
            relative = [(p[len(path):], pos) for p, pos in self.marks[first_mark:] if p[: len(path)] == path]
            self.anchors[anchor] = (value, self.nodes - first_nodes + 1, relative, self.deepest - depth)
            self.deepest = max(outer_deepest, self.deepest)
        return value

    def sequence(self, path: Path_, depth: int) -> list:
        out: list = []
        get, end, positions, marks, where = self.parser.get_event, self.sequence_end, self.doc.positions, self.marks, self.fast_where
        depth += 1
        while True:
            event = get()
            if type(event) is end:
                return out
            mark = event.start_mark
            position = (mark.line + 1, mark.column + 1) if where else self.where(mark)
            child = path + (len(out),)
            positions[child] = position
            if self.open_anchors:  # positions are kept in order only for an anchor's copies
                marks.append((child, position))
            out.append(self.node(event, child, depth, *position))

    def mapping(self, path: Path_, depth: int, start_line: int) -> dict:
        out: dict[str, Any] = {}
        merged: list[dict] = []
        # the positions of keys spelled out here, kept when a merge follows (it may mark the same paths)
        written: list[tuple[Path_, tuple[int, int]]] = []
        blank_names: list[str] = []
        get, end, scalar, where = self.parser.get_event, self.mapping_end, self.scalar_event, self.fast_where
        positions, blanks, marks, separators, anchored = self.doc.positions, self.doc.blanks, self.marks, self.separators, self.open_anchors
        depth += 1
        while True:
            key = get()
            kind = type(key)
            if kind is end:
                break
            mark = key.start_mark
            line, column = position = (mark.line + 1, mark.column + 1) if where else self.where(mark)
            if kind is not scalar or key.anchor is not None:
                raise InputError("a key must be plain text (no lists, mappings, anchors or aliases as keys)", line, column)
            tag = key.tag
            if tag is not None and tag not in ("!", _STR):
                raise _unsupported(tag, line, column)
            if separators:
                self.note_quoted(key)
            name = key.value
            if name == "<<" and tag is None and key.implicit[0]:
                written += [(path + (n,), positions[path + (n,)]) for n in (*out, *blank_names)]
                merged.append(self.merge_source(path, depth - 1))
                continue
            child = path + (name,)
            if name in out or child in blanks:
                raise InputError(
                    f'duplicate key "{name}" (the mapping that starts on line {start_line} already has it); keep one',
                    line, column,
                )
            positions[child] = position
            if anchored:
                marks.append((child, position))
            event = get()
            mark = event.start_mark
            line, column = (mark.line + 1, mark.column + 1) if where else self.where(mark)
            if type(event) is scalar and event.anchor is None:  # the usual value: as node() reads it, inline
                self.nodes += 1
                if self.nodes > MAX_NODES:
                    raise _too_many(line, column)
                if depth > MAX_DEPTH:
                    raise InputError(f"nesting is deeper than {MAX_DEPTH} levels", line, column)
                if anchored and depth > self.deepest:
                    self.deepest = depth
                if separators:
                    self.note_quoted(event)
                text = event.value
                if event.tag is None and event.implicit[0]:
                    item = text if text and text[0] not in _TYPED_START else _plain(text, line, column)
                else:
                    item = _scalar(event, line, column)
            else:
                item = self.node(event, child, depth, line, column)
            if item is None:
                blanks.add(child)
                blank_names.append(name)
            else:
                out[name] = item
        for source in merged:  # keys written in this mapping win over merged ones
            for name, item in source.items():
                if name not in out and path + (name,) not in blanks:
                    out[name] = item
        if merged:
            positions.update(written)
        return out

    def mark(self, path: Path_, position: tuple[int, int]) -> None:
        self.doc.positions[path] = position
        if self.open_anchors:  # positions are kept in order only for an anchor's copies
            self.marks.append((path, position))

    def merge_source(self, path: Path_, depth: int) -> dict:
        """The mapping(s) a `<<` key merges in, as one mapping (earlier sources win). Each
        source is read as if written at this mapping's place (`path`, `depth`): its keys
        become this mapping's keys, at their positions, one level down, as they will be."""
        event = self.parser.get_event()
        line, column = self.where(event.start_mark)
        if type(event) is self.sequence_start and event.anchor is None:  # `<<: [*a, *b]`
            _collection_tag(event, "seq", line, column)
            sources = []
            while True:
                item = self.parser.get_event()
                if type(item) is self.sequence_end:
                    break
                sources.append(self.node(item, path, depth, *self.where(item.start_mark)))
        else:
            value = self.node(event, path, depth, line, column)
            sources = value if isinstance(value, list) else [value]
        combined: dict = {}
        for source in sources:
            if not isinstance(source, dict):
                raise InputError("`<<` merges mappings only (an alias of a mapping, or a list of them)", line, column)
            for name, item in source.items():
                combined.setdefault(name, item)
        return combined

    def alias(self, name: str, path: Path_, depth: int, line: int, column: int) -> Any:
        if name in self.open_anchors:
            raise InputError(f"the alias *{name} is used inside its own anchor", line, column)
        if name not in self.anchors:
            raise InputError(f"the alias *{name} has no anchor &{name} before it", line, column)
        value, size, relative, below = self.anchors[name]
        if depth + below > MAX_DEPTH:
            raise InputError(f"nesting is deeper than {MAX_DEPTH} levels here, counting the {below} levels the alias "
                             f"*{name} brings in; refusing", line, column)
        if self.open_anchors and depth + below > self.deepest:
            self.deepest = depth + below
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise _too_many(line, column)
        self.alias_values += size
        if self.alias_values > self.alias_limit:
            raise InputError(f"aliases in this file bring in more than {self.alias_limit:,} values (at most "
                             f"{ALIAS_VALUES_PER_CHARACTER} per character of the file, or {ALIAS_VALUES_FLOOR:,}); "
                             "refusing: write the values out, or use fewer aliases", line, column)
        for rel, position in relative:  # findings inside the alias point at the anchored text
            if path + rel not in self.doc.positions:
                self.mark(path + rel, position)
        return plain_copy(value)


def _too_many(line: int, column: int) -> InputError:
    return InputError(f"the document has more than {MAX_NODES:,} values (aliases count each time they are used); refusing", line, column)


def plain_copy(value: Any) -> Any:
    """A deep copy of loaded data (dicts, lists, scalars): several times faster than
    copy.deepcopy. Each use of an alias gets one, so later stages can edit it safely."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def _empty() -> InputError:
    return InputError("the file is empty (or only comments)", code="SCHEMA", advice="run `hwlint init` for a starter manifest")


def _collection_tag(event: Any, kind: str, line: int, column: int) -> None:
    if event.tag not in (None, "!", _YAML + kind):
        raise _unsupported(event.tag, line, column)


def _unsupported(tag: str, line: int, column: int) -> InputError:
    shown = "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag
    return InputError(f"the tag {shown} is not supported; write plain YAML", line, column)


def _scalar(event: Any, line: int, column: int) -> Any:
    text, tag = event.value, event.tag
    if tag is None and event.implicit[0]:
        return _plain(text, line, column)
    if tag in (None, "!", _YAML + "str"):
        return text
    typed = {"int": _INT, "float": _FLOAT, "bool": None, "null": _NULL, "timestamp": None}
    kind = tag[len(_YAML):] if tag.startswith(_YAML) else ""
    if kind not in typed:
        raise _unsupported(tag, line, column)
    value = _plain(text, line, column)
    wanted = {"int": int, "float": (int, float), "bool": bool, "null": type(None), "timestamp": str}[kind]
    if not isinstance(value, wanted) or (kind == "int" and isinstance(value, bool)):
        raise InputError(f"this value is not a valid !!{kind}", line, column)
    return float(value) if kind == "float" else value


def _plain(text: str, line: int, column: int) -> Any:
    """A plain (unquoted) scalar under the YAML 1.2 core schema, plus ISO dates."""
    if not text:
        return None
    if text[0] not in _TYPED_START:
        return text
    if text.isdigit() and text.isascii():  # a plain whole number, as _INT and _integer read it
        if len(text) > MAX_DIGITS:
            raise InputError(f"a number with {len(text):,} digits is out of range", line, column, code="SCHEMA")
        return int(text)
    whole, dot, fraction = text.partition(".")
    if dot and whole.isdigit() and fraction.isdigit() and text.isascii():  # 3.35: as _FLOAT reads it
        return _float(text, line, column)
    if text in _NULLS:
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.match(text):
        return _integer(text, line, column)
    if _FLOAT.match(text):
        return _float(text, line, column)
    if _DATE.match(text) or _DATETIME.match(text):
        return _timestamp(text, line, column)
    return text


def _integer(text: str, line: int, column: int) -> int:
    if len(text) > MAX_DIGITS:
        raise InputError(f"a number with {len(text):,} digits is out of range", line, column, code="SCHEMA")
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return int(text[2:] if base != 10 else text, base)


def legacy_number(text: str) -> int | float | None:
    """The number YAML 1.1 read in `text` (`1_6`, `0b101`, `0x_1F`, `-0x10`), which YAML 1.2
    and hwlint read as text; None when it is not one."""
    if len(text) > MAX_DIGITS or not (_INT_1_1.match(text) or _FLOAT_1_1.match(text)) or not any(c.isdigit() for c in text):
        return None
    digits = text.replace("_", "")
    sign = -1 if digits[0] == "-" else 1
    digits = digits.lstrip("+-")
    if _INT_1_1.match(text):
        base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 8 if len(digits) > 1 and digits[0] == "0" else 10)
        try:
            return sign * int(digits[2:] if digits[:2] in ("0b", "0o", "0x") else digits, base)
        except ValueError:
            return None
    try:
        value = sign * float(digits)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _float(text: str, line: int, column: int) -> float:
    lowered = text.lower()
    if "inf" in lowered or "nan" in lowered or len(lowered) > MAX_DIGITS or not math.isfinite(float(lowered)):
        raise InputError(f"{text[:60]} is not a finite number in range; give a real value", line, column, code="SCHEMA")
    return float(lowered)


def _timestamp(text: str, line: int, column: int) -> str:
    try:
        if _DATE.match(text):
            year, month, day = (int(part) for part in text.split("-"))
            return dt.date(year, month, day).isoformat()
        y, mo, d, h, mi, s, fraction, zone = _DATETIME.match(text).groups()  # type: ignore[union-attr]
        tz = None
        if zone:
            hours, _, minutes = zone.lstrip("Z+-").partition(":")
            offset = dt.timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
            tz = dt.timezone(-offset if zone.startswith("-") else offset)
        micro = int((fraction or "").ljust(6, "0")[:6])
        return dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro, tzinfo=tz).isoformat()
    except ValueError as exc:
        raise InputError(f"{text} is not a valid date ({exc})", line, column, code="SCHEMA") from None
