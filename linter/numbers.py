"""How numbers are printed everywhere: thousands separators, no trailing zeros."""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any


def num(value: Any, digits: int = 1) -> str:
    """1234.5 -> '1,234.5'; 8.0 -> '8'; text passes through."""
    if type(value) is int:  # the common case, first
        return f"{value:,}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer():
        return f"{int(value):,}"
    text = f"{value:,.{digits}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return text if text not in ("0", "-0") else f"{value:.2g}"
