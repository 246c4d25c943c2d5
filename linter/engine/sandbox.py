"""The sandbox rule expressions and message templates run in.

Rules are written in Jinja2's expression and template language. `linter.engine.compiler`
translates each one, when a pack is built, into a small Python function whose every
attribute read, item read, call, filter, test, comparison and `* ** + %` goes through the
functions below; this module is all a loaded rule needs to run, so a check imports no
template engine.

Rules see three names, `manifest` (the resolved manifest), `facts` (derived values) and
`pool` (the largest compute pool), wrapped in `Scope` objects that expose data keys only,
never Python attributes, and that record every leaf value a rule reads (the "facts used" of
its result). Reading a value the manifest does not give raises `MissingData` naming the
manifest path, which the engine turns into a *pending* result.

Rules come from files a pull request can change, so they are treated as hostile:

- when compiled (`compiler.check_template`): no attribute or key starting with `_`, no names
  but `manifest`, `pool`, `facts`, the globals below and the template's own loop and `set`
  variables, no macros, includes, imports, block `set`s, filter blocks or `~`;
- while running: only an allowlist of filters and of read-only text, list and dict methods;
  lists and dicts cannot be changed; attributes of functions, types, generators and frames
  cannot be read; `**`, `*`, `+`, `%`, `range`, `join`, `replace` and `format` are refused
  before they would build a number over MAX_INT_BITS bits or a text or list over MAX_TEXT /
  MAX_SEQUENCE items; a rendered text stops at MAX_TEXT characters; one expression or
  template may use TIME_BUDGET seconds of CPU time (a SIGPROF timer, on Unix in the main
  thread) and is then stopped. CPU time, not time on the clock, so that a busy machine gives
  a manifest the same verdict as an idle one.

Every refusal is a SecurityError with a plain message; the engine reports it as that
rule's error and goes on with the other rules.
"""

from __future__ import annotations

import datetime as dt
import math
import operator
import re
import signal
import threading
import time
import types
from collections import abc, deque, namedtuple
from contextlib import contextmanager
from itertools import chain, groupby

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

from linter.physics.values import Unknown
from linter.numbers import num

MAX_SEQUENCE = 10_000  # items a `*` may repeat a text or list to
MAX_RANGE = 10_000
MAX_TEXT = 1_000_000  # characters of any text a rule builds or renders
MAX_INT_BITS = 4_096  # about 1,200 decimal digits
MAX_FORMAT_WIDTH = 100
TIME_BUDGET = 2.0  # seconds of CPU time one expression or template may use
PACK_BUDGET = 10.0  # seconds of CPU time the whole rule pack may use to load, and to run on one manifest
cpu_time = time.process_time  # this process's CPU time, the clock the SIGPROF timer counts
# The most a single C-level operation may be handed: items plus characters, counted through
# nested lists and mappings. `==`, `in`, `.count()`, sorting, `str()` and every filter see
# their operands weighed first, so no one call runs long where the timer cannot stop it.
MAX_WEIGHT = 1_000_000

# Methods a rule may call on text, numbers, lists and mappings: all read-only.
METHODS = frozenset((
    "lower", "upper", "title", "capitalize", "casefold", "strip", "lstrip", "rstrip", "startswith",
    "endswith", "split", "rsplit", "splitlines", "partition", "rpartition", "count", "find", "rfind",
    "index", "rindex", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric",
    "isdecimal", "removeprefix", "removesuffix", "get", "keys", "values", "items", "is_integer",
    "bit_length",
))
ROOTS = ("manifest", "pool", "facts", "item", "items")  # `item`, `items`: one and all of the failing items of `each`


class SecurityError(Exception):
    """A rule tried something the sandbox does not allow."""


class RuleTimeout(SecurityError):
    """A rule used more than TIME_BUDGET of CPU time."""


class MissingData(Exception):
    """A rule read a value the manifest does not give."""

    def __init__(self, needs: tuple[str, ...]):
        super().__init__(", ".join(needs))
        self.needs = needs


class Missing:
    """A value a rule read that is not there. Testing (`is defined`) and `default` see it;
    anything else done with it raises MissingData naming the manifest paths that would
    define it (or, for a value that is not a manifest path, what was missing)."""

    __slots__ = ("_needs", "_hint", "_name")

    def __init__(self, hint: str | None = None, needs: tuple[str, ...] = (), name: Any = None):
        self._hint, self._needs, self._name = hint, needs, name

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise MissingData(self._needs or (self._hint or str(self._name),))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._fail()

    def __repr__(self) -> str:
        return "Undefined"

    # everything else a rule can do with a value (as Jinja2's StrictUndefined)
    __bool__ = __len__ = __iter__ = __str__ = __contains__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __call__ = __getitem__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _fail
    __int__ = __float__ = __complex__ = _fail


class UndefinedError(Exception):
    """Something other than printing, truth or iteration done with a `Blank`."""


class Blank:
    """The value of `a if b` when b is false and there is no else: prints as nothing, is
    false and empty; anything else done with it is an UndefinedError (as in Jinja2)."""

    __slots__ = ("_hint",)

    def __init__(self, hint: str):
        self._hint = hint

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise UndefinedError(self._hint)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)
        return self._fail()

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other)

    def __ne__(self, other: Any) -> bool:
        return type(self) is not type(other)

    def __hash__(self) -> int:
        return id(Blank)

    def __str__(self) -> str:
        return ""

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Undefined"

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _fail
    __call__ = __getitem__ = __lt__ = __le__ = __gt__ = __ge__ = __int__ = __float__ = __complex__ = _fail


