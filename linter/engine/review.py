"""The pipeline: load -> validate -> resolve (catalog) -> model -> facts -> tier -> evaluate.

`review_document` runs every stage on one loaded manifest and returns a `Review`, the only
thing reporters see. Each rule gives exactly one result: pass, fail, pending, skipped or
waived.
"""

from __future__ import annotations

import datetime as dt
import os
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.digest import sha256
from linter.manifest.catalog import CatalogRef, load_catalog, resolve
from linter.manifest.config import Config, relaxes
from linter.numbers import num
from linter.physics.facts import derive
from linter.physics.values import Unknown
from linter.manifest.loader import Document, InputError, load_file
from linter.record import field, record, replace
from linter.results import Result, dotted, file_finding, one_line, undotted
from linter.engine.rules import Rule, RulePack, renders_as_itself
from linter.manifest.dump import dump
from linter.manifest.validate import certainly_valid_beyond, certainly_valid_plan, validate
from linter.engine.waivers import apply_waivers


@record
class Review:
    file: str
    name: str = ""
    tier: str = ""
    tier_reason: str = ""
    tier_inferred: str = ""  # the tier the counts imply, whatever was declared; "" when undecided
    tier_inferred_reason: str = ""
    results: list[Result] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {value, default, source}
    catalog: list[CatalogRef] = field(default_factory=list)
    # values the manifest sets over the named catalog parts: {path, manifest, catalog, kind, entry, as_of, source}
    catalog_overrides: list[dict[str, Any]] = field(default_factory=list)
    rule_errors: list[str] = field(default_factory=list)
    conditions: dict[str, str] = field(default_factory=dict)  # rules/conditions.yaml names that hold -> reason
    options: list[dict[str, Any]] = field(default_factory=list)  # procurement options compared (option_summary)
    unreadable: bool = False  # the file could not be parsed at all
    digest: str = ""
    deselected: list[dict[str, str]] = field(default_factory=list)  # {rule_id, title, severity, how}
    config: str = ""  # the organisation config that governed the review, if any
    config_files: list[dict[str, str]] = field(default_factory=list)  # {path, sha256} of each config in effect, the root first
    as_of: str = ""  # the date the review was judged at, when not today (verify --as-of)
    waivers: list[dict[str, Any]] = field(default_factory=list)  # the manifest's waivers, as the review read them

    @property
    def file_findings(self) -> list[Result]:
        return [r for r in self.results if r.layer == "FILE"]

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("fail", "waived", "pending", "pass", "skipped")}
        for r in self.results:
            out[r.status] += 1
        return out


def today() -> dt.date:
    """Today's date in UTC (the one time zone waivers and ages are judged in, whatever the
    machine's), or HWLINT_TODAY (YYYY-MM-DD) so reviews can be reproduced. ValueError, saying
    what to write, when HWLINT_TODAY is set to anything else."""
    fixed = os.environ.get("HWLINT_TODAY")
    return fixed_today(fixed) if fixed else dt.datetime.now(dt.timezone.utc).date()


def fixed_today(text: str) -> dt.date:
    """HWLINT_TODAY read strictly: ten characters YYYY-MM-DD naming a real date."""
    import re

    try:
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text, re.ASCII):
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    shown = repr(text[:40] + ("..." if len(text) > 40 else ""))
    raise ValueError(f"the environment variable HWLINT_TODAY is {shown}, which is not a date; set it to YYYY-MM-DD "
                     "(for example 2026-11-30) to review as of that day, or unset it to review as of today")


def review_file(path: str, pack: RulePack, tier: str | None = None, selected: Any = None, config: Any = None,
                evidence: bool = False, place_all: bool = True) -> Review:
    try:
        return review_document(load_file(path), pack, tier, selected, config, evidence=evidence, place_all=place_all)
    except InputError as exc:
        return not_loaded(path, exc)
    except Exception as exc:  # noqa: BLE001 - one file's failure must not stop the others' reviews
        return not_loaded(path, InputError(f"internal error while reviewing this file: {type(exc).__name__} "
                                           "(please report this); the other files are reviewed", code="YAML"))


def not_loaded(path: str, exc: InputError) -> Review:
    """The review of a file that could not be loaded: one finding saying why."""
    review = Review(file=path, unreadable=exc.code in ("YAML", "IO"))
    review.results.append(file_finding(exc.code, exc.message, path, exc.line, exc.column))
    return review


