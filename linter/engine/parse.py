"""A fast parser for the template language rules are written in.

`parse_template(source)` returns the tree Jinja2's parser returns for the same source in
hwlint's environment (`ImmutableSandboxedEnvironment(keep_trailing_newline=False)`, Jinja's
default delimiters, no extensions), and `parse_expression(source)` the tree of
`Parser(env, source, state="variable").parse_expression()` when it consumes the whole
source. The trees are built from this module's own node classes, which have Jinja's class
names, fields (in Jinja's order), `lineno` and `find_all`, so code that walks Jinja's tree
walks these; importing this module does not import jinja2.

Only the common, valid subset is handled. Anything else (a syntax error, a tag or construct
left out here, non-ASCII text outside string literals, nesting deeper than MAX_DEPTH, a tag
of more than MAX_TOKENS tokens) raises `Unsupported`, and the caller parses with Jinja2,
which gives its tree or words the error as before:

    try:
        tree = parse_template(source)
    except Unsupported:
        tree = jinja_environment.parse(source)

`parse_template("{{ " + expression + " }}")` gives the tree of a wrapped expression as
rules.py checks it, line numbers included. Jinja's own quirks are kept on purpose: `{{-1}}`
is the constant 1 (the `-` trims the text before the tag), `**` groups left to right, a
filter binds to the unary expression before it, and the line of a comparison is the line of
the token after it.
"""

from __future__ import annotations

import re
from collections import deque

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing would cost a fresh process about 2 ms
    from typing import Any, Iterator

# Left to Jinja (refused): deeper nesting of expressions, unary operators and blocks (the
# built-in pack nests 6 deep), and more tokens in one tag (it has at most 53). A tag's tokens
# bound how deep its tree is, so what this parser returns is never deeper than that.
MAX_DEPTH = 30
MAX_TOKENS = 300


class Unsupported(Exception):
    """The source is outside what this parser handles; parse it with Jinja2 instead."""


# --- nodes ------------------------------------------------------------------------------