UNDEFINED = (Missing, Blank)  # what `is defined` and `default` see as not there

_LEAVES = frozenset((int, float, str, bool, type(None)))


class Recorder(dict):
    """path -> value of every leaf a rule read."""


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def wrap(value: Any, path: str, recorder: Recorder) -> Any:
    """`value` as a rule reads it at `path`: a view, a Missing, or itself (recorded)."""
    view = _view(value, path, recorder)
    if type(view) is tuple:
        recorder[path] = view[1]
        return view[1]
    return view


def _view(value: Any, path: str, recorder: Recorder) -> Any:
    """What a view keeps for one of its keys or items: a view, a Missing, or a leaf, a value
    the view gives as itself, recorded each time a rule reads it: the tuple (path, value)
    (nothing else a view keeps is a tuple; a tuple is built without a call)."""
    kind = type(value)
    if kind in _LEAVES:
        return (path, value)
    if kind is dict or (isinstance(value, abc.Mapping) and not isinstance(value, Scope)):
        return Scope(value, path, recorder)
    if isinstance(value, list):
        return ScopeList(value, path, recorder)
    if isinstance(value, Unknown):
        return Missing(needs=value.needs, name=path)
    return (path, value)


class Scope(abc.Mapping):
    """Read-only view of a mapping: keys become attributes, absent keys become Missing.

    A view keeps what it made of each key it was asked for, so the rules of one manifest,
    which share one view of it (and one recorder, cleared per rule), build each path once."""

    __slots__ = ("_data", "_path", "_recorder", "_kept")

    def __init__(self, data: abc.Mapping, path: str, recorder: Recorder):
        self._data, self._path, self._recorder, self._kept = data, path, recorder, {}

    def lookup(self, key: Any) -> Any:
        try:
            kept = self._kept[key]
        except KeyError:
            path = _join(self._path, key)
            kept = _view(self._data[key], path, self._recorder) if key in self._data else Missing(needs=(path,), name=path)
            self._kept[key] = kept
        if type(kept) is tuple:  # a leaf
            self._recorder[kept[0]] = kept[1]
            return kept[1]
        return kept

    def __getitem__(self, key: Any) -> Any:
        return self.lookup(key)

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"<{self._path or 'manifest'}>"


class ScopeList(abc.Sequence):
    __slots__ = ("_items", "_path", "_recorder", "_kept")

    def __init__(self, items: list, path: str, recorder: Recorder):
        self._items, self._path, self._recorder, self._kept = items, path, recorder, {}

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
        kept = self._kept.get(index)
        if kept is None:
            kept = self._kept[index] = _view(self._items[index], _join(self._path, index), self._recorder)
        if type(kept) is tuple:  # a leaf
            self._recorder[kept[0]] = kept[1]
            return kept[1]
        return kept

    def __iter__(self):
        return (self[i] for i in range(len(self._items)))

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<{self._path}>"


# --- the time budget: CPU time, which the machine's load does not change ---------------


TICK = 0.05  # seconds of CPU time between the pack timer's checks: a rule stops within 2 ticks past its budget


class _Budget(threading.local):
    armed = False  # a rule is running under its budget
    started = 0.0  # when it started (cpu_time)
    limit = TIME_BUDGET  # its budget, cut to what is left of the pack's
    deadline: float | None = None  # the pack's, for the manifest under review
    fires: float | None = None  # when (in cpu_time) the interval timer, if set, goes off
    # while a pack's periodic timer runs (pack_budget): the rules are counted, not clocked
    ticking = False
    spent = False  # the pack's budget ran out: no further rule runs
    rule = 0  # how many rules have started under the pack
    seen = -1  # the rule the timer last saw running
    since = 0.0  # when (cpu_time) the timer first saw it: it has run at least this long since


_budget = _Budget()
_alarm = {"installed": False, "usable": hasattr(signal, "setitimer")}


def _set_timer(seconds: float) -> None:
    _budget.fires = cpu_time() + seconds
    signal.setitimer(signal.ITIMER_PROF, seconds)


def _expire(signum: int, frame: Any) -> None:
    """The timer went off: stop the running rule if its budget is spent, else set the timer
    again for what is left of it (it was set for an earlier rule, or for the whole pack)."""
    if _budget.ticking:
        _tick()
        return
    _budget.fires = None
    if not _budget.armed:
        return
    left = _budget.started + _budget.limit - cpu_time()
    if left > 0.001:
        _set_timer(left)
        return
    _budget.armed = False
    if _budget.limit < TIME_BUDGET:  # its budget was what was left of the pack's
        raise RuleTimeout(f"the rule pack used more than {PACK_BUDGET:g} s of CPU time on this manifest; "
                          "this rule was stopped")
    raise RuleTimeout(f"the rule used more than {TIME_BUDGET:g} s of CPU time and was stopped")


def _tick() -> None:
    """The pack's periodic timer, every TICK of CPU time: the pack stops once its deadline has
    passed; a rule once the timer has seen it run for its whole budget (it had started before
    the tick that first saw it, so it has used at least that much: never stopped early, and
    stopped within two ticks past it). A rule's start is never clocked: rules take microseconds,
    and reading the CPU clock is a system call."""
    now = cpu_time()
    if _budget.deadline is not None and now >= _budget.deadline:
        _budget.spent = True
        if _budget.armed:
            _budget.armed = False
            raise RuleTimeout(f"the rule pack used more than {PACK_BUDGET:g} s of CPU time on this manifest; "
                              "this rule was stopped")
        return
    if not _budget.armed:
        return
    if _budget.seen != _budget.rule:
        _budget.seen, _budget.since = _budget.rule, now
    elif now - _budget.since >= _budget.limit:
        _budget.armed = False
        raise RuleTimeout(f"the rule used more than {_budget.limit:g} s of CPU time and was stopped")


