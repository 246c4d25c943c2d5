"""The rule-file format as pydantic models: `schemas/rule.schema.json` is generated from
`RuleFile`, and a record the quick check (`linter.engine.rules.quick_specs`) does not plainly
accept is validated here. Only such a pack build and the schema generator import this module
(and so pydantic); loaded packs hold plain records (`linter.engine.rules.Spec`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from linter.results import RULE_ID


class RuleCase(BaseModel):
    """A rule test: a base manifest (relative to the rule file), edits, and the expected status."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    base: str = Field(min_length=1)
    set: dict[str, Any] = {}
    unset: list[str] = []
    expect: Literal["pass", "fail", "pending", "skipped", "waived"]
    tier: Literal["single-gpu", "single-node", "multi-node", "large-cluster"] | None = None
    catalog: str | None = Field(None, description="a team catalog folder (relative to the rule file) the case is "
                                "reviewed with, as `--catalog` gives it")


class RuleSpec(BaseModel):
    """One rule record, as written in a rule file."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=RULE_ID)
    title: str = Field(min_length=1, max_length=120)
    severity: Literal["error", "warning", "info"]
    tiers: list[Literal["single-gpu", "single-node", "multi-node", "large-cluster"]] | Literal["all"]
    when: str = Field("true", description="Jinja2 expression: does the rule concern this manifest?")
    applies_when: str | None = Field(None, description="the `when` condition in words, for skip reasons")
    require: str = Field(description="Jinja2 expression that must hold")
    message: str = Field(description="Jinja2 template explaining a failure with the manifest's numbers")
    fix: str = Field(min_length=1)
    cite: list[str] = Field(min_length=1)
    uncited: str | None = Field(
        None, description="why the rule cites no source with an address (a standard, datasheet, paper or vendor "
        "guide) besides the source articles: what it rests on instead")
    at: str = Field(description="manifest path the finding points to; may use {{ }}")
    each: str | None = Field(
        None, description="Jinja2 expression listing the failing items (racks, fabrics, tiers...) when the rule "
        "fails: `message` and `at` are rendered once per item, which they read as `item`, so the finding names every "
        "one at its own path (SARIF and annotations: one result per item); `fix` reads them all as `items`")
    waivable: bool = True
    not_applicable_when: list[str] = Field(
        [], description="names of conditions in rules/conditions.yaml (e.g. provider-facility); when one holds, "
        "the rule is not applicable and the condition's reason says why")
    never_skip: bool = Field(False, description="one of the checks that may never be skipped (power and cooling "
                             "headroom, checkpoint space, data backup): it applies at every tier, cannot be "
                             "waived, and `hwlint verify` refuses while it is pending or deselected")
    evidence: str | None = Field(None, description="Jinja2 template saying in words, with the manifest's numbers and "
                                 "units, why a passing result holds (checklist evidence); by default the values read")
    confirm: str | None = Field(None, description="the verifiable action that settles a pending result "
                                "(checklist); by default it is derived from the missing fields")
    why: str | None = Field(None, description="why it matters, for the rule docs")
    example_fail: str | None = Field(None, description="YAML snippet that fails the rule")
    example_pass: str | None = Field(None, description="the same snippet, fixed")
    tests: list[RuleCase] = []


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rules: list[RuleSpec]