class Node:
    """Base of every node: `fields` (in Jinja's order) and `lineno`, as in jinja2.nodes."""

    fields: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ("lineno", "environment")
    lineno: int | None = None
    environment: Any = None

    def iter_fields(self, exclude: Any = None, only: Any = None) -> Iterator[tuple[str, Any]]:
        for name in self.fields:
            if (exclude is None and only is None) or (exclude is not None and name not in exclude) \
                    or (only is not None and name in only):
                try:
                    yield name, getattr(self, name)
                except AttributeError:
                    pass

    def iter_child_nodes(self, exclude: Any = None, only: Any = None) -> Iterator[Node]:
        for _, item in self.iter_fields(exclude, only):
            if isinstance(item, list):
                for child in item:
                    if isinstance(child, Node):
                        yield child
            elif isinstance(item, Node):
                yield item

    def find(self, node_type: Any) -> Any:
        for found in self.find_all(node_type):
            return found
        return None

    def find_all(self, node_type: Any) -> Iterator[Any]:
        """Every node below this one that is a `node_type`, depth first in field order (the
        order of Jinja's `find_all`), walked with a list instead of recursion."""
        stack = list(self.iter_child_nodes())
        stack.reverse()
        while stack:
            node = stack.pop()
            if isinstance(node, node_type):
                yield node
            children = list(node.iter_child_nodes())
            children.reverse()
            stack.extend(children)

    def set_ctx(self, ctx: str) -> Node:
        todo = deque([self])
        while todo:
            node = todo.popleft()
            if "ctx" in node.fields:
                node.ctx = ctx  # type: ignore[attr-defined]
            todo.extend(node.iter_child_nodes())
        return self

    def set_lineno(self, lineno: int, override: bool = False) -> Node:
        todo = deque([self])
        while todo:
            node = todo.popleft()
            if node.lineno is None or override:
                node.lineno = lineno
            todo.extend(node.iter_child_nodes())
        return self

    def set_environment(self, environment: Any) -> Node:
        todo = deque([self])
        while todo:
            node = todo.popleft()
            node.environment = environment
            todo.extend(node.iter_child_nodes())
        return self

    def can_assign(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        return tuple(self.iter_fields()) == tuple(other.iter_fields())  # type: ignore[attr-defined]

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{a}={getattr(self, a, None)!r}' for a in self.fields)})"


class Stmt(Node):
    pass


class Helper(Node):
    pass


class Expr(Node):
    pass


class Literal(Expr):
    pass


class BinExpr(Expr):
    fields = ("left", "right")
    operator = ""

    def __init__(self, left: Any = None, right: Any = None, lineno: int | None = None):
        self.left, self.right, self.lineno = left, right, lineno


class UnaryExpr(Expr):
    fields = ("node",)
    operator = ""

    def __init__(self, node: Any = None, lineno: int | None = None):
        self.node, self.lineno = node, lineno


class Template(Node):
    fields = ("body",)

    def __init__(self, body: Any = None, lineno: int | None = None):
        self.body, self.lineno = body, lineno


class Output(Stmt):
    fields = ("nodes",)

    def __init__(self, nodes: Any = None, lineno: int | None = None):
        self.nodes, self.lineno = nodes, lineno


class For(Stmt):
    fields = ("target", "iter", "body", "else_", "test", "recursive")

    def __init__(self, target: Any = None, iter: Any = None, body: Any = None, else_: Any = None,  # noqa: A002
                 test: Any = None, recursive: Any = None, lineno: int | None = None):
        self.target, self.iter, self.body, self.else_ = target, iter, body, else_
        self.test, self.recursive, self.lineno = test, recursive, lineno


class If(Stmt):
    fields = ("test", "body", "elif_", "else_")

    def __init__(self, test: Any = None, body: Any = None, elif_: Any = None, else_: Any = None,
                 lineno: int | None = None):
        self.test, self.body, self.elif_, self.else_, self.lineno = test, body, elif_, else_, lineno


class Assign(Stmt):
    fields = ("target", "node")

    def __init__(self, target: Any = None, node: Any = None, lineno: int | None = None):
        self.target, self.node, self.lineno = target, node, lineno


class Name(Expr):
    fields = ("name", "ctx")

    def __init__(self, name: Any = None, ctx: Any = None, lineno: int | None = None):
        self.name, self.ctx, self.lineno = name, ctx, lineno

    def can_assign(self) -> bool:
        return self.name not in _CONSTANT_NAMES


class NSRef(Expr):
    fields = ("name", "attr")

    def __init__(self, name: Any = None, attr: Any = None, lineno: int | None = None):
        self.name, self.attr, self.lineno = name, attr, lineno

    def can_assign(self) -> bool:
        return True


class Const(Literal):
    fields = ("value",)

    def __init__(self, value: Any = None, lineno: int | None = None):
        self.value, self.lineno = value, lineno


class TemplateData(Literal):
    fields = ("data",)

    def __init__(self, data: Any = None, lineno: int | None = None):
        self.data, self.lineno = data, lineno


class Tuple(Literal):
    fields = ("items", "ctx")

    def __init__(self, items: Any = None, ctx: Any = None, lineno: int | None = None):
        self.items, self.ctx, self.lineno = items, ctx, lineno

    def can_assign(self) -> bool:
        return all(item.can_assign() for item in self.items)


class List(Literal):
    fields = ("items",)

    def __init__(self, items: Any = None, lineno: int | None = None):
        self.items, self.lineno = items, lineno


class Dict(Literal):
    fields = ("items",)

    def __init__(self, items: Any = None, lineno: int | None = None):
        self.items, self.lineno = items, lineno


class Pair(Helper):
    fields = ("key", "value")

    def __init__(self, key: Any = None, value: Any = None, lineno: int | None = None):
        self.key, self.value, self.lineno = key, value, lineno


class Keyword(Helper):
    fields = ("key", "value")

    def __init__(self, key: Any = None, value: Any = None, lineno: int | None = None):
        self.key, self.value, self.lineno = key, value, lineno


class CondExpr(Expr):
    fields = ("test", "expr1", "expr2")

    def __init__(self, test: Any = None, expr1: Any = None, expr2: Any = None, lineno: int | None = None):
        self.test, self.expr1, self.expr2, self.lineno = test, expr1, expr2, lineno


class _FilterTestCommon(Expr):
    fields = ("node", "name", "args", "kwargs", "dyn_args", "dyn_kwargs")

    def __init__(self, node: Any = None, name: Any = None, args: Any = None, kwargs: Any = None,
                 dyn_args: Any = None, dyn_kwargs: Any = None, lineno: int | None = None):
        self.node, self.name, self.args, self.kwargs = node, name, args, kwargs
        self.dyn_args, self.dyn_kwargs, self.lineno = dyn_args, dyn_kwargs, lineno


class Filter(_FilterTestCommon):
    pass


class Test(_FilterTestCommon):
    pass


class Call(Expr):
    fields = ("node", "args", "kwargs", "dyn_args", "dyn_kwargs")

    def __init__(self, node: Any = None, args: Any = None, kwargs: Any = None, dyn_args: Any = None,
                 dyn_kwargs: Any = None, lineno: int | None = None):
        self.node, self.args, self.kwargs = node, args, kwargs
        self.dyn_args, self.dyn_kwargs, self.lineno = dyn_args, dyn_kwargs, lineno


class Getitem(Expr):
    fields = ("node", "arg", "ctx")

    def __init__(self, node: Any = None, arg: Any = None, ctx: Any = None, lineno: int | None = None):
        self.node, self.arg, self.ctx, self.lineno = node, arg, ctx, lineno


class Getattr(Expr):
    fields = ("node", "attr", "ctx")

    def __init__(self, node: Any = None, attr: Any = None, ctx: Any = None, lineno: int | None = None):
        self.node, self.attr, self.ctx, self.lineno = node, attr, ctx, lineno


class Slice(Expr):
    fields = ("start", "stop", "step")

    def __init__(self, start: Any = None, stop: Any = None, step: Any = None, lineno: int | None = None):
        self.start, self.stop, self.step, self.lineno = start, stop, step, lineno


class Concat(Expr):
    fields = ("nodes",)

    def __init__(self, nodes: Any = None, lineno: int | None = None):
        self.nodes, self.lineno = nodes, lineno


class Compare(Expr):
    fields = ("expr", "ops")

    def __init__(self, expr: Any = None, ops: Any = None, lineno: int | None = None):
        self.expr, self.ops, self.lineno = expr, ops, lineno


class Operand(Helper):
    fields = ("op", "expr")

    def __init__(self, op: Any = None, expr: Any = None, lineno: int | None = None):
        self.op, self.expr, self.lineno = op, expr, lineno


class Mul(BinExpr):
    operator = "*"


class Div(BinExpr):
    operator = "/"


class FloorDiv(BinExpr):
    operator = "//"


class Add(BinExpr):
    operator = "+"


class Sub(BinExpr):
    operator = "-"


class Mod(BinExpr):
    operator = "%"


class Pow(BinExpr):
    operator = "**"


class And(BinExpr):
    operator = "and"


class Or(BinExpr):
    operator = "or"


class Not(UnaryExpr):
    operator = "not"


class Neg(UnaryExpr):
    operator = "-"


class Pos(UnaryExpr):
    operator = "+"


_CONSTANT_NAMES = frozenset(("true", "false", "none", "True", "False", "None"))


# --- tokens -------------------------------------------------------------------------------
#
# The text inside a tag is cut into tokens the way Jinja's lexer cuts it (whitespace, a float,
# an integer, a name, a string, an operator, tried in that order at each position), limited
# to ASCII: any other character outside a string comes out as a one-character token of its
# own, which the parser refuses. A token's first character tells its kind.

_TOKEN = re.compile(
    r"[ \t\n\f\v]*("
    # float: digits (with single underscores between), then an exponent with an optional
    # fraction before it, or a fraction; never right after a dot (`x.1.2` is two items)
    r"(?<!\.)[0-9]+(?:_[0-9]+)*(?:(?:\.[0-9]+(?:_[0-9]+)*)?[eE][+\-]?[0-9]+(?:_[0-9]+)*|\.[0-9]+(?:_[0-9]+)*)"
    # integer: binary, octal, hex, decimal without a leading zero, or zeros
    r"|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[0-9a-fA-F])+|[1-9](?:_?[0-9])*|0(?:_?0)*"
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
    r"|//|\*\*|==|!=|>=|<=|[-+/*%~\[\](){}=<>.:|,;]"
    r"|[^ \t\n\f\v])",
    re.S,
)
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGITS = frozenset("0123456789")
_QUOTES = frozenset("'\"")

# Where a tag ends: the first closing delimiter outside a string literal. A closing
# delimiter inside open brackets does not end a tag in Jinja; the text up to it then has an
# unclosed bracket, which the parser refuses.
_VARIABLE_BODY = re.compile(r"""(?:[^'"}\-]+|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|-(?!\}\})|\}(?!\}))*""", re.S)
_BLOCK_BODY = re.compile(r"""(?:[^'"%+\-]+|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[-+](?!%\})|%(?!\}))*""", re.S)
_TAG_START = re.compile(r"\{[{%#]")
_SPACE = re.compile(r"\s*")
# a name, attributes, perhaps one filter without arguments; spaces only around the name and filter
_SIMPLE_OUTPUT = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t]*"
                            r"(?:\|[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*)?")