def review_document(doc: Document, pack: RulePack, tier: str | None = None, selected: Any = None,
                    config: Config | None = None, on: dt.date | None = None, evidence: bool = False,
                    place_all: bool = True) -> Review:
    """Review one manifest as its chosen option makes it. `selected` (a config.Selection, or
    any id -> bool) picks the rules; `config` brings the organisation's policy floors; `on`
    judges dates as of that day; `evidence` renders each passing rule's evidence in words (the
    checklist and the JSON report show it; it costs about a third of a review); `place_all` false
    places only the failing results (their path, line and the values their rules read): what the
    text report (not verbose) and a base version under --base read of a review. With procurement
    options, each option is judged by the whole pack as its own version of the manifest, the
    chosen one last: `Review.options` holds their figures and results, and facts.options the
    recommendation among them (BUY009 reads it)."""
    from linter.manifest.procurement import check as check_procurement, option_names, with_option
    from linter.physics.procurement import recommend

    config = config or Config()
    on = on or today()
    review = Review(file=doc.path, digest=sha256(doc.raw) if doc.raw else "",
                    config=config.path or "", config_files=[{"path": p, "sha256": d} for p, d in config.chain], as_of=on.isoformat() if on != today() else "")
    problems = validate(doc) or check_procurement(doc)
    if problems:
        review.results = problems
        return review
    names = option_names(doc.data)
    if not names:
        return _judge(review, doc, pack, tier, selected, config, on, evidence, place_all=place_all, validated=doc.data)
    chosen = doc.data["procurement"]["chosen"]
    variants = {name: replace(doc, data=with_option(doc.data, name)) for name in names}
    others = {}
    for name in names:
        if name != chosen:
            others[name] = _judge(Review(file=doc.path), variants[name], pack, tier, selected, config, on,
                                  place_all=place_all, validated=doc.data)
            if others[name].file_findings:  # e.g. an option that names a system the catalog does not have
                review.results = others[name].file_findings
                return review

    def compare(judged: Review) -> dict[str, Any]:
        """facts.options once every option, the chosen one last, has been judged."""
        every = {**others, chosen: judged}
        review.options = [option_summary(name, every[name], name == chosen) for name in names]
        money = judged.facts["procurement"]
        return {"names": names, "recommendation": recommend(
            [{"name": o["name"], "mode": o["mode"], "errors": o["errors"],
              **{key: every[o["name"]].facts["procurement"][key] for key in ("total_cost", "ready_date")}}
             for o in review.options], money["start_date"], money["project_months"], chosen)}

    return _judge(review, variants[chosen], pack, tier, selected, config, on, evidence, compare, place_all, doc.data)


def quotes_of(money: dict[str, Any]) -> list[dict[str, Any]]:
    """The quote rows of procurement facts: none shown while the list is unknown (left out)."""
    quotes = money.get("quotes", [])
    return quotes if isinstance(quotes, list) else []


def option_summary(name: str, judged: Review, chosen: bool) -> dict[str, Any]:
    """One column of the options table: money by part, delivery and the results of one option,
    judged by the whole rule pack."""
    money = judged.facts.get("procurement", {})

    def known(value: Any) -> Any:
        return None if isinstance(value, Unknown) else value

    failing = [r for r in judged.results if r.status == "fail" and r.layer not in ("WVR", "FILE")]
    counts = judged.counts()
    counts["pending"] -= sum(NOT_COMPARED in r.missing for r in judged.results)  # decided only once all are judged
    rental = money.get("rental")
    return {
        "name": name,
        "chosen": chosen,
        "mode": known(money.get("mode")),
        "currency": known(money.get("currency")),
        **{key: known(money.get(key)) for key in (
            "capex", "electricity_per_month", "colocation_per_month", "staff_per_month", "support_per_month",
            "opex_per_month", "owned_opex_per_month", "rent_per_month", "total_cost", "payback_months", "ready_date")},
        "opex_counted": money.get("opex_counted"),
        "pays_back": known(money.get("pays_back")),
        "rent_compared": rental.get("option") if isinstance(rental, dict) else None,
        "quotes": [{key: known(value) for key, value in row.items()} for row in quotes_of(money)],
        "failing": [r.rule_id for r in failing],
        "failing_severity": {r.rule_id: r.severity for r in failing},
        "errors": [r.rule_id for r in failing if r.severity == "error"],
        "counts": counts,
        "tier": judged.tier,
    }


