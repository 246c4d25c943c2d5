"""The click commands: a thin layer over build (load rules) -> execute (review) -> report.

`linter.cli.main` is the entry point; it comes here for every command line but a plain
`hwlint check FILE...`. The pieces that need no click are in `linter.console`.
Exit codes: 0 no failure at the --fail-on level; 1 failures; 2 usage error, unreadable
input, a broken rule pack or an internal error. No traceback ever reaches the user.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import click

from linter import __version__
from linter.console import (  # noqa: F401 - the click-free half of the command line
    Exit, MACHINE_FORMATS, Progress, SEVERITY_RANK, TIERS, base_changes,
    check_selection, load_config, echo_human, echo_error, rule_ids, load_team_catalog,
    load_rule_pack, outputs_of, pack_for, same_file, stream_report, write_report,
    check_targets, exit_code, list_rules, manifest_files, read_by_config, report_files, run_check, use_colour,
)
from linter.report.escape import path as shown


def config_options(command: Any) -> Any:
    """--config and --isolated, on every command that reviews a manifest."""
    command = click.option("--isolated", is_flag=True, help="ignore every config file (.hwlint.yaml, [tool.hwlint])")(command)
    return click.option("--config", "config_file", type=click.Path(dir_okay=False),
                        help="use this config file instead of the .hwlint.yaml or pyproject.toml found above the manifest")(command)


FORCE_OPTION = click.option("--force", is_flag=True,
                            help="replace a report file that exists (never a file the run reads, nor a manifest holding sign-offs)")
CATALOG_OPTION = click.option("--catalog", "catalogs", multiple=True, type=click.Path(file_okay=False),
                              help="a team catalog folder (*.yaml, same schema as catalog/; repeatable); its entries "
                                   "add to the built-in ones and replace those of the same name")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hwlint")
def cli() -> None:
    """Review a GPU-cluster purchase manifest: do the parts fit each other and the plan?"""


CHECK_FORMATS = ("text", "markdown", "json", "sarif", "github", "comment")
DIFF_FORMATS = ("text", "markdown", "json")


def format_help(names: tuple[str, ...]) -> str:
    listed = ", ".join(names[:-1]) + " or " + names[-1]
    example = "--format sarif:hwlint.sarif --format markdown:review.md" if "sarif" in names else "--format json:diff.json --format markdown:diff.md"
    return f"{listed} (default text); repeat as FORMAT:PATH to write several reports in one run, e.g. {example}"


def review_options(command: Any, formats: tuple[str, ...] = CHECK_FORMATS) -> Any:
    """The options that choose how manifests are reviewed (shared by check and diff)."""
    options = [
        click.option("--tier", type=click.Choice(TIERS), help="review at this scale tier instead of the declared or inferred one"),
        click.option("--select", help="only these rule ids or prefixes, comma-separated (e.g. PWR,GPU001)"),
        click.option("--ignore", help="skip these rule ids or prefixes, comma-separated"),
        click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="extra rule folder (repeatable)"),
        CATALOG_OPTION,
        click.option("--fail-on", type=click.Choice(["error", "warning", "info"]),
                     help="lowest severity that makes the exit code 1 (default: the config's fail_on, else error)"),
        click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
                     help="write the report (each --format given without :PATH) to this file"),
        click.option("--format", "--output-format", "formats", multiple=True, metavar="FORMAT[:PATH]",
                     help=format_help(formats)),
        FORCE_OPTION,
    ]
    for option in reversed(options):  # decorators apply bottom-up; keep the listed order in --help
        command = option(command)
    return config_options(command)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@review_options
@click.option("--extend-select", metavar="IDS", help="add these rule ids or prefixes to the selection in effect (--select, "
              "else the config's select; with neither, every rule runs anyway)")
@click.option("--extend-ignore", metavar="IDS", help="skip these rule ids or prefixes too (as --ignore)")
@click.option("--force-exclude", is_flag=True, help="apply the exclusions (defaults, the config's exclude and "
              "extend_exclude) to files named on the command line too, as pre-commit names them")
@click.option("--show-files", is_flag=True, help="list the manifests that would be reviewed, and exit")
@click.option("--show-settings", is_flag=True, help="show the settings each manifest would be reviewed with (config, "
              "selection, rule and catalog folders, exclusions, cache), and exit")
@click.option("--no-cache", is_flag=True, help="build the rule pack afresh, neither reading nor writing the pack cache")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="keep the pack cache in this folder (default: "
              "$HWLINT_CACHE_DIR, else the platform's cache folder)")
@click.option("--sarif-category", metavar="CATEGORY", help="sarif format: the code-scanning category "
              "(automationDetails.id); uploads of different categories keep their own alerts (default: none, so the "
              "upload action's category input, or its own per workflow and job, applies)")
@click.option("--verbose", "-v", is_flag=True, help="text format: also show fixes, pending and waived rules")
@click.option("--base", metavar="REF", help="also report what changed against each file's version at git revision REF")
@click.option("--stdin-filename", metavar="PATH", help="the name to report a manifest read from standard input (-) by")
@click.option("--exit-zero", is_flag=True, help="exit 0 even when rules fail (2 still means the review could not be done)")
@click.option("--quiet", "-q", is_flag=True, help="text format: only the failing findings, no summaries, notes or progress")
@click.option("--statistics", is_flag=True, help="text format: count the failures per rule instead of listing them")
@click.option("--max-chars", type=click.IntRange(min=0), metavar="N",
              help="markdown format: cut the review to N characters as GitHub counts them (default 65,536 less 256 "
                   "for a marker: one comment; 0: no limit); the comment format never exceeds GitHub's 65,536")
@click.option("--docs-url", metavar="URL",
              help="sarif format: where docs/rules.md is published, for each rule's helpUri (default: the config's "
                   "docs_url; none given: no helpUri)")
@click.option("--color", "colour", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="colour the text format; auto: on a terminal, unless NO_COLOR is set (FORCE_COLOR or CLICOLOR_FORCE "
                   "force it, CLICOLOR=0 turns it off)")
def check(files: tuple[str, ...], formats: tuple[str, ...], output: str | None, tier: str | None, select: str | None,
          ignore: str | None, rule_dirs: tuple[str, ...], catalogs: tuple[str, ...], fail_on: str | None, verbose: bool, base: str | None,
          stdin_filename: str | None, exit_zero: bool, quiet: bool, statistics: bool, max_chars: int | None, docs_url: str | None,
          colour: str, config_file: str | None, isolated: bool, **more: Any) -> None:
    """Review manifest FILES (default: the current folder) and report findings. A folder is
    searched for *.hw.yaml and *.hw.yml files (git's ignore files and the exclusions
    respected); - reads one manifest from standard input."""
    run_check(files, formats, output, tier, select, ignore, rule_dirs, catalogs, fail_on, verbose, base, stdin_filename,
              exit_zero, quiet, statistics, colour, config_file, isolated, max_chars=max_chars, docs_url=docs_url, **more)


@cli.command("diff")
@click.argument("old", type=click.Path())
@click.argument("new", type=click.Path())
@lambda command: review_options(command, DIFF_FORMATS)
def diff_command(old: str, new: str, formats: tuple[str, ...], output: str | None, tier: str | None,
                 select: str | None, ignore: str | None, rule_dirs: tuple[str, ...], catalogs: tuple[str, ...],
                 fail_on: str | None, force: bool,
                 config_file: str | None, isolated: bool) -> None:
    """What changing manifest OLD into NEW does: findings introduced, resolved and still open
    (matched by rule and manifest path, not line), and how the budget moves.

    Formats: text, markdown, json. Exit 1 when NEW introduces a failure at the --fail-on level.
    """
    from linter.engine.changes import compare_documents, current, document_of
    from linter.report import render_diff
    from linter.engine.review import review_file
    from linter.manifest.config import selection

    outputs = outputs_of(formats, output, allowed=DIFF_FORMATS)
    config = load_config([new], config_file, isolated)
    check_targets(report_files(outputs, output), [old, new, *filter(None, [config_file]), *read_by_config(config)],
                  [*rule_dirs, *catalogs], force)
    pack = pack_for(config, rule_dirs, catalogs)
    check_selection(select, ignore, pack)
    selected = selection(config, select, ignore)
    evidence = any(fmt == "json" for fmt, _ in outputs)  # the JSON report of NEW shows it, as check's does
    before, after = review_file(old, pack, tier, selected, config), review_file(new, pack, tier, selected, config, evidence)
    docs = [document_of(current(r, {}), r.file) if r.digest else None for r in (before, after)]
    changes = compare_documents(before, docs[0], after, docs[1], old, pack, tier, selected, config, attribute=True)
    for fmt, path in outputs:
        write_report(render_diff(fmt, changes, after, pack), path, fmt)
    if after.unreadable or after.rule_errors:
        raise Exit(2)
    threshold = SEVERITY_RANK[fail_on or config.fail_on or "error"]
    introduced = [*changes.introduced, *(r for r, _, _ in changes.by_relaxation)]
    raise Exit(1 if any(SEVERITY_RANK[r.severity] >= threshold for r in introduced) else 0)


@cli.group()
def catalog() -> None:
    """The parts the review knows, with their source and date."""


_KIND_NAMES = {"gpus": "GPU", "nics": "NIC", "switches": "switch", "systems": "system"}


def _origin(entry: dict) -> str:
    """Where a catalog entry comes from: built-in, a team part, or a team override of a built-in part."""
    origin = entry.get("_origin", "")
    if not origin or origin == "built-in":
        return origin
    return f"{'team override of the built-in part' if '_replaces' in entry else 'team part'}, {origin}"


@catalog.command("list")
@CATALOG_OPTION
@click.option("--kind", type=click.Choice(["gpus", "nics", "switches", "systems"]), help="only this kind of part")
def catalog_list(catalogs: tuple[str, ...], kind: str | None) -> None:
    """One line per entry: kind, name, vendor, document date, read on, where it comes from."""
    parts = load_team_catalog(catalogs)
    for k in ("gpus", "nics", "switches", "systems"):
        if kind and k != kind:
            continue
        for name in parts.names(k):
            entry = getattr(parts, k)[name]
            read = entry.get("read_on") or "-"
            dated = f"as of {entry['as_of']}" if entry["as_of"] else "date unknown "
            echo_human(f"{_KIND_NAMES[k]:<7} {name:<26} {str(entry.get('vendor', '-')):<12} {dated}  "
                       f"read {read:<10}  {_origin(entry)}")


@catalog.command("show")
@CATALOG_OPTION
@click.argument("name")
def catalog_show(catalogs: tuple[str, ...], name: str) -> None:
    """Every value of one entry (by name, alias or ordering part number), with its source."""
    from linter.manifest.validate import suggest

    parts = load_team_catalog(catalogs)
    found = [(k, parts.find(k, name)) for k in ("gpus", "nics", "switches", "systems")]
    found = [(k, e) for k, e in found if e]
    if not found:
        every = [n for k in ("gpus", "nics", "switches", "systems") for n in parts.names(k)]
        hint = suggest(name, every, cutoff=0.4) or "; `hwlint catalog list` shows them all"
        echo_error(f'hwlint: no catalog entry "{name}"{hint}')
        raise Exit(2)
    for kind, entry in found:
        echo_human(_entry_text(kind, entry))


@cli.group()
def models() -> None:
    """The published model shapes `plan.model.name` and `hwlint size --model` take, with their source and date."""


@models.command("list")
def models_list() -> None:
    """One line per model: name, family, parameters, layers/hidden/heads, MoE, document date."""
    from linter.manifest.models import load_models

    for name, entry in load_models().items():
        moe = entry.get("moe")
        shape = f"L{entry['layers']} h{entry['hidden_size']} a{entry['attention_heads']}"
        echo_human(f"{name:<18} {entry['family']:<11} {entry['parameters_billion']:g}B".ljust(40)
              + f" {shape:<20} {(str(moe['experts']) + 'x top-' + str(moe['active_experts'])) if moe else 'dense':<10}"
              f" as of {entry['as_of']}")


@models.command("show")
@click.argument("name")
def models_show(name: str) -> None:
    """Every value of one model (by name or alias), with its source."""
    from linter.manifest.models import find, names
    from linter.manifest.validate import suggest

    entry = find(name)
    if entry is None:
        hint = suggest(name, names(), cutoff=0.4) or "; `hwlint models list` shows them all"
        echo_error(f'hwlint: no model "{name}" in models/{hint}')
        raise Exit(2)
    echo_human(_entry_text("models", entry))


def _entry_text(kind: str, entry: dict) -> str:
    source = entry.get("source", {})
    what = f"model, {entry['family']}" if kind == "models" else f"{_KIND_NAMES[kind]}, {entry.get('vendor', 'vendor not given')}"
    lines = [f"{entry['name']} ({what}" + (f"; {_origin(entry)})" if entry.get("_origin") else ")")]
    if entry.get("aliases"):
        lines.append("  also named: " + ", ".join(entry["aliases"]))

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, f"{prefix}.{key}" if prefix else key)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, inner in enumerate(value):
                walk(inner, f"{prefix}[{i}]")
        else:
            lines.append(f"  {prefix}: {', '.join(map(str, value)) if isinstance(value, list) else value}")

    walk({k: v for k, v in entry.items() if k not in ("name", "aliases", "source", "as_of", "undated", "read_on", "notes", "vendor", "family")
          and not k.startswith("_")}, "")
    title = ". ".join(str(source[k]) for k in ("title", "publisher", "year", "section") if source.get(k))
    lines.append(f"  source: {title}" + (f" <{source['url']}>" if source.get("url") else ""))
    dated = entry["as_of"] or f"unknown (the document prints none: {entry.get('undated', '')})"
    lines.append(f"  document date (as_of): {dated}" + (f"; read on {entry['read_on']}" if entry.get("read_on") else ""))
    if entry.get("notes"):
        lines.append(f"  notes: {entry['notes']}")
    return "\n".join(lines)


@cli.group()
def rules() -> None:
    """List, explain and test rules."""


@rules.command("list")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
def rules_list(rule_dirs: tuple[str, ...]) -> None:
    """One line per rule: id, severity, tiers, title."""
    list_rules(rule_dirs)


@rules.command("show")
@click.argument("rule_id")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False))
def rules_show(rule_id: str, rule_dirs: tuple[str, ...]) -> None:
    """Explain one rule: what, why, example, fix, tiers, sources."""
    from linter.report.docs import rule_text

    pack = load_rule_pack(rule_dirs)
    rule = pack.get(rule_id.upper())
    if rule is None:
        import difflib

        close = difflib.get_close_matches(rule_id.upper(), [r.id for r in pack.rules], n=1)
        hint = f"; did you mean {close[0]}?" if close else "; `hwlint rules list` shows them all"
        echo_error(f"hwlint: no rule {rule_id}{hint}")
        raise Exit(2)
    echo_human(rule_text(rule, pack))


@rules.command("test")
@click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False))
def rules_test(folder: str | None) -> None:
    """Run the rules' own pass/fail cases (the built-in pack, or the rules in FOLDER)."""
    from linter.engine.casetest import run_pack

    pack = load_rule_pack([folder] if folder else [])
    outcomes = run_pack(pack, Path(folder) if folder else None)
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        detail = "" if o.ok else f": expected {o.expected}, got {o.actual} ({o.detail})"
        echo_human(f"{mark} {o.rule_id} {o.case}{detail}")
    failed = sum(not o.ok for o in outcomes)
    echo_human(f"{len(outcomes) - failed} passed, {failed} failed")
    raise Exit(1 if failed or not outcomes else 0)


