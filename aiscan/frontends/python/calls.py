"""NumPy-API calls: ufuncs, reductions, contractions, allocations and casts.

One table of semantics serves `numpy`, `jax.numpy`, `cupy` and `torch` (see `names.py`);
array methods (`x.sum(axis=0)`, `x.dot(y)`, `x.astype(np.float32)`) map onto the same.
A call the table does not know is an `Unknown` naming it: its work is not counted.

`read_call` is where the evaluator sends every call, and where a call reaches its reader:
a layer (`modules.py`, `flax_modules.py`), a framework operator (`framework_calls.py`), a
library function (`library_calls.py`), a random generator (`random_calls.py`) or a helper
to inline. Those readers sit below this module and never import it back.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.arguments import (
    _dtype_argument,
    _dtype_node,
    _keyword,
    _positional,
    _shape,
)
from aiscan.frontends.python.expressions import (
    ALLOCATIONS,
    ARITHMETIC,
    FREE,
    REDUCTIONS,
    SPECIAL,
    Allocation,
    Opaque,
    Value,
    as_boolean,
    number_literal,
    string_literal,
)
from aiscan.frontends.python.flags import has_attribute
from aiscan.frontends.python.flax_modules import (
    FLAX_CALLS,
    FLAX_LAYERS,
    attend,
    call_flax_layer,
    inline_layer,
    inline_submodule,
)
from aiscan.frontends.python.framework_calls import (
    FRAMEWORK_CALLS,
    TENSOR_METHODS,
    read_tensor_method,
)
from aiscan.frontends.python.layers import Layer, ModuleList, Submodule
from aiscan.frontends.python.library_calls import (
    LIBRARY,
    count_arguments,
    read_library_call,
    read_library_method,
)
from aiscan.frontends.python.modules import call_layer
from aiscan.frontends.python.random_calls import (
    GENERATOR_REASON,
    GENERATORS,
    read_generator_method,
    read_random_call,
)
from aiscan.frontends.python.values import Apply, ArrayValue, Integer, Leaf, Scalar, Shape
from aiscan.frontends.python.views import VIEWS, read_view
from aiscan.ir.nodes import ElementType, UnknownKind

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import ExpressionReader

__all__ = ["positional_out", "read_call"]

_METHODS = (
    frozenset({"sum", "prod", "max", "min", "mean", "dot", "astype", "copy", "std", "var"}) | VIEWS
)
_BOOLEAN_RESULT = frozenset(
    {
        "greater",
        "less",
        "greater_equal",
        "less_equal",
        "equal",
        "not_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "isnan",
        "isfinite",
    }
)
"""Ufuncs whose result is a bool array (a mask), whatever their operands."""
_EINSUM = re.compile(r"^([a-zA-Z,]*)(->([a-zA-Z]*))?$")


_BINARY_UFUNCS = frozenset(
    {
        "add", "subtract", "multiply", "divide", "true_divide", "power", "arctan2", "hypot",
        "maximum", "minimum", "fmax", "fmin", "copysign", "greater", "less", "greater_equal",
        "less_equal", "equal", "not_equal", "logical_and", "logical_or",
    }
)  # fmt: skip
_UNARY_UFUNCS = frozenset(
    {
        "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
        "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
        "arctanh", "absolute", "fabs", "negative", "positive", "floor", "ceil", "trunc", "rint",
        "sign", "logical_not", "isnan", "isfinite", "square",
    }
)  # fmt: skip


def positional_out(canonical: str | None, node: cst.Call) -> cst.BaseExpression | None:
    """The output array a NumPy ufunc takes positionally after its inputs
    (`np.multiply(Z, Z, Z)`, `np.logical_not(I, I)`), or None."""
    module, _, name = (canonical or "").rpartition(".")
    inputs = 2 if name in _BINARY_UFUNCS else 1 if name in _UNARY_UFUNCS else 0
    arguments = _positional(node)
    if module != "numpy" or not inputs or len(arguments) != inputs + 1:
        return None
    return arguments[inputs]


def read_call(reader: ExpressionReader, node: cst.Call) -> Value | None:
    func = node.func
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and reader.names.canonical(func.value.func) == "builtins.super"
    ):
        return None  # `super().__init__()`: the base class's set-up, no array work
    layer = _layer_called(reader, func)
    if layer is not None:
        name, built = layer
        if isinstance(built, ModuleList):
            return reader.unsupported(node, f"`{name}` is a list of modules, called whole")
        if isinstance(built, Layer) and built.kind.startswith("flax."):
            return call_flax_layer(reader, node, name, built)  # `self.c_fc(x)`
        return call_layer(reader, node, name, built)  # `self.fc1(x)`, `self.attn(x)`
    attended = _layer_called(reader, func.value) if isinstance(func, cst.Attribute) else None
    if attended is not None and func.attr.value == "attend":  # type: ignore[attr-defined]
        name, built = attended
        if isinstance(built, Layer) and built.kind == "flax.Embed":
            return attend(reader, node, name, built)  # `self.wte.attend(x)`: tied head
    if isinstance(func, cst.Call):
        if reader.names.canonical(func.func) in FLAX_LAYERS:
            return inline_layer(reader, node)  # `nn.Dense(4 * C)(x)` under `@nn.compact`
        if isinstance(func.func, cst.Name) and func.func.value in reader.scope.classes:
            return inline_submodule(reader, node)  # `Block(config, name=str(i))(x)`
    if reader.framework == "torch" and isinstance(func, cst.Attribute):
        owner = func.value
        computed = not isinstance(owner, cst.Name | cst.Attribute)  # `(k @ k.mT).to(...)`
        if func.attr.value in TENSOR_METHODS and (computed or reader.names.canonical(func) is None):
            return read_tensor_method(reader, node)  # `k.transpose(-2, -1)`, `q.size(-1)`
    if (
        isinstance(func, cst.Attribute)
        and func.attr.value in _METHODS
        and not isinstance(func.value, (cst.Name, cst.Attribute))
    ):
        return _method(reader, node, func)  # `(x - mu).mean(axis=-1)`: any expression's method
    canonical = reader.names.canonical(node.func)
    if (
        canonical is None
        and isinstance(node.func, cst.Attribute)
        and (node.func.attr.value in _METHODS)
    ):
        return _method(reader, node, node.func)
    generator = _generator_method(reader, node.func)
    if generator is not None:
        return read_generator_method(reader, node, generator)
    if canonical is None and isinstance(node.func, cst.Name):
        helper = reader.scope.helpers.get(node.func.value)
        if helper is not None and node.func.value not in reader.scope.names:
            return reader.inline(node, helper)
    if canonical is None:
        name = reader.names.text(node.func)
        return _unmodeled(reader, node, f"call to unknown function `{name}`")
    if canonical in LIBRARY:  # std, var, cov, outer, norm, eye, linalg.solve, ...
        return read_library_call(reader, node, canonical)
    if canonical in FLAX_CALLS:  # nn.make_causal_mask
        return FLAX_CALLS[canonical](reader, node)
    if canonical in FRAMEWORK_CALLS:  # F.softmax, F.layer_norm, jax.nn.gelu, ...
        before = len(reader.unknowns)
        value = FRAMEWORK_CALLS[canonical](reader, node)
        if value is None and len(reader.unknowns) == before:
            reader.unsupported(node, f"`{reader.names.text(node)}`: missing or unread arguments")
        return value
    module, _, function = canonical.rpartition(".")
    if module == "numpy.random":
        return read_random_call(reader, node, function)
    if module in ("numpy", "math"):
        return _numpy(reader, node, function, canonical)
    if module == "builtins":
        return _builtin(reader, node, function)
    return _unmodeled(reader, node, f"call to `{canonical}` is not modeled")


def _unmodeled(reader: ExpressionReader, node: cst.Call, what: str) -> Value | None:
    """A located unknown for the call alone: its computed arguments are still counted."""
    reader.note(
        UnknownKind.UNKNOWN_CALL,
        node,
        f"{what}: its work and traffic are not counted (its arguments are)",
    )
    count_arguments(reader, node)
    return None


def _layer_called(
    reader: ExpressionReader, func: cst.BaseExpression
) -> tuple[str, Layer | Submodule | ModuleList] | None:
    """`self.fc1` of a module whose `__init__` built `self.fc1 = nn.Linear(...)`; `wte` built
    under Flax's `@nn.compact`; `block` of `for block in self.h:` (a list's element); a
    list itself as `self.h`, which a call cannot run whole."""
    if isinstance(func, cst.Name) and func.value in reader.scope.layers:
        found = reader.scope.layers[func.value]
        if isinstance(found, ModuleList):
            return None
        # `wte = nn.Embed(...)` under `@nn.compact` is module state, named as `self.wte`.
        return (f"self.{func.value}" if isinstance(found, Layer) else func.value, found)
    if not reader.scope.layers or not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "forward" and isinstance(func.value, cst.Attribute):
        called = _layer_called(reader, func.value)  # `self.attention.forward(x, ...)`
        if called is not None and isinstance(called[1], Submodule):
            return called
        return None
    if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
        name = reader.names.text(func)  # `self.transformer.wte` of an `nn.ModuleDict`
        layer = reader.scope.layers.get(name) if name.startswith("self.") else None
        return None if layer is None else (name, layer)
    name = f"self.{func.attr.value}"
    layer = reader.scope.layers.get(name)
    return None if layer is None else (name, layer)


def _generator_method(reader: ExpressionReader, func: cst.BaseExpression) -> str | None:
    """`rng.random` of a name bound to `np.random.default_rng(...)`, or a method of such a
    call itself: the method's name."""
    if not isinstance(func, cst.Attribute):
        return None
    owner = func.value
    if isinstance(owner, cst.Name):
        binding = reader.scope.names.get(owner.value)
        if isinstance(binding, Opaque) and binding.reason == GENERATOR_REASON:
            return func.attr.value
        return None
    if isinstance(owner, cst.Call):
        made = reader.names.canonical(owner.func) or ""
        module, _, name = made.rpartition(".")
        if module == "numpy.random" and name in GENERATORS:
            return func.attr.value
    return None


