"""The command line without click: output, exit codes, and `hwlint check` itself.

`linter.cli.main` runs a plain `hwlint check FILE...` through here alone, so a check does
not import click (about a quarter of a warm check, bench/standins.py); every other command
line goes through click (`linter.commands`), which calls the same functions. `echo` writes
as click.echo does (ANSI codes stripped unless colour is asked for or the stream is a
terminal, flushed each time). A usage error is click's own UsageError, made only when one is
raised. The underscored names here are the command line's own, shared with linter.commands.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, NoReturn, Sequence

_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")  # the sequences click.echo strips


def echo(text: str = "", err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """`text` to standard output (standard error with `err`), as click.echo writes it. A
    stream that is not UTF-8 goes to click.echo itself, which re-wraps one that cannot
    write every character."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    if not utf8(stream):
        import click

        click.echo(text, err=err, nl=nl, color=color)
        return
    if nl:
        text += "\n"
    if text and (not color if color is not None else not _isatty(stream)):
        text = _ANSI.sub("", text)
    if text:
        stream.write(text)
    stream.flush()


def utf8(stream: Any) -> bool:
    """Whether `stream` writes UTF-8 text (click.echo writes to it as it is)."""
    encoding = str(getattr(stream, "encoding", None) or "").lower().replace("_", "-")
    return stream is not None and encoding in ("utf-8", "utf8")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:  # noqa: BLE001 - a closed or odd stream is no terminal
        return False


def usage_error(message: str) -> Exception:
    """click's UsageError (shown with the command's usage line); click is imported only here."""
    import click

    return click.UsageError(message)


SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
TIERS = ("single-gpu", "single-node", "multi-node", "large-cluster")


class Exit(Exception):
    def __init__(self, code: int):
        self.code = code


def load_config(files: Sequence[str], config: str | None, isolated: bool) -> Any:
    """The organisation config for `files` (see linter.manifest.config); a bad one ends the run."""
    from linter.manifest.config import ConfigError, for_files

    if config and isolated:
        raise usage_error("--config and --isolated contradict each other; give one")
    try:
        return for_files(list(files), config, isolated)
    except ConfigError as exc:
        echo_error(f"hwlint: config error: {exc}")
        raise Exit(2) from None


def rule_ids(value: str | None) -> set[str]:
    return {v.strip().upper() for v in (value or "").split(",") if v.strip()}


def check_selection(select: str | None, ignore: str | None, pack: Any = None, extend_select: str | None = None,
                    extend_ignore: str | None = None) -> Any:
    """--select/--ignore (ids or prefixes; --extend-select and --extend-ignore add to them) as
    a predicate on rule ids. With the pack given, an id or prefix that names no rule is a
    usage error: a typo must not check nothing. (The review itself uses `_selection`, which
    also says how a rule was deselected.)"""
    import re

    chosen, dropped = rule_ids(select) | (rule_ids(extend_select) if select else set()), rule_ids(ignore) | rule_ids(extend_ignore)
    full_id = re.compile(r"^[A-Z]{2,5}[0-9]{3}$")

    def matches(rule_id: str, patterns: set[str]) -> bool:
        return any(rule_id == p or (not full_id.match(p) and rule_id.startswith(p)) for p in patterns)

    if pack is not None:
        from linter.manifest.validate import suggest

        ids = [r.id for r in pack.rules]
        layers = sorted({r.layer for r in pack.rules})
        given = (("--select", rule_ids(select)), ("--ignore", rule_ids(ignore)), ("--extend-select", rule_ids(extend_select)),
                 ("--extend-ignore", rule_ids(extend_ignore)))
        for option, patterns in given:
            for pattern in sorted(patterns):
                if not any(matches(i, {pattern}) for i in ids):
                    hint = suggest(pattern, ids + layers, cutoff=0.5) or f"; rules are named {', '.join(layers)} and three digits"
                    raise usage_error(f'{option}: no rule is named "{pattern}"{hint} (`hwlint rules list` shows them all)')
    return lambda rule_id: (not chosen or matches(rule_id, chosen)) and not matches(rule_id, dropped)


def load_rule_pack(extra: Sequence[str], catalogs: Sequence[str] = (), cache: Any = None, why: str = "") -> Any:
    """The rule pack with the team catalogs; a broken rule or team catalog file ends the
    command (exit 2). A broken catalog is named before the rules: it is checked first.
    `cache`: a packcache.Choice (--no-cache, --cache-dir), None for the environment's; `why`:
    a last line saying what the problems mean where the folders were put together."""
    from linter.engine.rules import RuleLoadError, load_pack
    from linter.manifest.catalog import CatalogError

    try:
        return load_pack(list(extra), catalogs=list(catalogs), cache=cache)
    except RuleLoadError as exc:
        _refuse("rule", [*exc.problems, *filter(None, [why])])
    except CatalogError as exc:
        _refuse("catalog", [*exc.problems, *filter(None, [why])])


