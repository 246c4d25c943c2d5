"""Reporters: each turns a list of Reviews into text. Registered by format name.

A reporter is `render(reviews, **options) -> str`; it names, as keyword parameters, the
options it wants from `OPTIONS` below (`render` passes only those), so adding a format is
one line in REGISTRY and one module.

`--format` may be given several times; each value is `FORMAT` (to --output, or stdout) or
`FORMAT:PATH` (to that file; `-` is stdout). `targets` parses them.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

# format name -> "module:function"; imported only when that format is asked for
REGISTRY: dict[str, str] = {
    "text": "linter.report.text:render",
    "markdown": "linter.report.markdown:render",
    "json": "linter.report.json:render",
    "sarif": "linter.report.sarif:render",
    "github": "linter.report.github:render",
    "comment": "linter.report.comment:render",
}

# What a reporter may ask for by naming it as a keyword parameter:
#   pack        the RulePack (rules, references, folders)
#   references  pack.references;  rule_count  len(pack.rules)
#   verbose     --verbose;        changes     [linter.engine.changes.Changes] when --base was given, else None
#   quiet       --quiet;          statistics  --statistics
#   max_chars   --max-chars (None when not given)
#   docs_url    where docs/rules.md is published (--docs-url, else the config's docs_url; None: unknown)
#   sarif_category  --sarif-category: the code-scanning category (None: the upload action chooses)


def reported(reviews: list[Any]) -> Iterator[Any]:
    """The results that machine formats (SARIF, GitHub) report: failures and waived failures,
    one per failing item (Result.located)."""
    for review in reviews:
        for r in review.results:
            if r.status in ("fail", "waived"):
                yield from r.located()


class ConfigsInEffect:
    """The configs in effect in a run, counted as the reviews come: each chain of config
    files ((path, sha256), the root first; () is no config) and how many manifests it governed."""

    def __init__(self) -> None:
        self.counts: dict[tuple[tuple[str, str], ...], int] = {}

    def add(self, review: Any) -> None:
        if review.digest or review.config_files:  # a file that could not be read was governed by nothing yet
            chain = tuple((f["path"], f["sha256"]) for f in review.config_files)
            self.counts[chain] = self.counts.get(chain, 0) + 1


def reporter(name: str) -> Callable[..., str]:
    module, function = REGISTRY[name].split(":")
    return getattr(import_module(module), function)


def render(name: str, reviews: list[Any], pack: Any, verbose: bool = False, changes: list[Any] | None = None,
           quiet: bool = False, statistics: bool = False, max_chars: int | None = None, docs_url: str | None = None,
           sarif_category: str | None = None) -> str:
    """Render `reviews` in format `name`; with `changes`, text and Markdown gain the base diff."""
    parts: list[str | bytes] = []
    write(name, reviews, pack, parts.append, verbose, changes, quiet, statistics, max_chars, docs_url, sarif_category)
    return joined(parts)


def joined(pieces: list[str | bytes]) -> str:
    """The text of a report handed on in pieces: text, or a machine format's UTF-8 bytes
    (a piece of its spool's temporary file may end inside a character)."""
    if all(type(piece) is str for piece in pieces):
        return "".join(pieces)
    return b"".join(piece if type(piece) is bytes else piece.encode() for piece in pieces).decode()


def _options(function: Callable[..., Any], pack: Any, verbose: bool = False, changes: list[Any] | None = None,
             quiet: bool = False, statistics: bool = False, max_chars: int | None = None,
             docs_url: str | None = None, sarif_category: str | None = None) -> dict[str, Any]:
    """The options `function` names, of those OPTIONS offers."""
    offered = {
        "pack": pack, "references": pack.references, "rule_count": len(pack.rules),
        "verbose": verbose, "changes": changes, "quiet": quiet, "statistics": statistics, "max_chars": max_chars,
        "docs_url": docs_url, "sarif_category": sarif_category,
    }
    wanted = _parameters(function)
    return {k: v for k, v in offered.items() if k in wanted}


def _parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    """The names `function` (a reporter function, or a Stream class through its __init__)
    takes: read from its code, since inspect costs some 5 ms to import."""
    code = (function.__init__ if isinstance(function, type) else function).__code__  # type: ignore[misc]
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def writer(name: str, pack: Any, out: Callable[[str], None], verbose: bool = False, changes: list[Any] | None = None,
           quiet: bool = False, statistics: bool = False, max_chars: int | None = None,
           docs_url: str | None = None, sarif_category: str | None = None) -> Any:
    """A report of format `name` written as the reviews come: `.add(review)` for each, in
    order, then `.close()`; memory stays that of one manifest, not of the run. A format whose
    module has a `Stream` class (text, JSON, SARIF, Markdown, comment) has one; None for the
    others, and with `changes` (the base diff needs every review first): give those `write`
    the whole list."""
    stream = getattr(import_module(REGISTRY[name].split(":")[0]), "Stream", None)
    if stream is None or changes is not None:
        return None
    return stream(out, **_options(stream, pack, verbose, changes, quiet, statistics, max_chars, docs_url, sarif_category))


def write(name: str, reviews: list[Any], pack: Any, out: Callable[[str], None], verbose: bool = False,
          changes: list[Any] | None = None, quiet: bool = False, statistics: bool = False,
          max_chars: int | None = None, docs_url: str | None = None, sarif_category: str | None = None) -> None:
    """`render`, handed to `out` in pieces: a format whose module has `stream(reviews, write,
    **options)` (JSON, SARIF) writes one manifest or finding at a time, so a report of
    thousands of manifests is never held whole in memory."""
    function = reporter(name)
    options = _options(function, pack, verbose, changes, quiet, statistics, max_chars, docs_url, sarif_category)
    before = after = ""
    if changes is not None and "changes" not in options and name in ("text", "markdown") and not (quiet and name == "text"):
        from linter.report import changes as diff

        if name == "text":
            after = diff.render_text(changes)
        else:
            before = diff.render_markdown(changes)
    streamed = getattr(import_module(REGISTRY[name].split(":")[0]), "stream", None)
    if before:
        out(before)
    if streamed is not None:
        streamed(reviews, write=out, **options)
    else:
        out(function(reviews, **options))
    if after:
        out(after)


class TargetError(ValueError):
    """A --format value that cannot be used; the message is for the user."""


class ReportError(Exception):
    """A report that cannot be written (its temporary file, say); the message is for the user."""


def targets(values: tuple[str, ...] | list[str], output: str | None) -> list[tuple[str, str | None]]:
    """[(format, path or None for stdout)] from the --format values and --output."""
    out: list[tuple[str, str | None]] = []
    for value in values or ("text",):
        name, sep, path = value.partition(":")
        if not sep or name not in REGISTRY:  # a bare name (a Windows path's drive letter is no format)
            name, path = value, None
            if name not in REGISTRY:
                raise TargetError(f"unknown format {value!r}; choose from {', '.join(REGISTRY)} (optionally FORMAT:PATH)")
            path = output
        elif not path:
            raise TargetError(f"--format {value}: give a file after the colon, or - for standard output")
        out.append((name, None if path == "-" else path))
    to_stdout = [name for name, path in out if path is None]
    if len(to_stdout) > 1:
        raise TargetError(
            f"formats {', '.join(to_stdout)} would all go to standard output; give each but one a file as FORMAT:PATH"
        )
    return out


def render_diff(fmt: str, changes: Any, new: Any, pack: Any) -> str:
    """`hwlint diff` output: the changes alone (text, Markdown), or the JSON report of NEW with them."""
    if fmt == "json":
        return render("json", [new], pack, changes=[changes])
    from linter.report import changes as diff

    if fmt == "markdown":
        return diff.render_markdown([changes]).removesuffix("\n---\n\n")
    return diff.render_text([changes])
