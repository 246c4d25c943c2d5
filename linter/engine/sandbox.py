"""The sandbox rule expressions and message templates run in.

Rules see two names, `manifest` (the resolved manifest) and `facts` (derived values),
wrapped in `Scope` objects that expose data keys only, never Python attributes, and that
record every leaf value a rule reads (the "facts used" of its result). Reading a value
the manifest does not give raises `MissingData` naming the manifest path, which the engine
turns into a *pending* result.

Rules come from files a pull request can change, so they are treated as hostile:

- at load (`check_template`): no attribute or key starting with `_`, no names but
  `manifest`, `pool`, `facts`, the globals below and the template's own loop and `set`
  variables, no macros, includes, imports, block `set`s, filter blocks or `~`;
- while running: only an allowlist of filters and of read-only text, list and dict methods;
  lists and dicts cannot be changed; `**`, `*`, `+`, `%`, `range`, `join`, `replace` and
  `format` are refused before they would build a number over MAX_INT_BITS bits or a text
  or list over MAX_TEXT / MAX_SEQUENCE items; a rendered text stops at MAX_TEXT
  characters; one expression or template may run for TIME_BUDGET seconds (a SIGALRM
  timer, on Unix in the main thread) and is then stopped.

Every refusal is a SecurityError with a plain message; the engine reports it as that
rule's error and goes on with the other rules.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import operator
import re
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterator

from jinja2 import StrictUndefined, nodes, pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.environment import Template, TemplateExpression
from jinja2.exceptions import SecurityError
from jinja2.filters import do_format, do_join, do_replace
from jinja2.sandbox import ImmutableSandboxedEnvironment

from linter.physics.facts import Unknown
from linter.numbers import num

MAX_SEQUENCE = 10_000  # items a `*` may repeat a text or list to
MAX_RANGE = 10_000
MAX_TEXT = 1_000_000  # characters of any text a rule builds or renders
MAX_INT_BITS = 4_096  # about 1,200 decimal digits
MAX_FORMAT_WIDTH = 100
TIME_BUDGET = 2.0  # seconds one expression or template may run
PACK_BUDGET = 10.0  # seconds the whole rule pack may run on one manifest
# The most a single C-level operation may be handed: items plus characters, counted through
# nested lists and mappings. `==`, `in`, `.count()`, sorting, `str()` and every filter see
# their operands weighed first, so no one call runs long where the timer cannot stop it.
MAX_WEIGHT = 1_000_000

# Filters a rule may use (Jinja's own, minus those that build unbounded text or reach
# attributes directly); `join`, `replace` and `format` are replaced by bounded versions.
FILTERS = (
    "abs", "capitalize", "count", "d", "default", "dictsort", "first", "float", "groupby", "int",
    "items", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr",
    "reverse", "round", "select", "selectattr", "sort", "string", "sum", "title", "trim",
    "truncate", "unique", "upper", "wordcount",
)
# Methods a rule may call on text, numbers, lists and mappings: all read-only.
METHODS = frozenset((
    "lower", "upper", "title", "capitalize", "casefold", "strip", "lstrip", "rstrip", "startswith",
    "endswith", "split", "rsplit", "splitlines", "partition", "rpartition", "count", "find", "rfind",
    "index", "rindex", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric",
    "isdecimal", "removeprefix", "removesuffix", "get", "keys", "values", "items", "is_integer",
    "bit_length",
))
# Template constructs rules may not use: they can recurse, read other files or build text
# outside the output bound.
FORBIDDEN = {
    nodes.Macro: "macros", nodes.CallBlock: "call blocks", nodes.Include: "include",
    nodes.Import: "import", nodes.FromImport: "import", nodes.Extends: "extends",
    nodes.Block: "blocks", nodes.AssignBlock: "block set", nodes.FilterBlock: "filter blocks",
    nodes.Concat: "the ~ operator",
}
ROOTS = ("manifest", "pool", "facts")


class MissingData(Exception):
    """A rule read a value the manifest does not give."""

    def __init__(self, needs: tuple[str, ...]):
        super().__init__(", ".join(needs))
        self.needs = needs


class Missing(StrictUndefined):
    """Undefined that knows which manifest paths would define it."""

    __slots__ = ("_needs",)

    def __init__(self, hint: str | None = None, *args: Any, needs: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(hint, *args, **kwargs)
        self._needs = needs

    def _fail_with_undefined_error(self, *args: Any, **kwargs: Any) -> Any:
        # jinja's own hints ("No first item, sequence was empty.") say what is missing too
        raise MissingData(self._needs or (self._undefined_hint or str(self._undefined_name),))



# jinja2 binds its operators to the base class's failure function; point them at ours.
for _cls in (StrictUndefined, *StrictUndefined.__mro__):
    for _name, _value in list(vars(_cls).items()):
        if _value is getattr(_cls, "_fail_with_undefined_error", None) and _name.startswith("__") and _name not in vars(Missing):
            setattr(Missing, _name, Missing._fail_with_undefined_error)


_LEAVES = frozenset((int, float, str, bool, type(None)))


class Recorder(dict):
    """path -> value of every leaf a rule read."""


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def wrap(value: Any, path: str, recorder: Recorder) -> Any:
    kind = type(value)
    if kind in _LEAVES:  # most reads end at a number or a text: skip the slower ABC checks
        recorder[path] = value
        return value
    if kind is dict or (isinstance(value, Mapping) and not isinstance(value, Scope)):
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


class RuleTimeout(SecurityError):
    """A rule ran longer than TIME_BUDGET."""


class _Budget(threading.local):
    armed = False
    deadline: float | None = None  # the pack's, for the manifest under review


_budget = _Budget()
_alarm = {"installed": False, "usable": hasattr(signal, "setitimer")}


def _expire(signum: int, frame: Any) -> None:
    if _budget.armed:
        _budget.armed = False
        raise RuleTimeout(f"the rule ran for more than {TIME_BUDGET:g} s and was stopped")


@contextmanager
def time_budget(seconds: float = TIME_BUDGET) -> Iterator[None]:
    """Stop the code inside after `seconds` with RuleTimeout. Needs SIGALRM and the main
    thread; left off when the host program had its own SIGALRM handler. An inner budget
    inside an armed one does nothing."""
    if _budget.armed:
        yield
        return
    if _budget.deadline is not None:
        left = _budget.deadline - time.monotonic()
        if left <= 0:
            raise RuleTimeout(f"the rule pack ran for more than {PACK_BUDGET:g} s on this manifest; "
                              "this rule was not run")
        seconds = min(seconds, left)
    if not _alarm["usable"] or threading.current_thread() is not threading.main_thread():
        yield
        return
    if not _alarm["installed"]:
        if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
            _alarm["usable"] = False  # someone else's alarm: leave it alone
            yield
            return
        signal.signal(signal.SIGALRM, _expire)
        _alarm["installed"] = True
    _budget.armed = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        _budget.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextmanager
def pack_budget(seconds: float = PACK_BUDGET) -> Iterator[None]:
    """Every rule run inside shares `seconds` in all: each rule's own budget is cut to what
    is left, and once none is left the remaining rules are not run (a rule error each)."""
    outer = _budget.deadline
    _budget.deadline = time.monotonic() + seconds if outer is None else outer
    try:
        yield
    finally:
        _budget.deadline = outer


class BoundedTemplate(Template):
    """A template whose rendering stops at MAX_TEXT characters and TIME_BUDGET seconds."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        if _budget.armed:  # inside a running budget (a rule's message): no budget of its own
            return self._render(dict(*args, **kwargs))
        with time_budget():
            return self._render(dict(*args, **kwargs))

    def _render(self, variables: dict) -> str:
        parts: list[str] = []
        size = 0
        for part in self.root_render_func(self.new_context(variables)):
            size += len(part)
            if size > MAX_TEXT:
                raise SecurityError(f"the rendered text is over the limit of {MAX_TEXT:,} characters")
            parts.append(part)
        return "".join(parts)