def _refuse(kind: str, problems: list[str]) -> NoReturn:
    """Each problem of a rule pack or catalog that cannot be used, then exit 2."""
    for problem in problems:
        echo_error(f"hwlint: {kind} error: {problem}")
    raise Exit(2) from None


def pack_for(config: Any, rule_dirs: Sequence[str], catalogs: Sequence[str], cache: Any = None) -> Any:
    """The rule pack a review under `config` uses: the config's rule and catalog folders
    first, then the command line's. A select or ignore pattern of the config that names no
    rule of that pack ends the command (exit 2), naming the config file, line and key."""
    from linter.manifest.config import ConfigError, check_patterns, check_severities

    pack = load_rule_pack([*config.rules, *rule_dirs], [*config.catalog, *catalogs], cache)
    try:
        check_patterns(config, [r.id for r in pack.rules], sorted({r.layer for r in pack.rules}))
        check_severities(config, {r.id: r.spec.severity for r in pack.rules})
    except ConfigError as exc:
        echo_error(f"hwlint: config error: {exc}")
        raise Exit(2) from None
    return pack


def load_team_catalog(catalogs: Sequence[str]) -> Any:
    """The built-in catalog plus the team folders; a broken team file ends the command (exit 2)."""
    from linter.manifest.catalog import CatalogError, load_catalog

    try:
        return load_catalog(tuple(str(c) for c in catalogs))
    except CatalogError as exc:
        _refuse("catalog", exc.problems)


MACHINE_FORMATS = ("json", "sarif")  # JSON escapes every control character itself


def echo_human(text: str, err: bool = False, nl: bool = True) -> None:
    """Print a human line: control characters visible, no line that starts a workflow command."""
    from linter.report.escape import human

    echo(human(text), err=err, nl=nl)


def echo_error(message: str) -> None:
    """One line on standard error; anything the user gave inside it cannot break it."""
    from linter.report.escape import path

    echo_human(path(message), err=True)


def write_report(text: str, output: str | None, fmt: str = "text", colour: bool = False) -> None:
    stream_report(lambda out: out(text), output, fmt, colour)


def stream_report(produce: Any, output: str | None, fmt: str = "text", colour: bool = False) -> None:
    """Run `produce(out)`, which hands the report to `out` in pieces (whole lines), into
    --output (a file that is not a symbolic link) or stdout (see Destination)."""
    target = Destination(output, fmt, colour)
    try:
        produce(target.write)
    finally:
        target.close()


