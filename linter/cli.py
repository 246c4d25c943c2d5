"""The command line's entry point: `main(argv) -> int`, the exit code.

A plain `hwlint check [FILE...]` (files, and the flags -q, -v, --exit-zero, --statistics,
--force-exclude, --no-cache) and a plain `hwlint rules list` run here without click: they
are the commands a pre-commit hook
or an editor starts over and over, and importing click is about a quarter of a warm check (docs/architecture.md). Anything else
(other options, `-` for standard input, --help, other commands) goes through click in
`linter.commands`, which runs the same functions of `linter.console`: the output, the exit
code and the messages are the same either way.

Exit codes: 0 no failure at the --fail-on level; 1 failures; 2 usage error, unreadable
input, a broken rule pack or an internal error. No traceback ever reaches the user.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

# check's flags the plain path takes, and the run_check argument each sets
_CHECK_FLAGS = {"-q": "quiet", "--quiet": "quiet", "-v": "verbose", "--verbose": "verbose",
                "--exit-zero": "exit_zero", "--statistics": "statistics", "--force-exclude": "force_exclude",
                "--no-cache": "no_cache"}


def main(argv: Sequence[str] | None = None) -> int:
    from linter.console import echo_error

    if os.environ.get("HWLINT_TODAY"):  # a usage error before any command runs, not an internal one
        from linter.engine.review import today

        try:
            today()
        except ValueError as exc:
            echo_error(f"hwlint: {exc}")
            return 2
    args = list(sys.argv[1:] if argv is None else argv)
    plain = _plain(args)
    if plain is not None:
        return _run_plain(plain, argv)
    from linter.commands import run

    return run(argv)


def _plain(args: list[str]) -> Callable[[], None] | None:
    """The command, when `args` is one the plain path runs as click would; else None."""
    from linter import console

    if not all(console.utf8(stream) for stream in (sys.stdout, sys.stderr)):
        return None  # click re-wraps a stream that cannot write all text; leave that to it
    if args == ["rules", "list"]:
        return lambda: console.list_rules(())
    if not args or args[0] != "check":
        return None
    files: list[str] = []
    flags: dict[str, bool] = {}
    for arg in args[1:]:
        if arg in _CHECK_FLAGS:
            flags[_CHECK_FLAGS[arg]] = True
        elif arg.startswith("-"):  # every other option, `-`, `--`
            return None
        else:
            files.append(arg)
    return lambda: console.run_check(tuple(files), **flags)


class _Unbroken:
    """A stream whose flush ignores a closed pipe (the reader went away), as click leaves them."""

    def __init__(self, stream: Any):
        self._stream = stream

    def flush(self) -> None:
        import errno

        try:
            self._stream.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _run_plain(command: Callable[[], None], argv: Sequence[str] | None) -> int:
    import errno

    from linter.console import Exit, echo, echo_error

    try:
        command()
    except Exit as done:
        return done.code
    except (EOFError, KeyboardInterrupt):
        echo(err=True)  # the blank line closes the terminal's ^C echo
        echo("hwlint: aborted", err=True)
        return 2
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            echo_error(f"hwlint: internal error: {type(exc).__name__}: {exc} (please report this)")
            return 2
        sys.stdout, sys.stderr = _Unbroken(sys.stdout), _Unbroken(sys.stderr)
        sys.exit(1)
    except Exception as exc:  # the last line of defence: never a traceback
        click = sys.modules.get("click")
        if click is not None and isinstance(exc, click.ClickException):
            # a usage error comes before any output: let click word it, with the usage line
            from linter.commands import run

            return run(argv)
        echo_error(f"hwlint: internal error: {type(exc).__name__}: {exc} (please report this)")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