def _timer_usable() -> bool:
    if not _alarm["usable"] or threading.current_thread() is not threading.main_thread():
        return False
    if not _alarm["installed"]:
        if signal.getsignal(signal.SIGPROF) not in (signal.SIG_DFL, None):
            _alarm["usable"] = False  # someone else's timer (a profiler): leave it alone
            return False
        signal.signal(signal.SIGPROF, _expire)
        _alarm["installed"] = True
    return True


class time_budget:  # noqa: N801 - used as `with time_budget():`, like the context manager it was
    """Stop the code inside after `seconds` of CPU time with RuleTimeout. Needs SIGPROF and
    the main thread; left off when the host program had its own SIGPROF handler. An inner budget
    inside an armed one does nothing.

    A rule takes microseconds, so the timer is not set and cleared around each one (two
    system calls per rule): inside a pack (`pack_budget`) a periodic timer runs for the whole
    manifest and each rule is only counted (`_tick`); outside one, the timer is set when none
    is pending that would go off before this budget ends, and when it goes off `_expire` sets it
    again for what the running rule has left, or lets it lapse."""

    __slots__ = ("seconds", "outer")

    def __init__(self, seconds: float = TIME_BUDGET):
        self.seconds = seconds

    def __enter__(self) -> None:
        self.outer = _budget.armed
        if self.outer:
            return
        if _budget.ticking:
            if _budget.spent:
                raise RuleTimeout(f"the rule pack used more than {PACK_BUDGET:g} s of CPU time on this manifest; "
                                  "this rule was not run")
            _budget.rule += 1
            _budget.limit, _budget.armed = self.seconds, True
            return
        now = cpu_time()
        seconds = self.seconds
        if _budget.deadline is not None:
            left = _budget.deadline - now
            if left <= 0:
                raise RuleTimeout(f"the rule pack used more than {PACK_BUDGET:g} s of CPU time on this manifest; "
                                  "this rule was not run")
            seconds = min(seconds, left)
        if not _timer_usable():
            return
        _budget.started, _budget.limit, _budget.armed = now, seconds, True
        if _budget.fires is None or _budget.fires > now + seconds:
            _set_timer(seconds)

    def __exit__(self, *exc: Any) -> None:
        if self.outer:
            return
        _budget.armed = False
        if _budget.deadline is None and _budget.fires is not None:  # no pack to clear it after
            _clear_timer()


def _clear_timer() -> None:
    if _budget.fires is not None and _alarm["installed"]:
        signal.setitimer(signal.ITIMER_PROF, 0)
    _budget.fires = None


@contextmanager
def pack_budget(seconds: float = PACK_BUDGET) -> Iterator[None]:
    """Every rule run inside shares `seconds` in all: each rule's own budget is cut to what
    is left, and once none is left the remaining rules are not run (a rule error each). The
    timer goes off every TICK of CPU time inside (`_tick`)."""
    outer = _budget.deadline
    _budget.deadline = cpu_time() + seconds if outer is None else outer
    ticking = outer is None and not _budget.armed and _timer_usable()
    if ticking:
        _clear_timer()  # one set for a budget outside the pack gives way to the pack's
        _budget.ticking, _budget.spent, _budget.seen = True, False, -1
        _budget.fires = _budget.deadline  # a timer is running: the one-shot budgets leave it alone
        signal.setitimer(signal.ITIMER_PROF, TICK, TICK)
    try:
        yield
    finally:
        _budget.deadline = outer
        if ticking:
            _budget.ticking = False
            signal.setitimer(signal.ITIMER_PROF, 0)
            _budget.fires = None
        elif outer is None:
            _clear_timer()


# --- weighing: no single C-level call handed more than MAX_WEIGHT --------------------------

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
        if type(value) not in _LIGHT:
            weigh(value)


# weigh as one item each: plain values, and the manifest's views (whose reads the timer stops)
_LIGHT = frozenset((*_SCALARS, Scope, ScopeList, Missing, Blank))


def _refuse_long(value: Any, what: str) -> Any:
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_TEXT:
        raise SecurityError(f"{what} of {len(value):,} items is over the limit of {MAX_TEXT:,}")
    return value


# --- what compiled rules call -----------------------------------------------------------

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


def _check_format(fmt: Any) -> None:
    if not isinstance(fmt, str):
        return
    for width, precision in re.findall(r"%(?:\([^)]*\))?[-+ #0]*(\*|[0-9]+)?(?:\.(\*|[0-9]+))?", fmt):
        for number in (width, precision):
            if number == "*" or (number and int(number) > MAX_FORMAT_WIDTH):
                raise SecurityError(f"a format width or precision of {number} is over the limit of {MAX_FORMAT_WIDTH}")


