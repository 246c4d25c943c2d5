"""One JSON document per run, for scripts and dashboards: schemas/report.schema.json.

It names what judged the manifests (tool and rule-pack version, the rule-pack digest) and
what was judged (each manifest's sha256), the tier and why, and every result with every
status, not only failures, with the facts each rule read. Base-diff changes ride along
when `--base` was given. Strings are JSON-escaped by the encoder; non-finite numbers,
which JSON cannot carry, become strings.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring as _string  # the C function where there is one
from typing import Any, Callable

from linter import __version__
from linter.engine.changes import Changes, budget_figures
from linter.physics.values import Unknown
from linter.report import joined
from linter.report.changes import as_json
from linter.engine.review import Review
from linter.results import Result
from linter.engine.rules import RulePack, pack_digest

FORMAT_VERSION = 1


def finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def folders(pack: RulePack) -> list[str]:
    from linter.paths import data_dir

    builtin = data_dir("rules").resolve()
    return ["(built-in)" if f.resolve() == builtin else str(f) for f in pack.folders]


def dumps(document: Any) -> str:
    """A report document as indented UTF-8 JSON; what JSON cannot carry becomes text."""
    return encode(document) + "\n"


# Stands in the document for the list that is streamed; a path or manifest cannot hold NUL.
ITEMS = "\0hwlint-streamed-items\0"


class Frame:
    """`dumps(document)` cut where the one list `[ITEMS]` in `document` stands: `head` before
    its first item, each item written at `level` (its first line indented by `indent`),
    `tail` after its last item; `empty` replaces head + tail when there are no items."""

    def __init__(self, document: Any):
        text = dumps(document)
        marker = encode(ITEMS)
        at = text.index(marker)
        start = text.rindex("\n", 0, at) + 1
        self.indent, self.tail = text[start:at], text[at + len(marker):]
        self.first, self.next = self.indent.encode(), (",\n" + self.indent).encode()  # what goes before an item
        self.level = len(self.indent) // 2
        self.head = text[:start]
        self.empty = text[:text.rindex("[", 0, at)] + "[]" + self.tail[self.tail.index("]") + 1:]

    def item(self, value: Any, first: bool) -> bytes:
        """One item's text, with the separator that goes before it, UTF-8 encoded."""
        return (self.first if first else self.next) + encode_utf8(value, self.level)

    def around(self, spool: Any, count: int, write: Callable[[str | bytes], None]) -> None:
        """The whole document: head, the `count` items waiting in `spool`, tail."""
        if not count:
            write(self.empty)
            return
        write(self.head)
        spool.drain(write)
        write(self.tail)


class Spool:
    """UTF-8 text kept until the head of its document is known (the head holds totals): in
    memory up to LIMIT bytes, past that in an unnamed temporary file, so that a report of
    thousands of manifests costs disk, not memory. `drain(write)` hands it on as bytes,
    PIECE at a time from the file (a piece may end inside a character: linter.report.joined).
    A temporary file that cannot be made, written or read back is a ReportError naming
    `report` (the format) and the folder."""

    LIMIT = 1 << 20
    PIECE = 1 << 20

    def __init__(self, report: str = "JSON") -> None:
        self.report = report
        self.parts: list[bytes] = []
        self.size = 0
        self.file: Any = None

    def write(self, data: bytes) -> None:
        try:
            if self.file is not None:
                self.file.write(data)
                return
            self.parts.append(data)
            self.size += len(data)
            if self.size > self.LIMIT:
                import tempfile

                self.file = tempfile.TemporaryFile()
                self.file.write(b"".join(self.parts))
                self.parts = []
        except OSError as exc:
            raise self._failed(exc) from None

    def drain(self, write: Callable[[str | bytes], None]) -> None:
        if self.file is None:
            for part in self.parts:
                write(part)
            self.parts = []
            return
        try:
            self.file.seek(0)
            piece = self.file.read(self.PIECE)
        except OSError as exc:
            raise self._failed(exc) from None
        while piece:
            write(piece)
            try:
                piece = self.file.read(self.PIECE)
            except OSError as exc:
                raise self._failed(exc) from None
        self.close()

    def close(self) -> None:
        """Drop the temporary file; what it could not take is already reported."""
        if self.file is not None:
            file, self.file = self.file, None
            try:
                file.close()
            except OSError:
                pass

    def _failed(self, exc: OSError) -> Exception:
        import tempfile

        from linter.report import ReportError

        self.close()
        folder = tempfile.tempdir  # None: no usable temporary folder was found
        reason = exc.strerror or str(exc)
        if folder is None:
            return ReportError(f"cannot write the {self.report} report: {reason}; a report over "
                               f"{self.LIMIT >> 20} MB waits in a temporary file until its summary is known: "
                               "set TMPDIR to a writable folder with room")
        return ReportError(f"cannot write the {self.report} report: its temporary file in {folder}: {reason} (a "
                           f"report over {self.LIMIT >> 20} MB waits there until its summary is known); free space "
                           f"in {folder} or set TMPDIR to a folder with room")