@cli.command()
def schema() -> None:
    """Print the manifest JSON Schema."""
    from linter.paths import manifest_schema_path

    click.echo(manifest_schema_path().read_text(encoding="utf-8"), nl=False)


@cli.command()
@click.argument("path", default="cluster.hw.yaml", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--force", is_flag=True, help="overwrite an existing file")
def init(path: str, force: bool) -> None:
    """Write a commented starter manifest to PATH (default cluster.hw.yaml; - for standard
    output), and the manifest schema beside it as hwlint.schema.json, which the starter's
    first line points editors to (hover help, completion, checks as you type)."""
    from linter.paths import data_dir
    from linter.schema import SCHEMA_ID

    starter = (data_dir("templates") / "starter.hw.yaml").read_text(encoding="utf-8")
    if path == "-":
        click.echo(starter, nl=False)
        click.echo(f"hwlint: the starter's first line points editors to {SCHEMA_ID} beside the manifest; "
                   f"write it with: hwlint schema > {SCHEMA_ID}", err=True)
        return
    target = Path(path)
    check_targets([path], [], force=force, manifest=True)
    schema_file = target.parent / SCHEMA_ID
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_report(starter, path, "json")
        schema_note = _write_schema_beside(schema_file)
    except OSError as exc:
        echo_error(f"hwlint: cannot write {exc.filename or path}: {exc.strerror or exc}")
        raise Exit(2) from None
    echo_human(f"wrote {shown(path)}{schema_note}; fill it in, then run: hwlint check {shown(path)}")


def _write_schema_beside(schema_file: Path) -> str:
    """Write (or refresh) hwlint's schema at `schema_file`; never replace someone else's file."""
    import json

    from linter.paths import manifest_schema_path
    from linter.schema import SCHEMA_ID

    text = manifest_schema_path().read_text(encoding="utf-8")
    if schema_file.exists():
        try:
            ours = json.loads(schema_file.read_text(encoding="utf-8")).get("$id") == SCHEMA_ID
        except (ValueError, AttributeError):
            ours = False
        if not ours:
            click.echo(f"hwlint: note: {schema_file} exists and is not hwlint's schema; left as it is "
                       f"(`hwlint schema > {schema_file}` replaces it)", err=True)
            return ""
        if schema_file.read_text(encoding="utf-8") == text:
            return ""
    schema_file.write_text(text, encoding="utf-8")
    return f" and {schema_file} (for editors)"


# --- checklist, sign-off and verify (linter/signoff/) -----------


def _reviewed(file: str, pack: Any, tier: str | None = None, config: Any = None, on: Any = None) -> tuple[Any, Any]:
    """Load and review one manifest; a manifest that cannot be reviewed ends the command (exit 2)."""
    from linter.manifest.config import selection
    from linter.manifest.loader import InputError, load_file
    from linter.engine.review import review_document

    try:
        doc = load_file(file)
    except InputError as exc:
        echo_error(f"{file}:{exc.line}:{exc.column}: {exc.code} {exc.message}")
        raise Exit(2) from None
    selected = selection(config, None, None) if config is not None else None
    review = review_document(doc, pack, tier, selected, config, on, evidence=True)
    if review.file_findings:
        for r in review.file_findings:
            echo_error(f"{r.file}:{r.line}:{r.column}: {r.rule_id} {r.message}")
        echo_error(f"hwlint: {file} cannot be reviewed until these are fixed")
        raise Exit(2)
    return doc, review


ROLE_WORDS = ("finance", "facilities", "technical-lead")


@cli.command()
@CATALOG_OPTION
@click.argument("file", type=click.Path())
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write the checklist to this file")
@FORCE_OPTION
@click.option("--tier", type=click.Choice(TIERS), help="review at this scale tier instead of the declared or inferred one")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="extra rule folder (repeatable)")
@click.option("--role", type=click.Choice(ROLE_WORDS),
              help="put this role's items and numbers first (finance: procurement; facilities: power and cooling; "
                   "technical-lead: compute, network, storage)")
