"""Rule sources to Python: each `when`/`require` expression and each `message`/`fix`/`at`/
`evidence` template becomes a small Python function that runs in linter.engine.sandbox.

Rules are written in Jinja2's language and parsed by Jinja2's own parser, only here and only
when a pack is built from sources the built-in table (rules/compiled.json) does not hold.
The tree is checked (`check_template`: refused constructs and names, nesting within
`MAX_DEPTH` and `MAX_LOOPS`; `references`) and translated into Python source in which every
attribute and item read, call, filter, test, comparison and `* ** + %` is a call into the
sandbox, names are numbered locals (never the rule's own spelling), constants are Python
literals, and no builtin is reachable. The code is compiled
once and cached with the pack (linter.engine.packcache), so a check runs rules without
importing Jinja2 and without a template context per call.

Scoping follows Jinja2: a `{% set %}` inside a `{% for %}` body lives for that iteration,
one inside an `{% if %}` stays after it; a loop's target and `loop` exist inside the loop.
"""

from __future__ import annotations

import keyword
import math
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.engine.sandbox import FILTERS, GLOBALS, ROOTS, TESTS, Compiled, Deferred, from_code

# Template constructs rules may not use: they can recurse, read other files or build text
# outside the output bound.
FORBIDDEN = {
    "Macro": "macros", "CallBlock": "call blocks", "Include": "include", "Import": "import",
    "FromImport": "import", "Extends": "extends", "Block": "blocks", "AssignBlock": "block set",
    "FilterBlock": "filter blocks", "Concat": "the ~ operator",
}
_OPERATORS = {"Add": "+", "Mul": "*", "Pow": "**", "Mod": "%"}  # through the sandbox's bounds
_PLAIN = {"Sub": "-", "Div": "/", "FloorDiv": "//"}  # cannot build anything large
_LOGIC = {"And": "and", "Or": "or"}
_UNARY = {"Not": "not ", "Neg": "-", "Pos": "+"}


class SourceError(Exception):
    """A rule source that does not parse or compile; the message says why, in Jinja2's words."""


class Refused(Exception):
    """A construct the compiler does not translate (`uses ..., which rules may not use`)."""


# --- the tree ---------------------------------------------------------------------------

# A tree nested deeper than MAX_DEPTH, or with loops nested deeper than MAX_LOOPS, is refused
# when the pack is built. The Python written for it nests no deeper (a bracket or an indent
# per level at most, a `for` block per loop), so it stays within Python's own limits (100
# indents, 200 brackets, 20 nested blocks), and a message that Python compiles only when it
# is first rendered compiles then too. The built-in pack's sources are at most 11 deep, with
# at most one loop.
MAX_DEPTH = 50
MAX_LOOPS = 10


def _kind(node: Any) -> str:
    return type(node).__name__  # Jinja2's node class, by name: this module does not import jinja2.nodes


def children(node: Any) -> list[Any]:
    """The nodes in `node`'s fields, in order."""
    return list(node.iter_child_nodes())