class Piece:
    """JSON text made once, and its UTF-8 bytes, kept to be written again."""

    __slots__ = ("text", "utf8")

    def __init__(self, text: str):
        self.text, self.utf8 = text, text.encode()


class Encoded:
    """A value whose JSON text is made once per depth and then reused (a Piece): the
    citations of a rule are the same in every manifest of a run (about half of the JSON
    report's bytes, and nearly all of its text beyond ASCII, which is the costly part to
    encode as UTF-8)."""

    __slots__ = ("value", "pieces")

    def __init__(self, value: Any):
        self.value, self.pieces = value, {}

    def at(self, level: int) -> Piece:
        piece = self.pieces.get(level)
        if piece is None:
            piece = self.pieces[level] = Piece(encode(self.value, level))
        return piece


def encode(value: Any, level: int = 0) -> str:
    """`json.dumps(finite(value), indent=2, ensure_ascii=False, allow_nan=False, default=str)`,
    the same characters, as if written `level` deep (each line after the first indented by
    2 * level more spaces). json.dumps with an indent runs the standard library's pure-Python
    encoder, a generator per container; this one appends to one list and escapes strings in
    the C encoder's function, about three times faster on a report."""
    parts: list[str | Piece] = []
    _put(value, level, parts)
    return "".join([part if type(part) is str else part.text for part in parts])


def encode_utf8(value: Any, level: int = 0) -> bytes:
    """encode(value, level) as UTF-8: the text between the kept Pieces encoded in runs, each
    Piece's bytes as they were made."""
    parts: list[str | Piece] = []
    _put(value, level, parts)
    out: list[bytes] = []
    run: list[str] = []
    for part in parts:
        if type(part) is str:
            run.append(part)
        else:
            out.append("".join(run).encode())
            out.append(part.utf8)
            run = []
    out.append("".join(run).encode())
    return b"".join(out)


def _newline(level: int) -> str:
    while level >= len(_NEWLINES):
        _NEWLINES.append("\n" + "  " * len(_NEWLINES))
    return _NEWLINES[level]


_NEWLINES = ["\n" + "  " * i for i in range(16)]