def _check_binop(symbol: str, left: Any, right: Any) -> None:
    sequence = (str, list, tuple)
    numbers = isinstance(left, int) and isinstance(right, int)
    if symbol == "**":  # floats overflow with an error of their own; whole numbers grow
        if numbers and right > 0 and abs(left) > 1 and abs(left).bit_length() * right > MAX_INT_BITS:
            raise SecurityError(f"a number of about {abs(left).bit_length() * right:,} bits is over the limit of {MAX_INT_BITS:,}")
    elif symbol == "*":
        if isinstance(left, sequence) or isinstance(right, sequence):
            count = right if isinstance(left, sequence) else left
            base = left if isinstance(left, sequence) else right
            if isinstance(count, int) and len(base) * count > MAX_SEQUENCE:
                raise SecurityError(f"a sequence of {len(base) * count:,} items is over the limit of {MAX_SEQUENCE:,}")
        elif numbers and abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
            raise SecurityError(f"a number of about {abs(left).bit_length() + abs(right).bit_length():,} bits is over the limit of {MAX_INT_BITS:,}")
    elif symbol == "+" and isinstance(left, sequence) and isinstance(right, sequence):
        if len(left) + len(right) > MAX_TEXT:
            raise SecurityError(f"a sequence of {len(left) + len(right):,} items is over the limit of {MAX_TEXT:,}")
    elif symbol == "%" and isinstance(left, str):
        _check_format(left)
        if type(right) not in _SCALARS:
            weigh(right)


_BINOPS = {"+": operator.add, "*": operator.mul, "**": operator.pow, "%": operator.mod}


def binop(symbol: str, left: Any, right: Any) -> Any:
    """`+ * ** %`, refused before they would build too much."""
    _check_binop(symbol, left, right)
    made = _BINOPS[symbol](left, right)
    return unaddressed(made) if symbol == "%" and type(made) is str else made  # `'%s' % range`: no address


# Methods that change a list, dict, set or deque: a rule may not even read them.
_MUTATORS = (
    (abc.MutableSet, frozenset(("add", "clear", "difference_update", "discard", "pop", "remove",
                                "symmetric_difference_update", "update"))),
    (abc.MutableMapping, frozenset(("clear", "pop", "popitem", "setdefault", "update"))),
    (abc.MutableSequence, frozenset(("append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"))),
    (deque, frozenset(("append", "appendleft", "clear", "extend", "extendleft", "pop", "popleft", "remove",
                       "rotate"))),
)
# Objects none of whose attributes a rule may read: code, its frames and its namespaces.
_OPAQUE = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.CodeType, types.FrameType,
           types.TracebackType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType,
           types.ModuleType, type)


def _safe_attribute(obj: Any, name: str) -> bool:
    if name.startswith("_") or isinstance(obj, _OPAQUE):
        return False
    for kinds, names in _MUTATORS:
        if isinstance(obj, kinds):
            return name not in names
    return True


def _unsafe(obj: Any, name: str) -> SecurityError:
    return SecurityError(f"{type(obj).__name__}.{name} is not available to rules (read-only data only)")


def getattr_(obj: Any, name: str) -> Any:
    """`obj.name`: a data key of a manifest view; else a safe attribute, else an item."""
    kind = type(obj)
    if kind is Scope:
        return obj.lookup(name)
    if kind is ScopeList:
        return Missing(needs=(_join(obj._path, name),), name=name)
    if kind is Missing:
        return obj._fail()
    try:
        value = getattr(obj, name)
    except AttributeError:
        try:
            return obj[name]
        except (TypeError, LookupError):
            return Missing(name=name)
    if _safe_attribute(obj, name):
        return value
    raise _unsafe(obj, name)


def getpath(obj: Any, *names: str) -> Any:
    """`obj.a.b.c`: one call for a chain of attribute reads, as `getattr_` reads each."""
    for name in names:
        obj = obj.lookup(name) if type(obj) is Scope else getattr_(obj, name)
    return obj


def getitem(obj: Any, key: Any) -> Any:
    """`obj[key]`: an item; else, for a text key, a safe attribute."""
    kind = type(obj)
    if kind is Scope or kind is ScopeList:
        return obj.lookup(key)
    if kind is Missing:
        return obj._fail()
    try:
        return obj[key]
    except (TypeError, LookupError):
        if isinstance(key, str):
            try:
                value = getattr(obj, key)
            except AttributeError:
                pass
            else:
                if _safe_attribute(obj, key):
                    return value
                raise _unsafe(obj, key) from None
    return Missing(name=key)


def _days_between(start: Any, end: Any) -> int:
    return (dt.date.fromisoformat(str(end)[:10]) - dt.date.fromisoformat(str(start)[:10])).days


def _add_days(day: Any, days: float) -> str:
    return (dt.date.fromisoformat(str(day)[:10]) + dt.timedelta(days=float(days))).isoformat()


def _safe_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_RANGE:
        raise SecurityError(f"range of {len(r):,} items is over the limit of {MAX_RANGE:,}")
    return r


# The functions rules may call by name.
GLOBALS: dict[str, Callable[..., Any]] = {
    "range": _safe_range, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt,
    "days_between": _days_between, "add_days": _add_days,
}
_GLOBAL_IDS = frozenset(id(f) for f in GLOBALS.values())
_METHOD_OWNERS = (str, int, float, list, tuple, dict)


def call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """`function(...)`: only the globals above and the read-only METHODS of plain data."""
    if type(function) is Missing:
        return function._fail()
    owner = getattr(function, "__self__", None)
    allowed = id(function) in _GLOBAL_IDS or (
        type(function) is types.BuiltinMethodType and isinstance(owner, _METHOD_OWNERS)
        and function.__name__ in METHODS)
    if not allowed:
        name = getattr(function, "__name__", type(function).__name__)
        raise SecurityError(f"{name}() cannot be called in a rule; rules may call {', '.join(GLOBALS)} and read-only methods")
    if type(owner) not in _SCALARS or args or kwargs:
        _weigh_all((owner, *args, *kwargs.values()))
    return _refuse_long(function(*args, **kwargs), "a result")