def descendants(tree: Any) -> list[Any]:
    """`tree` and every node under it, in Jinja2's `find_all` order (depth first), walked
    once for all checks, without recursion."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(children(node)))
    return found


def nesting(tree: Any) -> tuple[int, int]:
    """How many nodes deep `tree` is (a lone constant: 1), and how many loops deep."""
    deepest = loops = 0
    stack = [(tree, 1, 0)]
    while stack:
        node, level, within = stack.pop()
        within += _kind(node) == "For"
        deepest, loops = max(deepest, level), max(loops, within)
        stack.extend((child, level + 1, within) for child in children(node))
    return deepest, loops


@lru_cache(maxsize=1)
def _jinja() -> Any:
    from jinja2 import Environment

    return Environment(keep_trailing_newline=False)


def parse(source: str, kind: str) -> Any:
    """Jinja2's tree of an expression (`kind` "expr") or a template ("tmpl"); SourceError in
    Jinja2's words for one that does not parse, RecursionError for one nested too deeply
    for its parser."""
    from jinja2.exceptions import TemplateSyntaxError
    from jinja2.parser import Parser

    env = _jinja()
    try:
        if kind == "tmpl":
            return env.parse(source)
        parser = Parser(env, source, state="variable")
        tree = parser.parse_expression()
        if not parser.stream.eos:
            raise TemplateSyntaxError("chunk after expression", parser.stream.current.lineno, None, None)
        return tree
    except TemplateSyntaxError as exc:
        if kind == "expr":
            try:  # worded as the expression reads inside a template, `{{ ... }}`
                env.parse("{{ " + source + " }}")
            except TemplateSyntaxError as wrapped:
                raise SourceError(wrapped.message) from None
        raise SourceError(exc.message) from None


def check_template(tree: Any, found: list[Any] | None = None) -> list[str]:
    """What a rule's expression or template may not do, found before it ever runs.
    `found`: `descendants(tree)`, when the caller has it already."""
    found = descendants(tree) if found is None else found
    problems = []
    deepest, loops = nesting(tree)
    if deepest > MAX_DEPTH:
        problems.append(f"is nested {deepest} deep; rules may nest at most {MAX_DEPTH} deep")
    if loops > MAX_LOOPS:
        problems.append(f"nests {loops} loops; rules may nest at most {MAX_LOOPS}")
    for node in found:
        kind = _kind(node)
        if kind in FORBIDDEN:
            problems.append(f"uses {FORBIDDEN[kind]} (line {node.lineno}), which rules may not use")
        elif kind in ("Getattr", "Getitem"):
            name = node.attr if kind == "Getattr" else getattr(node.arg, "value", None)
            if isinstance(name, str) and name.startswith("_"):
                problems.append(f"reads the attribute {name}; rules read manifest data, not Python internals")
    names = [node for node in found if _kind(node) == "Name"]
    known = set(ROOTS) | set(GLOBALS) | {n.name for n in names if n.ctx in ("store", "param")} | {"loop"}
    for node in names:
        if node.ctx == "load" and node.name not in known:
            problems.append(f"uses the name {node.name}, which is not defined; rules see {', '.join(ROOTS)} "
                            f"and the functions {', '.join(GLOBALS)}")
    return sorted(set(problems))


def references(tree: Any, everything: list[Any] | None = None) -> list[tuple[str, tuple, int]]:
    """Attribute chains rooted at `manifest`, `pool` or `facts`: (root, path, lineno).
    `everything`: `descendants(tree)`, when the caller has it already."""
    everything = descendants(tree) if everything is None else everything
    found = []
    for node in everything:
        if _kind(node) not in ("Getattr", "Getitem"):
            continue
        chain: list[Any] = []
        current: Any = node
        while _kind(current) in ("Getattr", "Getitem"):
            if _kind(current) == "Getattr":
                chain.append(current.attr)
            elif _kind(current.arg) == "Const":
                chain.append(current.arg.value)
            else:
                chain.append(0)
            current = current.node
        if _kind(current) == "Name" and current.name in ROOTS:
            found.append((current.name, tuple(reversed(chain)), node.lineno))
    return found


# --- Python code ------------------------------------------------------------------------


class _Frame:
    """Jinja2 names -> Python locals, for the template's top level or one loop body."""

    def __init__(self, parent: _Frame | None = None, loop: str | None = None):
        self.parent, self.names, self.loop = parent, {}, loop

    def lookup(self, name: str) -> str:
        frame: _Frame | None = self
        while frame is not None:
            if name == "loop" and frame.loop is not None:
                return frame.loop
            if name in frame.names:
                return frame.names[name]
            frame = frame.parent
        raise Refused(f"the name {name}")  # the top frame holds every name: not reached


def _literal(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "1e999" if value > 0 else "-1e999" if value < 0 else "(1e999-1e999)"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, tuple):
        return "(" + "".join(_literal(v) + ", " for v in value) + ")"
    raise Refused(f"a constant of type {type(value).__name__}")


def _store_names(target: Any) -> list[str]:
    if _kind(target) == "Name":
        return [target.name]
    if _kind(target) in ("Tuple", "List"):
        return [name for item in target.items for name in _store_names(item)]
    raise Refused(f"assignment to {_kind(target)}")