def _arrays(reader: ExpressionReader, nodes: list[cst.BaseExpression]) -> list[ArrayValue] | None:
    values = [reader.array(n) for n in nodes]
    if any(v is None for v in values):
        return None
    return [v for v in values if v is not None]


def _numpy(reader: ExpressionReader, node: cst.Call, function: str, canonical: str) -> Value | None:
    arguments = _positional(node)
    if function in ALLOCATIONS:
        return _allocation(reader, node, function, arguments)
    if function in REDUCTIONS:
        values = _arrays(reader, arguments[:1])
        if not values:
            return None
        return _reduction(reader, node, REDUCTIONS[function], values[0], arguments[1:])
    if function in VIEWS:
        values = _arrays(reader, arguments[:1])
        return read_view(reader, node, function, values[0], arguments[1:]) if values else None
    if function in ("dot", "matmul", "inner", "vdot"):
        values = _arrays(reader, arguments[:2])
        if values is None or len(values) != 2:
            return None
        if function in ("inner", "vdot") and len(values[0].shape) == len(values[1].shape) == 1:
            return reader.contract(values, ("k", "k"), "", node)
        return reader.contract_matmul(values[0], values[1], node)
    if function == "einsum":
        return _einsum(reader, node, arguments)
    if function in ("array", "asarray") and arguments:
        literal = _literal_vector(reader, node, arguments[0])
        if literal is not None:
            return literal
    if function in ("copy", "array", "asarray", "ascontiguousarray"):
        values = _arrays(reader, arguments[:1])
        if not values:
            return None
        element = _dtype_argument(reader, node) or values[0].element
        if function == "asarray" and element == values[0].element:
            return values[0]
        copied = reader.elementwise("free", "copy", values, node)
        return _cast(copied, element)
    if function == "square":
        values = _arrays(reader, arguments[:1])
        return reader.elementwise("mul", "square", values, node) if values else None
    if function == "where" and len(arguments) != 3:
        # `np.where(c)` is `np.nonzero(c)`: indices, a data-dependent count of them.
        return reader.unsupported(node, f"`{reader.names.text(node)}` (only the 3-argument form)")
    if function in ARITHMETIC or function in SPECIAL or function in FREE:
        if positional_out(canonical, node) is not None:
            arguments = arguments[:-1]  # the output array, not an operand
        values = _arrays(reader, arguments)
        if values is None:
            return None
        if not values:  # NumPy raises a TypeError on `np.exp()`
            return reader.unsupported(node, f"`{function}` called without operands")
        op = ARITHMETIC.get(function) or ("special" if function in SPECIAL else "free")
        result = reader.elementwise(op, function, values, node)
        if function in _BOOLEAN_RESULT:
            # `np.less(abs(Z), 2.0)` is a mask, as `abs(Z) < 2.0` is.
            result = as_boolean(result)
        if function in ("abs", "absolute", "fabs"):
            result = _magnitude(result)
        if isinstance(result, Scalar) and canonical.startswith("numpy."):
            # NEP 50: `np.sqrt(n)` is a NumPy scalar, strongly typed (`math.sqrt` is not).
            return replace(result, weak=False)
        return result
    if canonical.startswith("numpy.") and function in dtypes_by_name():
        values = _arrays(reader, arguments[:1])
        if not values:
            return None
        return _cast(values[0], dtypes_by_name()[function], scalar=True)
    return _unmodeled(reader, node, f"call to `{canonical}` is not modeled")


