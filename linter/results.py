"""What a review produces: one Result per rule, plus findings about the file itself."""

from __future__ import annotations

from functools import lru_cache

from linter.record import field, record, replace

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("fail", "waived", "pending", "pass", "skipped")
SEVERITIES = ("error", "warning", "info")
LAYERS = {
    "GPU": "Compute cards",
    "LNK": "Intra-node link",
    "NET": "Inter-node network",
    "MEM": "Host memory and local disk",
    "STO": "Storage",
    "PWR": "Power and cooling",
    "OPS": "Operations",
    "BUY": "Procurement",
    "WVR": "Waivers",
    "FILE": "The manifest file",
}
RESERVED_LAYERS = ("WVR", "FILE")  # findings about waivers and the file itself, never a rule's prefix
# A rule id: a layer prefix of 2-5 capital letters (the built-in ones above, or a team's own,
# e.g. ORG001) and three digits.
RULE_ID = r"^[A-Z]{2,5}[0-9]{3}$"


def layer_of(rule_id: str) -> str:
    """The layer prefix of a rule id: the capital letters before its digits."""
    letters = rule_id.rstrip("0123456789")
    return letters or rule_id


def layer_name(layer: str) -> str:
    return LAYERS.get(layer, f"Team rules ({layer})")


def layer_rank(layer: str) -> tuple[int, int, str]:
    """Sort key: built-in rule layers in their order, then a team's own, then waivers and the file."""
    order = list(LAYERS)
    if layer in RESERVED_LAYERS:
        return (2, order.index(layer), layer)
    if layer in LAYERS:
        return (0, order.index(layer), layer)
    return (1, 0, layer)


@record
class Result:
    rule_id: str
    title: str
    layer: str
    severity: str
    status: str
    message: str = ""
    fix: str = ""
    citations: list[str] = field(default_factory=list)
    file: str = ""
    line: int = 1
    column: int = 1
    path: str = ""  # manifest path the result points to, e.g. plan.parallelism.tensor
    reason: str = ""  # why skipped / what is pending / the waiver
    missing: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    waiver: dict[str, Any] | None = None
    evidence: str = ""  # a passing result's evidence in words (the rule's `evidence:` template)
    # a failure of a rule with `each`: every failing item, {path, line, column, message}; the
    # result's own message names them all, its path and line are the first item's
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def is_failure(self) -> bool:
        return self.status == "fail"

    def located(self) -> list[Result]:
        """One result per failing item, each at its item's path and line with its own message
        (SARIF, annotations); itself when the rule names no items."""
        if len(self.items) < 2:
            return [self]
        return [replace(self, message=i["message"], path=i["path"], line=i["line"], column=i["column"], items=[])
                for i in self.items]


def file_finding(code: str, message: str, file: str, line: int, column: int, path: str = "", fix: str = "") -> Result:
    """A problem with the manifest file itself (syntax, schema, catalog names)."""
    return Result(
        rule_id=code,
        title="The manifest file is readable and well-formed",
        layer="FILE",
        severity="error",
        status="fail",
        message=message,
        fix=fix,
        file=file,
        line=line,
        column=column,
        path=path,
    )


def one_line(text: object) -> str:
    """`text` on one line, runs of white space folded: templates wrap, and a line break from
    a manifest must not start what looks like another finding."""
    return " ".join(str(text).split())


def dotted(path: tuple) -> str:
    """("node_pools", 0, "gpu") -> "node_pools[0].gpu"."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@lru_cache(maxsize=4096)  # rules point at the same few paths in every manifest of a bulk run
def undotted(text: str) -> tuple:
    """Inverse of `dotted`."""
    parts: list[Any] = []
    for chunk in text.replace("]", "").split("."):
        name, *indexes = chunk.split("[")
        if name:
            parts.append(name)
        parts.extend(int(i) for i in indexes)
    return tuple(parts)