class BoundedExpression(TemplateExpression):
    """An expression that stops after TIME_BUDGET seconds."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _budget.armed:  # inside a running budget (the rule's): no budget of its own
            return super().__call__(*args, **kwargs)
        with time_budget():
            return super().__call__(*args, **kwargs)


def _refuse_long(value: Any, what: str) -> Any:
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_TEXT:
        raise SecurityError(f"{what} of {len(value):,} items is over the limit of {MAX_TEXT:,}")
    return value


_SCALARS = frozenset((int, float, bool, type(None), str))
_FLAT = (list, tuple, set, frozenset)


def weigh(value: Any, limit: int = MAX_WEIGHT) -> int:
    """Items plus characters in `value`, through nested lists, tuples, sets and dicts; a
    SecurityError past `limit`. Manifest views (Scope, ScopeList) count as one: comparing
    or printing them runs Python code, which the timer stops."""
    kind = type(value)
    if kind in _SCALARS:
        return len(value) + 1 if kind is str else 1
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 1
        elif isinstance(item, _FLAT):
            total += 1
            stack.extend(item)
        elif isinstance(item, dict):
            total += 1
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            total += 1
        if total > limit:
            raise SecurityError(f"a value of more than {limit:,} items and characters is over the limit "
                                "for one operation")
    return total


def _weigh_all(values: Any) -> None:
    for value in values:
        if type(value) not in _SCALARS:
            weigh(value)


_COMPARE = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gteq": operator.ge,
    "lt": operator.lt, "lteq": operator.le,
    "in": lambda a, b: a in b, "notin": lambda a, b: a not in b,
}


def compare(left: Any, *rest: Any) -> Any:
    """`left op1 right1 op2 right2 ...` as Python chains it, each operand weighed first."""
    result: Any = True
    for index in range(0, len(rest), 2):
        op, right = rest[index], rest[index + 1]
        if type(left) not in _SCALARS or type(right) not in _SCALARS:
            weigh(left)
            weigh(right)
        result = _COMPARE[op](left, right)
        if not result:
            return result
        left = right
    return result


class _Generator(CodeGenerator):
    """Jinja's code generator, except that comparisons go through `compare`."""

    def visit_Compare(self, node: nodes.Compare, frame: Any) -> None:
        self.write("environment.hwlint_compare(")
        self.visit(node.expr, frame)
        for operand in node.ops:
            self.write(f", {operand.op!r}, ")
            self.visit(operand.expr, frame)
        self.write(")")