def dtypes_by_name() -> dict[str, ElementType]:
    names = (
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "int32",
        "int64",
        "complex64",
        "complex128",
    )
    return {n: t for n in names if (t := dtypes.dtype_named(n)) is not None}


def _magnitude(result: ArrayValue | None) -> ArrayValue | None:
    """`abs(Z)` of a complex array: a real array (8 bytes an element for complex128)."""
    if not isinstance(result, Apply):
        return result
    element = dtypes.magnitude_element(result.element)
    return result if element == result.element else replace(result, element=element)


def _cast(
    value: ArrayValue | None, element: ElementType, scalar: bool = False
) -> ArrayValue | None:
    """The same value seen with another dtype (after an `astype` or `np.float32(x)`)."""
    if value is None:
        return None
    if isinstance(value, Scalar):
        return Scalar(element, False, value.text, value.constant)
    return replace(value, element=element)


def _method(reader: ExpressionReader, node: cst.Call, func: cst.Attribute) -> Value | None:
    base = reader.array(func.value)
    if base is None:
        return None
    method = func.attr.value
    arguments = _positional(node)
    if method in REDUCTIONS:
        return _reduction(reader, node, REDUCTIONS[method], base, arguments)
    if method == "dot":
        values = _arrays(reader, arguments[:1])
        return reader.contract_matmul(base, values[0], node) if values else None
    if method == "copy":
        return reader.elementwise("free", "copy", [base], node)
    if method in ("std", "var"):
        return read_library_method(reader, node, base)
    if method in VIEWS:
        return read_view(reader, node, method, base, arguments)
    element = _dtype_node(reader, arguments[0]) if arguments else None
    if element is None:
        reader.note(
            UnknownKind.UNKNOWN_SHAPE,
            node,
            f"`{reader.names.text(node)}`: the target dtype is not a known NumPy dtype",
        )
        return None
    if element == base.element:
        return base
    return _cast(reader.elementwise("free", "astype", [base], node), element)