@config_options
def checklist(file: str, output: str | None, force: bool, tier: str | None, rule_dirs: tuple[str, ...], catalogs: tuple[str, ...],
              role: str | None, config_file: str | None, isolated: bool) -> None:
    """Write the sign-off checklist of manifest FILE: every rule as a Markdown task, grouped by
    layer, with the sign-off table. Exit 0 when written, whatever the items say."""
    from linter.signoff.checklist import render

    config = load_config([file], config_file, isolated)
    check_targets([output], [file, *filter(None, [config_file]), *read_by_config(config)], [*rule_dirs, *catalogs], force)
    pack = pack_for(config, rule_dirs, catalogs)
    doc, review = _reviewed(file, pack, tier, config)
    write_report(render(review, doc, pack, config=config, role=role), output, "markdown")
    raise Exit(2 if review.rule_errors else 0)


@cli.command()
@CATALOG_OPTION
@click.argument("file", type=click.Path())
@click.option("--role", required=True, help='the role signing: one of the config\'s signoff.roles or the manifest\'s '
              'policy.signoff_roles (default "technical lead", "facilities", "finance")')
@click.option("--name", required=True, help="who signs")
@click.option("--sign-key", type=click.Path(dir_okay=False), help="also sign with this SSH private key (ssh-keygen -Y sign)")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="extra rule folder (repeatable)")
@config_options
def signoff(file: str, role: str, name: str, sign_key: str | None, rule_dirs: tuple[str, ...], catalogs: tuple[str, ...],
            config_file: str | None, isolated: bool) -> None:
    """Record ROLE's sign-off in manifest FILE, bound to its content, the rule pack and this
    hwlint build. Only the signoffs: section of the file is rewritten."""
    from linter.engine.review import today
    from linter.engine.rules import pack_digest
    from linter.signoff.records import SignoffError, blocking, record_signoff

    config = load_config([file], config_file, isolated)
    pack = pack_for(config, rule_dirs, catalogs)
    _, review = _reviewed(file, pack, config=config)
    try:
        record = record_signoff(file, role, name, pack_digest(pack), today(), sign_key, config)
    except SignoffError as exc:
        echo_error(f"hwlint: {exc}; {file} is unchanged")
        raise Exit(2) from None
    except OSError as exc:
        echo_error(f"hwlint: cannot write {file}: {exc.strerror or exc}; {file} is unchanged")
        raise Exit(2) from None
    signed = ", with an SSH signature" if "signature" in record else ""
    echo_human(f"{shown(file)}: recorded the {role} sign-off by {name} on {record['date']}{signed} "
          f"(manifest {record['manifest_digest'][:19]}…, rule pack {record['rule_pack_digest'][:19]}…, "
          f"{record['tool']})")
    remaining = len(blocking(review.results))
    if remaining:
        echo_human(f"note: {remaining} failing result{'s are' if remaining != 1 else ' is'} not waived; "
                   f"`hwlint verify {file}` will fail until they are fixed or waived", err=True)


