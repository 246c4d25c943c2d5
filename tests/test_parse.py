"""linter.engine.parse against Jinja2's own parser: for every source either the two trees are
the same (class names, fields in order, values with their types, line numbers) or the fast
parser refused the source with Unsupported, and the built-in pack is never refused.

Sources: every expression and template of the built-in pack (rules/*.yaml with tiers.yaml
and conditions.yaml), of the rule folders in tests/hostile_rule_folders, every string in
tests/test_hostile_rules.py (and in every other test module), a table of tricky cases, and generated ones (expressions and
templates from a small grammar with random spacing, and the built-in sources cut and
spliced). For a longer generated run: HWLINT_FUZZ_EXAMPLES=5000 python -m pytest tests/test_parse.py
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2 import nodes
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

from conftest import ROOT
from linter.engine import parse

ENV = ImmutableSandboxedEnvironment(keep_trailing_newline=False)
EXAMPLES_N = int(os.environ.get("HWLINT_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES_N, deadline=None, derandomize="HWLINT_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
# rule keys and what they hold, as the pack builder reads them
RULE_KEYS = (("when", "expr"), ("require", "expr"), ("message", "tmpl"), ("fix", "tmpl"), ("at", "tmpl"),
             ("evidence", "tmpl"))
RECORD_KEYS = (("when", "expr"), ("reason", "tmpl"))


def dump(value):
    """A node as (class name, lineno, ((field, value), ...)), recursively; other values with their type."""
    if isinstance(value, (nodes.Node, parse.Node)):
        return (type(value).__name__, value.lineno, tuple((name, dump(getattr(value, name))) for name in value.fields))
    if isinstance(value, list):
        return [dump(item) for item in value]
    return (type(value).__name__, repr(value))


def jinja(kind: str, source: str):
    if kind == "tmpl":
        return ENV.parse(source)
    parser = Parser(ENV, source, state="variable")
    expr = parser.parse_expression()
    if not parser.stream.eos:
        raise ValueError("chunk after expression")
    return expr


def fast(kind: str, source: str):
    return parse.parse_template(source) if kind == "tmpl" else parse.parse_expression(source)


def mismatch(kind: str, source: str, must_parse: bool = False) -> str | None:
    """Why the fast parser disagrees with Jinja on `source`, or None."""
    try:
        mine = fast(kind, source)
    except parse.Unsupported as exc:
        return f"refused {kind} {source!r}: {exc}" if must_parse else None
    try:
        theirs = jinja(kind, source)
    except Exception as exc:  # noqa: BLE001 - any failure of Jinja's is one the fast parser missed
        return f"accepted {kind} {source!r}, which Jinja refuses: {type(exc).__name__}: {exc}"
    if dump(mine) != dump(theirs):
        return f"different tree for {kind} {source!r}:\n  fast:  {dump(mine)}\n  jinja: {dump(theirs)}"
    walked = [(type(n).__name__, n.lineno) for n in mine.find_all(parse.Node)]
    if walked != [(type(n).__name__, n.lineno) for n in theirs.find_all(nodes.Node)]:
        return f"find_all walks {kind} {source!r} in another order"
    return None


def rule_sources(paths) -> list[tuple[str, str, str]]:
    """(where, kind, source) of every rule expression and template in the YAML files `paths`."""
    found = []
    for path in paths:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        for section, keys in (("rules", RULE_KEYS), ("tiers", RECORD_KEYS), ("conditions", RECORD_KEYS)):
            for index, record in enumerate(data.get(section) or []):
                for key, kind in keys:
                    if isinstance(record, dict) and isinstance(record.get(key), str):
                        found.append((f"{path.name}:{section}[{index}].{key}", kind, record[key]))
    return found


BUILT_IN = rule_sources(sorted((ROOT / "rules").glob("*.yaml")))
HOSTILE_FOLDERS = rule_sources(sorted((ROOT / "tests" / "hostile_rule_folders").rglob("*.yaml")))


def test_the_built_in_pack_parses_to_jinjas_tree_and_is_never_refused():
    assert len(BUILT_IN) > 300  # every rule's when/require/message/fix/at/evidence, tiers, conditions
    problems = [f"{where}: {problem}" for where, kind, source in BUILT_IN
                if (problem := mismatch(kind, source, must_parse=True))]
    # an expression as rules.py checks it: wrapped in a template
    problems += [f"{where}: {problem}" for where, kind, source in BUILT_IN
                 if kind == "expr" and (problem := mismatch("tmpl", "{{ " + source + " }}", must_parse=True))]
    assert not problems, "\n".join(problems)


def test_the_built_in_pack_compiles_to_the_same_code_from_either_tree():
    """hwlint's compiler, handed the fast tree or Jinja's, writes the same Python."""
    from jinja2 import Environment
    from jinja2.parser import Parser

    from linter.engine.compiler import python_source

    env = Environment(keep_trailing_newline=False)
    for _, kind, source in BUILT_IN:
        if kind == "tmpl":
            theirs = env.parse(source)
            ours = parse.parse_template(source)
        else:
            theirs = Parser(env, source, state="variable").parse_expression()
            ours = parse.parse_expression(source)
        assert python_source(ours, kind) == python_source(theirs, kind), source


def test_hostile_rule_folders():
    assert HOSTILE_FOLDERS
    problems = [f"{where}: {problem}" for where, kind, source in HOSTILE_FOLDERS if (problem := mismatch(kind, source))]
    assert not problems, "\n".join(problems)


def test_every_string_of_the_hostile_rule_tests():
    tree = ast.parse((ROOT / "tests" / "test_hostile_rules.py").read_text(encoding="utf-8"))
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert "(" * 3000 + "1" + ")" * 3000 not in strings  # built by an expression, added below
    strings |= {"(" * 3000 + "1" + ")" * 3000, "(" * 40 + "1" + ")" * 40, "not " * 500 + "x", "-" * 500 + "1",
                "[" * 200 + "]" * 200, "{% if x %}" * 100 + "{% endif %}" * 100, " + ".join(["x"] * 100)}
    problems = [problem for source in sorted(strings) for kind in ("expr", "tmpl") if (problem := mismatch(kind, source))]
    assert not problems, "\n".join(problems)


def test_every_string_of_every_test_module():
    """Rule sources written inline in the other tests (and much else, which is mostly refused or plain text)."""
    strings = set()
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        strings |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert len(strings) > 1000
    problems = [problem for source in sorted(strings) for kind in ("expr", "tmpl") if (problem := mismatch(kind, source))]
    assert not problems, "\n".join(problems)


def test_nesting_beyond_the_limit_is_left_to_jinja():
    with pytest.raises(parse.Unsupported):
        parse.parse_expression("(" * 3000 + "1" + ")" * 3000)
    with pytest.raises(parse.Unsupported):
        parse.parse_template("{% if x %}" * 100 + "{% endif %}" * 100)
    with pytest.raises(parse.Unsupported):
        parse.parse_expression(" + ".join(["x"] * 3000))  # a tree 3000 deep
    assert dump(parse.parse_expression("((((1))))")) == dump(jinja("expr", "((((1))))"))


# Each is parsed (never refused) and must give Jinja's tree.
TRICKY = [
    ("expr", "2 ** 3 ** 2"),  # left-associative in Jinja
    ("expr", "-2 ** 2"), ("expr", "- x | abs"), ("expr", "not a == b and c or d"), ("expr", "a and not b or not not c"),
    ("expr", "x | round(1, 'floor') | int"), ("expr", "x|default(0)|float * 2"), ("expr", "(a + b) | string"),
    ("expr", "x is defined"), ("expr", "x is not none"), ("expr", "x is divisibleby 3"), ("expr", "x is sameas false"),
    ("expr", "x is defined and y is undefined"), ("expr", "x is eq(1)"), ("expr", "x is in [1, 2]"),
    ("expr", "-x is number"), ("expr", "x is foo.bar"), ("expr", "x | foo.bar(1)"),
    ("expr", "a not in b"), ("expr", "a in b not in c"), ("expr", "not a in b"), ("expr", "1 < x <= 3 != y"),
    ("expr", "a == b == c"), ("expr", "x if c"), ("expr", "x if c else y if d else z"), ("expr", "x if c if d else e"),
    ("expr", "(x if c else y) + 1"), ("expr", "a + b - c * d / e // f % g"), ("expr", "a - -b + +c"),
    ("expr", "1_000 + 1e3 + 1.5e-3 + 2.5 + 0x1F + 0o17 + 0b101 + 1_0.0_1 + 00 + 1E3"),
    ("expr", "true and True or false or False or none or None"), ("expr", "x.0.1"), ("expr", "x[0][1:2][::3][1:][:-1][a, b]"),
    ("expr", "x[::]"), ("expr", "x[1:2:3]"), ("expr", "x[]"), ("expr", "f(1, 2, a=3, *b, **c)"), ("expr", "f(a=1,)"),
    ("expr", "f()()"), ("expr", "f(x)[0].y(z)"), ("expr", "[1, 2, [3, (4,)], ()]"), ("expr", "[1, 2,]"), ("expr", "(1,)"),
    ("expr", "((1, 2), (3,))"), ("expr", "{'a': 1, 'b': {'c': [2]},}"), ("expr", "{}"), ("expr", "{1: {2: 3}}"), ("expr", "{'a': {'b': 1}}"),
    ("expr", "'it''s' \"ok\""), ("expr", r"'a\nb\tc\\d\'e\x41\u00e9'"), ("expr", "'é' + \"ü\""),
    ("expr", "'{{ not a tag }}' ~ '%}'"), ("expr", "a ~ b ~ c + d"), ("expr", "manifest.node_pools | map(attribute='count') | sum"),
    ("expr", "a\n  and b\n  or c\n == d"), ("expr", "x\n.y\n[0]\n|f\n(1)\nis t\n2"), ("expr", "x\r\n+ y\r+ z\n"),
    ("expr", "a if\nb\nelse\nc"), ("expr", "[1,\n2,\n3]\n| length\n>\n2"), ("expr", "f(\na\n=\n1\n)"),
    ("expr", "and"), ("expr", "a + not"), ("expr", "if"), ("expr", "x.if.else"),
    ("tmpl", ""), ("tmpl", "\n"), ("tmpl", "plain text\n"), ("tmpl", "two\n\nlines\n\n"), ("tmpl", "crlf\r\nand cr\rend\r\n"),
    ("tmpl", "{{ x }}"), ("tmpl", "a {{ x }} b {{ y }}\n"), ("tmpl", "{{ a, b }}"), ("tmpl", "{{ a, }}"), ("tmpl", "{{-1}}"),
    ("tmpl", "{{+1}}"), ("tmpl", "x  \n {{- y -}}  \n z"), ("tmpl", "x {%- if a -%} y {%- endif -%} z"), ("tmpl", "{{ x -}}\n\n"),
    ("tmpl", "a {# a comment #} b"), ("tmpl", "a\n{#- strip -#}\nb"), ("tmpl", "{# #}{#-#}{#--#}{#+#}"), ("tmpl", "a {#+ x +#} b"),
    ("tmpl", "{# {{ not parsed }} {% if %} #}"), ("tmpl", "{% if a %}x{% endif %}"), ("tmpl", "{% if a: %}x{% else: %}y{% endif %}"),
    ("tmpl", "{% if a %}1{% elif b %}2{% elif\nc %}3{% else %}4{% endif %}"), ("tmpl", "{% if a, b %}{% endif %}"),
    ("tmpl", "{% for x in y %}{{ x }}{% endfor %}"), ("tmpl", "{% for a, b in c.items() %}{{ a }}={{ b }};{% endfor %}"),
    ("tmpl", "{% for (a, b) in c %}{% endfor %}"), ("tmpl", "{% for x in y if x > 1 %}{{ loop.index }}{% else %}none{% endfor %}"),
    ("tmpl", "{% for x in a, b %}{% endfor %}"), ("tmpl", "{% for x in y recursive %}{% endfor %}"),
    ("tmpl", "{% for x in y if a if b else c %}{% endfor %}"), ("tmpl", "{% set x = 1 %}{% set a, b = 1, 2 %}{{ x + a + b }}"),
    ("tmpl", "{% set ns.x = 1 %}"), ("tmpl", "{% set x = y if c %}"), ("tmpl", "{% print a, b %}"), ("tmpl", "{%+ if a +%}x{% endif %}"),
    ("tmpl", "{% if a %}{% for x in y %}{% if x %}{{ x }}{% endif %}{% endfor %}{% endif %}"),
    ("tmpl", "line 1\n{% if a\n  and b %}\n{{ c\n  | d }}\n{% endif %}\nlast"), ("tmpl", "{{ '}}' }}{{ \"%}\" }}"),
    ("tmpl", "{ not a tag } {{ x }}} }} %} #}"), ("tmpl", "{{{ x: 1 } }}"), ("tmpl", "{{ x }}{{ y\n}}\n{{\nz }}"),
    ("tmpl", "{% set x = {'a': 1} %}"), ("tmpl", "{{ x is defined }}{{ x is not none }}"),
]


@pytest.mark.parametrize("kind, source", TRICKY)
def test_tricky_cases_parse_as_jinja_parses_them(kind, source):
    assert mismatch(kind, source, must_parse=True) is None, mismatch(kind, source, must_parse=True)


# Each is refused (or, if parsed, must equal Jinja's tree): syntax errors and constructs left to Jinja.
REFUSED = [
    ("expr", ""), ("expr", "a +"), ("expr", "(a"), ("expr", "a)"), ("expr", "[1, 2"), ("expr", "f(a=1, 2)"), ("expr", "f(*a, *b)"),
    ("expr", "a b"), ("expr", "a }}"), ("expr", "a -}} b"), ("expr", "x is is y"), ("expr", "x is"), ("expr", "'unterminated"),
    ("expr", "a ! b"), ("expr", "a @ b"), ("expr", "naïve"), ("expr", "x\u00a0+ 1"), ("expr", "1\u0663"), ("expr", r"'\x4'"), ("expr", r"'\d'"),
    ("expr", "a, b"), ("expr", "a\0b"), ("expr", "a\0"), ("tmpl", "{{ a\0 }}"), ("expr", "x.1.5"), ("expr", "x. 1.5"), ("expr", "1abc"), ("expr", "foo.1e3"), ("expr", "a[1,]"), ("expr", "{1: 2"),
    ("tmpl", "{{ }}"), ("tmpl", "{{ x"), ("tmpl", "{% if x %}"), ("tmpl", "{% endif %}"), ("tmpl", "{% if x %}{% endfor %}"),
    ("tmpl", "{# open"), ("tmpl", "{% raw %}{{ x }}{% endraw %}"), ("tmpl", "{%- raw -%}x{% endraw %}"),
    ("tmpl", "{% macro f() %}{% endmacro %}"), ("tmpl", "{% include 'x' %}"), ("tmpl", "{% set a %}x{% endset %}"),
    ("tmpl", "{% filter upper %}x{% endfilter %}"), ("tmpl", "{% with a = 1 %}{% endwith %}"), ("tmpl", "{% for a, in x %}{% endfor %}"),
    ("tmpl", "{% for true in x %}{% endfor %}"), ("tmpl", "{% set a.b.c = 1 %}"), ("tmpl", "{% set x[0] = 1 %}"),
    ("tmpl", "{% if x %}{% endif y %}"), ("tmpl", "{{ {'a': {'b': 1}} }}"), ("tmpl", "{% %}"), ("tmpl", "{{ x +}}"),
    ("tmpl", "{% for x in y %}{% else %}{% else %}{% endfor %}"), ("tmpl", "{% do x %}"), ("tmpl", "{% break %}"),
]


@pytest.mark.parametrize("kind, source", REFUSED)
def test_errors_and_constructs_left_to_jinja(kind, source):
    assert mismatch(kind, source) is None, mismatch(kind, source)


def test_importing_the_parser_does_not_import_jinja2():
    code = "import sys, linter.engine.parse as p; p.parse_template('{{ x | f }}{% if a %}{% endif %}'); print(sorted(m for m in sys.modules if m.startswith('jinja2')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr


def test_nodes_walk_and_compare_like_jinjas():
    tree = parse.parse_template("{% for a, b in c %}{{ a.x | f(b[0]) }}{% endfor %}")
    assert [type(n).__name__ for n in tree.find_all((parse.Name, parse.Getattr))] == ["Name", "Name", "Name", "Getattr", "Name", "Name"]
    assert tree.find(parse.Filter).name == "f"
    assert [n.ctx for n in tree.find_all(parse.Name)] == ["store", "store", "load", "load", "load"]
    assert parse.parse_expression("a + 1") == parse.parse_expression("a\n+\n1")  # fields, not line numbers
    assert parse.parse_expression("a + 1") != parse.parse_expression("a + 2")
    assert isinstance(parse.parse_expression("a + 1"), parse.BinExpr) and parse.Add.fields == nodes.Add.fields
    for name in ("Template", "Output", "TemplateData", "If", "For", "Assign", "Name", "NSRef", "Const", "Getattr", "Getitem",
                 "Slice", "Call", "Keyword", "Filter", "Test", "Compare", "Operand", "And", "Or", "Not", "Neg", "Pos", "Add",
                 "Sub", "Mul", "Div", "FloorDiv", "Mod", "Pow", "CondExpr", "List", "Tuple", "Dict", "Pair", "Concat"):
        assert getattr(parse, name).fields == getattr(nodes, name).fields, name


# --- generated sources ----------------------------------------------------------------------

SPACE = st.sampled_from(["", " ", " ", "  ", "\n", " \n  ", "\t"])
NAMES = st.sampled_from(["x", "y", "manifest", "facts", "pool", "loop", "a_b", "_x", "true", "False", "none", "None",
                         "if", "in", "not", "is", "and", "or", "else", "e3"])
NUMBERS = st.sampled_from(["0", "1", "42", "1_000", "1e3", "1.5", "2.5e-3", "0x1F", "0b11", "0o7", "00", "1.", "1_", "0_0"])
STRINGS = st.sampled_from(["'a'", '"b"', "''", r"'\n'", r"'\x41'", "'é'", r"'a\'b'", "'}}'", "'%}'", "'{{'", "'#}'"])
FILTERS = st.sampled_from(["length", "default(0)", "round(1, 'floor')", "map(attribute='x')", "join(', ')", "int", "f.g"])
TESTS = st.sampled_from(["defined", "not defined", "none", "divisibleby 3", "sameas false", "eq(1)", "in [1]", "number"])
BINARY = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", "<=", ">", ">=", "in", "not in",
                          "and", "or"])


def spaced(*parts):
    return st.tuples(*(p if isinstance(p, st.SearchStrategy) else st.just(p) for p in parts), *(SPACE for _ in parts)).map(
        lambda t: "".join(a + b for a, b in zip(t[:len(parts)], t[len(parts):])))


ATOMS = st.one_of(NAMES, NUMBERS, STRINGS, st.just("[]"), st.just("{}"), st.just("()"))


def _extend(inner):
    return st.one_of(
        spaced(inner, BINARY, inner), spaced(st.sampled_from(["-", "+", "not "]), inner), spaced(inner, "|", FILTERS),
        spaced(inner, " is ", TESTS), spaced(inner, " if ", inner), spaced(inner, " if ", inner, " else ", inner),
        spaced("(", inner, ")"), spaced("[", inner, ",", inner, "]"), spaced("{", inner, ":", inner, "}"),
        spaced(inner, ".", NAMES), spaced(inner, "[", inner, "]"), spaced(inner, "[", inner, ":", "]"),
        spaced(inner, "(", inner, ", k=", inner, ")"), spaced("(", inner, ",", inner, ")"), spaced(inner, ".", "0"),
    )


EXPRESSIONS = st.recursive(ATOMS, _extend, max_leaves=12)
TEXT = st.text(alphabet="ab {}%#-+\n\r ", max_size=12)
SIGN = st.sampled_from(["", "", "-", "+"])


def _blocks(inner):
    return st.one_of(
        st.lists(inner, max_size=3).map("".join),
        st.tuples(SIGN, EXPRESSIONS, inner, SIGN, inner).map(
            lambda t: f"{{%{t[0]} if {t[1]} %}}{t[2]}{{% else {t[3]}%}}{t[4]}{{% endif %}}"),
        st.tuples(EXPRESSIONS, inner, EXPRESSIONS, inner).map(
            lambda t: f"{{% if {t[0]} %}}{t[1]}{{% elif {t[2]} %}}{t[3]}{{% endif %}}"),
        st.tuples(st.sampled_from(["x", "a, b", "(a, b)", "x,"]), EXPRESSIONS, st.sampled_from(["", " if x", " recursive"]), inner,
                  st.sampled_from(["", "{% else %}", "{%- else -%}\n"])).map(
            lambda t: f"{{% for {t[0]} in {t[1]}{t[2]} %}}{t[3]}{t[4]}{{% endfor %}}"),
    )


PIECES = st.one_of(
    TEXT, st.tuples(SIGN, EXPRESSIONS, SIGN).map(lambda t: f"{{{{{t[0]} {t[1]} {t[2]}}}}}"),
    st.tuples(SIGN, TEXT, SIGN).map(lambda t: f"{{#{t[0]}{t[1]}{t[2]}#}}"),
    st.tuples(st.sampled_from(["x", "a, b", "ns.x", "(a, b)"]), EXPRESSIONS).map(lambda t: f"{{% set {t[0]} = {t[1]} %}}"),
    st.tuples(EXPRESSIONS, EXPRESSIONS).map(lambda t: f"{{% print {t[0]}, {t[1]} %}}"),
    st.tuples(st.sampled_from(["", "-", "+"]), NAMES, st.sampled_from(["", ".y", ".y.z", " | f", ".y|g"]), SPACE).map(
        lambda t: f"{{{{{t[0]}{t[3]}{t[1]}{t[2]}{t[3]}}}}}"),
)
TEMPLATES = st.recursive(PIECES, _blocks, max_leaves=8)


@FUZZ
@given(EXPRESSIONS)
def test_generated_expressions(source):
    for kind, text in (("expr", source), ("tmpl", "{{ " + source + " }}")):
        assert mismatch(kind, text) is None, mismatch(kind, text)


@FUZZ
@given(TEMPLATES)
def test_generated_templates(source):
    assert mismatch("tmpl", source) is None, mismatch("tmpl", source)


@FUZZ
@given(st.sampled_from(BUILT_IN), st.integers(0, 10_000), st.integers(0, 6),
       st.sampled_from(["", " ", "(", ")", "[", "]", "{", "}", "}}", "%}", "{{", "{%", "-", "'", "\"", "|", ".", ",", "if",
                        " not ", " is ", "\n", "\\", "1.", "=", ":", "#}", "{#"]))
def test_built_in_sources_cut_and_spliced(record, at, cut, insert):
    _, kind, source = record
    at %= len(source) + 1
    mutated = source[:at] + insert + source[at + cut:]
    assert mismatch(kind, mutated) is None, mismatch(kind, mutated)
