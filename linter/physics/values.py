"""Values that may not be known yet, and the arithmetic that carries the not-knowing along.

Every fact is either a value or `Unknown(needs)`, naming the manifest fields that would decide
it; a rule that reads an unknown fact is *pending* on exactly those fields. Every layer's module
(memory, training, network, power, storage, procurement) builds its facts from these helpers.
"""

from __future__ import annotations

import math
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable

from linter.record import record
from linter.results import undotted


GB = 1e9


TB = 1e12


@record(frozen=True)
class Unknown:
    needs: tuple[str, ...]


MISSING = object()


NO_GPU_POOL = Unknown(("node_pools[].gpu",))  # no compute pool names a GPU: nothing per GPU is known


def unknowns(values: Any) -> tuple[str, ...]:
    """Every field the Unknown values among `values` need."""
    out: tuple[str, ...] = ()
    for v in values:
        if isinstance(v, Unknown):
            out += v.needs
    return out


def apply(compute: Callable[..., Any], *values: Any) -> Any:
    """compute(*values), or Unknown naming everything the unknown values need."""
    for v in values:
        if isinstance(v, Unknown):
            missing = tuple(dict.fromkeys(unknowns(values)))  # each field named once
            return Unknown(missing) if missing else compute(*values)
    return compute(*values)


@lru_cache(maxsize=4096)  # the same few paths, read for every manifest
def _steps(path: str) -> tuple:
    return undotted(path)


def get(data: Any, path: str) -> Any:
    node = data
    for part in _steps(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return node


def fact(data: dict, paths: list[str], compute: Callable[..., Any]) -> Any:
    """compute(*values at paths), or Unknown naming every path the manifest leaves out."""
    values = [get(data, p) for p in paths]
    if MISSING in values:
        return Unknown(tuple(p for p, v in zip(paths, values) if v is MISSING))
    result = apply(compute, *values)
    if isinstance(result, float) and not (math.isfinite(result) and abs(result) < 1e300):
        # a value the schema accepts (5e-324 as a divisor) drove the result out of range
        return Unknown((f"{' and '.join(paths)} (realistic values: these give a result out of range)",))
    return result


def rounded(x: float, digits: int = 2) -> float:
    return round(x, digits)


# The helpers below compute at once when their values are known (the usual case, some hundred
# times a manifest), and leave the unknown case to `apply`.

def difference(a: Any, b: Any) -> Any:
    if type(a) is Unknown or type(b) is Unknown:
        return apply(lambda x, y: x - y, a, b)
    return a - b


def sum_of(*values: Any) -> Any:
    return apply(lambda *known: sum(known), *values)


def maybe_rounded(value: Any) -> Any:
    return apply(rounded, value) if type(value) is Unknown else round(value, 2)


def scaled(value: Any, times: float) -> Any:
    return apply(lambda v: v * times, value) if type(value) is Unknown else value * times


def least(values: list[tuple[str, Any]], empty: str) -> Any:
    """The smallest value, or Unknown naming the paths that lack one."""
    missing = tuple(path for path, v in values if v is None)
    if missing or not values:
        return Unknown(missing or (empty,))
    return min(v for _, v in values)


def known_or_none(value: Any) -> Any:
    """`value`, or None where it is Unknown (a bandwidth a layout does not use)."""
    return None if isinstance(value, Unknown) else value