def _assigned(body: list[Any]) -> list[str]:
    """Names a statement list sets in its own frame (not inside a nested loop body)."""
    out: list[str] = []
    for node in body:
        kind = _kind(node)
        if kind == "Assign":
            out.extend(_store_names(node.target))
        elif kind == "If":
            out.extend(_assigned(node.body) + _assigned(node.elif_) + _assigned(node.else_))
        elif kind == "For":
            out.extend(_assigned(node.else_))
    return out


def _uses_loop(body: list[Any]) -> bool:
    """Whether `loop` is read in these statements, outside any nested loop's body."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if _kind(node) == "Name" and node.name == "loop":
            return True
        if _kind(node) == "For":
            stack.extend(n for n in (node.iter, node.test) if n is not None)
            stack.extend(node.else_)
        else:
            stack.extend(children(node))
    return False


class _Code:
    """The Python source being written: its lines, and fresh names for its locals."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def local(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)


class _Generator:
    """Writes the Python of one tree: `e_<Kind>` methods give an expression's Python as text,
    `s_<Kind>` methods write a statement's lines."""

    def __init__(self) -> None:
        self.code = _Code()

    # expressions

    def expr(self, node: Any, frame: _Frame) -> str:
        kind = _kind(node)
        method = getattr(self, "e_" + kind, None)
        if method is None:
            raise Refused(f"{kind} expressions")
        return method(node, frame)

    def e_Const(self, node: Any, frame: _Frame) -> str:
        return _literal(node.value)

    def e_Name(self, node: Any, frame: _Frame) -> str:
        return frame.lookup(node.name)

    def e_Getattr(self, node: Any, frame: _Frame) -> str:
        names = [node.attr]
        while type(node.node).__name__ == "Getattr":  # a.b.c: one call for the chain
            node = node.node
            names.append(node.attr)
        if len(names) == 1:
            return f"_ga({self.expr(node.node, frame)}, {names[0]!r})"
        return f"_gp({self.expr(node.node, frame)}, {', '.join(map(repr, reversed(names)))})"

    def e_Getitem(self, node: Any, frame: _Frame) -> str:
        return f"_gi({self.expr(node.node, frame)}, {self.expr(node.arg, frame)})"

    def e_Slice(self, node: Any, frame: _Frame) -> str:
        parts = ["None" if part is None else self.expr(part, frame) for part in (node.start, node.stop, node.step)]
        return f"_slice({', '.join(parts)})"

    def _arguments(self, node: Any, frame: _Frame) -> list[str]:
        out = [self.expr(arg, frame) for arg in node.args]
        for pair in node.kwargs:
            value = self.expr(pair.value, frame)
            if pair.key.isidentifier() and not keyword.iskeyword(pair.key):
                out.append(f"{pair.key}={value}")
            else:
                out.append(f"**{{{pair.key!r}: {value}}}")
        if node.dyn_args is not None:
            out.append("*" + self.expr(node.dyn_args, frame))
        if node.dyn_kwargs is not None:
            out.append("**" + self.expr(node.dyn_kwargs, frame))
        return out

    def e_Call(self, node: Any, frame: _Frame) -> str:
        return f"_call({', '.join([self.expr(node.node, frame), *self._arguments(node, frame)])})"

    def e_Filter(self, node: Any, frame: _Frame) -> str:
        if node.name not in FILTERS:
            raise SourceError(f"No filter named {node.name!r}.")
        if node.node is None:
            raise Refused("filter blocks")
        return f"_F[{node.name!r}]({', '.join([self.expr(node.node, frame), *self._arguments(node, frame)])})"

    def e_Test(self, node: Any, frame: _Frame) -> str:
        if node.name not in TESTS:
            raise SourceError(f"No test named {node.name!r}.")
        return f"_T[{node.name!r}]({', '.join([self.expr(node.node, frame), *self._arguments(node, frame)])})"

    def e_Compare(self, node: Any, frame: _Frame) -> str:
        parts = [self.expr(node.expr, frame)]
        for operand in node.ops:
            parts += [repr(operand.op), self.expr(operand.expr, frame)]
        return f"_compare({', '.join(parts)})"

    def _logic(self, node: Any, frame: _Frame) -> str:
        return f"({self.expr(node.left, frame)} {_LOGIC[_kind(node)]} {self.expr(node.right, frame)})"

    def _unary(self, node: Any, frame: _Frame) -> str:
        return f"({_UNARY[_kind(node)]}{self.expr(node.node, frame)})"

    e_And = e_Or = _logic
    e_Not = e_Neg = e_Pos = _unary

    def _binary(self, node: Any, frame: _Frame) -> str:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        kind = _kind(node)
        if kind in _OPERATORS:
            return f"_binop({_OPERATORS[kind]!r}, {left}, {right})"
        return f"({left} {_PLAIN[kind]} {right})"

    e_Add = e_Mul = e_Pow = e_Mod = e_Sub = e_Div = e_FloorDiv = _binary

    def e_CondExpr(self, node: Any, frame: _Frame) -> str:
        test, then = self.expr(node.test, frame), self.expr(node.expr1, frame)
        if node.expr2 is None:
            hint = (f"the inline if-expression on line {node.lineno} evaluated to false and no else section "
                    "was defined.")
            return f"({then} if {test} else _else({hint!r}))"
        return f"({then} if {test} else {self.expr(node.expr2, frame)})"

    def e_List(self, node: Any, frame: _Frame) -> str:
        return "[" + ", ".join(self.expr(item, frame) for item in node.items) + "]"

    def e_Tuple(self, node: Any, frame: _Frame) -> str:
        return "(" + "".join(self.expr(item, frame) + ", " for item in node.items) + ")"

    def e_Dict(self, node: Any, frame: _Frame) -> str:
        return "{" + ", ".join(f"{self.expr(p.key, frame)}: {self.expr(p.value, frame)}" for p in node.items) + "}"

    def target(self, node: Any, frame: _Frame) -> str:
        names = [frame.lookup(name) for name in _store_names(node)]
        return names[0] if _kind(node) == "Name" else "(" + "".join(n + ", " for n in names) + ")"

    # statements

    def body(self, nodes: list[Any], frame: _Frame, depth: int) -> None:
        before = len(self.code.lines)
        for node in nodes:
            method = getattr(self, "s_" + _kind(node), None)
            if method is None:
                raise Refused(_STATEMENTS.get(_kind(node), _kind(node)))
            method(node, frame, depth)
        if len(self.code.lines) == before:
            self.code.line(depth, "pass")

    def s_Output(self, node: Any, frame: _Frame, depth: int) -> None:
        # one call for the text and the `{{ }}` values between two statements, in order
        parts = [repr(child.data) if _kind(child) == "TemplateData" else self.expr(child, frame)
                 for child in node.nodes if _kind(child) != "TemplateData" or child.data]
        if parts:
            self.code.line(depth, f"out({', '.join(parts)})")

    def s_Assign(self, node: Any, frame: _Frame, depth: int) -> None:
        self.code.line(depth, f"{self.target(node.target, frame)} = {self.expr(node.node, frame)}")

    def s_If(self, node: Any, frame: _Frame, depth: int) -> None:
        self.code.line(depth, f"if {self.expr(node.test, frame)}:")
        self.body(node.body, frame, depth + 1)
        for branch in node.elif_:
            self.code.line(depth, f"elif {self.expr(branch.test, frame)}:")
            self.body(branch.body, frame, depth + 1)
        if node.else_:
            self.code.line(depth, "else:")
            self.body(node.else_, frame, depth + 1)

    def s_For(self, node: Any, frame: _Frame, depth: int) -> None:
        if node.recursive:
            raise Refused("recursive loops")
        items = self.expr(node.iter, frame)
        targets = _store_names(node.target)
        if node.test is not None:  # `for x in y if c`: c sees the loop's target, not its body
            check = _Frame(frame)
            check.names.update((name, self.code.local()) for name in targets)
            each = self.target(node.target, check)
            items = f"({each} for {each} in {items} if {self.expr(node.test, check)})"
        inner = _Frame(frame, self.code.local() if _uses_loop(node.body) else None)
        inner.names.update((name, self.code.local()) for name in targets)
        carried = [name for name in dict.fromkeys(_assigned(node.body)) if name not in targets]
        inner.names.update((name, self.code.local()) for name in carried)
        empty = self.code.local() if node.else_ else None
        if empty:
            self.code.line(depth, f"{empty} = True")
        if inner.loop:
            self.code.line(depth, f"{inner.loop} = _Loop({items}, 0)")
            items = inner.loop
        self.code.line(depth, f"for {self.target(node.target, inner)} in {items}:")
        if empty:
            self.code.line(depth + 1, f"{empty} = False")
        for name in carried:  # set in the body: starts each iteration as the outer value
            self.code.line(depth + 1, f"{inner.names[name]} = {frame.lookup(name)}")
        self.body(node.body, inner, depth + 1)
        if empty:
            self.code.line(depth, f"if {empty}:")
            self.body(node.else_, frame, depth + 1)

    def function(self, tree: Any, kind: str, found: list[Any] | None) -> str:
        top = _Frame()
        found = descendants(tree) if found is None else found
        names = dict.fromkeys(n.name for n in found if type(n).__name__ == "Name")
        top.names.update((name, self.code.local()) for name in names)
        self.code.line(0, "def rule(ctx):")
        if kind == "tmpl":
            self.code.line(1, "writer = _Writer()")
            self.code.line(1, "out = writer.write")
        for name, local in top.names.items():
            self.code.line(1, f"{local} = _resolve(ctx, {name!r})")
        if kind == "expr":
            self.code.line(1, f"return {self.expr(tree, top)}")
        else:
            self.body(tree.body, top, 1)
            self.code.line(1, "return writer")
        return "\n".join(self.code.lines) + "\n"