class Destination:
    """Where one report goes: --output (a file that is not a symbolic link, opened when the
    first piece comes) or stdout. `write` takes the report in pieces (whole lines, for the
    human formats): those are escaped piece by piece (`linter.report.escape`), then coloured
    if asked. A file that cannot be written ends the command (exit 2) and sets `failed`.
    `before`: called before each piece goes to stdout (the progress line steps aside)."""

    def __init__(self, output: str | None, fmt: str = "text", colour: bool = False, before: Any = None):
        self.output, self.colour, self.before = output, colour, before
        self.clean: Any = None
        if fmt not in MACHINE_FORMATS:
            from linter.report.escape import human, terminal

            self.clean = terminal if fmt == "github" else human  # annotations are workflow commands
        self.handle: Any = None
        self.decoder: Any = None  # for UTF-8 pieces to a standard output that is not UTF-8
        self.failed = False

    def write(self, piece: str | bytes) -> None:
        if type(piece) is bytes:
            self._write_encoded(piece)
            return
        if self.clean is not None:
            piece = self.clean(piece)
        if not self.output:
            self._to_stdout(piece)
            return
        try:
            if self.handle is None:
                self.handle = self._open()
            self.handle.write(piece)
        except OSError as exc:
            self._fail(exc)

    def _write_encoded(self, piece: bytes) -> None:
        """A machine format's text, already UTF-8 (a spooled entry, or a piece of the spool's
        temporary file, which may end inside a character), as it is: it holds no escape
        sequence, JSON escapes those."""
        if self.output:
            try:
                if self.handle is None:
                    self.handle = self._open()
                self.handle.flush()
                self.handle.buffer.write(piece)
            except OSError as exc:
                self._fail(exc)
            return
        self._to_stdout(piece)

    def _to_stdout(self, piece: str | bytes) -> None:
        """A piece to standard output. One that cannot take it ends the command (exit 2) in
        words; a reader that went away (a closed pipe) is left to the caller, as ever."""
        if self.before is not None:
            self.before()
        try:
            if type(piece) is str:
                if self.colour:
                    from linter.report.text import paint

                    echo(paint(piece), nl=False, color=True)
                else:  # a machine format holds no escape sequence to strip: JSON escapes those
                    echo(piece, nl=False, color=self.clean is None)
                return
            stream = sys.stdout
            buffer = getattr(stream, "buffer", None)
            if buffer is not None and utf8(stream):
                stream.flush()
                buffer.write(piece)
                buffer.flush()
                return
            if self.decoder is None:
                import codecs

                self.decoder = codecs.getincrementaldecoder("utf-8")()
            echo(self.decoder.decode(piece), nl=False, color=True)
        except OSError as exc:
            import errno

            if exc.errno == errno.EPIPE:
                raise
            self.failed = True
            _drop_stdout()
            echo_error(f"hwlint: cannot write the report to standard output: {exc.strerror or exc}; "
                   "send it to a file with --output or FORMAT:PATH")
            raise Exit(2) from None

    def _open(self) -> Any:
        import os

        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(self.output, flags, 0o666)
        return os.fdopen(fd, "w", encoding="utf-8")

    def close(self, finished: bool = True) -> None:
        """Finish the file (created empty if nothing was written to it); not `finished` (the
        run failed): close what was begun, create nothing."""
        if not self.output or self.failed or (self.handle is None and not finished):
            return
        try:
            if self.handle is None:
                self.handle = self._open()
            handle, self.handle = self.handle, None
            handle.close()
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.failed = True
        handle, self.handle = self.handle, None
        if handle is not None:
            import contextlib

            with contextlib.suppress(OSError):
                handle.close()
        echo_error(f"hwlint: cannot write {self.output}: {exc.strerror or exc}; give a file in a folder that exists, "
               "can be written and has room")
        raise Exit(2) from None


def _drop_stdout() -> None:
    """Standard output failed: what it still holds is dropped, so that Python's flush at exit
    does not fail again and print an exception of its own."""
    import os

    try:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives until exit
    except OSError:
        pass