_NOT_A_NAME = frozenset(("true", "false", "none", "True", "False", "None", "not"))  # constants; `not` starts a Not

_END = ""  # after the last token of a tag
_EOF = "\0\0"  # after the last token of a whole expression: no rule takes it as a tag's end, and
# no token is two NULs (a NUL in the source is a one-character token, which is refused)

_COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "lteq", ">": "gt", ">=": "gteq"}
_MATH1 = {"+": Add, "-": Sub}
_MATH2 = {"*": Mul, "/": Div, "//": FloorDiv, "%": Mod}
_ARITHMETIC = frozenset((*_MATH1, "~", *_MATH2, "**"))
_OPERATORS = _ARITHMETIC | frozenset((*_COMPARE, "in", "not", "and", "or"))  # after an operand, below `if`
_POSTFIX = frozenset(".[(")
_FILTER_OR_TEST = frozenset(("|", "is", "("))
_TEST_ARGUMENT = frozenset("([{") | _QUOTES | _DIGITS | _NAME_START
_BLOCK_ENDS = (_END, ")")


def _normalize(source: str) -> str:
    """Line breaks as Jinja's lexer sees them: \\r\\n and \\r become \\n, one final one is dropped."""
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    if source.endswith("\n"):
        source = source[:-1]
    return source


