"""Parameter annotations to shapes and dtypes: jaxtyping style, plain scalars, strings.

`x: Float64[np.ndarray, "n"]` is an array of float64 of extent `n`; the annotation may be a
string (`"Float64[Array, 'n']"`), and jaxtyping may be imported under `TYPE_CHECKING`: we read
the annotation's text, we never evaluate it. `int` parameters are sizes, `float` ones weak
scalars, `bool` ones flags; anything else is opaque, with the reason kept for when it is used.
"""

from __future__ import annotations

import libcst as cst

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.expressions import Binding, Opaque, leaf_for, string_literal
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.shapes import parse_dimensions
from aiscan.frontends.python.symbols import size_symbol
from aiscan.frontends.python.values import Integer, Scalar

__all__ = ["parameter_binding"]

_ANY_DTYPE = frozenset(
    {
        "Float",
        "Shaped",
        "Num",
        "Inexact",
        "Int",
        "Real",
        "Complex",
        "Array",
        "Key",
        "Integer",
        "UInt",
    }
)


def parameter_binding(name: str, annotation: cst.Annotation | None, names: SourceNames) -> Binding:
    """What a parameter named `name` is, from its annotation."""
    if annotation is None:
        return Opaque(
            name,
            "parameter has no annotation (write e.g. "
            '`Float64[np.ndarray, "n"]`), so its shape and dtype are unknown',
            is_parameter=True,
            infer=True,
        )
    return _read(name, annotation.annotation, names)


_NDARRAY = frozenset({"ndarray", "NDArray", "ArrayLike", "Array", "Tensor"})


def _numpy_typing(name: str, node: cst.BaseExpression, text: str) -> Opaque | None:
    """`np.ndarray`, `npt.NDArray[np.float32]`, `np.ndarray[Any, np.dtype[np.float32]]`: an
    array whose shape the body tells (`inference.py`), with the dtype when one is given."""
    head = node.value if isinstance(node, cst.Subscript) else node
    last = _last_word(head)
    if last not in _NDARRAY:
        return None
    element = None
    if isinstance(node, cst.Subscript):
        for word in reversed(text.replace("]", " ").replace("[", " ").replace(",", " ").split()):
            element = dtypes.dtype_named(word.rpartition(".")[2])
            if element is not None:
                break
    return Opaque(name, f"annotation `{text}` gives no shape", True, True, element, None, True)


def _read(name: str, node: cst.BaseExpression, names: SourceNames) -> Binding:
    if isinstance(node, cst.SimpleString):
        try:
            inner = cst.parse_expression(string_literal(node))
        except cst.ParserSyntaxError:
            return Opaque(name, "its string annotation does not parse", True)
        return _read_detached(name, inner, names)
    passed = _optional_inner(node)
    if passed is not None:  # `targets: Optional[torch.Tensor] = None`: the tensor passed
        return _read(name, passed, names)
    text = names.text(node)
    typed = _numpy_typing(name, node, text)
    if typed is not None:
        return typed
    if isinstance(node, cst.Subscript):
        return _jaxtyping(name, node, names, text)
    last = text.rpartition(".")[2]
    if last == "int":
        return Integer(size_symbol(name), name)
    if last == "bool":  # a flag (`*, train: bool`): a Python scalar, no array
        return Scalar(dtypes.BOOL, True, name)
    if last in ("float", "complex") or (last in ("float16", "float32", "float64", "bfloat16")):
        element = dtypes.dtype_named(last)
        assert element is not None
        return Scalar(element, last in ("float", "complex"), name)
    return Opaque(
        name,
        f'annotation `{text}` gives no shape (use jaxtyping, e.g. `Float64[np.ndarray, "n"]`)',
        True,
    )


def _optional_inner(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`X` of `Optional[X]` or `X | None`: what a caller passes where it passes anything
    (a parameter defaulting to None is tested before use); None for other annotations."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        sides = (node.left, node.right)
        kept = [n for n in sides if not (isinstance(n, cst.Name) and n.value == "None")]
        return kept[0] if len(kept) == 1 else None
    if (
        isinstance(node, cst.Subscript)
        and _last_word(node.value) == "Optional"
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
    ):
        return node.slice[0].slice.value
    return None


def _last_word(node: cst.BaseExpression) -> str:
    """What follows the last dot in `node`'s code (`ndarray` for `np.ndarray`), read off
    the node where its code is plain: generating the code of three heads a parameter was
    a twentieth of a cold scan's Python."""
    if not node.lpar and not node.rpar:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute) and _tight(node.dot):
            return node.attr.value
    return cst.Module([]).code_for_node(node).rpartition(".")[2]


def _tight(dot: cst.Dot) -> bool:
    return all(
        isinstance(space, cst.SimpleWhitespace) and not space.value
        for space in (dot.whitespace_before, dot.whitespace_after)
    )


def _read_detached(name: str, node: cst.BaseExpression, names: SourceNames) -> Binding:
    """A parsed string annotation has no metadata: read it by its spelling only."""
    passed = _optional_inner(node)
    if passed is not None:
        return _read_detached(name, passed, names)
    text = cst.Module([]).code_for_node(node)
    typed = _numpy_typing(name, node, text)
    if typed is not None:
        return typed
    if isinstance(node, cst.Subscript):
        return _jaxtyping(name, node, names, text)
    if text == "int":
        return Integer(size_symbol(name), name)
    if text == "float":
        return Scalar(dtypes.FLOAT64, True, name)
    return Opaque(name, f"annotation `{text}` gives no shape", True)


def _jaxtyping(name: str, node: cst.Subscript, names: SourceNames, text: str) -> Binding:
    head = _last_word(node.value)
    element = dtypes.dtype_named(head) if head[:1].isupper() else None
    if element is None and head not in _ANY_DTYPE:
        return Opaque(name, f"annotation `{text}`: `{head}` is not a jaxtyping dtype", True)
    if len(node.slice) != 2 or not isinstance(node.slice[1].slice, cst.Index):
        return Opaque(name, f'annotation `{text}` is not `{head}[ArrayType, "dims"]`', True)
    dims_node = node.slice[1].slice.value
    if not isinstance(dims_node, cst.SimpleString):
        return Opaque(name, f"annotation `{text}`: the dimensions are not a string", True)
    shape = parse_dimensions(string_literal(dims_node))
    if isinstance(shape, str):
        return Opaque(name, f"annotation `{text}`: {shape}", True, element is None, element)
    if element is None:
        # `Float[Array, "n"]`, `Shaped[...]`: the shape is given, the width is not.
        return Opaque(name, f"annotation `{text}` has no fixed dtype", True, True, None, shape)
    span = names.span(node)
    if not shape:
        return Scalar(element, False, name)
    return leaf_for(name, shape, element, span)