def _judge(review: Review, doc: Document, pack: RulePack, tier: str | None, selected: Any,
           config: Config, on: dt.date, evidence: bool = False, compare: Any = None, place_all: bool = True,
           validated: dict | None = None) -> Review:
    """Catalog, model, facts, tier, rules and waivers for one (valid) manifest. `compare`, given
    the review with its rules run and waivers applied, returns facts.options: the rules that
    read it (pending until then) run once more with it, before the waivers apply. `validated`:
    the data the schema check accepted (plain_manifest's `accepted`)."""

    # the pack carries its catalog, team folders included (and so does its digest)
    catalog = pack.catalog if pack.catalog is not None else load_catalog(tuple(str(f) for f in pack.catalog_folders))
    resolved = resolve(doc, catalog)
    review.catalog = resolved.refs
    review.catalog_overrides = resolved.overrides
    if resolved.findings:
        review.results = resolved.findings
        return review
    data = plain_manifest(resolved.data, doc, pack.manifest_shape, bool(resolved.refs), validated)
    if isinstance(data, list):
        review.results = data
        return review
    review.name = data["name"]
    relaxed = relaxed_floors(data.get("policy", {}), config, doc)
    if relaxed:
        review.results = relaxed
        return review
    policy = effective_policy(pack, data.get("policy", {}), config)
    review.policy = policy
    facts = derive(data, {k: v["value"] for k, v in policy.items()}, on.isoformat())
    facts["today"] = on.isoformat()
    # The entries whose values the review inherited; an entry the manifest overrode in full is not relied on.
    facts["catalog"] = [{"kind": r.kind, "name": r.name, "as_of": r.as_of, "read_on": r.read_on, "undated": r.undated,
                         "inherited": ", ".join(r.inherited)} for r in resolved.refs if r.inherited]
    facts["catalog_dates"] = catalog_dates(facts["catalog"], on.isoformat())
    # catalog/bounds.yaml: the manifest's values against what the named parts can do (BUY008)
    facts["catalog_bounds"] = {"checked": resolved.bounds_checked, "exceeded": resolved.exceeded,
                               "overrides": resolved.overrides, "replaced": resolved.replaced,
                               "team_parts": [r.name for r in resolved.refs if r.origin and r.origin != "built-in"]}
    from linter.engine.sandbox import pack_budget

    # the whole pack (its tiers, conditions and rules) shares one budget per manifest, besides each
    # test's and rule's own: one CPU timer for them all, not one set and cleared per tier test
    with pack_budget():
        inferred, inferred_reason, undecided = infer_tier(pack, data, facts)
        if not undecided:
            review.tier_inferred, review.tier_inferred_reason = inferred, inferred_reason
        review.tier, review.tier_reason = choose_tier(data, tier, inferred, inferred_reason, undecided)
        facts["tier"] = review.tier
        facts["tier_inferred"] = Unknown(undecided) if undecided else inferred
        facts["tier_inferred_reason"] = Unknown(undecided) if undecided else inferred_reason.removeprefix("inferred: ")
        facts["tier_rank"] = {t["name"]: rank for rank, t in enumerate(pack.tiers)}  # smallest first
        facts["options"] = {"names": [o["name"] for o in data.get("procurement", {}).get("options", [])],
                            "recommendation": Unknown((NOT_COMPARED,))}
        review.facts = facts
        primary = _primary_pool(data, facts)
        holding = review.conditions = conditions(pack, data, facts)

        views = _views(data, facts, primary)  # one view of this manifest for all its rules
        for rule in pack.rules:
            if selected is not None and not selected(rule.id):
                how = selected.dropped(rule.id) if hasattr(selected, "dropped") else "deselected"
                review.deselected.append({"rule_id": rule.id, "title": rule.spec.title, "severity": rule.spec.severity,
                                          "never_skip": rule.spec.never_skip, "how": how})
                continue
            result = evaluate(rule, doc, data, facts, primary, review.tier, holding, evidence, views, place_all)
            if result.status == "pending" and result.reason.startswith("rule error"):
                review.rule_errors.append(f"{rule.file}:{rule.line}: rule {rule.id}: {result.reason}")
            review.results.append(result)
        _raise_severities(review.results, config)
        waive = lambda results: apply_waivers(  # noqa: E731
            results, doc, data.get("waivers", []), pack, on, policy.get("waiver_max_days", {}).get("value"),
            getattr(config, "waiver_approvers", None))
        if compare is not None:
            settled = [replace(r) for r in review.results]  # copies: the waivers apply to the real ones once, below
            waive(settled)
            facts["options"] = compare(replace(review, results=settled))
            views = _views(data, facts, primary)
            for i, result in enumerate(review.results):
                if result.status == "pending" and NOT_COMPARED in result.missing:
                    review.results[i] = evaluate(pack.get(result.rule_id), doc, data, facts, primary, review.tier,
                                                 holding, evidence, views, place_all)
            _raise_severities(review.results, config)
    review.waivers = list(data.get("waivers", []))
    waive(review.results)
    return review


