"""The sandbox rule expressions and message templates run in.

Rules see two names, `manifest` (the resolved manifest) and `facts` (derived values),
wrapped in `Scope` objects that expose data keys only, never Python attributes, and that
record every leaf value a rule reads (the "facts used" of its result). Reading a value
the manifest does not give raises `MissingData` naming the manifest path, which the engine
turns into a *pending* result. Arithmetic that could blow up (`**`, `*` on strings and
lists, `range`) is bounded.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from .facts import Unknown
from .numbers import num

MAX_POWER_EXPONENT = 64
MAX_SEQUENCE = 10_000
MAX_RANGE = 10_000


class MissingData(Exception):
    """A rule read a value the manifest does not give."""

    def __init__(self, needs: tuple[str, ...]):
        super().__init__(", ".join(needs))
        self.needs = needs


class Missing(StrictUndefined):
    """Undefined that knows which manifest paths would define it."""

    __slots__ = ("_needs",)

    def __init__(self, needs: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(**kwargs)
        self._needs = needs

    def _fail_with_undefined_error(self, *args: Any, **kwargs: Any) -> Any:
        raise MissingData(self._needs or (str(self._undefined_name),))



# jinja2 binds its operators to the base class's failure function; point them at ours.
for _cls in (StrictUndefined, *StrictUndefined.__mro__):
    for _name, _value in list(vars(_cls).items()):
        if _value is getattr(_cls, "_fail_with_undefined_error", None) and _name.startswith("__") and _name not in vars(Missing):
            setattr(Missing, _name, Missing._fail_with_undefined_error)


class Recorder(dict):
    """path -> value of every leaf a rule read."""


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def wrap(value: Any, path: str, recorder: Recorder) -> Any:
    if isinstance(value, Mapping) and not isinstance(value, Scope):
        return Scope(value, path, recorder)
    if isinstance(value, list):
        return ScopeList(value, path, recorder)
    if isinstance(value, Unknown):
        return Missing(needs=value.needs, name=path)
    recorder[path] = value
    return value


class Scope(Mapping):
    """Read-only view of a mapping: keys become attributes, absent keys become Missing."""

    __slots__ = ("_data", "_path", "_recorder")

    def __init__(self, data: Mapping, path: str, recorder: Recorder):
        self._data, self._path, self._recorder = data, path, recorder

    def lookup(self, key: Any) -> Any:
        path = _join(self._path, key)
        if key not in self._data:
            return Missing(needs=(path,), name=path)
        return wrap(self._data[key], path, self._recorder)

    def __getitem__(self, key: Any) -> Any:
        return self.lookup(key)

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"<{self._path or 'manifest'}>"


class ScopeList(Sequence):
    __slots__ = ("_items", "_path", "_recorder")

    def __init__(self, items: list, path: str, recorder: Recorder):
        self._items, self._path, self._recorder = items, path, recorder

    def lookup(self, index: Any) -> Any:
        """Item `index`, or Missing when the list has no such item."""
        if isinstance(index, int) and -len(self._items) <= index < len(self._items):
            return self[index]
        path = _join(self._path, index)
        return Missing(needs=(path,), name=path)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._items)))]
        index = index % len(self._items) if -len(self._items) <= index < 0 else index
        return wrap(self._items[index], _join(self._path, index), self._recorder)

    def __iter__(self):
        return (self[i] for i in range(len(self._items)))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<{self._path}>"


def _days_between(start: Any, end: Any) -> int:
    return (dt.date.fromisoformat(str(end)[:10]) - dt.date.fromisoformat(str(start)[:10])).days


def _add_days(day: Any, days: float) -> str:
    return (dt.date.fromisoformat(str(day)[:10]) + dt.timedelta(days=float(days))).isoformat()


def _safe_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_RANGE:
        raise SecurityError(f"range of {len(r):,} items is over the limit of {MAX_RANGE:,}")
    return r


class RuleEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset(["**", "*"])

    def __init__(self) -> None:
        super().__init__(undefined=Missing, autoescape=False, keep_trailing_newline=False)
        self.globals = {
            "range": _safe_range,
            "ceil": math.ceil,
            "floor": math.floor,
            "sqrt": math.sqrt,
            "days_between": _days_between,
            "add_days": _add_days,
        }
        self.filters["num"] = num

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Scope):
            return obj.lookup(attribute)
        if isinstance(obj, ScopeList):
            return Missing(needs=(_join(obj._path, attribute),), name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, (Scope, ScopeList)):
            return obj.lookup(argument)
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, (int, float)) and abs(right) > MAX_POWER_EXPONENT:
                raise SecurityError(f"exponent {right} is over the limit of {MAX_POWER_EXPONENT}")
            return left**right
        if isinstance(left, (str, list, tuple)) or isinstance(right, (str, list, tuple)):
            count = right if isinstance(left, (str, list, tuple)) else left
            base = left if isinstance(left, (str, list, tuple)) else right
            if isinstance(count, int) and len(base) * count > MAX_SEQUENCE:
                raise SecurityError(f"a sequence of {len(base) * count:,} items is over the limit of {MAX_SEQUENCE:,}")
        return left * right


def compile_source(env: RuleEnvironment, source: str, kind: str) -> Any:
    """`kind` "expr": a callable expression (like `env.compile_expression`, undefined kept);
    "tmpl": a template. The Python code Jinja generated is kept on the result as
    `hwlint_code`, so a loaded rule pack can be cached without compiling again."""
    if kind == "expr":
        from jinja2.exceptions import TemplateSyntaxError
        from jinja2.parser import Parser

        parser = Parser(env, source, state="variable")
        expr = parser.parse_expression()
        if not parser.stream.eos:
            raise TemplateSyntaxError("chunk after expression", parser.stream.current.lineno, None, None)
        expr.set_environment(env)
        code = env.compile(nodes.Template([nodes.Assign(nodes.Name("result", "store"), expr, lineno=1)], lineno=1))
    else:
        code = env.compile(source)
    return from_code(env, code, kind)


def from_code(env: RuleEnvironment, code: Any, kind: str) -> Any:
    """The expression or template that `compile_source` made, rebuilt from its code."""
    from jinja2.environment import TemplateExpression

    template = env.template_class.from_code(env, code, env.make_globals(None))
    compiled = TemplateExpression(template, undefined_to_none=False) if kind == "expr" else template
    compiled.hwlint_code = code
    return compiled


def references(template_ast: nodes.Node) -> list[tuple[str, tuple, int]]:
    """Attribute chains rooted at `manifest`, `pool` or `facts`: (root, path, lineno)."""
    found = []
    for node in template_ast.find_all((nodes.Getattr, nodes.Getitem)):
        chain: list[Any] = []
        current: Any = node
        while isinstance(current, (nodes.Getattr, nodes.Getitem)):
            if isinstance(current, nodes.Getattr):
                chain.append(current.attr)
            elif isinstance(current.arg, nodes.Const):
                chain.append(current.arg.value)
            else:
                chain.append(0)
            current = current.node
        if isinstance(current, nodes.Name) and current.name in ("manifest", "pool", "facts"):
            found.append((current.name, tuple(reversed(chain)), node.lineno))
    return found
