"""Record classes as `dataclasses.dataclass` makes them, for the modules a check runs.

Importing dataclasses imports inspect, and with it ast, dis, tokenize and linecache: about
6 ms of every check, a tenth of a warm one, for classes that need only a generated
`__init__`, `__repr__` and `__eq__`. `record` gives those, with the same meaning: fields in
annotation order, defaults, `field(default_factory=..., init=False)`, `__post_init__`, and
`frozen=True` (immutable and hashable by value). `replace` is `dataclasses.replace`. Modules
off the check's path keep using dataclasses.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    T = TypeVar("T")

_NONE = object()  # no default


class field:  # noqa: N801 - spelt as dataclasses spells it
    """A field's default made per instance (`default_factory`), or left to `__post_init__`
    (`init=False`)."""

    __slots__ = ("default_factory", "init")

    def __init__(self, *, default_factory: Callable[[], Any] | None = None, init: bool = True):
        self.default_factory, self.init = default_factory, init


class FrozenError(AttributeError):
    """A frozen record's field was set or deleted."""


def record(cls: type | None = None, *, frozen: bool = False) -> Any:
    """`@record` or `@record(frozen=True)`: see the module's docstring."""
    if cls is None:
        return lambda given: _build(given, frozen)
    return _build(cls, frozen)


def _build(cls: type, frozen: bool) -> type:
    names = list(cls.__dict__.get("__annotations__", {}))
    defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
    for name, given in defaults.items():  # as dataclasses does: a plain default stays a class attribute
        if isinstance(given, field):
            delattr(cls, name)
    namespace: dict[str, Any] = {"_factories": {}, "_defaults": {}, "_set": object.__setattr__}
    params, body = [], []
    for name in names:
        given = defaults.get(name, _NONE)
        if isinstance(given, field):
            if given.default_factory is None:  # init=False: __post_init__ sets it
                continue
            namespace["_factories"][name] = given.default_factory
            params.append(f"{name}=_MADE")
            value = f"_factories[{name!r}]() if {name} is _MADE else {name}"
        else:
            if given is not _NONE:
                namespace["_defaults"][name] = given
                params.append(f"{name}=_defaults[{name!r}]")
            elif any("=" in p for p in params):
                raise TypeError(f"{cls.__name__}: field {name} without a default follows one with a default")
            else:
                params.append(name)
            value = name
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if "__post_init__" in cls.__dict__:
        body.append("self.__post_init__()")
    namespace["_MADE"] = _NONE
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    exec(source, namespace)  # noqa: S102 - code written here from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]
    fields = tuple(names)
    cls.__record_fields__ = fields  # type: ignore[attr-defined]

    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in fields)})"

    def __eq__(self: Any, other: Any) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        return tuple(getattr(self, n) for n in fields) == tuple(getattr(other, n) for n in fields)

    cls.__repr__, cls.__eq__ = __repr__, __eq__  # type: ignore[method-assign]
    if frozen:
        def __setattr__(self: Any, name: str, value: Any) -> None:
            raise FrozenError(f"cannot assign to field {name!r}")

        def __delattr__(self: Any, name: str) -> None:
            raise FrozenError(f"cannot delete field {name!r}")

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, n) for n in fields))

        cls.__setattr__, cls.__delattr__, cls.__hash__ = __setattr__, __delattr__, __hash__  # type: ignore[method-assign,assignment]
    else:
        cls.__hash__ = None  # type: ignore[assignment] - equal by value, so not hashable, as a dataclass
    return cls


def replace(obj: T, **changes: Any) -> T:
    """A copy of record `obj` with `changes`, through its __init__ (as dataclasses.replace;
    an init=False field is made again by __post_init__)."""
    kind = type(obj)
    given = {name: getattr(obj, name) for name in kind.__record_fields__ if name in _init_params(kind)}  # type: ignore[attr-defined]
    given.update(changes)
    return kind(**given)


def _init_params(kind: type) -> frozenset[str]:
    code = kind.__init__.__code__  # type: ignore[misc]
    return frozenset(code.co_varnames[1:code.co_argcount])


def fields(obj: Any) -> tuple[str, ...]:
    """The field names of a record (class or instance), in order."""
    return obj.__record_fields__