def _date(value: str | None) -> Any:
    import datetime as dt

    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; give YYYY-MM-DD", param_hint="--as-of") from None


@cli.command()
@CATALOG_OPTION
@click.argument("file", type=click.Path())
@click.option("--allowed-signers", type=click.Path(exists=True, dir_okay=False),
              help="also require a good SSH signature on every sign-off (ssh-keygen -Y verify; git's format); "
                   "default: the config's signoff.allowed_signers")
@click.option("--allow-pending", is_flag=True,
              help="let error-severity rules that are still to confirm through (said in the output); never-skip "
                   "rules (power and cooling headroom, checkpoint space, backup) must still be confirmed")
@click.option("--as-of", "as_of", metavar="DATE",
              help="judge date-dependent rules (quote and spec age, waiver expiry) as of DATE (YYYY-MM-DD), e.g. "
                   "the signing date; what has gone stale since is still reported")
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="extra rule folder (repeatable)")
@config_options
def verify(file: str, allowed_signers: str | None, allow_pending: bool, as_of: str | None, rule_dirs: tuple[str, ...], catalogs: tuple[str, ...],
           config_file: str | None, isolated: bool) -> None:
    """Check the sign-offs recorded in manifest FILE: valid, stale (manifest, rule pack or
    hwlint changed) or missing. Exit 0 only when every required role holds a valid
    sign-off, no failing result remains unwaived, no error-severity or never-skip rule is
    still to confirm or deselected, and no role required when signed has been dropped; 1
    otherwise; 2 when a rule failed to run (as `check` exits). With --as-of DATE, a sign-off
    dated after DATE is refused."""
    from linter.engine.review import today
    from linter.engine.rules import pack_digest
    from linter.signoff.records import Rules, SignoffError, check, report

    on = _date(as_of)
    if on is not None and on > today():
        raise click.BadParameter(f"{as_of} is in the future (today is {today()})", param_hint="--as-of")
    config = load_config([file], config_file, isolated)
    pack = pack_for(config, rule_dirs, catalogs)
    doc, review = _reviewed(file, pack, config=config, on=on)
    rules = Rules({r.id for r in pack.rules if r.spec.never_skip}, review.deselected, allow_pending)
    try:
        verdict = check(doc, pack_digest(pack), review.results, allowed_signers, config, rules, on)
    except SignoffError as exc:
        echo_error(f"hwlint: {exc}")
        raise Exit(2) from None
    verdict.rule_errors = list(review.rule_errors)
    if on is not None:
        _, now = _reviewed(file, pack, config=config)
        verdict.as_of = on.isoformat()
        verdict.stale_since = _gone_stale(review, now)
    if allow_pending or verdict.allowed_pending:
        verdict.allow_pending = True
    echo_human(report(shown(file), verdict), nl=False)
    raise Exit(2 if verdict.rule_errors else 0 if verdict.ok else 1)  # a rule that failed to run: as check exits