def _string(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "invalid escape sequence": Jinja warns, as before
        try:
            return body.encode("ascii", "backslashreplace").decode("unicode-escape")
        except Exception as exc:  # noqa: BLE001 - a bad escape: Jinja words the error
            raise Unsupported("string escape") from exc


def _number(token: str) -> Any:
    text = token.replace("_", "")
    if text[:2] in ("0x", "0X", "0b", "0B", "0o", "0O"):
        return int(text, 0)
    if "." in text or "e" in text or "E" in text:
        return float(text)
    return int(text, 0)


# --- parser -------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over one tag's tokens at a time (`t`, their lines `l`, position `i`),
    mirroring jinja2.parser.Parser function for function."""

    def __init__(self, source: str):
        self.source = source
        self.pos = 0  # where the template text goes on after the current tag
        self.line_pos = 0
        self.line = 1
        self.depth = 0
        self.t: list[str] = [_END]
        self.l: list[int] = [1]
        self.i = 0

    # lines and tokens

    def line_at(self, pos: int) -> int:
        self.line += self.source.count("\n", self.line_pos, pos)
        self.line_pos = pos
        return self.line

    def tokenize(self, start: int, end: int, final: str) -> None:
        source = self.source
        if source.find("\n", start, end) < 0:
            tokens = _TOKEN.findall(source, start, end)
            line = self.line_at(start)
            lines = [line] * (len(tokens) + 1)
        else:
            tokens, lines = [], []
            for match in _TOKEN.finditer(source, start, end):
                tokens.append(match.group(1))
                lines.append(self.line_at(match.start(1)))
            lines.append(self.line_at(end) if final == _END else (lines[-1] if lines else self.line_at(start)))
        if len(tokens) > MAX_TOKENS:
            raise Unsupported(f"{len(tokens)} tokens in one tag")
        tokens.append(final)
        self.t, self.l, self.i = tokens, lines, 0

    def fail(self) -> Any:
        raise Unsupported(f"token {self.t[self.i]!r} at line {self.l[self.i]}")

    def expect(self, token: str) -> int:
        if self.t[self.i] != token:
            self.fail()
        self.i += 1
        return self.l[self.i - 1]

    def expect_name(self) -> str:
        token = self.t[self.i]
        if token[:1] not in _NAME_START:
            self.fail()
        self.i += 1
        return token

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unsupported("nested too deeply")

    # template structure

    def subparse(self, end_names: tuple[str, ...] | None) -> list[Node]:
        """Text, `{{ }}` and `{% %}` up to a block whose first word is in `end_names`
        (left as the current tag), or to the end of the template."""
        self.deeper()
        source, body, data = self.source, [], []
        while True:
            match = _TAG_START.search(source, self.pos)
            if match is None:
                if self.pos < len(source):
                    data.append(TemplateData(source[self.pos:], self.line_at(self.pos)))
                    self.pos = len(source)
                if end_names is not None:
                    self.fail()
                if data:
                    body.append(Output(data, data[0].lineno))
                self.depth -= 1
                return body
            start = match.start()
            kind = source[start + 1]
            inner = start + 2
            sign = source[inner:inner + 1]
            text = source[self.pos:start]
            if sign == "-":
                text = text.rstrip()
                inner += 1
            elif sign == "+":
                inner += 1
            if text:
                data.append(TemplateData(text, self.line_at(self.pos)))
            if kind == "#":
                close = source.find("#}", inner)
                if close < 0:
                    raise Unsupported("comment without an end")
                if close > inner and source[close - 1] in "+-":
                    self.pos = _SPACE.match(source, close + 2).end() if source[close - 1] == "-" else close + 2
                else:
                    self.pos = close + 2
                continue
            if kind == "{":
                end = _VARIABLE_BODY.match(source, inner).end()
                if source.startswith("}}", end):
                    self.pos = end + 2
                elif source.startswith("-}}", end):
                    self.pos = _SPACE.match(source, end + 3).end()
                else:
                    raise Unsupported("variable tag without an end")
                simple = _SIMPLE_OUTPUT.fullmatch(source, inner, end)
                if simple is not None and simple.group(1) not in _NOT_A_NAME:
                    data.append(self.simple_output(simple))
                    continue
                self.tokenize(inner, end, _END)
                data.append(self.parse_tuple(with_condexpr=True))
                if self.t[self.i] != _END:
                    self.fail()
                continue
            end = _BLOCK_BODY.match(source, inner).end()
            if source.startswith("%}", end) or source.startswith("+%}", end):
                self.pos = end + (2 if source[end] == "%" else 3)
            elif source.startswith("-%}", end):
                self.pos = _SPACE.match(source, end + 3).end()
            else:
                raise Unsupported("block tag without an end")
            if data:
                body.append(Output(data, data[0].lineno))
                data = []
            self.tokenize(inner, end, _END)
            if end_names is not None and self.t[0] in end_names:
                self.depth -= 1
                return body
            body.append(self.parse_statement())
            if self.t[self.i] != _END:
                self.fail()

    def simple_output(self, match: re.Match) -> Node:
        """`{{ name.attr.attr }}` or `{{ name.attr | filter }}` on one line, the most common
        tags, built without tokens: what the full parse of them gives."""
        line = self.line_at(match.start())
        node: Node = Name(match.group(1), "load", line)
        if match.group(2):
            for attr in match.group(2)[1:].split("."):
                node = Getattr(node, attr, "load", line)
        if match.group(3):
            node = Filter(node, match.group(3), [], [], None, None, line)
        return node

    def parse_statement(self) -> Node:
        word = self.t[0]
        if word == "if":
            return self.parse_if()
        if word == "for":
            return self.parse_for()
        if word == "set":
            return self.parse_set()
        if word == "print":
            return self.parse_print()
        raise Unsupported(f"the tag {word!r}")  # macro, include, raw, with, ...: left to Jinja

    def parse_statements(self, end_names: tuple[str, ...], drop_needle: bool = False) -> list[Node]:
        if self.t[self.i] == ":":
            self.i += 1
        if self.t[self.i] != _END:
            self.fail()
        body = self.subparse(end_names)
        if drop_needle:
            self.i += 1
        return body

    def parse_set(self) -> Node:
        line = self.l[self.i]
        self.i += 1
        target = self.parse_assign_target(with_namespace=True)
        if self.t[self.i] != "=":
            raise Unsupported("a block set")
        self.i += 1
        return Assign(target, self.parse_tuple(), line)

    def parse_for(self) -> Node:
        line = self.expect("for")
        target = self.parse_assign_target()
        self.expect("in")
        iterable = self.parse_tuple(with_condexpr=False)
        test = None
        if self.t[self.i] == "if":
            self.i += 1
            test = self.parse_expression()
        recursive = self.t[self.i] == "recursive"
        if recursive:
            self.i += 1
        body = self.parse_statements(("endfor", "else"))
        if self.t[self.i] == "endfor":
            self.i += 1
            else_: list[Node] = []
        else:
            self.i += 1
            else_ = self.parse_statements(("endfor",), drop_needle=True)
        return For(target, iterable, body, else_, test, recursive, line)

    def parse_if(self) -> Node:
        node = result = If(lineno=self.expect("if"))
        while True:
            node.test = self.parse_tuple(with_condexpr=False)
            node.body = self.parse_statements(("elif", "else", "endif"))
            node.elif_ = []
            node.else_ = []
            word = self.t[self.i]
            self.i += 1
            if word == "elif":
                node = If(lineno=self.l[self.i])
                result.elif_.append(node)
                continue
            if word == "else":
                result.else_ = self.parse_statements(("endif",), drop_needle=True)
            break
        return result

    def parse_print(self) -> Node:
        node = Output(lineno=self.l[self.i])
        self.i += 1
        node.nodes = []
        while self.t[self.i] != _END:
            if node.nodes:
                self.expect(",")
            node.nodes.append(self.parse_expression())
        return node

    def parse_assign_target(self, with_namespace: bool = False) -> Node:
        target = self.parse_tuple(simplified=True, with_namespace=with_namespace)
        target.set_ctx("store")
        if not target.can_assign():
            self.fail()
        return target

    # expressions

    def parse_expression(self, with_condexpr: bool = True) -> Node:
        if with_condexpr:
            return self.parse_condexpr()
        return self.parse_or()

    def parse_condexpr(self) -> Node:
        line = self.l[self.i]
        expr1 = self.parse_or()
        while self.t[self.i] == "if":
            self.i += 1
            expr2 = self.parse_or()
            if self.t[self.i] == "else":
                self.i += 1
                expr3 = self.parse_condexpr()
            else:
                expr3 = None
            expr1 = CondExpr(expr2, expr1, expr3, line)
            line = self.l[self.i]
        return expr1

    # Each level below may be handed its first operand already parsed (`first`, whose first
    # token is on `line`). parse_or parses the operand first and, when no operator follows
    # it (as after most operands), returns it without descending through every level, each
    # of which would hand it back unchanged.

    def parse_or(self) -> Node:
        self.deeper()
        t = self.t
        line = self.l[self.i]
        if t[self.i] == "not":
            left = self.parse_and()
        else:
            first = self.parse_unary()
            if t[self.i] not in _OPERATORS:
                self.depth -= 1
                return first
            left = self.parse_and(first, line)
        while t[self.i] == "or":
            self.i += 1
            left = Or(left, self.parse_and(), line)
            line = self.l[self.i]
        self.depth -= 1
        return left

    def parse_and(self, first: Node | None = None, line: int = 0) -> Node:
        if first is None:
            line = self.l[self.i]
            left = self.parse_not()
        else:
            left = self.parse_compare(first, line)
        while self.t[self.i] == "and":
            self.i += 1
            left = And(left, self.parse_not(), line)
            line = self.l[self.i]
        return left

    def parse_not(self) -> Node:
        if self.t[self.i] == "not":
            line = self.l[self.i]
            self.i += 1
            self.deeper()
            node = Not(self.parse_not(), line)
            self.depth -= 1
            return node
        return self.parse_compare()

    def parse_arith(self) -> Node:
        """parse_math1, which is the operand itself when no arithmetic operator follows it."""
        line = self.l[self.i]
        first = self.parse_unary()
        if self.t[self.i] in _ARITHMETIC:
            return self.parse_math1(first, line)
        return first

    def parse_compare(self, first: Node | None = None, line: int = 0) -> Node:
        t = self.t
        if first is None:
            expr = self.parse_arith()
        elif t[self.i] in _ARITHMETIC:
            expr = self.parse_math1(first, line)
        else:
            expr = first
        ops = []
        while True:
            token = t[self.i]
            if token in _COMPARE:
                self.i += 1
                ops.append(Operand(_COMPARE[token], self.parse_arith()))
            elif token == "in":
                self.i += 1
                ops.append(Operand("in", self.parse_arith()))
            elif token == "not" and t[self.i + 1] == "in":
                self.i += 2
                ops.append(Operand("notin", self.parse_arith()))
            else:
                break
            line = self.l[self.i]  # Jinja's line of a comparison: the token after its last operand
        if not ops:
            return expr
        return Compare(expr, ops, line)

    def parse_math1(self, first: Node | None = None, line: int = 0) -> Node:
        if first is None:
            line = self.l[self.i]
        left = self.parse_concat(first, line)
        while self.t[self.i] in _MATH1:
            cls = _MATH1[self.t[self.i]]
            self.i += 1
            left = cls(left, self.parse_concat(), line)
            line = self.l[self.i]
        return left

    def parse_concat(self, first: Node | None = None, line: int = 0) -> Node:
        if first is None:
            line = self.l[self.i]
        left = self.parse_math2(first, line)
        if self.t[self.i] != "~":
            return left
        args = [left]
        while self.t[self.i] == "~":
            self.i += 1
            args.append(self.parse_math2())
        return Concat(args, line)

    def parse_math2(self, first: Node | None = None, line: int = 0) -> Node:
        if first is None:
            line = self.l[self.i]
        left = self.parse_pow(first, line)
        while self.t[self.i] in _MATH2:
            cls = _MATH2[self.t[self.i]]
            self.i += 1
            left = cls(left, self.parse_pow(), line)
            line = self.l[self.i]
        return left

    def parse_pow(self, first: Node | None = None, line: int = 0) -> Node:
        if first is None:
            line = self.l[self.i]
            left = self.parse_unary()
        else:
            left = first
        while self.t[self.i] == "**":
            self.i += 1
            left = Pow(left, self.parse_unary(), line)
            line = self.l[self.i]
        return left

    def parse_unary(self, with_filter: bool = True) -> Node:
        t = self.t
        token = t[self.i]
        if token == "-" or token == "+":
            line = self.l[self.i]
            self.i += 1
            self.deeper()
            node = (Neg if token == "-" else Pos)(self.parse_unary(False), line)
            self.depth -= 1
        else:
            node = self.parse_primary()
        if t[self.i] in _POSTFIX:
            node = self.parse_postfix(node)
        if with_filter and t[self.i] in _FILTER_OR_TEST:
            node = self.parse_filter_expr(node)
        return node

    def parse_primary(self, with_namespace: bool = False) -> Node:
        t = self.t
        token = t[self.i]
        line = self.l[self.i]
        first = token[:1]
        if first in _NAME_START:
            self.i += 1
            if token in ("true", "True"):
                return Const(True, line)
            if token in ("false", "False"):
                return Const(False, line)
            if token in ("none", "None"):
                return Const(None, line)
            if with_namespace and t[self.i] == ".":
                self.i += 1
                return NSRef(token, self.expect_name(), line)
            return Name(token, "load", line)
        if first in _QUOTES:
            if len(token) < 2:
                self.fail()
            self.i += 1
            value = _string(token)
            if t[self.i][:1] in _QUOTES:
                parts = [value]
                while t[self.i][:1] in _QUOTES:
                    if len(t[self.i]) < 2:
                        self.fail()
                    parts.append(_string(t[self.i]))
                    self.i += 1
                value = "".join(parts)
            return Const(value, line)
        if first in _DIGITS:
            self.i += 1
            return Const(_number(token), line)
        if token == "(":
            self.i += 1
            node = self.parse_tuple(explicit_parentheses=True)
            self.expect(")")
            return node
        if token == "[":
            return self.parse_list()
        if token == "{":
            return self.parse_dict()
        return self.fail()

    def parse_tuple(self, simplified: bool = False, with_condexpr: bool = True, explicit_parentheses: bool = False,
                    with_namespace: bool = False) -> Node:
        # Jinja's extra_end_rules never match (a tuple is passed where token tests are
        # expected), so a tuple ends only at a tag's end or a closing parenthesis.
        line = self.l[self.i]
        args = []
        is_tuple = False
        t = self.t
        while True:
            if args:
                self.expect(",")
            if t[self.i] in _BLOCK_ENDS:
                break
            if simplified:
                args.append(self.parse_primary(with_namespace))
            elif with_condexpr:
                args.append(self.parse_condexpr())
            else:
                args.append(self.parse_or())
            if t[self.i] == ",":
                is_tuple = True
            else:
                break
            line = self.l[self.i]
        if not is_tuple:
            if args:
                return args[0]
            if not explicit_parentheses:
                self.fail()
        return Tuple(args, "load", line)

    def parse_list(self) -> Node:
        line = self.expect("[")
        items: list[Node] = []
        t = self.t
        while t[self.i] != "]":
            if items:
                self.expect(",")
            if t[self.i] == "]":
                break
            items.append(self.parse_expression())
        self.expect("]")
        return List(items, line)

    def parse_dict(self) -> Node:
        line = self.expect("{")
        items: list[Node] = []
        t = self.t
        while t[self.i] != "}":
            if items:
                self.expect(",")
            if t[self.i] == "}":
                break
            key = self.parse_expression()
            self.expect(":")
            items.append(Pair(key, self.parse_expression(), key.lineno))
        self.expect("}")
        return Dict(items, line)

    def parse_postfix(self, node: Node) -> Node:
        t = self.t
        while True:
            token = t[self.i]
            if token == "." or token == "[":
                node = self.parse_subscript(node)
            elif token == "(":
                node = self.parse_call(node)
            else:
                return node

    def parse_filter_expr(self, node: Node) -> Node:
        t = self.t
        while True:
            token = t[self.i]
            if token == "|":
                node = self.parse_filter(node)
            elif token == "is":
                node = self.parse_test(node)
            elif token == "(":
                node = self.parse_call(node)
            else:
                return node

    def parse_subscript(self, node: Node) -> Node:
        t = self.t
        token = t[self.i]
        line = self.l[self.i]
        self.i += 1
        if token == ".":
            attr = t[self.i]
            self.i += 1
            if attr[:1] in _NAME_START:
                return Getattr(node, attr, "load", line)
            if attr[:1] not in _DIGITS or not isinstance(value := _number(attr), int):
                self.i -= 1
                self.fail()
            return Getitem(node, Const(value, self.l[self.i - 1]), "load", line)
        args: list[Node] = []
        while t[self.i] != "]":
            if args:
                self.expect(",")
            args.append(self.parse_subscribed())
        self.expect("]")
        arg = args[0] if len(args) == 1 else Tuple(args, "load", line)
        return Getitem(node, arg, "load", line)

    def parse_subscribed(self) -> Node:
        t = self.t
        line = self.l[self.i]
        if t[self.i] == ":":
            self.i += 1
            args: list[Any] = [None]
        else:
            node = self.parse_expression()
            if t[self.i] != ":":
                return node
            self.i += 1
            args = [node]
        if t[self.i] == ":":
            args.append(None)
        elif t[self.i] not in ("]", ","):
            args.append(self.parse_expression())
        else:
            args.append(None)
        if t[self.i] == ":":
            self.i += 1
            if t[self.i] not in ("]", ","):
                args.append(self.parse_expression())
            else:
                args.append(None)
        else:
            args.append(None)
        return Slice(args[0], args[1], args[2], line)

    def parse_call_args(self) -> tuple[list, list, Any, Any]:
        t = self.t
        self.expect("(")
        args: list[Node] = []
        kwargs: list[Node] = []
        dyn_args = dyn_kwargs = None
        require_comma = False
        while t[self.i] != ")":
            if require_comma:
                self.expect(",")
                if t[self.i] == ")":
                    break
            token = t[self.i]
            if token == "*":
                if dyn_args is not None or dyn_kwargs is not None:
                    self.fail()
                self.i += 1
                dyn_args = self.parse_expression()
            elif token == "**":
                if dyn_kwargs is not None:
                    self.fail()
                self.i += 1
                dyn_kwargs = self.parse_expression()
            elif token[:1] in _NAME_START and t[self.i + 1] == "=":
                if dyn_kwargs is not None:
                    self.fail()
                self.i += 2
                value = self.parse_expression()
                kwargs.append(Keyword(token, value, value.lineno))
            else:
                if dyn_args is not None or dyn_kwargs is not None or kwargs:
                    self.fail()
                args.append(self.parse_expression())
            require_comma = True
        self.expect(")")
        return args, kwargs, dyn_args, dyn_kwargs

    def parse_call(self, node: Node) -> Node:
        line = self.l[self.i]
        args, kwargs, dyn_args, dyn_kwargs = self.parse_call_args()
        return Call(node, args, kwargs, dyn_args, dyn_kwargs, line)

    def parse_filter(self, node: Node) -> Node:
        t = self.t
        while t[self.i] == "|":
            self.i += 1
            line = self.l[self.i]
            name = self.expect_name()
            while t[self.i] == ".":
                self.i += 1
                name += "." + self.expect_name()
            if t[self.i] == "(":
                args, kwargs, dyn_args, dyn_kwargs = self.parse_call_args()
            else:
                args, kwargs, dyn_args, dyn_kwargs = [], [], None, None
            node = Filter(node, name, args, kwargs, dyn_args, dyn_kwargs, line)
        return node

    def parse_test(self, node: Node) -> Node:
        t = self.t
        line = self.l[self.i]
        self.i += 1
        negated = t[self.i] == "not"
        if negated:
            self.i += 1
        name = self.expect_name()
        while t[self.i] == ".":
            self.i += 1
            name += "." + self.expect_name()
        dyn_args = dyn_kwargs = None
        kwargs: list[Node] = []
        token = t[self.i]
        if token == "(":
            args, kwargs, dyn_args, dyn_kwargs = self.parse_call_args()
        elif token[:1] in _TEST_ARGUMENT and token not in ("else", "or", "and"):
            if token == "is":
                self.fail()
            args = [self.parse_postfix(self.parse_primary())]
        else:
            args = []
        node = Test(node, name, args, kwargs, dyn_args, dyn_kwargs, line)
        if negated:
            node = Not(node, line)
        return node


def parse_template(source: str) -> Template:
    """The tree of `source` as a template (Jinja's `env.parse(source)`), or Unsupported."""
    parser = _Parser(_normalize(source))
    try:
        return Template(parser.subparse(None), 1)
    except RecursionError as exc:
        raise Unsupported("nested too deeply") from exc


def parse_expression(source: str) -> Node:
    """The tree of `source` as one expression that is the whole source, or Unsupported."""
    text = _normalize(source)
    parser = _Parser(text)
    parser.tokenize(0, len(text), _EOF)
    try:
        node = parser.parse_condexpr()
    except RecursionError as exc:
        raise Unsupported("nested too deeply") from exc
    if parser.t[parser.i] != _EOF:
        parser.fail()
    return node