def use_colour(choice: str, stream: Any) -> bool:
    """Whether the text report is coloured. `--color always` / `never` decide; with `auto`, in
    this order: NO_COLOR set and not empty: no colour (https://no-color.org); FORCE_COLOR set
    and not empty, whatever its value, 0 included: colour (https://force-color.org);
    CLICOLOR_FORCE set and not 0: colour; CLICOLOR=0: no colour (both
    https://bixense.com/clicolors); else colour on a terminal whose TERM is not dumb."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    if os.environ.get("CLICOLOR") == "0":
        return False
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


def manifest_files(paths: Sequence[str], config_of: Any = None, force_exclude: bool = False) -> list[str]:
    """FILES as given, each folder replaced by the manifests found in it, each file once
    (linter.manifest.discovery); `-` stays `-` (standard input). `config_of(path)`: the
    config governing a path, whose exclusions apply (default: none but the built-in ones)."""
    import os

    from linter.manifest.discovery import DEFAULT_EXCLUDE, Excludes, excludes_of
    from linter.manifest.discovery import manifest_files as discover

    if config_of is None:
        default = Excludes(DEFAULT_EXCLUDE, os.getcwd())
        excludes_for = lambda folder: default  # noqa: E731
    else:
        excludes_for = lambda folder: excludes_of(config_of(folder))  # noqa: E731
    if list(paths).count("-") > 1:
        raise usage_error("- (standard input) may be given once")
    return discover(paths, excludes_for, force_exclude)


class Configs:
    """The configs governing each path (`for_files` of that path alone: the chain from the
    repository root down), each chain read once; one for all with --config or --isolated."""

    def __init__(self, explicit: str | None, isolated: bool):
        self.explicit, self.isolated = explicit, isolated
        self.loaded: dict[Any, Any] = {}
        self.folders: dict[Any, Any] = {}  # what each folder holds, looked up once a run

    def key(self, path: str) -> Any:
        from linter.manifest.config import chain

        return None if self.explicit or self.isolated else tuple(chain(path, self.folders))

    def __call__(self, path: str) -> Any:
        key = self.key(path)
        if key not in self.loaded:
            self.loaded[key] = load_config([path], self.explicit, self.isolated)
        return self.loaded[key]


class Group:
    """The manifests one config governs, and what their review uses: the config, its rule
    pack and its selection."""

    def __init__(self, config: Any, pack: Any, selected: Any):
        self.config, self.pack, self.selected = config, pack, selected
        self.files: list[str] = []
        self.tally = Tally()


def _selection(config: Any, select: str | None, ignore: str | None, extend_select: str | None,
               extend_ignore: str | None) -> Any:
    """linter.manifest.config.selection, with --extend-select adding to whichever select is
    in effect (none: every rule runs anyway) and --extend-ignore adding to the ignored."""
    from linter.manifest.config import selection

    chosen = selection(config, select, ignore)
    if chosen.select:
        chosen.select += [(p, "--extend-select {p}") for p in sorted(rule_ids(extend_select))]
    chosen.ignore += [(p, "--extend-ignore {p}") for p in sorted(rule_ids(extend_ignore))]
    return chosen


def _groups(paths: list[str], stdin_name: str, configs: Configs, build: Any) -> tuple[list[Group], list[Group]]:
    """The groups of `paths` by governing config, in the order first met, and each path's
    group (standard input goes by the name it is reported under). `build(config)` makes a
    Group. No paths: one group, for the current folder."""
    made: dict[Any, Group] = {}
    of: list[Group] = []
    for path in paths or ["."]:
        where = (stdin_name if stdin_name != "-" else ".") if path == "-" else path
        key = configs.key(where)
        if key not in made:
            made[key] = build(configs(where))
        made[key].files += [path] if paths else []
        of.append(made[key])
    return list(made.values()), of if paths else []


def _report_pack(groups: list[Group], rule_dirs: Sequence[str], catalogs: Sequence[str], cache: Any) -> Any:
    """The pack the reports describe rules from: the one pack when every group uses the same
    rule and catalog folders, else one holding all of them."""
    folders = {(tuple(g.config.rules), tuple(g.config.catalog)) for g in groups}
    if len(folders) == 1:
        return groups[0].pack
    rules = [f for g in groups for f in g.config.rules]
    found = [c for g in groups for c in g.config.catalog]
    configs = ", ".join(dict.fromkeys(str(g.config.path) for g in groups if g.config.path))
    why = (f"each config's folders load on their own, but one run's reports describe every rule and part by its "
           f"name, so the folders of the configs reviewed together ({configs}) must not define one twice: rename "
           "one, or check each config's files in a run of its own")
    return load_rule_pack([*dict.fromkeys(rules), *rule_dirs], [*dict.fromkeys(found), *catalogs], cache, why)


def _show_settings(groups: list[Group], outputs: list[tuple[str, str | None]], tier: str | None,
                   fail_on: str | None, cache: Any) -> None:
    """--show-settings: what a review of each group would use, as `name: value` lines."""
    from linter.engine.packcache import directory
    from linter.manifest.config import settings
    from linter.manifest.config import shown as described_value
    from linter.manifest.discovery import excludes_of
    from linter.report.escape import path as shown

    where = directory(cache)
    for group in groups:
        config = group.config
        files = group.files
        named = (f"{shown(files[0])}" + (f" and {len(files) - 1} more" if len(files) > 1 else "")) if files else "no manifests"
        excludes = excludes_of(config)
        lines = [
            f"Settings for {named}:",
            f"  config: {shown(config.path) if config.path else 'none'}",
            "  config chain: " + (", then ".join(f"{shown(p)} (sha256:{d})" for p, d in config.chain) or "none"),
            "  values from: " + (", ".join(f"{key}={described_value(value)} ({shown(config.origin.get(key, '?'))})"
                                           for key, value in settings(config).items()) or "no config: the defaults"),
            f"  fail_on: {fail_on or config.fail_on or 'error'}",
            f"  tier: {tier or 'as each manifest declares, else inferred'}",
            "  select: " + (", ".join(f"{p} ({how.format(p=p)})" for p, how in group.selected.select) or "every rule"),
            "  ignore: " + (", ".join(f"{p} ({how.format(p=p)})" for p, how in group.selected.ignore) or "nothing"),
            f"  rule folders: {', '.join(['built-in', *(shown(str(f)) for f in group.pack.folders[1:])])}",
            f"  catalog folders: {', '.join(['built-in', *(shown(str(f)) for f in group.pack.catalog_folders)])}",
            f"  policy floors: {', '.join(f'{k}={v}' for k, v in config.policy.items()) or 'none'}",
            f"  exclude: {', '.join(excludes.patterns) or 'nothing'}"
            + (f" (paths from {shown(excludes.folder)})" if excludes.paths else ""),
            f"  docs_url: {config.docs_url or 'none'}",
            f"  cache: {shown(str(where)) if where else 'off'}",
            "  reports: " + ", ".join(f"{fmt} to {shown(path) if path else 'standard output'}" for fmt, path in outputs),
        ]
        echo_human("\n".join(lines))


class Progress:
    """`reviewed 120/600 files` on standard error, rewritten in place, for long runs on a
    terminal; gone when the run ends, so the report is all that stays."""

    MIN_FILES = 20

    def __init__(self, total: int, enabled: bool):
        import time

        self.total, self.enabled, self.clock, self.shown = total, enabled and total >= self.MIN_FILES, time.monotonic, 0.0
        self.visible = False

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if done == self.total or now - self.shown >= 0.1:
            self.shown, self.visible = now, True
            echo(f"\rhwlint: reviewed {done}/{self.total} files", nl=False, err=True)

    def hide(self) -> None:
        """Clear the line before the report writes to the same terminal; a later count redraws it."""
        if self.visible:
            echo("\r\033[K", nl=False, err=True)
            self.visible = False

    def close(self) -> None:
        if self.enabled:
            echo("\r\033[K", nl=False, err=True)


def same_file(a: str, b: str) -> bool:
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def check_targets(paths: list[str | None], inputs: list[str], rule_dirs: Sequence[str] = (), force: bool = False,
                  manifest: bool = False) -> None:
    """Nothing is written over a file the run reads or would read: an input (`inputs`, and the
    files in `rule_dirs`: rule and catalog folders), a config file, or (with `manifest` false:
    a report) a name hwlint would read as a manifest. Nothing is written through a symbolic
    link, no two writes go to one file, an existing file is replaced only with `force`, and a
    manifest holding sign-offs never. Each is a usage error before anything is written."""
    import os

    from linter.paths import data_dir
    from linter.report.escape import path as shown

    named = [p for p in paths if p]
    kind = "the file" if manifest else "the report file"
    built_in = [str(data_dir(name)) for name in ("rules", "catalog")]
    for index, target in enumerate(named):
        if os.path.islink(target):
            raise usage_error(f"{kind} {shown(target)} is a symbolic link; hwlint does not write through links: "
                              "name the file itself")
        if os.path.exists(target) and not os.path.isfile(target):
            raise usage_error(f"{kind} {shown(target)} is not a regular file")
        for other in named[:index]:
            if same_file(target, other):
                raise usage_error(f"two reports would be written to {shown(target)}; give each its own file")
        for given in [*inputs, *_files_in([*rule_dirs, *built_in])]:
            if same_file(target, given):
                also = f" ({shown(given)})" if shown(given) != shown(target) else ""
                raise usage_error(f"{kind} {shown(target)} is an input{also}; hwlint never writes over a file it reads: "
                                  "choose another file")
        name = os.path.basename(target)
        if name in _CONFIG_NAMES:
            raise usage_error(f"{kind} {shown(target)} is named as a config file, which hwlint reads: choose another name")
        if not manifest and name.endswith((".hw.yaml", ".hw.yml")):
            raise usage_error(f"{kind} {shown(target)} is named as a manifest, which `hwlint check` would read as one: "
                              "choose another name")
        if os.path.exists(target):
            if _holds_signoffs(target):
                raise usage_error(f"{shown(target)} is a manifest holding sign-offs; hwlint never writes over one, "
                                  "even with --force: choose another file")
            if not force:
                raise usage_error(f"{shown(target)} exists; use --force to overwrite it")


_CONFIG_NAMES = (".hwlint.yaml", "pyproject.toml")  # linter.manifest.config.NAMES, without importing it


def _files_in(folders: Sequence[str]) -> list[str]:
    import os

    return [os.path.join(d, f) for d in folders if os.path.isdir(d) for f in os.listdir(d)]


def read_by_config(config: Any) -> list[str]:
    """The files the config in effect makes the run read: every file of its chain, its rule
    and catalog folders' files, its allowed-signers file."""
    chain = [p for p, _ in config.chain] or [p for p in (config.path,) if p]
    return [*chain, *(p for p in (config.allowed_signers,) if p)] + _files_in([*config.rules, *config.catalog])