def resolve(context: dict, name: str) -> Any:
    """A name a rule reads: given with the call, else a global, else Missing."""
    if name in context:
        return context[name]
    if name in GLOBALS:
        return GLOBALS[name]
    return Missing(name=name)


def output(value: Any) -> str:
    """A `{{ }}` output as text, weighed first."""
    if type(value) is str:
        return value
    if type(value) not in _SCALARS:
        weigh(value)
    return as_text(value)


_ADDRESS = re.compile(r"(<[^<>]*?) at 0x[0-9a-fA-F]+>")


def as_text(value: Any) -> str:
    """`value` as str() gives it, without the memory address Python prints for a function, a
    method or a generator (`<function f at 0x7f...>` is `<function f>`): an address differs
    from run to run, and tells a reader of the review only where hwlint's memory was."""
    return value if type(value) is str else unaddressed(str(value))


def unaddressed(text: str) -> str:
    """`text` with each `<... at 0x7f...>` written `<...>`."""
    return _ADDRESS.sub(r"\1>", text) if " at 0x" in text else text


class Writer:
    """The parts of a rendered template, stopped at MAX_TEXT characters: its text, and each
    `{{ }}` output as `output` turns it into text."""

    __slots__ = ("parts", "size")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, *parts: Any) -> None:
        # one join per call: the parts already exist, so the text built before the check is their sum
        text = "".join([part if type(part) is str else output(part) for part in parts])
        self.size += len(text)
        if self.size > MAX_TEXT:
            raise SecurityError(f"the rendered text is over the limit of {MAX_TEXT:,} characters")
        self.parts.append(text)


class LoopContext:
    """`loop` inside a `{% for %}`: index, index0, revindex, revindex0, first, last,
    length, depth, depth0, previtem, nextitem."""

    __slots__ = ("_items", "index0", "depth0")

    def __init__(self, items: Any, depth0: int):
        self._items, self.index0, self.depth0 = list(items), -1, depth0

    def __iter__(self) -> Iterator[Any]:
        for index, item in enumerate(self._items):
            self.index0 = index
            yield item

    index = property(lambda self: self.index0 + 1)
    length = property(lambda self: len(self._items))
    revindex = property(lambda self: len(self._items) - self.index0)
    revindex0 = property(lambda self: len(self._items) - self.index0 - 1)
    first = property(lambda self: self.index0 == 0)
    last = property(lambda self: self.index0 == len(self._items) - 1)
    depth = property(lambda self: self.depth0 + 1)
    previtem = property(lambda self: self._items[self.index0 - 1] if self.index0 > 0
                        else Missing("there is no previous item"))
    nextitem = property(lambda self: self._items[self.index0 + 1] if self.index0 + 1 < len(self._items)
                        else Missing("there is no next item"))


# --- filters and tests ------------------------------------------------------------------


class FilterArgumentError(Exception):
    """A filter was given arguments it cannot use."""


class TemplateRuntimeError(Exception):
    """A filter or test named by text (`map('name')`, `select('name')`) does not exist."""


def _bounded_items(items: Any) -> Iterator[Any]:
    count = chars = 0
    for item in items:
        count += 1
        if isinstance(item, str):
            chars += len(item)
        if count > MAX_TEXT or chars > MAX_TEXT:
            raise SecurityError(f"a filter's result is over the limit of {MAX_TEXT:,} items or characters")
        yield item


def _guarded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a filter) with its operands weighed first and its result bounded as it is built."""

    adds = name == "sum"

    def run(*args: Any, **kwargs: Any) -> Any:
        for value in args:
            if type(value) not in _LIGHT:
                weigh(value)
        if kwargs:
            _weigh_all(kwargs.values())
        if adds and not isinstance(kwargs.get("start", args[2] if len(args) > 2 else 0), (int, float)):
            raise SecurityError("sum adds numbers only")
        result = function(*args, **kwargs)
        kind = type(result)
        if kind is str:  # most filters give a short text (num, the first item's name, ...)
            return result if len(result) <= MAX_TEXT else _refuse_long(result, f"the result of {name}")
        if kind in _SCALARS:
            return result
        if isinstance(result, (str, list, tuple)):
            return _refuse_long(result, f"the result of {name}")
        if hasattr(result, "__next__"):
            return _bounded_items(result)
        return result

    run.__name__ = name
    return run


def _parts(attribute: Any) -> list[Any]:
    if attribute is None:
        return []
    if isinstance(attribute, str):
        return [int(x) if x.isdigit() else x for x in attribute.split(".")]
    return [attribute]


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _getter(attribute: Any, postprocess: Callable[[Any], Any] | None = None, default: Any = None) -> Callable[[Any], Any]:
    """item -> item.attribute (dotted, `0` for an index), as filters' `attribute=` reads it."""
    parts = _parts(attribute)

    def get(item: Any) -> Any:
        for part in parts:
            item = getitem(item, part)
            if default is not None and type(item) in UNDEFINED:
                item = default
        return postprocess(item) if postprocess is not None else item

    return get


def _multi_getter(attribute: Any, postprocess: Callable[[Any], Any] | None) -> Callable[[Any], list[Any]]:
    """item -> [its value for each of the comma-separated attributes], for `sort`."""
    getters = [_getter(part, postprocess) for part in (attribute.split(",") if isinstance(attribute, str) else [attribute])]
    return lambda item: [get(item) for get in getters]


