"""The direct printer of C nodes prints exactly what pycparser's `CGenerator` prints."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pycparser import c_ast, c_generator

from aiscan.frontends.c.preprocess import preprocess
from aiscan.frontends.c.text import source_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "c"

_names = st.sampled_from(["i", "n", "A", "x"]).map(c_ast.ID)
_constants = st.sampled_from(["0", "2", "1.5", "010"]).map(lambda v: c_ast.Constant("int", v))
_binary = st.sampled_from(["+", "-", "*", "/", "<", "&&", "%", "<<"])
_unary = st.sampled_from(["-", "!", "*", "&", "p++", "p--", "++", "--", "sizeof"])
_assign = st.sampled_from(["=", "+=", "*="])


def _compound(children: st.SearchStrategy[c_ast.Node]) -> st.SearchStrategy[c_ast.Node]:
    return st.one_of(
        st.builds(c_ast.BinaryOp, _binary, children, children),
        st.builds(c_ast.UnaryOp, _unary, children),
        st.builds(c_ast.ArrayRef, children, children),
        st.builds(c_ast.Assignment, _assign, children, children),
        st.builds(c_ast.FuncCall, _names, st.lists(children, max_size=2).map(c_ast.ExprList)),
        st.builds(c_ast.StructRef, children, st.sampled_from([".", "->"]), _names),
        st.builds(c_ast.TernaryOp, children, children, children),
        st.lists(children, min_size=1, max_size=2).map(c_ast.ExprList),
        st.lists(children, min_size=1, max_size=2).map(c_ast.InitList),
    )


_expressions = st.recursive(st.one_of(_names, _constants), _compound, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_expressions)
def test_random_expressions_print_as_cgenerator_prints_them(node: c_ast.Node) -> None:
    assert source_text(node) == c_generator.CGenerator().visit(node)


def test_every_node_of_every_c_fixture_prints_as_cgenerator_prints_it() -> None:
    from pycparser import c_parser

    generator = c_generator.CGenerator()
    checked = 0
    for path in sorted(FIXTURES.glob("*.c")):
        text = preprocess(
            path.read_text(), str(path), include_dirs=[str(FIXTURES / "polybench")]
        ).text
        stack: list[c_ast.Node] = [c_parser.CParser().parse(text, str(path))]
        while stack:
            node = stack.pop()
            stack.extend(node)
            if not isinstance(node, c_ast.FileAST):
                assert source_text(node) == generator.visit(node), (path.name, node.coord)
                checked += 1
    assert checked > 1000