def _holds_signoffs(path: str) -> bool:
    """Whether the file at `path` is a manifest with sign-offs recorded: one that loads with a
    non-empty `signoffs:`, or, when it does not load, has a `signoffs:` key at all."""
    import re

    from linter.manifest.loader import MAX_BYTES, InputError, load_bytes

    try:
        with open(path, "rb") as handle:
            raw = handle.read(2 * MAX_BYTES)
    except OSError:
        return False
    try:
        data = load_bytes(raw, path).data
    except InputError:
        return re.search(rb"(?m)(?:^|[{,])[ \t]*[\"']?signoffs[\"']?[ \t]*:", raw) is not None
    return isinstance(data, dict) and bool(data.get("signoffs"))


def outputs_of(formats: tuple[str, ...], output: str | None, allowed: tuple[str, ...] | None = None) -> list[tuple[str, str | None]]:
    """--format values (FORMAT or FORMAT:PATH, repeatable) as [(format, path or None for stdout)];
    `check_targets` clears the files they name."""
    from linter.report import TargetError, targets

    try:
        chosen = targets(formats, output)
    except TargetError as exc:
        raise usage_error(str(exc)) from None
    for name, _ in chosen:
        if allowed and name not in allowed:
            raise usage_error(f"format {name} is not available here; choose from {', '.join(allowed)}")
    return chosen


