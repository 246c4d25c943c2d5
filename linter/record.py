"""Record classes as `dataclasses.dataclass` makes them, for the modules a check runs.

Importing dataclasses imports inspect, and with it ast, dis, tokenize and linecache, and
`@dataclass` compiles several methods per class: together about 15% of a warm check
(bench/standins.py; the rule for such stand-ins is in docs/architecture.md). `record` gives
what those classes need, with the same meaning: fields in annotation order, defaults,
`field(default_factory=...)` and `field(init=False)`, `__post_init__`, `__repr__`,
`__eq__`, `__match_args__`, and `frozen=True` (immutable, `FrozenInstanceError`, hashable
by value). `replace` is `dataclasses.replace` without the import.

To the dataclasses module a record is a dataclass: the first time anything asks it
(`dataclasses.fields`, `asdict`, `astuple`, `replace`, `is_dataclass`, a dataclass that
subclasses a record), dataclasses makes a twin of the class from the same fields and the
record takes the twin's `__dataclass_fields__` and `__dataclass_params__`. A check never
asks, so it never imports dataclasses.
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


def record(cls: type | None = None, *, frozen: bool = False) -> Any:
    """`@record` or `@record(frozen=True)`: see the module's docstring."""
    if cls is None:
        return lambda given: _build(given, frozen)
    return _build(cls, frozen)


class _AsDataclass:
    """A record class's `__dataclass_fields__` or `__dataclass_params__`: taken from its twin,
    made by dataclasses the first time either is read."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj: Any, owner: type) -> Any:
        import dataclasses

        spec = owner.__record_spec__  # type: ignore[attr-defined]
        namespace: dict[str, Any] = {"__annotations__": dict(spec["annotations"]), "__module__": owner.__module__,
                                     "__qualname__": owner.__qualname__}
        for name, given in spec["defaults"].items():
            if isinstance(given, field):
                given = (dataclasses.field(init=False) if given.default_factory is None
                         else dataclasses.field(default_factory=given.default_factory))
            namespace[name] = given
        twin = dataclasses.dataclass(frozen=spec["frozen"])(type(owner.__name__, (), namespace))
        owner.__dataclass_fields__ = twin.__dataclass_fields__  # type: ignore[attr-defined]
        owner.__dataclass_params__ = twin.__dataclass_params__  # type: ignore[attr-defined]
        return getattr(owner, self.name)


def _build(cls: type, frozen: bool) -> type:
    annotations = cls.__dict__.get("__annotations__", {})
    names = list(annotations)
    defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
    for name, given in defaults.items():  # as dataclasses does: a plain default stays a class attribute
        if isinstance(given, field):
            delattr(cls, name)
    namespace: dict[str, Any] = {"_factories": {}, "_defaults": {}, "_set": object.__setattr__}
    params, body, init = [], [], []
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
        init.append(name)
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if "__post_init__" in cls.__dict__:
        body.append("self.__post_init__()")
    namespace["_MADE"] = _NONE
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    exec(source, namespace)  # noqa: S102 - code written here from the class's own field names
    made = namespace["__init__"]
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    fields = tuple(names)
    cls.__init__ = made  # type: ignore[misc]
    cls.__record_fields__, cls.__record_init__ = fields, frozenset(init)  # type: ignore[attr-defined]
    cls.__record_spec__ = {"annotations": annotations, "defaults": defaults, "frozen": frozen}  # type: ignore[attr-defined]
    cls.__match_args__ = tuple(init)  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = _AsDataclass("__dataclass_fields__")  # type: ignore[attr-defined]
    cls.__dataclass_params__ = _AsDataclass("__dataclass_params__")  # type: ignore[attr-defined]
    showing: set[int] = set()

    def __repr__(self: Any) -> str:
        if id(self) in showing:  # a record within itself, shown as dataclasses shows it
            return "..."
        showing.add(id(self))
        try:
            return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in fields)})"
        finally:
            showing.discard(id(self))

    def __eq__(self: Any, other: Any) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        return tuple(getattr(self, n) for n in fields) == tuple(getattr(other, n) for n in fields)

    cls.__repr__, cls.__eq__ = __repr__, __eq__  # type: ignore[method-assign]
    if frozen:
        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is cls or name in fields:
                from dataclasses import FrozenInstanceError

                raise FrozenInstanceError(f"cannot assign to field {name!r}")
            super(cls, self).__setattr__(name, value)

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is cls or name in fields:
                from dataclasses import FrozenInstanceError

                raise FrozenInstanceError(f"cannot delete field {name!r}")
            super(cls, self).__delattr__(name)

        def __hash__(self: Any) -> int:
            return hash(tuple(getattr(self, n) for n in fields))

        cls.__setattr__, cls.__delattr__, cls.__hash__ = __setattr__, __delattr__, __hash__  # type: ignore[method-assign,assignment]
    else:
        cls.__hash__ = None  # type: ignore[assignment] - equal by value, so not hashable, as a dataclass
    return cls


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of record `obj` with `changes`, through its __init__, as dataclasses.replace
    makes it (an init=False field is made again by __post_init__, and cannot be changed)."""
    kind = type(obj)
    if not hasattr(kind, "__record_fields__"):
        raise TypeError("replace() should be called on dataclass instances")
    for name in kind.__record_fields__:  # type: ignore[attr-defined]
        if name not in kind.__record_init__:  # type: ignore[attr-defined]
            if name in changes:
                raise ValueError(f"field {name} is declared with init=False, it cannot be specified with replace()")
        elif name not in changes:
            changes[name] = getattr(obj, name)
    return kind(**changes)