def _bounded_items(items: Any) -> Iterator[Any]:
    count = chars = 0
    for item in items:
        count += 1
        if isinstance(item, str):
            chars += len(item)
        if count > MAX_TEXT or chars > MAX_TEXT:
            raise SecurityError(f"a filter's result is over the limit of {MAX_TEXT:,} items or characters")
        yield item


def _guarded(name: str, function: Any) -> Any:
    """`function` (a filter) with its operands weighed first and its result bounded as it is built."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        _weigh_all(args)
        _weigh_all(kwargs.values())
        if name == "sum" and not isinstance(kwargs.get("start", args[3] if len(args) > 3 else 0), (int, float)):
            raise SecurityError("sum adds numbers only")
        result = function(*args, **kwargs)
        kind = type(result)
        if kind in _SCALARS and kind is not str:
            return result
        if isinstance(result, (str, list, tuple)):
            return _refuse_long(result, f"the result of {name}")
        if hasattr(result, "__next__"):
            return _bounded_items(result)
        return result

    return run


def _finalize(value: Any) -> Any:
    """Every `{{ }}` output is weighed before Jinja turns it into text."""
    if type(value) not in _SCALARS:
        weigh(value)
    return value


def _check_format(fmt: Any) -> None:
    if not isinstance(fmt, str):
        return
    for width, precision in re.findall(r"%(?:\([^)]*\))?[-+ #0]*(\*|[0-9]+)?(?:\.(\*|[0-9]+))?", fmt):
        for number in (width, precision):
            if number == "*" or (number and int(number) > MAX_FORMAT_WIDTH):
                raise SecurityError(f"a format width or precision of {number} is over the limit of {MAX_FORMAT_WIDTH}")


def _bounded_format(value: Any, *args: Any, **kwargs: Any) -> str:
    _check_format(value)
    return _refuse_long(do_format(value, *args, **kwargs), "formatted text")


@pass_eval_context
def _bounded_join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    items = list(value)
    if len(items) > MAX_SEQUENCE:
        raise SecurityError(f"joining {len(items):,} items is over the limit of {MAX_SEQUENCE:,}")
    if attribute is None and sum(len(str(i)) for i in items) + len(str(d)) * max(len(items) - 1, 0) > MAX_TEXT:
        raise SecurityError(f"the joined text would be over the limit of {MAX_TEXT:,} characters")
    return _refuse_long(do_join(eval_ctx, items, d, attribute), "joined text")


@pass_eval_context
def _bounded_replace(eval_ctx: Any, s: Any, old: str, new: str, count: int | None = None) -> str:
    text = str(s)
    hits = text.count(old) if old else len(text) + 1
    if count is not None:
        hits = min(hits, max(count, 0))
    if len(text) + hits * (len(new) - len(old)) > MAX_TEXT:
        raise SecurityError(f"the replaced text would be over the limit of {MAX_TEXT:,} characters")
    return do_replace(eval_ctx, s, old, new, count)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    sequence = (str, list, tuple)
    numbers = isinstance(left, int) and isinstance(right, int)
    if operator == "**":  # floats overflow with an error of their own; whole numbers grow
        if numbers and right > 0 and abs(left) > 1 and abs(left).bit_length() * right > MAX_INT_BITS:
            raise SecurityError(f"a number of about {abs(left).bit_length() * right:,} bits is over the limit of {MAX_INT_BITS:,}")
    elif operator == "*":
        if isinstance(left, sequence) or isinstance(right, sequence):
            count = right if isinstance(left, sequence) else left
            base = left if isinstance(left, sequence) else right
            if isinstance(count, int) and len(base) * count > MAX_SEQUENCE:
                raise SecurityError(f"a sequence of {len(base) * count:,} items is over the limit of {MAX_SEQUENCE:,}")
        elif numbers and abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
            raise SecurityError(f"a number of about {abs(left).bit_length() + abs(right).bit_length():,} bits is over the limit of {MAX_INT_BITS:,}")
    elif operator == "+" and isinstance(left, sequence) and isinstance(right, sequence):
        if len(left) + len(right) > MAX_TEXT:
            raise SecurityError(f"a sequence of {len(left) + len(right):,} items is over the limit of {MAX_TEXT:,}")
    elif operator == "%" and isinstance(left, str):
        _check_format(left)
        if type(right) not in _SCALARS:
            weigh(right)


class RuleEnvironment(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset(["**", "*", "+", "%"])
    template_class = BoundedTemplate
    code_generator_class = _Generator

    def __init__(self) -> None:
        super().__init__(undefined=Missing, autoescape=False, keep_trailing_newline=False, finalize=_finalize)
        self.hwlint_compare = compare
        self.globals = {
            "range": _safe_range,
            "ceil": math.ceil,
            "floor": math.floor,
            "sqrt": math.sqrt,
            "days_between": _days_between,
            "add_days": _add_days,
        }
        self.filters = {name: self.filters[name] for name in FILTERS}
        self.filters.update(num=num, join=_bounded_join, replace=_bounded_replace, format=_bounded_format)
        self.filters = {name: _guarded(name, f) for name, f in self.filters.items()}

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

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        # Jinja would hand back an Undefined, which here would read as *pending* data.
        raise SecurityError(f"{type(obj).__name__}.{attribute} is not available to rules (read-only data only)")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - Jinja's signature
        allowed = (
            isinstance(__obj, Missing)
            or any(__obj is f for f in __self.globals.values())
            or (type(__obj).__name__ == "builtin_function_or_method"
                and isinstance(getattr(__obj, "__self__", None), (str, int, float, list, tuple, dict))
                and __obj.__name__ in METHODS)
        )
        if not allowed:
            name = getattr(__obj, "__name__", type(__obj).__name__)
            raise SecurityError(f"{name}() cannot be called in a rule; rules may call {', '.join(__self.globals)} and read-only methods")
        owner = getattr(__obj, "__self__", None)
        if type(owner) not in _SCALARS or args or kwargs:
            _weigh_all((owner, *args, *kwargs.values()))
        return _refuse_long(super().call(__context, __obj, *args, **kwargs), "a result")


def descendants(ast: nodes.Node) -> list[nodes.Node]:
    """Every node under `ast`, in the order `find_all` visits them: walked once for all checks."""
    return list(ast.find_all(nodes.Node))


def _of(found: list[nodes.Node], kinds: Any) -> Iterator[Any]:
    return (node for node in found if isinstance(node, kinds))


def check_template(ast: nodes.Template, env: RuleEnvironment, found: list[nodes.Node] | None = None) -> list[str]:
    """What a rule's expression or template may not do, found before it ever runs.
    `found`: `descendants(ast)`, when the caller has it already."""
    found = descendants(ast) if found is None else found
    problems = []
    for node in _of(found, tuple(FORBIDDEN)):
        problems.append(f"uses {FORBIDDEN[type(node)]} (line {node.lineno}), which rules may not use")
    for node in _of(found, (nodes.Getattr, nodes.Getitem)):
        name = node.attr if isinstance(node, nodes.Getattr) else getattr(node.arg, "value", None)
        if isinstance(name, str) and name.startswith("_"):
            problems.append(f"reads the attribute {name}; rules read manifest data, not Python internals")
    local = {n.name for n in _of(found, nodes.Name) if n.ctx in ("store", "param")} | {"loop"}
    known = set(ROOTS) | set(env.globals) | local
    for node in _of(found, nodes.Name):
        if node.ctx == "load" and node.name not in known:
            problems.append(f"uses the name {node.name}, which is not defined; rules see {', '.join(ROOTS)} "
                            f"and the functions {', '.join(env.globals)}")
    return sorted(set(problems))


def compile_source(env: RuleEnvironment, source: str, kind: str, parsed: nodes.Template | None = None) -> Any:
    """`kind` "expr": a callable expression (like `env.compile_expression`, undefined kept);
    "tmpl": a template (`parsed`: `env.parse(source)` when the caller has it, not parsed
    again; compiling may change it). The Python code Jinja generated is kept on the result
    as `hwlint_code`, so a loaded rule pack can be cached without compiling again."""
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
        code = env.compile(source if parsed is None else parsed)
    return from_code(env, code, kind)


@lru_cache(maxsize=256)
def compiled(env: RuleEnvironment, source: str, kind: str) -> Any:
    """`compile_source`, once per process for each source (tier tests, reused per manifest)."""
    return compile_source(env, source, kind)


@lru_cache(maxsize=1)
def environment() -> RuleEnvironment:
    """The one sandboxed environment every rule of a process is compiled and run in."""
    return RuleEnvironment()


def from_code(env: RuleEnvironment, code: Any, kind: str) -> Any:
    """The expression or template that `compile_source` made, rebuilt from its code."""
    # A plain dict, not Jinja's ChainMap: each call copies the globals into a new context.
    template = env.template_class.from_code(env, code, dict(env.globals))
    compiled = BoundedExpression(template, undefined_to_none=False) if kind == "expr" else template
    compiled.hwlint_code = code
    compiled.hwlint_kind = kind
    return compiled


class Deferred:
    """An expression or template of a cached pack, rebuilt by `from_code` from its marshalled
    code the first time it runs: a one-manifest check runs fewer than half of a pack's
    templates (messages and fixes only for failures), so most are never rebuilt. It runs
    exactly as the rebuilt one (the same code in the same environment)."""

    __slots__ = ("hwlint_kind", "_marshalled", "_built")

    def __init__(self, marshalled: bytes, kind: str):
        self.hwlint_kind, self._marshalled, self._built = kind, marshalled, None

    @property
    def hwlint_code(self) -> Any:
        return self._get().hwlint_code

    def _get(self) -> Any:
        built = self._built
        if built is None:
            import marshal

            built = self._built = from_code(environment(), marshal.loads(self._marshalled), self.hwlint_kind)
        return built

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._get()(*args, **kwargs)

    def render(self, *args: Any, **kwargs: Any) -> str:
        return self._get().render(*args, **kwargs)


def references(template_ast: nodes.Node, everything: list[nodes.Node] | None = None) -> list[tuple[str, tuple, int]]:
    """Attribute chains rooted at `manifest`, `pool` or `facts`: (root, path, lineno).
    `everything`: `descendants(template_ast)`, when the caller has it already."""
    everything = descendants(template_ast) if everything is None else everything
    found = []
    for node in _of(everything, (nodes.Getattr, nodes.Getitem)):
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
        if isinstance(current, nodes.Name) and current.name in ROOTS:
            found.append((current.name, tuple(reversed(chain)), node.lineno))
    return found