NOT_COMPARED = "procurement.options (every option judged)"  # what facts.options.recommendation waits for


def _raise_severities(results: list[Result], config: Config) -> None:
    """The organisation's severities (config `severity:`, which may only raise a rule's)."""
    for result in results:
        raised = config.severity.get(result.rule_id)
        if raised:
            result.severity = raised


def catalog_dates(entries: list[dict[str, Any]], on: str) -> dict[str, Any]:
    """The taken entries' document dates for BUY004: the oldest dated one, those dated, and the
    undated ones as Unknown (their date is to confirm, never taken for recent)."""
    dated = sorted((c for c in entries if c["as_of"]), key=lambda c: c["as_of"])
    undated = [c for c in entries if not c["as_of"]]
    return {"oldest": dated[0]["as_of"] if dated else on, "dated": dated,
            "undated_names": [f"{c['kind']} {c['name']}" for c in undated],
            "undated": Unknown(tuple(f"catalog {c['kind']} {c['name']}: as_of (date unknown: {c['undated']})"
                                     for c in undated)) if undated else []}


def plain_manifest(data: dict, doc: Document, shape: Any = None, from_catalog: bool = True,
                   accepted: dict | None = None) -> dict | list[Result]:
    """Validate through the pydantic models (dates, cross-field types) and return plain data
    keyed as in the manifest, with the models' defaults, without the values the manifest
    leaves out. With the models' `shape` (linter.manifest.dump), a valid manifest gets the
    same data without pydantic; catalog values, which the manifest schema did not see, must
    pass the quick schema check first (of the sections not shared with `accepted`, data the
    schema check accepted, when given: validate.certainly_valid_beyond). Anything else goes
    through pydantic, which also words the errors."""
    if shape is not None and (not from_catalog or certainly_valid_beyond(data, accepted)):
        dumped = dump(shape, data)
        if dumped is not None:
            return dumped
    from pydantic import ValidationError

    from linter.manifest.model import Manifest

    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        findings = []
        for error in exc.errors():
            path = tuple(p for p in error["loc"] if not (isinstance(p, str) and p.startswith(("function-", "literal"))))
            line, column = doc.position(path)
            findings.append(file_finding("SCHEMA", f"{dotted(path)}: {error['msg']}", doc.path, line, column, dotted(path)))
        return findings
    return manifest.model_dump(mode="json", by_alias=True, exclude_none=True)


def relaxed_floors(overrides: dict[str, Any], config: Config, doc: Document) -> list[Result]:
    """A finding for each policy value the manifest loosens below the organisation's floor."""
    out = []
    for name, floor in config.policy.items():
        given = overrides.get(name)
        if given is None or name in config.allow_relaxing or not relaxes(name, floor, given):
            continue
        line, column = doc.position(("policy", name))
        out.append(file_finding(
            "POLICY", f"policy.{name} is {num(given, 4)}, which relaxes the organisation's floor of {num(floor, 4)} set in "
            f"{config.origin.get(f'policy.{name}', config.path)}; a manifest may only tighten it", doc.path, line, column, f"policy.{name}",
            f"Remove policy.{name} (the floor {num(floor, 4)} applies) or tighten it; to relax it, the config must "
            f"list {name} under allow_relaxing."))
    return out


def effective_policy(pack: RulePack, overrides: dict[str, Any], config: Config | None = None) -> dict[str, dict[str, Any]]:
    """The value of each policy threshold: the manifest's, else the config's floor, else the default."""
    floors = config.policy if config else {}
    out = {}
    for name, spec in pack.policy.items():
        given = overrides.get(name)
        floor = floors.get(name)
        base = spec["default"] if floor is None else floor
        out[name] = {
            "value": base if given is None else given,
            "default": spec["default"],
            "source": "manifest" if given is not None else ("config" if floor is not None else "default"),
            "unit": spec.get("unit", ""),
            "means": spec.get("means", ""),
        }
    return out