def _cleared(paths: list[str | None], inputs: list[str], rule_dirs: list[str], force: bool) -> bool:
    try:
        check_targets(paths, inputs, rule_dirs, force)
    except Exception:  # noqa: BLE001 - a usage error: the files may not be written
        return False
    return True


def report_files(outputs: list[tuple[str, str | None]], output: str | None) -> list[str | None]:
    """The files `outputs` (and --output, when no format took it) write."""
    return [p for _, p in outputs] + ([output] if output and all(p != output for _, p in outputs) else [])


def base_changes(reviews: list[Any], ref: str, pack: Any, tier: str | None, selected: Any, config: Any,
             sources: dict[str, bytes] | None = None, judge: Any = None) -> list[Any]:
    from linter.engine.changes import BaseError, against_ref

    try:
        return against_ref(reviews, ref, pack, tier, selected, config, sources, judge)
    except BaseError as exc:
        echo_error(f"hwlint: {exc}")
        raise Exit(2) from None


class Tally:
    """What the exit code needs of the reviews, counted as they come."""

    def __init__(self) -> None:
        self.broken = False  # a file that could not be reviewed, or a rule that failed to run
        self.worst = -1  # the rank of the most severe failing result

    def add(self, review: Any) -> None:
        if review.unreadable or review.rule_errors:
            self.broken = True
        for res in review.results:
            if res.status == "fail" and SEVERITY_RANK[res.severity] > self.worst:
                self.worst = SEVERITY_RANK[res.severity]

    def code(self, fail_on: str) -> int:
        return 2 if self.broken else 1 if self.worst >= SEVERITY_RANK[fail_on] else 0


def exit_code(reviews: list[Any], fail_on: str) -> int:
    tally = Tally()
    for review in reviews:
        tally.add(review)
    return tally.code(fail_on)


def _docs_url(given: str | None, config: Any) -> str | None:
    """Where docs/rules.md is published: --docs-url (checked here), else the config's docs_url."""
    if given is None:
        return config.docs_url
    from linter.report.sarif import docs_address

    try:
        return docs_address(given)
    except ValueError as exc:
        raise usage_error(f"--docs-url: {exc}") from None