def _case(case_sensitive: bool) -> Callable[[Any], Any] | None:
    return None if case_sensitive else _lower


def _default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    return default_value if type(value) in UNDEFINED or (boolean and not value) else value


def _first(seq: Any) -> Any:
    for item in seq:
        return item
    return Missing("No first item, sequence was empty.")


def _last(seq: Any) -> Any:
    for item in reversed(seq):
        return item
    return Missing("No last item, sequence was empty.")


def _int(value: Any, default: int = 0, base: int = 10) -> int:
    try:
        return int(value, base) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        try:  # "42.23" | int is 42
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def _float(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _round(value: Any, precision: int = 0, method: str = "common") -> float:
    if method not in ("common", "ceil", "floor"):
        raise FilterArgumentError("method must be common, ceil or floor")
    if method == "common":
        return round(value, precision)
    return getattr(math, method)(value * (10 ** precision)) / (10 ** precision)


def _extreme(function: Callable[..., Any]) -> Callable[..., Any]:
    def pick(value: Any, case_sensitive: bool = False, attribute: Any = None) -> Any:
        items = iter(value)
        for first in items:
            return function(chain([first], items), key=_getter(attribute, _case(case_sensitive)))
        return Missing("No aggregated item, sequence was empty.")

    return pick


def _sort(value: Any, reverse: bool = False, case_sensitive: bool = False, attribute: Any = None) -> list[Any]:
    return sorted(value, key=_multi_getter(attribute, _case(case_sensitive)), reverse=reverse)


def _unique(value: Any, case_sensitive: bool = False, attribute: Any = None) -> Iterator[Any]:
    key, seen = _getter(attribute, _case(case_sensitive)), set()
    for item in value:
        found = key(item)
        if found not in seen:
            seen.add(found)
            yield item


class _Group(namedtuple("_Group", "grouper list")):
    """A `groupby` group: its key (`grouper`) and its items (`list`), printed as a tuple."""

    __slots__ = ()

    def __repr__(self) -> str:
        return tuple.__repr__(self)

    def __str__(self) -> str:
        return tuple.__str__(self)


def _groupby(value: Any, attribute: Any, default: Any = None, case_sensitive: bool = False) -> list[_Group]:
    key = _getter(attribute, _case(case_sensitive), default)
    groups = [_Group(k, list(v)) for k, v in groupby(sorted(value, key=key), key)]
    if not case_sensitive:  # grouped without case, named by the first item's own spelling
        name = _getter(attribute, default=default)
        groups = [_Group(name(items[0]), items) for _, items in groups]
    return groups


def _dictsort(value: Any, case_sensitive: bool = False, by: str = "key", reverse: bool = False) -> list[tuple]:
    if by not in ("key", "value"):
        raise FilterArgumentError('You can only sort by either "key" or "value"')
    position = 0 if by == "key" else 1
    return sorted(value.items(), key=lambda item: item[position] if case_sensitive else _lower(item[position]),
                  reverse=reverse)


def _items(value: Any) -> Iterator[tuple]:
    if type(value) in UNDEFINED:
        return
    if not isinstance(value, abc.Mapping):
        raise TypeError("Can only get item pairs from a mapping.")
    yield from value.items()


def _map(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    if not value:
        return
    if not args and "attribute" in kwargs:
        attribute, default = kwargs.pop("attribute"), kwargs.pop("default", None)
        if kwargs:
            raise FilterArgumentError(f"Unexpected keyword argument {next(iter(kwargs))!r}")
        function = _getter(attribute, default=default)
    else:
        if not args:
            raise FilterArgumentError("map requires a filter argument")
        name, rest = args[0], args[1:]

        def function(item: Any) -> Any:
            return _filter_named(name)(item, *rest, **kwargs)
    for item in value:
        yield function(item)


def _chooser(by_attribute: bool, keep: bool) -> Callable[..., Iterator[Any]]:
    """select, reject, selectattr, rejectattr."""

    def choose(value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        if not value:
            return
        get: Callable[[Any], Any] = lambda item: item  # noqa: E731
        if by_attribute:
            if not args:
                raise FilterArgumentError("Missing parameter for attribute name")
            get, args = _getter(args[0]), args[1:]
        if args:
            name, rest = args[0], args[1:]
            check: Callable[[Any], Any] = lambda item: _test_named(name)(item, *rest, **kwargs)  # noqa: E731
        else:
            check = bool
        for item in value:
            if bool(check(get(item))) is keep:
                yield item

    return choose


def _reverse(value: Any) -> Any:
    if isinstance(value, str):
        return value[::-1]
    try:
        return reversed(value)
    except TypeError:
        try:
            items = list(value)
        except TypeError as exc:
            raise FilterArgumentError("argument must be iterable") from exc
        items.reverse()
        return items


def _sum(iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    get = _getter(attribute) if attribute is not None else None
    total = start
    for item in iterable:
        total += get(item) if get else item
    return total


_WORD_START = re.compile(r"([-\s({\[<]+)")
_WORD = re.compile(r"\w+")


def _title(text: Any) -> str:
    return "".join(part[0].upper() + part[1:].lower() for part in _WORD_START.split(as_text(text)) if part)


def _truncate(text: str, length: int = 255, killwords: bool = False, end: str = "...", leeway: int | None = None) -> str:
    leeway = 5 if leeway is None else leeway
    assert length >= len(end), f"expected length >= {len(end)}, got {length}"
    assert leeway >= 0, f"expected leeway >= 0, got {leeway}"
    if len(text) <= length + leeway:
        return text
    if killwords:
        return text[: length - len(end)] + end
    return text[: length - len(end)].rsplit(" ", 1)[0] + end


def _join_items(value: Any, d: str = "", attribute: Any = None) -> str:
    items = list(value)
    if len(items) > MAX_SEQUENCE:
        raise SecurityError(f"joining {len(items):,} items is over the limit of {MAX_SEQUENCE:,}")
    if attribute is None and sum(len(as_text(i)) for i in items) + len(as_text(d)) * max(len(items) - 1, 0) > MAX_TEXT:
        raise SecurityError(f"the joined text would be over the limit of {MAX_TEXT:,} characters")
    if attribute is not None:
        items = list(map(_getter(attribute), items))
    return _refuse_long(as_text(d).join(map(as_text, items)), "joined text")


def _replace(s: Any, old: str, new: str, count: int | None = None) -> str:
    text = as_text(s)
    hits = text.count(old) if old else len(text) + 1
    if count is not None:
        hits = min(hits, max(count, 0))
    if len(text) + hits * (len(new) - len(old)) > MAX_TEXT:
        raise SecurityError(f"the replaced text would be over the limit of {MAX_TEXT:,} characters")
    return text.replace(as_text(old), as_text(new), -1 if count is None else count)


def _num(value: Any, digits: int = 1) -> str:
    """hwlint's number format, its digits bounded like a format's precision (a billion digits
    would be a gigabyte of text built in one call)."""
    if isinstance(digits, int) and digits > MAX_FORMAT_WIDTH:
        raise SecurityError(f"a format width or precision of {digits} is over the limit of {MAX_FORMAT_WIDTH}")
    return num(value, digits)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    _check_format(value)
    if args and kwargs:
        raise FilterArgumentError("can't handle positional and keyword arguments at the same time")
    return _refuse_long(unaddressed(as_text(value) % (kwargs or args)), "formatted text")


# The filters a rule may use, by name: Jinja2's own (minus those that build unbounded text or
# reach attributes directly), `join`, `replace` and `format` bounded, and hwlint's `num`.
FILTERS: dict[str, Callable[..., Any]] = {name: _guarded(name, function) for name, function in {
    "abs": abs, "capitalize": lambda s: as_text(s).capitalize(), "count": len, "d": _default, "default": _default,
    "dictsort": _dictsort, "first": _first, "float": _float, "groupby": _groupby, "int": _int, "items": _items,
    "last": _last, "length": len, "list": list, "lower": lambda s: as_text(s).lower(), "map": _map,
    "max": _extreme(max), "min": _extreme(min), "reject": _chooser(False, False),
    "rejectattr": _chooser(True, False), "reverse": _reverse, "round": _round, "select": _chooser(False, True),
    "selectattr": _chooser(True, True), "sort": _sort, "string": as_text, "sum": _sum, "title": _title,
    "trim": lambda s, chars=None: as_text(s).strip(chars), "truncate": _truncate, "unique": _unique,
    "upper": lambda s: as_text(s).upper(), "wordcount": lambda s: len(_WORD.findall(as_text(s))),
    "join": _join_items, "replace": _replace, "format": _format, "num": _num,
}.items()}


def _num_of_a_number(*args: Any, **kwargs: Any) -> str:
    """`x | num`, the filter most evidence and messages print with, at once for a plain int
    or float (nothing to weigh, a short text); anything else through the guarded filter."""
    if len(args) == 1 and not kwargs:
        kind = type(args[0])
        if kind is int:
            return f"{args[0]:,}"
        if kind is float:
            return num(args[0])
    return _guarded_num(*args, **kwargs)


_guarded_num = FILTERS["num"]
FILTERS["num"] = _num_of_a_number
_num_of_a_number.__name__ = "num"


def _sequence(value: Any) -> bool:
    try:
        len(value)
        value.__getitem__  # noqa: B018 - has items by index or key
    except Exception:  # noqa: BLE001 - anything that is not one
        return False
    return True


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


# The tests of `x is name`, as Jinja2 names them.
TESTS: dict[str, Callable[..., bool]] = {
    "odd": lambda v: v % 2 == 1, "even": lambda v: v % 2 == 0, "divisibleby": lambda v, n: v % n == 0,
    "defined": lambda v: type(v) not in UNDEFINED, "undefined": lambda v: type(v) in UNDEFINED,
    "filter": lambda v: v in FILTERS, "test": lambda v: v in TESTS, "none": lambda v: v is None,
    "boolean": lambda v: v is True or v is False, "false": lambda v: v is False, "true": lambda v: v is True,
    "integer": lambda v: isinstance(v, int) and v is not True and v is not False,
    "float": lambda v: isinstance(v, float), "lower": lambda v: str(v).islower(),
    "upper": lambda v: str(v).isupper(), "string": lambda v: isinstance(v, str),
    "mapping": lambda v: isinstance(v, abc.Mapping), "number": lambda v: isinstance(v, (int, float, complex)),
    "sequence": _sequence, "iterable": _iterable, "callable": callable, "sameas": lambda v, o: v is o,
    "escaped": lambda v: hasattr(v, "__html__"), "in": lambda v, seq: v in seq,
    "==": operator.eq, "eq": operator.eq, "equalto": operator.eq, "!=": operator.ne, "ne": operator.ne,
    ">": operator.gt, "gt": operator.gt, "greaterthan": operator.gt, ">=": operator.ge, "ge": operator.ge,
    "<": operator.lt, "lt": operator.lt, "lessthan": operator.lt, "<=": operator.le, "le": operator.le,
}


def _filter_named(name: Any) -> Callable[..., Any]:
    if name not in FILTERS:
        raise TemplateRuntimeError(f"No filter named {name!r}.")
    return FILTERS[name]


def _test_named(name: Any) -> Callable[..., bool]:
    if name not in TESTS:
        raise TemplateRuntimeError(f"No test named {name!r}.")
    return TESTS[name]


# --- compiled rules, as the engine calls them ----------------------------------------------

# What the compiled code of a rule sees: these and nothing else (no builtins).
NAMESPACE = {
    "__builtins__": {}, "_ga": getattr_, "_gp": getpath, "_gi": getitem, "_call": call, "_binop": binop, "_compare": compare,
    "_resolve": resolve, "_else": Blank, "_Writer": Writer, "_Loop": LoopContext,
    "_F": FILTERS, "_T": TESTS, "_slice": slice,
}


class Compiled:
    """A compiled expression (`when`, `require`: `run` gives its value) or template (`message`,
    `fix`, `at`, `evidence`: `render_in` gives its text), called with the names it reads, within
    a time budget of its own unless one is running (the rule's)."""

    __slots__ = ("function", "hwlint_code", "hwlint_kind")

    def __init__(self, function: Callable[[dict], Any], code: types.CodeType, kind: str):
        self.function, self.hwlint_code, self.hwlint_kind = function, code, kind

    def run(self, context: dict) -> Any:
        if _budget.armed:
            return self.function(context)
        with time_budget():
            return self.function(context)

    def render_in(self, context: dict) -> str:
        return "".join(self.run(context).parts)

    def __call__(self, **context: Any) -> Any:
        return self.run(context)

    def render(self, **context: Any) -> str:
        return self.render_in(context)


def from_code(code: types.CodeType, kind: str) -> Compiled:
    """The runnable rule of a compiled module (linter.engine.compiler): it defines `rule`."""
    namespace = dict(NAMESPACE)
    exec(code, namespace)  # noqa: S102 - code the compiler wrote, which sees only NAMESPACE
    return Compiled(namespace["rule"], code, kind)


# What a template may call and still run in a time bounded by its own length: reads of the
# manifest's views and names, its text written out, `default` (the one O(1) filter rules use there).
_STRAIGHT_NAMES = frozenset({"_Writer", "write", "_resolve", "_gp", "_ga", "_gi", "_F", "_else"})
_STRAIGHT_FILTERS = frozenset({"default", "d"})
_LOOPING = frozenset(code for name, code in __import__("opcode").opmap.items()
                     if name in ("FOR_ITER", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE"))


def straight_line(compiled: Any) -> bool:
    """Whether a compiled template (Compiled or Deferred) surely runs within its budget: no
    loop, no comprehension, no call of a function or of a filter but `default`, no operator;
    only views read and text written, each step bounded by the view's limits. Such a template
    cannot time out, nor fail but by a fallback, so a result nobody is shown need not run it.
    Anything else (or code this cannot read) is not."""
    try:
        outer = compiled.hwlint_code
        inner = [c for c in outer.co_consts if isinstance(c, types.CodeType)]
        if len(inner) != 1:
            return False
        code = inner[0]
        if any(isinstance(c, types.CodeType) for c in code.co_consts) or not set(code.co_names) <= _STRAIGHT_NAMES:
            return False
        if "_F" in code.co_names and any(type(c) is str and c in FILTERS and c not in _STRAIGHT_FILTERS
                                         for c in code.co_consts):
            return False
        raw = code.co_code
        return not any(raw[i] in _LOOPING for i in range(0, len(raw), 2))
    except Exception:  # noqa: BLE001 - not a template this can read: run it
        return False


class Deferred:
    """An expression or template built the first time it runs, by `from_code`, from its
    marshalled code (a cached pack) or from the Python source the compiler wrote (`source`:
    a message, fix or evidence template, which most runs never render: Python compiles it
    then, not every time a pack is built)."""

    __slots__ = ("hwlint_kind", "_marshalled", "source", "_built")

    def __init__(self, marshalled: bytes | None, kind: str, source: str | None = None):
        self.hwlint_kind, self._marshalled, self.source, self._built = kind, marshalled, source, None

    @property
    def hwlint_code(self) -> Any:
        return self._get().hwlint_code

    def unbuilt_source(self) -> str | None:
        """The Python source, while it has not been compiled (a pack cache keeps it so)."""
        return self.source if self._built is None and self._marshalled is None else None

    def _get(self) -> Compiled:
        built = self._built
        if built is None:
            if self._marshalled is not None:
                import marshal

                code = marshal.loads(self._marshalled)
            else:
                code = compile(self.source, "<rule>", "exec", dont_inherit=True)
            built = self._built = from_code(code, self.hwlint_kind)
        return built

    def __call__(self, **context: Any) -> Any:
        return self._get().run(context)

    def run(self, context: dict) -> Any:
        built = self._built or self._get()
        if _budget.armed:  # inside a rule's budget (Compiled.run's first case, without its call)
            return built.function(context)
        return built.run(context)

    def render(self, **context: Any) -> str:
        return self._get().render_in(context)

    def render_in(self, context: dict) -> str:
        return self._get().render_in(context)