def _primary_pool(data: dict, facts: dict) -> dict | None:
    primary = facts.get("primary_pool")
    if isinstance(primary, Unknown):
        return None
    return data["node_pools"][undotted(primary)[1]]


def choose_tier(data: dict, override: str | None, inferred: str, reason: str,
                undecided: tuple[str, ...]) -> tuple[str, str]:
    """The tier the rules are judged at, and why: --tier, else the manifest's `tier:` (with the
    tier its counts imply beside it), else the inferred one."""
    why = reason.removeprefix("inferred: ")
    implied = f"the counts imply {inferred} ({why})" if not undecided else f"the implied tier is undecided ({why})"
    if override:
        return override, f"set on the command line (--tier); {implied}"
    if data.get("tier"):
        return data["tier"], f"declared in the manifest (tier:); {implied}"
    return inferred, reason


def infer_tier(pack: RulePack, data: dict, facts: dict) -> tuple[str, str, tuple[str, ...]]:
    """The first tier of rules/tiers.yaml whose `when` holds: (name, "inferred: why", ()).
    Undecided (a count unknown) gives the largest tier and, third, the values that were unknown."""
    from linter.engine.sandbox import MissingData, Recorder, wrap

    scope = {"facts": wrap(facts, "facts", Recorder()), "manifest": wrap(data, "", Recorder())}
    skipped_unknown = []
    for tier in pack.tiers:
        try:
            if compiled_test(pack, tier["when"], "expr")(**scope):
                reason = compiled_test(pack, tier["reason"], "tmpl").render(**scope)
                note = f" ({', '.join(skipped_unknown)} unknown)" if skipped_unknown else ""
                return tier["name"], f"inferred: {reason}{note}", ()
        except MissingData as exc:
            skipped_unknown.extend(exc.needs)
    last = pack.tiers[-1]["name"]
    return last, f"inferred: none of the tiers could be decided ({', '.join(skipped_unknown)} unknown)", tuple(skipped_unknown) or ("facts.compute_nodes",)


def compiled_test(pack: RulePack, source: str, kind: str) -> Any:
    """A tier or condition test: compiled with the pack, else once per process."""
    found = pack.compiled.get((source, kind))
    if found is None:
        from linter.engine.compiler import compiled

        found = compiled(source, kind)
    return found


def conditions(pack: RulePack, data: dict, facts: dict) -> dict[str, str]:
    """The conditions of rules/conditions.yaml that hold for this manifest: name -> reason.
    A condition that reads a value the manifest leaves out does not hold."""
    from linter.engine.sandbox import MissingData, Recorder, wrap

    scope = {"facts": wrap(facts, "facts", Recorder()), "manifest": wrap(data, "", Recorder())}
    out = {}
    for condition in pack.conditions:
        try:
            if compiled_test(pack, condition["when"], "expr")(**scope):
                out[condition["name"]] = one_line(compiled_test(pack, condition["reason"], "tmpl").render(**scope))
        except MissingData:
            continue
    return out


def _views(data: dict, facts: dict, primary: dict | None) -> tuple[dict[str, Any], dict]:
    """The names a rule reads (`manifest`, `facts`, `pool`) as views of `data`, and the
    recorder those views fill with the values read."""
    from linter.engine.sandbox import Missing, Recorder, wrap

    recorder = Recorder()
    pool_path = facts["primary_pool"] if not isinstance(facts["primary_pool"], Unknown) else "node_pools[0]"
    scope = {
        "manifest": wrap(data, "", recorder),
        "facts": wrap(facts, "facts", recorder),
        "pool": wrap(primary, pool_path, recorder) if primary is not None else Missing(needs=("node_pools[].gpu",)),
    }
    return scope, recorder