def run_check(files: Sequence[str] = (), formats: tuple[str, ...] = (), output: str | None = None, tier: str | None = None,
              select: str | None = None, ignore: str | None = None, rule_dirs: tuple[str, ...] = (),
              catalogs: tuple[str, ...] = (), fail_on: str | None = None, verbose: bool = False, base: str | None = None,
              stdin_filename: str | None = None, exit_zero: bool = False, quiet: bool = False, statistics: bool = False,
              colour: str = "auto", config_file: str | None = None, isolated: bool = False,
              max_chars: int | None = None, docs_url: str | None = None, sarif_category: str | None = None,
              extend_select: str | None = None, extend_ignore: str | None = None, force_exclude: bool = False,
              show_files: bool = False, show_settings: bool = False, no_cache: bool = False,
              cache_dir: str | None = None, force: bool = False) -> None:
    """`hwlint check`: review FILES (none: the current folder), each under the config that
    governs it, write the reports, end with Exit(code)."""
    import contextlib

    from linter.engine.bulk import review_files
    from linter.engine.packcache import Choice
    from linter.report import write, writer

    if config_file and isolated:
        raise usage_error("--config and --isolated contradict each other; give one")
    files = tuple(files) or (".",)
    configs = Configs(config_file, isolated)
    paths = manifest_files(files, configs, force_exclude)
    if show_files:
        for path in paths:
            echo_human(path)
        raise Exit(0)
    outputs = outputs_of(formats, output)
    written, read = report_files(outputs, output), [*files, *paths, *filter(None, [config_file])]
    folders = [*rule_dirs, *catalogs]
    cache = Choice(not no_cache, cache_dir)
    targets: list[Destination] = []
    writers: list[Any] = []
    reviewed_all = cleared = False
    try:
        stdin_name = stdin_filename or "-"

        def build(config: Any) -> Group:
            pack = pack_for(config, rule_dirs, catalogs, cache)
            check_selection(select, ignore, pack, extend_select, extend_ignore)
            return Group(config, pack, _selection(config, select, ignore, extend_select, extend_ignore))

        groups, group_of = _groups(paths, stdin_name, configs, build)
        check_targets(written, [*read, *(f for g in groups for f in read_by_config(g.config))], folders, force)
        cleared = True
        if show_settings:
            _show_settings(groups, outputs, tier, fail_on, cache)
            raise Exit(0)
        if not paths and not quiet:
            from linter.manifest.discovery import SUFFIXES
            from linter.report.escape import path as shown

            echo_human(f"hwlint: no manifests ({', '.join('*' + s for s in SUFFIXES)}) in {', '.join(map(shown, files))}; "
                  "nothing to review", err=True)
        pack = _report_pack(groups, rule_dirs, catalogs, cache)
        docs_url = _docs_url(docs_url, groups[0].config)
        evidence = any(fmt == "json" for fmt, _ in outputs)  # only the JSON report shows the evidence in words
        # the text report shows where a result is only for what fails (and, verbose, what is pending),
        # and --base compares failures alone (engine/changes.py); every other report reads every place
        place_all = verbose or any(fmt != "text" for fmt, _ in outputs)
        on_disk = [p for p in paths if p != "-"]
        progress = Progress(len(on_disk), not quiet and sys.stderr.isatty())
        options = dict(verbose=verbose, quiet=quiet, statistics=statistics, max_chars=max_chars, docs_url=docs_url,
                       sarif_category=sarif_category)
        # Each review goes to every report as it comes and is then dropped: a report that needs
        # them all at once (GitHub annotations, any with --base) gets the kept list at the end
        # instead.
        for fmt, path in outputs:
            targets.append(Destination(path, fmt, fmt == "text" and path is None and use_colour(colour, sys.stdout),
                                       progress.hide if path is None and _isatty(sys.stdout) else None))
            writers.append(writer(fmt, pack, targets[-1].write, **options) if base is None else None)
        kept: list[Any] | None = [] if None in writers else None
        read_in: dict[str, bytes] = {}  # standard input, by the name it is reported under
        reviewed = _reviewed(paths, group_of, review_files, progress, tier, stdin_name, read_in, evidence, place_all)
        try:
            for group, review in reviewed:
                group.tally.add(review)
                if kept is not None:
                    kept.append(review)
                for report in writers:
                    if report is not None:
                        report.add(review)
        finally:
            reviewed.close()
            progress.close()
        reviewed_all = True
        changes = _changes_by_group(kept or [], group_of, base, tier, read_in,
                                    None if config_file or isolated else build) if base is not None else None
        for (fmt, path), report, target in zip(outputs, writers, targets):
            if report is None:
                write(fmt, kept or [], pack, target.write, changes=changes, **options)
            else:
                report.close()
            target.close()
    except (Exit, Exception) as exc:
        for target in targets:
            with contextlib.suppress(Exit):
                target.close(finished=False)
        if isinstance(exc, Exit) and (reviewed_all or any(t.failed for t in targets) or show_settings):
            raise  # the reports are written, or one could not be: the exit code says the rest
        if not cleared and not (isinstance(exc, Exit) and _cleared(written, read, folders, force)):
            raise  # nothing is written before the reports' files are cleared (a broken config names none of its own)
        # code scanning must hear that this run failed, not see an empty, successful one
        from linter.report import ReportError
        from linter.report.sarif import failed

        unwritable = isinstance(exc, ReportError)  # a report's temporary file: words for the user, exit 2
        if unwritable:
            echo_error(f"hwlint: {exc}")
        why = "the rule pack or the input could not be used (see the job log)" if isinstance(exc, Exit) else \
            str(exc) if unwritable else f"internal error: {type(exc).__name__}: {exc}"
        for fmt, path in outputs:
            if fmt == "sarif" and path:
                write_report(failed(f"hwlint could not review the manifests: {why}", sarif_category), path, "sarif")
        if unwritable:
            raise Exit(2) from None
        raise
    finally:
        for report in writers:  # a report that waited in a temporary file and was not finished
            spool = getattr(report, "spool", None)
            if spool is not None:
                spool.close()
    code = max(group.tally.code(fail_on or group.config.fail_on or "error") for group in groups)
    code = max(code, relaxed_code(changes or [], fail_on))
    raise Exit(0 if exit_zero and code == 1 else code)