def _scalar(value: Any) -> str | None:
    """The JSON of a string, number, true, false or null (a float JSON cannot carry as its
    text, as finite() makes it); None for anything else."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value) if math.isfinite(value) else _string(str(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return None


def _put(value: Any, level: int, parts: list[str | Piece]) -> None:
    kind = type(value)
    if kind is dict or kind is list:
        if not value:
            parts.append("{}" if kind is dict else "[]")
            return
        inner = _newline(level + 1)
        mark = len(parts)
        parts.append("{" if kind is dict else "[")
        separator = inner
        scalar = _scalar
        if kind is dict:
            for key, item in value.items():
                if type(key) is not str:  # finite() makes every key text, as str() words it
                    del parts[mark:]
                    _put({str(k): v for k, v in value.items()}, level, parts)
                    return
                text = scalar(item)
                if text is not None:
                    parts.append(separator + _string(key) + ": " + text)
                else:
                    parts.append(separator + _string(key) + ": ")
                    _put(item, level + 1, parts)
                separator = "," + inner
        else:
            for item in value:
                text = scalar(item)
                if text is not None:
                    parts.append(separator + text)
                else:
                    parts.append(separator)
                    _put(item, level + 1, parts)
                separator = "," + inner
        parts.append(_newline(level) + ("}" if kind is dict else "]"))
        return
    text = _scalar(value)
    if text is not None:
        parts.append(text)
    elif kind is Encoded:
        parts.append(value.at(level))
    elif kind is Results:
        value.put(level, parts)
    elif isinstance(value, float) and not math.isfinite(value):
        parts.append(_string(str(value)))
    elif isinstance(value, dict):
        _put({str(k): v for k, v in value.items()}, level, parts)
    elif isinstance(value, (list, tuple)):
        _put(list(value), level, parts)
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, int):  # bool is handled above, by identity, as json does
        parts.append(int.__repr__(value))
    elif isinstance(value, float):
        parts.append(float.__repr__(value))
    else:  # json.dumps's default=str
        parts.append(_string(str(value)))


def citation(key: str, references: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ref = references.get(key, {})
    return {"key": key, **{k: ref[k] for k in ("title", "publisher", "year", "section", "url") if ref.get(k) is not None}}


MONEY = ("currency", "mode", "capex", "opex_per_month", "owned_opex_per_month", "electricity_per_month",
         "colocation_per_month", "support_per_month", "staff_per_month", "opex_counted", "rent_per_month",
         "project_months", "total_cost", "payback_months", "pays_back", "order_date", "ready_date", "conversions")


def money(review: Review) -> dict[str, Any] | None:
    """Capex, opex per month by part, rent for the same capacity, total over the project,
    payback, delivery and every currency conversion of the chosen option (null where unknown);
    with options, every option's figures and the recommendation (null until it can be
    decided); null before any facts."""
    procurement = review.facts.get("procurement") if review.facts else None
    if not procurement:
        return None
    out = {key: None if isinstance(procurement.get(key), Unknown) else procurement.get(key) for key in MONEY}
    out["options"] = list(review.options)
    found = (review.facts.get("options") or {}).get("recommendation") if review.options else None
    out["recommendation"] = None if isinstance(found, Unknown) else found
    return out


def _value(value: Any, level: int) -> str:
    """encode(value, level), the common cases first."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is dict:
        return _flat(value, level) if value else "{}"
    if kind is list and not value:
        return "[]"
    text = _scalar(value)
    return text if text is not None else encode(value, level)


def _flat(value: dict[Any, Any], level: int) -> str:
    """encode(value, level) of a dict, at once when it is flat, text keys to scalars (the facts
    a rule read)."""
    inner = _newline(level + 1)
    try:  # a key that is not text, or a value _scalar leaves (None), is a TypeError here
        items = [_string(k) + ": " + (_string(v) if type(v) is str else _scalar(v)) for k, v in value.items()]
    except TypeError:
        return encode(value, level)
    return "{" + inner + ("," + inner).join(items) + _newline(level) + "}"


class Results:
    """A manifest's results, the same text as encode() makes of each as a dict of Result's
    fields in their order, made field by field: a result's rule fields (id, title, layer,
    severity) and its citations are the same in every manifest of a run, so their text is
    made once (kept in `made`, for the run) and reused."""

    __slots__ = ("results", "references", "made")

    def __init__(self, results: list[Result], references: dict[str, dict[str, Any]], made: dict[Any, Any]):
        self.results, self.references, self.made = results, references, made

    def put(self, level: int, parts: list[str | Piece]) -> None:
        """The results, `level` deep, into `parts` (as _put writes a list)."""
        if not self.results:
            parts.append("[]")
            return
        made, v, deeper = self.made, _value, level + 2
        f = "," + _newline(deeper)
        separator, end = "[" + _newline(level + 1), _newline(level + 1) + "}"
        for r in self.results:
            key = ("rule", r.rule_id, r.title, r.layer, r.severity, level)
            head = made.get(key)
            if head is None:
                head = made[key] = (f"{{{f[1:]}\"rule_id\": {v(r.rule_id, deeper)}{f}\"title\": {v(r.title, deeper)}"
                                    f"{f}\"layer\": {v(r.layer, deeper)}{f}\"severity\": {v(r.severity, deeper)}")
            key = ("cite", *r.citations)
            cited = made.get(key)
            if cited is None:
                cited = made[key] = Encoded([citation(k, self.references) for k in r.citations]).at(deeper)
            parts.append(f"{separator}{head}{f}\"status\": {v(r.status, deeper)}{f}\"message\": {v(r.message, deeper)}"
                         f"{f}\"fix\": {v(r.fix, deeper)}{f}\"citations\": ")
            parts.append(cited)
            parts.append(
                f"{f}\"file\": {v(r.file, deeper)}{f}\"line\": {v(r.line, deeper)}{f}\"column\": {v(r.column, deeper)}"
                f"{f}\"path\": {v(r.path, deeper)}{f}\"reason\": {v(r.reason, deeper)}{f}\"missing\": {v(r.missing, deeper)}"
                f"{f}\"facts\": {v(r.facts, deeper)}{f}\"waiver\": {v(r.waiver, deeper)}"
                f"{f}\"evidence\": {v(r.evidence, deeper)}{f}\"items\": {v(r.items, deeper)}{end}")
            separator = "," + _newline(level + 1)
        parts.append(_newline(level) + "]")