_STATEMENTS = {
    "With": "{% with %}", "Scope": "scoped blocks", "ScopedEvalContextModifier": "{% autoescape %}",
    "EvalContextModifier": "{% autoescape %}", "ExprStmt": "{% do %}", "Continue": "{% continue %}",
    "Break": "{% break %}", **FORBIDDEN,
}


def python_source(tree: Any, kind: str, found: list[Any] | None = None) -> str:
    """The Python source of `tree` (an expression or a template), defining `rule(ctx)`.
    `found`: `descendants(tree)`, when the caller has it."""
    return _Generator().function(tree, kind, found)


def from_python(text: str, kind: str, lazy: bool = False) -> Compiled | Deferred:
    """The runnable rule of `python_source`'s `text`; `lazy`: Python compiles it when it first
    runs (a checked source nests within MAX_DEPTH, which Python's limits allow)."""
    if lazy:
        return Deferred(None, kind, text)
    try:
        code = compile(text, "<rule>", "exec", dont_inherit=True)
    except (SyntaxError, MemoryError) as exc:  # Python's own nesting limits
        raise RecursionError(str(exc)) from None
    return from_code(code, kind)


def compile_source(source: str, kind: str) -> Compiled:
    """`source` ("expr" or "tmpl") as a runnable rule, unchecked (the pack loader checks rule
    sources). SourceError or Refused for one that cannot be compiled."""
    return from_python(known(source, kind) or python_source(parse(source, kind), kind), kind)