def evaluate(rule: Rule, doc: Document, data: dict, facts: dict, primary: dict | None, tier: str,
             holding: dict[str, str] | None = None, evidence: bool = True,
             views: tuple[dict[str, Any], dict] | None = None, place_all: bool = True) -> Result:
    """`rule`'s result on a manifest. `views`: `_views(data, facts, primary)`, shared by the
    rules of one manifest (its recorder is cleared here for each). `place_all` false: a result
    that does not fail keeps no place (path, line: 1, 1) and no values read, which nothing
    shown then reads; its status, reason and what it is missing are the same, and its `at`
    still runs (a rule error there is reported as ever)."""
    spec = rule.spec
    scope, recorder = views if views is not None else _views(data, facts, primary)
    recorder.clear()
    result = Result(
        rule_id=spec.id, title=spec.title, layer=rule.layer, severity=spec.severity, status="pass",
        citations=list(spec.cite), file=doc.path,
    )
    if spec.tiers != "all" and tier not in spec.tiers:
        result.status = "skipped"
        result.reason = f"applies at {', '.join(spec.tiers)}; this manifest is {tier}"
        result.line, result.column = 1, 1
        return result
    if spec.not_applicable_when and holding:
        reasons = [holding[name] for name in spec.not_applicable_when if name in holding]
        if reasons:
            result.status = "skipped"
            result.reason = "; ".join(reasons)
            result.line, result.column = 1, 1
            return result
    sandbox = _sandbox()
    try:
        with sandbox.time_budget():  # one budget for all of the rule's expressions and templates, `at` included
            try:
                applies = rule.when.run(scope)
                if not applies:
                    result.status = "skipped"
                    result.reason = f"applies only when {spec.applies_when or spec.when}"
                    return result
                holds = rule.require.run(scope)
                if holds and not place_all and not evidence:
                    if not _straight_at(rule):  # an `at` that could run long runs, its budget as ever
                        _locate(rule, scope, result, doc, False)
                    return result
                _locate(rule, scope, result, doc)
                result.facts = read_values(recorder)
                if holds:
                    if evidence and rule.evidence is not None:
                        try:  # evidence is a courtesy: a value it lacks must not turn a pass into pending
                            result.evidence = one_line(rule.evidence.render_in(scope))
                        except sandbox.RuleTimeout:
                            raise
                        except Exception:  # noqa: BLE001 - MissingData, or a figure the words cannot format
                            result.evidence = ""
                    return result
                result.status = "fail"
                if getattr(rule, "each", None) is not None:  # a pack pickled before `each` has none
                    result.fix = one_line(rule.fix.render_in({**scope, "items": _each(rule, doc, scope, result)}))
                else:
                    result.message = one_line(rule.message.render_in(scope))
                    result.fix = one_line(rule.fix.render_in(scope))
            except sandbox.MissingData as exc:
                _locate(rule, scope, result, doc, place_all)
                if not place_all:  # no place, even one a failing `each` item had given it
                    result.path, result.line, result.column = "", 1, 1
                result.items, result.message = [], ""  # an item `each` could not judge: pending, not a partial list
                result.status = "pending"
                result.missing = sorted(set(exc.needs))
                result.reason = "needs " + ", ".join(result.missing)
                if place_all:
                    result.facts = read_values(recorder)
    except Exception as exc:  # noqa: BLE001 - a broken or hostile rule must not stop the others
        result.status = "pending"
        result.reason = f"rule error: {type(exc).__name__}: {sandbox.unaddressed(str(exc))}"
    return result


@lru_cache(maxsize=1)
def _sandbox() -> Any:
    """linter.engine.sandbox, imported when a rule first runs (a file the schema refuses runs none)."""
    from linter.engine import sandbox

    return sandbox


def _locate(rule: Rule, scope: dict[str, Any], result: Result, doc: Document, place: bool = True) -> None:
    """The result's path and line; `place` false: only the `at` template run (within the
    rule's budget, whose timeout is the rule's error however the result is reported)."""
    at = rule.spec.at
    try:
        if type(at) is str and renders_as_itself(at):
            path = at.strip()  # no template to run
        else:
            path = rule.at.render_in(scope).strip()
    except _sandbox().RuleTimeout:  # the rule's budget ran out: that is the rule's error, not a fallback
        raise
    except Exception:  # noqa: BLE001 - a failing `at` falls back to its fixed part
        path = at.split("{")[0].rstrip(".[")
    if place:
        result.path = path
        result.line, result.column = doc.position(_path_key(path) if path else ())