def _reduction(
    reader: ExpressionReader,
    node: cst.Call,
    kind: str,
    operand: ArrayValue,
    rest: list[cst.BaseExpression],
) -> ArrayValue | None:
    # `dim=`/`keepdim=`: PyTorch's spelling of NumPy's `axis=`/`keepdims=`.
    axis_node = _keyword(node, "axis") or _keyword(node, "dim") or (rest[0] if rest else None)
    axes: tuple[int, ...] | None = None
    if axis_node is not None and not (
        isinstance(axis_node, cst.Name) and axis_node.value == "None"
    ):
        axes = _axes(axis_node)
        if axes is None:
            reader.note(
                UnknownKind.UNKNOWN_SHAPE,
                axis_node,
                f"`{reader.names.text(axis_node)}`: axis must be an integer literal "
                "or a tuple of them",
            )
            return None
    keepdims_node = _keyword(node, "keepdims") or _keyword(node, "keepdim")
    keepdims = isinstance(keepdims_node, cst.Name) and keepdims_node.value == "True"
    return reader.reduce(kind, operand, axes, keepdims, node)


def _axes(node: cst.BaseExpression) -> tuple[int, ...] | None:
    if isinstance(node, cst.Tuple):
        values = [number_literal(e.value) for e in node.elements]
        if all(isinstance(v, int) for v in values):
            return tuple(int(v) for v in values if v is not None)
        return None
    value = number_literal(node)
    return (value,) if isinstance(value, int) else None


