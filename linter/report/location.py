"""Where a manifest is, as code-hosting tools want it: relative to the repository root; and
where a workflow run keeps the reports (its link, the artifact they are uploaded as).

GitHub matches SARIF results and workflow annotations to files by their path from the root
of the checkout, whatever folder hwlint ran in. The root is the nearest folder above the
file that holds `.git` (a folder, or a file in a worktree or submodule); outside any
repository the path is taken relative to the current folder when it lies below it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from linter.paths import repository_of


@lru_cache(maxsize=256)
def repo_relative(file: str) -> str:
    """`file` as a forward-slash path from the repository root (or the current folder)."""
    absolute = Path(os.path.abspath(file))
    root = repository_of(absolute.parent) or Path.cwd()
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return Path(file).as_posix()


def workflow_run() -> str | None:
    """A Markdown link to the GitHub Actions run this is, when GitHub's variables name one."""
    import re

    server, repository, run = (os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?", server) and re.fullmatch(r"[\w.-]+/[\w.-]+", repository) \
            and re.fullmatch(r"\d+", run):
        return f"[workflow run {run}]({server}/{repository}/actions/runs/{run})"
    return None


def artifact() -> str | None:
    """The name of the workflow artifact the reports are uploaded as (`HWLINT_ARTIFACT`, set
    by action.yml when it uploads them), within a workflow run; else None."""
    if workflow_run() is None:
        return None
    name = " ".join(os.environ.get("HWLINT_ARTIFACT", "").replace("`", "'").split())  # one line, no code-span end
    return name or None