@lru_cache(maxsize=256)
def compiled(source: str, kind: str) -> Compiled:
    """`compile_source`, once per process for each source (tier tests, reused per manifest)."""
    return compile_source(source, kind)


# The built-in pack's translations, generated (rules/compiled.json, by `python -m
# linter.schema` through linter.engine.rules.compiled_table) and kept current by a test:
# building a pack looks its sources up here instead of parsing, checking and translating each.
TABLE = "compiled.json"


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, str]]:
    import json

    from linter.paths import data_dir

    try:
        return json.loads((data_dir("rules") / TABLE).read_text(encoding="utf-8"))["python"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def known(source: str, kind: str) -> str | None:
    """The Python of a built-in source that has no problem, from the table; else None."""
    found = _table().get(kind, {}).get(source)
    return found if isinstance(found, str) else None


def table(translations: dict[tuple[str, str], tuple[str | None, list[str]]]) -> str:
    """The table's text: each (source, kind) whose translation has no problem, sorted."""
    import json

    python: dict[str, dict[str, str]] = {"expr": {}, "tmpl": {}}
    for (source, kind), (text, problems) in sorted(translations.items()):
        if text is not None and not problems:
            python[kind][source] = text
    note = ("generated by python -m linter.schema: the Python linter.engine.compiler makes of each source of the "
            "built-in rule pack that has no problem; a pack build looks sources up here")
    return json.dumps({"what": note, "python": python}, indent=1, ensure_ascii=False) + "\n"
