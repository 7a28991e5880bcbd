"""The Python frontend's shortcuts give exactly what the general sympy code gives."""

from __future__ import annotations

import ast
import warnings

import libcst as cst
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from aiscan.frontends.python.expressions import number_literal, string_literal
from aiscan.frontends.python.nests import broadcast_coordinates
from aiscan.frontends.python.shapes import broadcast_shapes, same_extent
from aiscan.frontends.python.values import coordinate, substituted
from aiscan.ir.symbols import MAX_INTEGER, loop_symbol, size_symbol

_SYMBOLS = [coordinate(0), coordinate(1), loop_symbol("i"), loop_symbol("j"), size_symbol("n")]
_symbols = st.sampled_from(_SYMBOLS)
_values = st.one_of(
    _symbols,
    st.integers(-3, 3).map(sympy.Integer),
    st.tuples(_symbols, st.integers(-2, 2), st.integers(1, 3)).map(lambda t: t[2] * t[0] + t[1]),
)
_bindings = st.dictionaries(_symbols, _values, max_size=3)
_extents = st.sampled_from([sympy.Integer(1), sympy.Integer(4), size_symbol("n"), size_symbol("m")])


@settings(max_examples=300, deadline=None)
@given(st.one_of(_symbols, _values), _bindings, st.booleans())
def test_substituted_is_expand_of_subs(
    expression: sympy.Expr, bindings: dict[sympy.Symbol, sympy.Expr], simultaneous: bool
) -> None:
    expected = sympy.expand(expression.subs(bindings, simultaneous=simultaneous))
    assert substituted(expression, bindings, simultaneous=simultaneous) == expected


def test_a_substituted_coordinate_is_substituted_further_as_subs_does() -> None:
    c0, c1 = coordinate(0), coordinate(1)
    assert substituted(c0, {c0: c1, c1: sympy.Integer(5)}) == c0.subs({c0: c1, c1: 5})


def _broadcast_reference(
    coords: tuple[sympy.Expr, ...], out_shape: tuple[sympy.Expr, ...], shape: tuple[sympy.Expr, ...]
) -> tuple[sympy.Expr, ...]:
    offset = len(out_shape) - len(shape)
    one = sympy.S.One
    return tuple(
        sympy.S.Zero if extent is one and out_shape[offset + d] is not one else coords[offset + d]
        for d, extent in enumerate(shape)
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(_extents, min_size=1, max_size=3), st.data())
def test_broadcast_coordinates_of_the_same_shape_and_of_others(
    out: list[sympy.Expr], data: st.DataObject
) -> None:
    out_shape = tuple(out)
    coords = tuple(loop_symbol(f"_i{d}") for d in range(len(out_shape)))
    same = data.draw(st.booleans())
    shape = out_shape if same else tuple(data.draw(st.lists(_extents, max_size=len(out_shape))))
    expected = _broadcast_reference(coords, out_shape, shape)
    assert broadcast_coordinates(coords, out_shape, shape) == expected


def _shapes_reference(
    a: tuple[sympy.Expr, ...], b: tuple[sympy.Expr, ...]
) -> tuple[sympy.Expr, ...] | None:
    rank = max(len(a), len(b))
    padded_a = (sympy.Integer(1),) * (rank - len(a)) + a
    padded_b = (sympy.Integer(1),) * (rank - len(b)) + b
    out: list[sympy.Expr] = []
    for x, y in zip(padded_a, padded_b, strict=True):
        if x == 1:
            out.append(y)
        elif y == 1 or same_extent(x, y):
            out.append(x)
        else:
            return None
    return tuple(out)


@settings(max_examples=200, deadline=None)
@given(st.lists(_extents, max_size=3), st.lists(_extents, max_size=3))
def test_broadcast_shapes_matches_numpy_rules_by_comparison(
    a: list[sympy.Expr], b: list[sympy.Expr]
) -> None:
    assert broadcast_shapes(tuple(a), tuple(b)) == _shapes_reference(tuple(a), tuple(b))


def _with_underscores(digits: str, cuts: list[int]) -> str:
    """`digits` with single underscores between some digits, as PEP 515 allows."""
    out = list(digits)
    for cut in sorted({c % len(digits) for c in cuts if c % len(digits) > 0}, reverse=True):
        out.insert(cut, "_")
    return "".join(out)


_digits = st.text("0123456789", min_size=1, max_size=40)
_cuts = st.lists(st.integers(1, 60), max_size=4)
_integer_literals = st.one_of(
    st.builds(lambda d, c: _with_underscores(d.lstrip("0") or "0", c), _digits, _cuts),
    st.builds(
        lambda prefix, n: (
            f"{prefix}{format(n, {'0x': 'x', '0X': 'X', '0o': 'o', '0b': 'b'}[prefix])}"
        ),
        st.sampled_from(["0x", "0X", "0o", "0b"]),
        st.integers(0, 2**200),
    ),
)
_float_literals = st.builds(
    lambda whole, fraction, exponent: f"{whole}.{fraction}{exponent}",
    st.one_of(st.just(""), _digits),
    _digits,
    st.one_of(
        st.just(""), st.builds(lambda s, e: f"e{s}{e}", st.sampled_from(["", "-", "+"]), _digits)
    ),
) | st.builds(lambda d, e: f"{d}e{e}", _digits, st.integers(-400, 400))


@settings(max_examples=300, deadline=None)
@given(st.one_of(_integer_literals, _float_literals))
def test_number_literals_read_as_python_reads_them(text: str) -> None:
    """As `ast.literal_eval` reads them, but no integer of `MAX_INTEGER` or more."""
    node = cst.parse_expression(text)
    value = number_literal(node)
    expected = ast.literal_eval(text)
    if isinstance(expected, int) and expected >= MAX_INTEGER:
        assert value is None
        return
    assert type(value) is type(expected)
    assert value == expected


_string_bodies = st.text(
    alphabet=st.sampled_from([*"abn m_'\"\\\r\ntx0{}", "\u00e9", "\u2211"]), max_size=12
)


@settings(max_examples=400, deadline=None)
@given(
    _string_bodies,
    st.sampled_from(["", "u", "U", "r", "R", "b", "rb", "Br"]),
    st.sampled_from(["'", '"', "'''", '"""']),
)
def test_string_literal_is_the_evaluated_value(body: str, prefix: str, quote: str) -> None:
    """Any one literal libcst parses: the shortcut gives `str(evaluated_value)` exactly, and
    lets none of Python's warnings about the user's escapes out."""
    try:
        node = cst.parse_expression(f"{prefix}{quote}{body}{quote}")
    except (cst.ParserSyntaxError, cst.CSTValidationError, cst.CSTLogicError):
        return  # unbalanced quotes, a string beside bytes, `t""` (a t-string), and the like
    if not isinstance(node, cst.SimpleString):
        return  # e.g. two literals side by side
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = str(node.evaluated_value)
        except (SyntaxError, ValueError):
            return  # a bad escape: no value to compare
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert string_literal(node) == expected


def test_string_literal_shortcut_and_fallback_examples() -> None:
    cases = {'"n m"': "n m", "r'a\\b'": "a\\b", '"a\\tb"': "a\tb", '"""a\r\nb"""': "a\nb"}
    for source, value in cases.items():
        node = cst.parse_expression(source)
        assert isinstance(node, cst.SimpleString)
        assert string_literal(node) == value