def _einsum(
    reader: ExpressionReader, node: cst.Call, arguments: list[cst.BaseExpression]
) -> Value | None:
    spec = arguments[0] if arguments else None
    if not isinstance(spec, cst.SimpleString):
        return reader.unsupported(node, "einsum without a literal subscript string")
    text = string_literal(spec).replace(" ", "")
    if "..." in text:
        values = _arrays(reader, arguments[1:])
        if values is None:
            return None
        expanded = _ellipsis_expanded(text, [len(v.shape) for v in values])
        if expanded is None:
            return reader.unsupported(node, f'einsum subscripts "{text}"')
        text = expanded
    match = _EINSUM.match(text)
    if match is None or "." in text:
        return reader.unsupported(node, f'einsum subscripts "{text}"')
    labels = tuple(match.group(1).split(","))
    if match.group(2):
        out = match.group(3) or ""
    else:
        letters = "".join(labels)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    inputs = set("".join(labels))
    if any(letter not in inputs or out.count(letter) > 1 for letter in out):
        # NumPy raises on these: each output index must be an input index, once.
        return reader.unsupported(node, f'einsum subscripts "{text}" (invalid output)')
    values = _arrays(reader, arguments[1:])
    if values is None or len(values) != len(labels):
        return None
    return reader.contract(values, labels, out, node)


def _ellipsis_expanded(text: str, ranks: list[int]) -> str | None:
    """`...qhd,...khd->...hqk` with letters for the axes `...` stands for in each operand
    (right-aligned across operands, as NumPy broadcasts them); None when it cannot be."""
    inputs, arrow, output = text.partition("->")
    labels = inputs.split(",")
    if len(labels) != len(ranks) or any(label.count("...") > 1 for label in labels):
        return None
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in text]
    widths = [r - len(label.replace("...", "")) if "..." in label else 0 for label, r in
              zip(labels, ranks, strict=True)]  # fmt: skip
    width = max(widths, default=0)
    if min(widths, default=0) < 0 or width > len(spare):
        return None
    batch = "".join(spare[:width])
    filled = [
        label.replace("...", batch[width - w :]) for label, w in zip(labels, widths, strict=True)
    ]
    if not arrow:  # NumPy's implicit output: the broadcast axes, then the single letters
        letters = inputs.replace("...", "").replace(",", "")
        output = "..." + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ",".join(filled) + "->" + output.replace("...", batch)