SIZE_HELP = """Work back from a training goal to a configuration that passes `hwlint check`.

Give the goal as flags, or as a partial manifest DRAFT (its plan:, facility racks budget,
procurement mode, node pools' GPU and policy: fill what the flags leave out). For every
candidate GPU (default: the catalog's data-centre parts) the sizer searches tensor (within
the NVLink domain), pipeline and data parallelism, ZeRO stage, recompute and micro-batch
with the review's own memory and time facts, keeps the layouts that fit and meet the
deadline with the fewest whole nodes, builds the fabric, storage, racks and power around
them, and reviews the best ones with the rule pack. Exit 0: a configuration was found;
1: none meets the goal; 2: usage error.
"""


@cli.command("size", help=SIZE_HELP)
@click.argument("draft", required=False, type=click.Path())
@click.option("--model", help="a model in models/ (`hwlint models list`) or a Hugging Face config.json: its shape, "
                              "sequence length and published batch fill what the flags leave out")
@click.option("--params", type=float, help="model parameters, billions (alone: the nearest published shape, scaled to it)")
@click.option("--moe", metavar="EXPERTSxACTIVE", help="mixture of experts, e.g. 8x2: 8 experts per layer, 2 active per token")
@click.option("--method", type=click.Choice(["full", "lora", "qlora"]), help="fine-tuning method (lora/qlora: goal finetune)")
@click.option("--layers", type=int, help="transformer layers L")
@click.option("--hidden", type=int, help="hidden size h")
@click.option("--heads", type=int, help="attention heads a")
@click.option("--seq", type=int, help="sequence length s, tokens")
@click.option("--tokens", type=float, help="training tokens, billions")
@click.option("--days", type=float, help="deadline: target duration of the run, days")
@click.option("--goal", "goal_kind", type=click.Choice(["pretrain", "continued-pretrain", "finetune", "experiment"]))
@click.option("--precision", type=click.Choice(["fp32", "tf32", "bf16", "fp16", "fp8"]), help="default bf16 (said in the output)")
@click.option("--optimizer", type=click.Choice(["adam", "adamw", "sgd", "adafactor", "lion"]), help="default adamw (said in the output)")
@click.option("--global-batch", type=int, help="sequences per optimizer step (caps micro-batch x data-parallel ranks)")
@click.option("--dataset-tb", type=float, help="training data on disk, TB")
@click.option("--dataset-tokens", type=float, help="tokens in the dataset, billions (with --dataset-tb: the read rate)")
@click.option("--start-date", help="planned start, YYYY-MM-DD")
@click.option("--gpu", "gpus", multiple=True, help="candidate catalog GPU (repeatable; default: every data-centre part)")
@click.option("--max-gpus", type=int, help="at most this many GPUs")
@click.option("--rack-kw", type=float, help="power budget of one rack, kW")
@click.option("--facility-kw", type=float, help="IT capacity of the facility, kW")
@click.option("--mode", type=click.Choice(["buy", "rent"]))
@click.option("--prices", type=click.Path(dir_okay=False), help="price file: currency: and prices: [{item, purchase, rental_per_month, ...}] per node")
@click.option("--policy", "policy_pairs", multiple=True, metavar="NAME=VALUE", help="override a rules/policy.yaml value (repeatable), e.g. mfu=0.35")
@click.option("--tensor", type=int, help="fix the tensor-parallel degree (default: searched)")
@click.option("--pipeline", type=int, help="fix the pipeline-parallel degree (default: searched)")
@click.option("--zero", type=int, help="fix the ZeRO stage 0-3 (default: searched)")
@click.option("--recompute", type=click.Choice(["none", "selective", "full"]), help="fix activation recompute (default: searched)")
@click.option("--micro-batch", type=int, help="fix the micro-batch size (default: searched)")
@click.option("--checkpoint-minutes", type=float, help="minutes between checkpoints (default 60, said in the output)")
@click.option("--keep-checkpoints", type=int, help="full checkpoints kept on the checkpoint tier (default 2, said in the output)")
@click.option("--top", type=click.IntRange(1, 50), default=5, show_default=True, help="layouts kept per GPU model")
@click.option("--all", "every", is_flag=True, help="every GPU model's layouts, with network, storage and racks (wide); "
                                                   "default: the best layout of each GPU model in one table")