def _each(rule: Rule, doc: Document, scope: dict[str, Any], result: Result) -> list[Any]:
    """A failure of a rule with `each`: `message` and `at` rendered for every failing item (as
    `item`); the message names them all, in their order, and the result points at the first.
    Returns the items, which the rule's `fix` reads as `items`."""
    items = list(rule.each.run(scope))
    for item in items:
        mine = {**scope, "item": item}
        path = rule.at.render_in(mine).strip()
        line, column = doc.position(_path_key(path) if path else ())
        result.items.append({"path": path, "line": line, "column": column,
                             "message": one_line(rule.message.render_in(mine))})
    if not result.items:  # none listed: the message once (one that reads `item` is pending on it), never a pass
        result.message = one_line(rule.message.render_in(scope))
        return items
    first = result.items[0]
    result.path, result.line, result.column = first["path"], first["line"], first["column"]
    if len(result.items) == 1:
        result.message = first["message"]
        return items
    # several: each named by its path, unless its own message names it already
    result.message = " ".join(i["message"] if not i["path"] or i["path"] in i["message"] else f'{i["path"]}: {i["message"]}'
                              for i in result.items)
    return items


def plan_rules(pack: RulePack, plan: dict) -> list[Rule]:
    """The rules a plan like `plan` decides on its own: those that apply at every tier and,
    run on a manifest holding only that plan, are decided or wait for plan values alone (never
    for facts or other sections). The sizer holds each layout it proposes to them (plan_errors)."""
    every_tier = [rule for rule in pack.rules if rule.spec.tiers == "all"]
    return [rule for rule, result in zip(every_tier, _plan_results(every_tier, plan))
            if result.status != "pending" or (result.missing and all(m.startswith("plan.") for m in result.missing))]


def plan_errors(rules: list[Rule], plan: dict) -> list[Result]:
    """The errors `rules` (each applying at every tier) find in `plan` by its own values: each rule runs on a manifest that
    holds only the plan (with the models' defaults), as `check` runs it. A failure that read
    anything but the plan is left out; a rule that needs more is pending, so not an error."""
    return [r for r in _plan_results(rules, plan)
            if r.status == "fail" and r.severity == "error" and r.facts and all(k.startswith("plan.") for k in r.facts)]


def _plan_results(rules: list[Rule], plan: dict) -> list[Result]:
    plain = plain_plan(plan)
    if plain is None:  # a plan the schema refuses: the full review of the design says where
        return [Result(rule_id=rule.id, title=rule.spec.title, layer=rule.layer, severity=rule.spec.severity,
                       status="pending") for rule in rules]
    data = {"plan": plain}
    doc = Document(path="<plan>", data=data)
    facts = {"primary_pool": Unknown(("node_pools[].gpu",))}
    from linter.engine.sandbox import pack_budget

    with pack_budget():  # one CPU timer for these rules, as for a manifest's (the sizer asks some 1,200 plans)
        return [evaluate(rule, doc, data, facts, None, "") for rule in rules]


def plain_plan(plan: dict) -> dict | None:
    """A plan: section alone as plain_manifest gives it (the models' dump), or None where the
    schema refuses it: without pydantic where the quick check and the models' shape are sure."""
    if certainly_valid_plan(plan):
        dumped = dump(_plan_shape(), plan)
        if dumped is not None:
            return dumped
    from pydantic import ValidationError

    from linter.manifest.model import Plan

    try:
        return Plan.model_validate(plan).model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValidationError:
        return None


@lru_cache(maxsize=1)
def _plan_shape() -> Any:
    from linter.manifest.dump import shape

    return next(inner for key, *_, inner in shape()[1] if key == "plan")


_path_key = lru_cache(maxsize=4096)(undotted)  # a rule's `at` is the same path for most manifests
_STRAIGHT: dict[str, bool] = {}  # an `at` template's source -> whether it surely runs within its budget


def _straight_at(rule: Rule) -> bool:
    """Whether the rule's `at` is plain text or a template that surely runs within its budget
    (sandbox.straight_line): then a result that shows no place need not run it. Once per source."""
    at = rule.spec.at
    if type(at) is not str:
        return False
    found = _STRAIGHT.get(at)
    if found is None:
        from linter.engine.sandbox import straight_line

        found = _STRAIGHT[at] = renders_as_itself(at) or straight_line(rule.at)
    return found


def read_values(recorder: dict) -> dict[str, Any]:
    """The plain values (numbers, text, yes/no) a rule read, by path: the evidence a result keeps."""
    return {k: v for k, v in recorder.items() if isinstance(v, (int, float, str, bool))}