def manifest(review: Review, pack: RulePack, changes: Changes | None, made: dict[Any, Any],
             counts: dict[str, int]) -> dict[str, Any]:
    """One manifest's entry; `counts`: review.counts(). `made`: the results' text that is the
    same in every manifest, kept for the run (Results)."""
    out = {
        "file": review.file,
        "name": review.name,
        "digest": f"sha256:{review.digest}" if review.digest else None,
        "tier": review.tier or None,
        "tier_reason": review.tier_reason or None,
        "tier_inferred": review.tier_inferred or None,
        "unreadable": review.unreadable,
        "rule_errors": list(review.rule_errors),
        "counts": counts,
        "budget": budget_figures(review),
        "money": money(review),
        "catalog_overrides": list(review.catalog_overrides),
        "results": Results(review.results, pack.references, made),
        "deselected": list(review.deselected),
        "config": review.config or None,
        "config_files": [{"path": f["path"], "sha256": f"sha256:{f['sha256']}"} for f in review.config_files],
    }
    if changes is not None:
        out["changes"] = as_json(changes)
    return out


STATUSES = ("fail", "waived", "pending", "pass", "skipped")


def document(pack: RulePack, manifests: list[Any], count: int, totals: dict[str, int]) -> dict[str, Any]:
    """The report of `count` manifests whose results add up to `totals`; `manifests` holds
    their entries, or [ITEMS] where they are streamed."""
    return finite({
        "format": "hwlint-report",
        "format_version": FORMAT_VERSION,
        "tool": {"name": "hwlint", "version": __version__},
        "rule_pack": {
            "version": __version__,
            "digest": pack_digest(pack),
            "rules": len(pack.rules),
            "folders": folders(pack),
        },
        "summary": {"manifests": count, **totals},
        "manifests": manifests,
    })


class Stream:
    """The report written a manifest at a time (`add`, then `close`). The summary, which
    comes first, counts every manifest, so the entries wait in a Spool (memory, then a
    temporary file) until `close` writes the head, the entries and the tail: memory stays
    that of one manifest's entry, whatever the number of manifests."""

    def __init__(self, write: Callable[[str], None], pack: RulePack, changes: list[Changes] | None = None):
        self.write, self.pack = write, pack
        self.by_file = {c.file: c for c in changes or []}
        self.count = 0
        self.totals = dict.fromkeys(STATUSES, 0)
        self.frame = Frame(document(pack, [ITEMS], 0, self.totals))  # where entries go, and how deep
        self.spool = Spool()
        self.made: dict[Any, Any] = {}

    def add(self, review: Review) -> None:
        counts = review.counts()
        for status in STATUSES:
            self.totals[status] += counts[status]
        entry = manifest(review, self.pack, self.by_file.get(review.file), self.made, counts)
        self.spool.write(self.frame.item(entry, not self.count))
        self.count += 1

    def close(self) -> None:
        frame = Frame(document(self.pack, [ITEMS], self.count, self.totals))
        frame.around(self.spool, self.count, self.write)


def stream(reviews: list[Review], pack: RulePack, write: Callable[[str], None], changes: list[Changes] | None = None) -> None:
    feed(Stream(write, pack, changes), reviews)


def feed(report: Any, reviews: list[Review]) -> None:
    """Each review to a streaming report (JSON's or SARIF's), then its end; its spool is
    closed whatever happens."""
    try:
        for review in reviews:
            report.add(review)
        report.close()
    finally:
        report.spool.close()


def render(reviews: list[Review], pack: RulePack, changes: list[Changes] | None = None) -> str:
    parts: list[str | bytes] = []
    stream(reviews, pack, parts.append, changes)
    return joined(parts)