@click.option("--choose", metavar="MODEL#N", help="the row --write writes (default: the best)")
@click.option("--write", "write_to", type=click.Path(dir_okay=False), help="write the chosen row as a complete manifest")
@click.option("--force", is_flag=True, help="with --write: replace a file that exists (never an input, nor a manifest "
              "holding sign-offs)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--rules", "rule_dirs", multiple=True, type=click.Path(file_okay=False), help="extra rule folder (repeatable)")
def size_command(draft: str | None, goal_kind: str | None, gpus: tuple[str, ...], policy_pairs: tuple[str, ...],
                 prices: str | None, top: int, every: bool, choose: str | None, write_to: str | None, force: bool,
                 fmt: str,
                 rule_dirs: tuple[str, ...], **options: Any) -> None:
    from linter.sizing.goal import GoalError, from_inputs, read_prices
    from linter.sizing.sizer import size
    from linter.sizing import report as size_report

    check_targets([write_to], [p for p in (draft, prices) if p], rule_dirs, force, manifest=True)
    pack = load_rule_pack(rule_dirs)
    draft_data = None
    if draft:
        from linter.manifest.loader import InputError, load_file

        try:
            draft_data = load_file(draft).data
        except InputError as exc:
            echo_error(f"hwlint: {draft}:{exc.line}:{exc.column}: {exc.message}")
            raise Exit(2) from None
        if not isinstance(draft_data, dict):
            raise click.UsageError(f"{draft}: a draft manifest is a mapping with a plan: section")
    options.update(goal=goal_kind, gpus=list(gpus), policy=list(policy_pairs))
    try:
        goal = from_inputs(options, draft_data, draft, {k: v["default"] for k, v in pack.policy.items()})
        if prices:
            goal.prices = read_prices(prices)
    except GoalError as exc:
        raise click.UsageError(str(exc)) from None
    result = size(goal, pack, top)
    chosen = result.best
    if choose:
        chosen = next((r for r in result.rows if r.ident.lower() == choose.lower()), None)
        if chosen is None:
            known = ", ".join(r.ident for r in result.rows) or "none"
            raise click.UsageError(f"--choose {choose}: no such row (rows: {known})")
    write_report(size_report.render(fmt, result, every), None)
    if write_to:
        if chosen is None:
            click.echo("hwlint: nothing written: no configuration meets the goal", err=True)
        else:
            write_report(size_report.manifest(chosen), write_to)
            click.echo(f"wrote {write_to}: {chosen.ident}; check it with `hwlint check {write_to}`", err=True)
    raise Exit(0 if result.best is not None else 1)


def _gone_stale(then: Any, now: Any) -> list[str]:
    """Rules that held (or were waived) on the --as-of date and fail today."""
    from linter.results import one_line

    before = {r.rule_id: r for r in then.results}
    out = []
    for r in now.results:
        old = before.get(r.rule_id)
        if r.status == "fail" and (old is None or old.status != "fail"):
            out.append(f"{r.rule_id} {r.severity} {one_line(r.message)}")
    return out


def run(argv: Sequence[str] | None = None) -> int:
    """The command line `argv` (default: sys.argv) through click: the exit code."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="hwlint", standalone_mode=False)
    except Exit as done:
        return done.code
    except click.exceptions.Abort:
        click.echo("hwlint: aborted", err=True)
        return 2
    except click.ClickException as exc:
        exc.message = shown(exc.message)  # a value from the command line, kept to its line
        exc.show()
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except Exception as exc:  # the last line of defence: never a traceback
        echo_error(f"hwlint: internal error: {type(exc).__name__}: {exc} (please report this)")
        return 2
    return 0