def relaxed_code(changes: list[Any], fail_on: str | None) -> int:
    """1 when a finding passes only because a setting was relaxed and fails at --fail-on (else
    the base config's fail_on, else error), as an introduced finding fails the run; and when
    the config relaxed fail_on itself, 1 for any finding at the base's level; else 0."""
    for change in changes:
        if change is None:
            continue
        threshold = SEVERITY_RANK[fail_on or change.base_fail_on or "error"]
        failing = [r for r, _, _ in change.by_relaxation]
        if fail_on is None and any(c.key == "fail_on" and c.direction == "relaxes" for c in change.config):
            failing += [*change.introduced, *change.still_open]
        if any(SEVERITY_RANK[r.severity] >= threshold for r in failing):
            return 1
    return 0


def _reviewed(paths: list[str], group_of: list[Group], review_files: Any, progress: Progress, tier: str | None,
              stdin_name: str, read_in: dict[str, bytes], evidence: bool, place_all: bool = True) -> Any:
    """(group, review) for each of `paths`, in order: each run of paths under one config is
    reviewed as one batch (worker processes may take it), standard input here."""
    done = 0
    at = 0
    while at < len(paths):
        group = group_of[at]
        end = at
        while end < len(paths) and group_of[end] is group:
            end += 1
        batch = paths[at:end]
        on_disk = [p for p in batch if p != "-"]
        reviewed = review_files(on_disk, group.pack, tier, group.selected, config=group.config, evidence=evidence,
                                progress=lambda n, before=done: progress(before + n), place_all=place_all)
        try:
            for path in batch:
                if path == "-":
                    yield group, _review_stdin(stdin_name, group.pack, tier, group.selected, group.config, read_in,
                                               evidence, place_all)
                else:
                    yield group, next(reviewed)
        finally:
            reviewed.close()
        done += len(on_disk)
        at = end


def _changes_by_group(reviews: list[Any], group_of: list[Group], base: str, tier: str | None,
                      read_in: dict[str, bytes], build: Any = None) -> list[Any]:
    """The base diff of each review, each under its own group's pack, selection and config;
    with `build` (a config -> its Group), each base version under the config that governed it
    at the base (not with --config or --isolated: then both are judged under that one)."""
    out: list[Any] = [None] * len(reviews)
    built: dict[Any, Any] = {}

    def judge(config: Any) -> tuple[Any, Any]:
        if id(config) not in built:
            try:
                built[id(config)] = (config, build(config))  # the config kept, so its id stays its own
            except Exit:
                echo_error(f"hwlint: (that is the config {config.path or '(none)'} as it was at --base {base}, which judges "
                       "the base version; its rule and catalog folders are read from the working tree)")
                raise
        group = built[id(config)][1]
        return group.pack, group.selected

    for group in dict.fromkeys(group_of):
        at = [i for i, g in enumerate(group_of) if g is group]
        found = base_changes([reviews[i] for i in at], base, group.pack, tier, group.selected, group.config, read_in,
                         judge if build is not None else None)
        for i, change in zip(at, found):
            out[i] = change
    return out


def _review_stdin(name: str, pack: Any, tier: str | None, selected: Any, config: Any = None,
                  read_in: dict[str, bytes] | None = None, evidence: bool = False, place_all: bool = True) -> Any:
    from linter.engine.review import not_loaded, review_document
    from linter.manifest.loader import InputError, load_bytes, read_stream

    if read_in is not None:
        read_in[name] = b""  # refused input is compared as nothing, never read again from a file
    try:
        raw = read_stream(sys.stdin.buffer)  # the file size limit, and nothing read past it
        if read_in is not None:
            read_in[name] = raw
        doc = load_bytes(raw, name)
    except InputError as exc:
        return not_loaded(name, exc)
    return review_document(doc, pack, tier, selected, config, evidence=evidence, place_all=place_all)


def list_rules(rule_dirs: Sequence[str]) -> None:
    """`hwlint rules list`: one line per rule: id, severity, tiers, title."""
    pack = load_rule_pack(rule_dirs)
    for rule in pack.rules:
        tiers = "all tiers" if rule.spec.tiers == "all" else ",".join(rule.spec.tiers)
        echo_human(f"{rule.id}  {rule.spec.severity:<7}  {tiers:<40}  {rule.spec.title}")