def _allocation(
    reader: ExpressionReader, node: cst.Call, function: str, arguments: list[cst.BaseExpression]
) -> Value | None:
    fills = ALLOCATIONS[function]
    element = _dtype_argument(reader, node)
    # The dtype may be positional: `np.empty((n, m), np.int32)`, `np.full(s, v, np.int32)`.
    position = 2 if function in ("full", "full_like") else 1
    if element is None and len(arguments) > position:
        element = _dtype_node(reader, arguments[position])
        if element is None:
            reader.note(
                UnknownKind.UNKNOWN_SHAPE,
                arguments[position],
                f"`{reader.names.text(arguments[position])}` is not a known NumPy dtype",
            )
            return None
    if function.endswith("_like"):
        prototype = _arrays(reader, arguments[:1])
        if not prototype:
            return None
        shape: Shape | None = prototype[0].shape
        element = element or prototype[0].element
    else:
        shape_node = _keyword(node, "shape") or (arguments[0] if arguments else None)
        shape = _shape(reader, shape_node) if shape_node is not None else None
        if shape is None:
            reader.note(
                UnknownKind.UNKNOWN_SHAPE,
                node,
                f"`{reader.names.text(node)}`: the shape is not a tuple of sizes",
            )
            return None
        if element is None and function == "full" and len(arguments) > 1:
            fill = reader.array(arguments[1])
            element = fill.element if fill is not None else None
        element = element or reader.factory_element
    if element is None or shape is None:
        return None
    return Allocation(shape, element, fills, reader.names.text(node))


def _literal_vector(
    reader: ExpressionReader, node: cst.Call, items: cst.BaseExpression
) -> Allocation | None:
    """`np.array([1, 2, 3, 4])`: a new vector of number literals, written once; int64 when
    they are all integers (NumPy's default int), else float64, unless `dtype=` says."""
    if not isinstance(items, (cst.List, cst.Tuple)) or not items.elements:
        return None
    values = [number_literal(e.value) for e in items.elements]
    if any(
        v is None or isinstance(e, cst.StarredElement)
        for v, e in zip(values, items.elements, strict=True)
    ):
        return None
    integers = all(isinstance(v, int) for v in values)
    element = _dtype_argument(reader, node) or (dtypes.INT64 if integers else dtypes.FLOAT64)
    return Allocation((sympy.Integer(len(values)),), element, True, reader.names.text(node))


def _builtin(reader: ExpressionReader, node: cst.Call, function: str) -> Value | None:
    arguments = _positional(node)
    if function == "len" and arguments:
        value = reader.value(arguments[0])
        if isinstance(value, (Leaf,)) and value.shape:
            return Integer(value.shape[0], reader.names.text(node))
        return reader.unsupported(node, f"`{reader.names.text(node)}`")
    if function == "float" and len(arguments) == 1 and isinstance(arguments[0], cst.SimpleString):
        # `float("-inf")` (a mask's fill value), `float("nan")`: a Python float constant.
        return Scalar(dtypes.PYTHON_FLOAT, True, reader.names.text(node), constant=True)
    if function in ("float", "int", "abs", "min", "max", "complex") and arguments:
        values = _arrays(reader, arguments)
        if values is None:
            return None
        if function == "int" and len(values) == 1:
            return Integer(None, reader.names.text(node))
        result = reader.elementwise("free", function, values, node)
        return _magnitude(result) if function == "abs" else result
    if function == "range":
        return reader.unsupported(node, "`range` outside a `for` header")
    if function == "hasattr":
        found = has_attribute(reader, node)  # `hasattr(F, "scaled_dot_product_attention")`
        if found is not None:
            return found
    reader.note(
        UnknownKind.UNKNOWN_CALL,
        node,
        f"call to builtin `{function}` is not modeled: its work is not counted",
    )
    return None
