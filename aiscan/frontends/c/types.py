"""C declarations to element types: widths come from the type, typedefs resolve (MODEL.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pycparser import c_ast

from aiscan.algebra import SYMPY, constant, expand
from aiscan.frontends.c.literals import integer_literal
from aiscan.ir.nodes import ElementType
from aiscan.ir.symbols import size_symbol

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["CType", "TypeResolver", "element_type_named"]

_FP64 = ElementType("double", 8, is_float=True, precision="fp64")
_FP32 = ElementType("float", 4, is_float=True, precision="fp32")
_FP16 = ElementType("_Float16", 2, is_float=True, precision="fp16")
_BF16 = ElementType("__bf16", 2, is_float=True, precision="bf16")
_FP128 = ElementType("_Float128", 16, is_float=True, precision="fp128")
_LONG_DOUBLE = ElementType("long double", 16, is_float=True, precision="fp64")
_COMPLEX128 = ElementType("double _Complex", 16, is_float=True, is_complex=True, precision="fp64")
_COMPLEX64 = ElementType("float _Complex", 8, is_float=True, is_complex=True, precision="fp32")

# Names the preprocessor prelude declares as typedefs; their real widths live here.
_EXTENDED_FLOATS: Mapping[str, ElementType] = {
    "_Float16": _FP16,
    "__fp16": _FP16,
    "__bf16": _BF16,
    "_Float32": ElementType("_Float32", 4, is_float=True, precision="fp32"),
    "_Float64": ElementType("_Float64", 8, is_float=True, precision="fp64"),
    "_Float32x": _FP64,
    "_Float64x": _LONG_DOUBLE,
    "_Float128": _FP128,
    "__float128": _FP128,
}


# CUDA's vector types (the CUDA frontend's prelude declares them as structs of their
# lanes): one element of `float4` is 16 bytes, and arithmetic on it is a FLOP per lane.
_VECTORS: Mapping[str, tuple[ElementType, int]] = {
    "float2": (_FP32, 2),
    "float4": (_FP32, 4),
    "double2": (_FP64, 2),
    "half2": (_FP16, 2),
    "__half2": (_FP16, 2),
    "__nv_bfloat162": (_BF16, 2),
}


def _vector(name: str | None) -> ElementType | None:
    found = _VECTORS.get(name or "")
    if found is None:
        return None
    scalar, lanes = found
    return ElementType(
        name or "", scalar.width_bytes * lanes, True, precision=scalar.precision, lanes=lanes
    )


def _integer(name: str, width: int) -> ElementType:
    return ElementType(name, width, is_float=False, precision=f"int{8 * width}")


def element_type_named(names: list[str]) -> ElementType | None:
    """The element type of a list of C type specifiers, e.g. `['unsigned', 'long']`."""
    words = [w for w in names if w not in ("signed", "unsigned", "const", "volatile")]
    spelled = " ".join(names)
    complex_ = "_Complex" in words
    if "double" in words:
        if complex_:
            return _COMPLEX128
        return _LONG_DOUBLE if "long" in words else _FP64
    if "float" in words:
        return _COMPLEX64 if complex_ else _FP32
    if "char" in words:
        return _integer(spelled, 1)
    if "_Bool" in words:
        return _integer("_Bool", 1)
    if "short" in words:
        return _integer(spelled, 2)
    if words.count("long") >= 1:
        return _integer(spelled, 8)
    if "int" in words or (not words and names):
        return _integer(spelled or "int", 4)
    if complex_:
        return _COMPLEX128
    return None


@dataclass(frozen=True, slots=True)
class CType:
    """A declared C type reduced to what counting needs.

    `depth` counts pointer levels plus array dimensions: 0 is a scalar (a register),
    more is memory reached by indexing.
    """

    element: ElementType | None
    depth: int = 0
    is_restrict: bool = False
    struct_name: str | None = None
    extents: tuple[sympy.Expr | None, ...] = ()
    """Declared element counts of the array dimensions, outermost first (`a[m][n]`: m, n);
    None for a pointer level or a dimension that is not a constant or a size name."""

    @property
    def is_scalar(self) -> bool:
        return self.depth == 0

    def deref(self) -> CType:
        return CType(
            self.element, max(self.depth - 1, 0), False, self.struct_name, self.extents[1:]
        )


class TypeResolver:
    """Resolves declarations against the file's typedefs and struct definitions."""

    def __init__(self) -> None:
        self.typedefs: dict[str, CType] = {}
        self.structs: dict[str, dict[str, CType]] = {}

    def add_typedef(self, node: c_ast.Typedef) -> None:
        if node.name in _EXTENDED_FLOATS:
            return
        self.typedefs[node.name] = self.resolve(node.type)

    def add_struct(self, node: c_ast.Struct) -> None:
        if node.name and node.decls:
            self.structs[node.name] = {
                d.name: self.resolve(d.type) for d in node.decls if isinstance(d, c_ast.Decl)
            }

    def field(self, owner: CType, name: str) -> CType | None:
        if owner.struct_name is None:
            return None
        return self.structs.get(owner.struct_name, {}).get(name)

    def resolve(self, node: c_ast.Node) -> CType:
        if isinstance(node, c_ast.TypeDecl):
            base = self._base(node.type)
            return CType(base.element, base.depth, base.is_restrict, base.struct_name)
        if isinstance(node, c_ast.PtrDecl):
            inner = self.resolve(node.type)
            return CType(
                inner.element,
                inner.depth + 1,
                "restrict" in node.quals,
                inner.struct_name,
                (None, *inner.extents),
            )
        if isinstance(node, c_ast.ArrayDecl):
            inner = self.resolve(node.type)
            extent = _extent(node.dim)
            return CType(
                inner.element, inner.depth + 1, False, inner.struct_name, (extent, *inner.extents)
            )
        if isinstance(node, c_ast.Typename):
            return self.resolve(node.type)
        return CType(None)

    def _base(self, node: c_ast.Node) -> CType:
        if isinstance(node, c_ast.IdentifierType):
            for name in node.names:
                if name in _EXTENDED_FLOATS:
                    return CType(_EXTENDED_FLOATS[name])
                if name in self.typedefs:
                    return self.typedefs[name]
            return CType(element_type_named(node.names))
        if isinstance(node, c_ast.Struct):
            if node.decls:
                self.add_struct(node)
            return CType(_vector(node.name), struct_name=node.name)
        if isinstance(node, c_ast.Enum):
            return CType(_integer("int", 4))
        return CType(None)


def _extent(dim: c_ast.Node | None) -> sympy.Expr | None:
    """A dimension's element count when it is an integer constant, a size name, or their
    sum, difference or product (`TILE + 1`, the padded row of a shared-memory tile)."""
    if isinstance(dim, c_ast.Constant):
        value = integer_literal(dim.value) if dim.type.endswith(("int", "long")) else None
        return None if value is None else constant(value)
    if isinstance(dim, c_ast.ID):
        return size_symbol(dim.name)
    if isinstance(dim, c_ast.BinaryOp) and dim.op in ("+", "-", "*"):
        left, right = _extent(dim.left), _extent(dim.right)
        if left is None or right is None:
            return None
        if dim.op == "+":
            return expand(left + right)
        return expand(left - right if dim.op == "-" else left * right)
    return None
