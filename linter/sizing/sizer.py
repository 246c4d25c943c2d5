"""The sizer: goal -> layouts per GPU (search) -> whole manifests for the top rows (design)
-> the real review of the best rows (engine) -> a ranked answer with the reasons for what
was dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linter.engine.forked import jobs, share
from linter.engine.review import review_document, today
from linter.engine.rules import RulePack
from linter.manifest.loader import load_text
from linter.sizing import design
from linter.sizing.emit import manifest_text
from linter.sizing.goal import Goal
from linter.sizing.search import SEARCH_CAP, Candidate, Row, candidates, launch_rules, search_gpu, warm

CONFIRM_TRIES = 3  # rows of one GPU model reviewed before it is dropped as failing the rules


@dataclass
class Sizing:
    goal: Goal
    policy: dict[str, float]
    results: list[Candidate] = field(default_factory=list)
    not_candidates: list[tuple[str, str]] = field(default_factory=list)
    best: Row | None = None
    ranked: list[Row] = field(default_factory=list)  # every row, best first (overall_key)

    @property
    def rows(self) -> list[Row]:
        return [r for c in self.results for r in c.rows]


def policy_values(pack: RulePack, goal: Goal) -> dict[str, float]:
    values = {name: spec["default"] for name, spec in pack.policy.items()}
    values.update(goal.policy)
    return values


def size(goal: Goal, pack: RulePack, top: int = 5) -> Sizing:
    policy = policy_values(pack, goal)
    names, skipped = candidates(goal)
    out = Sizing(goal=goal, policy=policy, not_candidates=skipped)
    day = today().isoformat()
    launchable = launch_rules(goal, pack)

    def one_model(name: str) -> Candidate:
        return _model(goal, name, policy, pack, top, launchable, day)

    # each GPU model's search is its own: forked helpers take some (linter.engine.forked.share),
    # and the answers are the same, in the same order, as this process alone gives
    processes, _ = jobs()
    if processes > 1:
        warm(goal, names, goal.max_gpus or SEARCH_CAP, launchable)
    out.results = share(names, one_model, processes - 1)
    out.ranked = sorted(out.rows, key=lambda r: (overall_key(r, goal), r.rank))  # within a GPU model, its own order
    out.best = out.ranked[0] if out.ranked else None
    return out


def _model(goal: Goal, name: str, policy: dict[str, float], pack: RulePack, top: int, launchable: Any,
           day: str) -> Candidate:
    """One GPU model's candidate: its best layouts, each built into a manifest, the first
    reviewed by the rule pack."""
    cap = goal.max_gpus or SEARCH_CAP
    cand = search_gpu(goal, name, policy, cap, pack, top, launchable)
    kept = []
    for row in cand.rows:
        try:
            row.design["manifest"], row.design["notes"], facts = design.build(goal, row, policy, day)
        except design.Infeasible as exc:
            row.problem = str(exc)
            continue
        row.design["facts"] = facts
        kept.append(row)
        if len(kept) == top:
            break
    if cand.rows and not kept:
        cand.dropped = cand.rows[0].problem  # the least GPUs could not be built: the same limit binds the rest
    cand.rows = kept
    _confirm(cand, pack)
    if not cand.rows and goal.max_gpus and cap < SEARCH_CAP and not cand.dropped.startswith(("does not", "the catalog")):
        free = search_gpu(goal, name, policy, SEARCH_CAP, pack, 1, launchable)  # what it would take without the cap
        if free.rows:
            r = free.rows[0]
            cand.closest = (f"{r.gpus:,} x {name} ({r.layout.text}) would meet it in about {r.days:g} days; "
                            f"--max-gpus allows {goal.max_gpus:,}")
            cand.needed = r.gpus
        elif free.dropped:
            cand.closest = f"not even without --max-gpus {goal.max_gpus:,}: {free.dropped}"
            cand.needed = SEARCH_CAP + 1
    for i, row in enumerate(cand.rows, 1):
        row.rank = i
    return cand


def review_text(text: str, pack: RulePack) -> Any:
    return review_document(load_text(text, "<size>"), pack)


def _confirm(cand: Candidate, pack: RulePack) -> None:
    """Review the first rows with the full rule pack until one has no error; rows before it
    that fail are dropped with the failing rules named."""
    failures = []
    for row in list(cand.rows[:CONFIRM_TRIES]):
        review = review_text(manifest_text(row), pack)
        errors = [r for r in review.results if r.status == "fail" and r.severity == "error"]
        if not errors:
            row.confirmed = True
            row.design["review"] = review.counts()
            return
        failures.append(f"{row.layout.text}: " + "; ".join(f"{r.rule_id} {r.message}" for r in errors[:3]))
        cand.rows.remove(row)
    if failures:
        cand.dropped = "the review finds errors: " + " | ".join(failures)
        cand.rows = []


RANKING = ("reviewed by the rule pack without an error first; then the lowest price (purchase, or a month's rent with "
           "--mode rent) where a price is known; then the least IT power at full load; then the fewest GPUs; then the "
           "soonest done; then the most GPU memory to spare. Rows equal on all of these share a rank (=); a name never "
           "decides")


def overall_key(row: Row, goal: Goal) -> tuple:
    """Across GPU models, as RANKING says: no name and no catalog order in the key."""
    money = row.design.get("facts", {}).get("sizing_money", {})
    price = money.get("rent") if goal.mode == "rent" else money.get("capex")
    if price is None:
        price = money.get("capex") if money.get("capex") is not None else money.get("rent")
    it_kw = row.design.get("it_kw")
    spare = row.usable_gb - row.memory_gb if isinstance(row.usable_gb, (int, float)) else 0.0
    return (not row.confirmed, price is None, price or 0, it_kw is None, it_kw or 0, row.gpus, row.days, -round(spare, 1))
