"""Calls to same-module helpers with loops or branches: summarized once, instantiated per call.

A helper that is not one expression (it has loops or branches) cannot be inlined into the
caller's expression. It is lowered once as its own function (its own report, in its own
size names); its `Summary` keeps that IR with what a call needs: each parameter's shape or
size symbol and dtype, and what each `return` hands back. At a call, the helper's sizes are
matched to the caller's argument extents and its nodes are copied into the caller where the
call stands, with

- its sizes replaced by the caller's (`K` by `conv1_d0`, `input_d1` by `n`),
- its parameters' accesses made accesses of the caller's arrays, through the caller's views,
- its loop variables and local arrays renamed after the call (`conv2d_L45_i`,
  `conv2d_L45_output`), so they meet no name of the caller's,
- every location moved to the call (messages say the helper's own line).

The analysis then counts the call as the code it runs: once at top level, times the trips of
the loops around it, its branches with their fractions (`p_L5` of the helper's line 5), and
its traffic as part of the caller's region (docs/python.md, "Helpers").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst
import sympy

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.constructions import Construction
from aiscan.frontends.python.expressions import Allocation, Opaque, leaf_for
from aiscan.frontends.python.nests import NestBuilder, Target
from aiscan.frontends.python.shapes import same_extent, shape_text
from aiscan.frontends.python.symbols import loop_symbol
from aiscan.frontends.python.values import (
    ArrayValue,
    Integer,
    Leaf,
    Scalar,
    coordinate,
    substituted,
)
from aiscan.frontends.python.walk import walk
from aiscan.ir.nodes import (
    Access,
    Branch,
    ElementType,
    FlopTally,
    Loop,
    Node,
    Region,
    Statement,
    Unknown,
    UnknownKind,
)
from aiscan.span import Span

if TYPE_CHECKING:
    from aiscan.frontends.python.expressions import (
        Binding,
        ExpressionReader,
        Summarize,
        Summary,
        Value,
    )
    from aiscan.frontends.python.nests import Namer

__all__ = [
    "has_control_flow",
    "read_submodule_call",
    "read_summarized_call",
    "read_summarized_parts",
]


def has_control_flow(definition: cst.FunctionDef) -> bool:
    """A body that is not only simple statements (loops, branches, `with`, `try`), or one
    that reads a parameter or a local more than once (`softmax(x)` reading `x` twice):
    inlining it as one expression would compute that value once per read, where Python
    computes it once, so it is summarized and its values are arrays of their own."""
    body = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
    if any(not isinstance(s, cst.SimpleStatementLine) for s in body):
        return True
    return _reads_a_value_twice(definition)


def _reads_a_value_twice(definition: cst.FunctionDef) -> bool:
    bound = {p.name.value for p in definition.params.params}
    body = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
    for statement in body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                bound |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
    reads = _Reads()
    walk(definition.body, reads)
    return any(reads.count.get(name, 0) > 1 for name in bound)


class _Reads(cst.CSTVisitor):
    """How many times each name is read (attribute names and assignment targets aside)."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        self.count[node.value] = self.count.get(node.value, 0) + 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)  # `axis=-1`: the keyword is no read
        return False


def read_summarized_call(
    reader: ExpressionReader,
    node: cst.Call,
    definition: cst.FunctionDef,
    arguments: Mapping[str, ArrayValue | Integer],
) -> Value | None:
    """The value of a call to a helper with loops or branches; its work is instantiated
    into `reader.pending` (computed before the statement, as the call runs first)."""
    name = definition.name.value
    summarize = reader.scope.summarize
    if summarize is None:
        return reader.unsupported(node, f"`{name}` has loops or branches and is not inlined")
    summary = _summary_for(summarize, name, arguments)
    if isinstance(summary, str):
        reader.note(UnknownKind.UNKNOWN_CALL, node, f"{summary}: its work is not counted")
        return None
    if reader.autocast is not None:
        reader.note(
            UnknownKind.UNSUPPORTED,
            node,
            f"`{name}` (summarized: it has loops or branches) runs in a torch.autocast region: "
            "its operations are counted in their own dtypes, not autocast's",
        )
    call = _CallSite(reader, node, name, summary)
    return call.read(arguments)


def read_summarized_parts(
    reader: ExpressionReader,
    node: cst.Call,
    definition: cst.FunctionDef,
    arguments: Mapping[str, ArrayValue | Integer],
    count: int,
) -> list[Value | None] | None:
    """`a, b = f(...)` with `f` summarized: its work instantiated once, and each part of the
    one tuple it returns; None when it does not return one tuple of `count` values."""
    name = definition.name.value
    summarize = reader.scope.summarize
    if summarize is None:
        return None
    summary = _summary_for(summarize, name, arguments)
    if isinstance(summary, str):
        reader.note(UnknownKind.UNKNOWN_CALL, node, f"{summary}: its work is not counted")
        return [None] * count
    if len(summary.returns) != 1 or len(summary.parts) != 1 or len(summary.parts[0]) != count:
        return None
    return _CallSite(reader, node, name, summary).read_parts(arguments)


def read_submodule_call(
    reader: ExpressionReader,
    node: cst.Call,
    class_name: str,
    sizes: Sequence[tuple[sympy.Expr, sympy.Expr]],
    method: str = "forward",
) -> Value | None:
    """`self.attn(x)`: the submodule's `forward` (a Flax module's `__call__`, or the module's
    own `method`), summarized once as `Class.forward` with the state its `__init__` (`setup`)
    built, instantiated here with `x` and the constructor's sizes."""
    definition = reader.scope.classes.get(class_name)
    methods = {
        s.name.value: s
        for s in (definition.body.body if definition is not None else ())
        if isinstance(s, cst.FunctionDef)
    }
    forward = methods.get(method) or (methods.get("__call__") if method == "forward" else None)
    if forward is None:
        return reader.unsupported(node, f"`{class_name}` has no `{method}`")
    name = f"{class_name}.{forward.name.value}"
    summarize = reader.scope.summarize
    summary = summarize(name, {}, {}) if summarize is not None else "no summary"
    arguments = _module_arguments(reader, node, forward)
    if arguments is None:
        return None
    if not isinstance(summary, str) and summarize is not None:
        ranks = _rank_overrides(summary, arguments)
        if ranks:
            summary = summarize(name, {}, ranks)
    if isinstance(summary, str):
        reader.note(UnknownKind.UNKNOWN_CALL, node, f"{summary}: its work is not counted")
        return None
    # The module's own state (`self.bias`, a buffer) is not an argument: it stays itself;
    # so does a parameter left at its default (`mask=None`).
    own = tuple((p, b) for p, b in summary.parameters if p in arguments)
    call = _CallSite(reader, node, name, replace(summary, parameters=own))
    call.module = True
    return call.read(arguments, sizes)


def _module_arguments(
    reader: ExpressionReader, node: cst.Call, forward: cst.FunctionDef
) -> dict[str, ArrayValue | Integer] | None:
    """The call's arguments by `forward`'s parameter names (positional, then keyword,
    `train=train` too); None (noted) when one matches no parameter, or one without a
    default is missing."""
    params = forward.params
    parameters = [p.name.value for p in params.params][1:]  # after `self`
    named = parameters + [p.name.value for p in params.kwonly_params]
    given: dict[str, cst.BaseExpression] = {}
    positional = [a for a in node.args if a.keyword is None]
    if any(a.star for a in node.args) or len(positional) > len(parameters):
        reader.unsupported(node, f"the arguments of `{reader.names.text(node)}`")
        return None
    given.update((p, a.value) for p, a in zip(parameters, positional, strict=False))
    for argument in node.args:
        if argument.keyword is not None:
            if argument.keyword.value not in named:
                reader.unsupported(node, f"the arguments of `{reader.names.text(node)}`")
                return None
            given[argument.keyword.value] = argument.value
    defaults = {p.name.value for p in (*params.params, *params.kwonly_params) if p.default}
    if any(p not in given and p not in defaults for p in named):
        reader.unsupported(node, f"`{reader.names.text(node)}`: missing arguments")
        return None
    arguments: dict[str, ArrayValue | Integer] = {}
    for parameter, argument_node in given.items():
        value = reader.array(argument_node)  # a module's inputs are tensors
        if value is None:
            return None
        arguments[parameter] = value
    return arguments


def _summary_for(
    summarize: Summarize, name: str, arguments: Mapping[str, ArrayValue | Integer]
) -> Summary | str:
    """The helper's summary for these arguments: lowered again where an argument's dtype
    or rank differs from what the helper assumed; a string says why there is none."""
    summary = summarize(name, {}, {})
    if isinstance(summary, str):
        return summary
    overrides = _dtype_overrides(summary, arguments)
    ranks = _rank_overrides(summary, arguments)
    return summarize(name, overrides, ranks) if overrides or ranks else summary


def _dtype_overrides(
    summary: Summary, arguments: Mapping[str, ArrayValue | Integer]
) -> dict[str, tuple[ElementType, bool]]:
    """Parameters whose dtype the helper assumed and the caller's argument contradicts."""
    overrides: dict[str, tuple[ElementType, bool]] = {}
    for parameter, binding in summary.parameters:
        value = arguments.get(parameter)
        if not isinstance(binding, (Leaf, Scalar)) or value is None or isinstance(value, Integer):
            continue
        element, weak = value.element, value.weak
        if binding.element != element or (isinstance(binding, Scalar) and binding.weak != weak):
            overrides[parameter] = (element, weak)
    return overrides


def _rank_overrides(
    summary: Summary, arguments: Mapping[str, ArrayValue | Integer]
) -> dict[str, int]:
    """Parameters whose rank the helper inferred lower than the caller's argument has
    (`softmax(x @ w + b)` with a `softmax` whose code gives `x` no rank): the helper is
    lowered again with the argument's rank, as it is for a dtype."""
    ranks: dict[str, int] = {}
    for parameter, binding in summary.parameters:
        value = arguments.get(parameter)
        if value is None or isinstance(value, Integer):
            continue
        if isinstance(binding, Scalar) and parameter in summary.inferred and value.shape:
            ranks[parameter] = len(value.shape)  # `mask`, never indexed: taken as a scalar
            continue
        if not isinstance(binding, Leaf):
            continue
        other = len(value.shape) != len(binding.shape)
        higher = len(value.shape) > len(binding.shape)
        if (parameter in summary.merged and other) or (parameter in summary.inferred and higher):
            ranks[parameter] = len(value.shape)
    return ranks


class _CallSite:
    """One call: its arguments matched to the summary, its nodes copied into the caller."""

    def __init__(
        self, reader: ExpressionReader, node: cst.Call, name: str, summary: Summary
    ) -> None:
        self.reader = reader
        self.node = node
        self.name = name
        self.summary = summary
        self.span = reader.span(node)
        self.text = reader.names.text(node)
        self.prefix = _prefix(reader, name, self.span)
        self.module = False
        """A submodule's call (`self.attn(x)`): sizes no argument gives are shared."""
        self.pairs: list[tuple[sympy.Expr, sympy.Expr, str]] = []
        self.arrays: dict[str, tuple[str, tuple[sympy.Expr, ...]]] = {}
        self.stores: list[tuple[Leaf, ArrayValue]] = []
        self.scalars: list[ArrayValue] = []

    def read(
        self,
        arguments: Mapping[str, ArrayValue | Integer],
        given: Sequence[tuple[sympy.Expr, sympy.Expr]] = (),
    ) -> Value | None:
        mapping = self._mapping(arguments, given)
        if mapping is None:
            return None
        result = self._result(mapping)
        if result is None:
            return None
        self._instantiate(mapping, result)
        return result

    def read_parts(self, arguments: Mapping[str, ArrayValue | Integer]) -> list[Value | None]:
        """The helper's work once, and each value of the tuple it returns."""
        (parts,) = self.summary.parts
        mapping = self._mapping(arguments)
        if mapping is None:
            return [None] * len(parts)
        results: list[Leaf | Scalar | None] = []
        for position, part in enumerate(parts):
            results.append(self._one_result(part, mapping, f"{self.text}[{position}]"))
        arrays = [r for r in results if isinstance(r, Leaf)]
        made = arrays[0] if len(arrays) == 1 else None
        self._instantiate(mapping, made or Scalar(dtypes.PYTHON_INT, True, self.text))
        return list(results)

    def _one_result(
        self, binding: Binding | None, mapping: dict[sympy.Symbol, sympy.Expr], text: str
    ) -> Leaf | Scalar | None:
        if isinstance(binding, Scalar):
            return Scalar(binding.element, binding.weak, text)
        if isinstance(binding, Integer):
            return Scalar(dtypes.PYTHON_INT, True, text)
        if isinstance(binding, Leaf):
            shape = tuple(substituted(e, mapping, simultaneous=True) for e in binding.shape)
            array, view = self._array(binding.array)
            index = _composed(view, binding.index, mapping)
            return Leaf(array, binding.element, shape, index, text, self.span)
        self.reader.note(
            UnknownKind.UNKNOWN_CALL,
            self.node,
            f"part {text} of what `{self.name}` returns is unknown; what uses it is not counted",
        )
        return None

    def _mapping(
        self,
        arguments: Mapping[str, ArrayValue | Integer],
        given: Sequence[tuple[sympy.Expr, sympy.Expr]] = (),
    ) -> dict[sympy.Symbol, sympy.Expr] | None:
        sizes: set[sympy.Symbol] = set()
        for helper, caller in given:  # a submodule's constructor sizes (`LayerNorm(n_embd)`)
            self.pairs.append((helper, caller, "__init__"))
            sizes |= helper.free_symbols
        for position, (parameter, binding) in enumerate(self.summary.parameters):
            if not self._bind(parameter, binding, arguments[parameter]):
                # What the later arguments say of the caller's inferred parameters, so that
                # its next lowering learns it at once rather than one argument a lowering.
                for later, bound in self.summary.parameters[position + 1 :]:
                    self._learn(bound, arguments[later])
                return None
            if isinstance(binding, Leaf):
                sizes |= {s for e in binding.shape for s in e.free_symbols}
            elif isinstance(binding, Integer) and binding.value is not None:
                sizes |= binding.value.free_symbols
        return self._solve(sizes - self.summary.fixed)

    # ---- arguments ----------------------------------------------------------------------

    def _bind(self, parameter: str, binding: Binding, value: ArrayValue | Integer) -> bool:
        reader = self.reader
        said = f"`{self.name}` takes `{parameter}`"
        if isinstance(binding, Integer):
            if binding.value is None or not binding.value.free_symbols:
                return True
            if isinstance(value, Integer) and value.value is not None:
                self.pairs.append((binding.value, value.value, parameter))
                return True
            self._learn(binding, value)
            why = value.unknown_because if isinstance(value, Integer) else "is not an integer"
            reader.note(
                UnknownKind.DATA_DEPENDENT_BOUND,
                self.node,
                f"{said} as a size, and `{_text(value)}` {why}; the call is not counted",
            )
            return False
        if isinstance(binding, Leaf):
            shape = () if isinstance(value, Integer) else value.shape
            if isinstance(value, Integer) or len(shape) != len(binding.shape):
                self._learn(binding, value)
                reader.note(
                    UnknownKind.UNKNOWN_SHAPE,
                    self.node,
                    f"{said} of shape {shape_text(binding.shape)}, and `{_text(value)}` has "
                    f"shape {shape_text(shape)}; the call is not counted",
                )
                return False
            self.pairs += [(b, v, parameter) for b, v in zip(binding.shape, shape, strict=True)]
            if isinstance(value, Leaf):
                # An axis of extent 1 where the helper took a larger one broadcasts (a causal
                # mask of (B, 1, T, T) against (B, heads, T, T) scores): its one element.
                ones = {
                    coordinate(axis): sympy.Integer(0)
                    for axis, (b, v) in enumerate(zip(binding.shape, shape, strict=True))
                    if v == 1 and b != 1
                }
                index = tuple(substituted(e, ones, simultaneous=True) for e in value.index)
                self.arrays[binding.array] = (value.array, index)
            else:
                temporary = leaf_for(f"{self.prefix}_{parameter}", shape, value.element, self.span)
                self.stores.append((temporary, value))
                self.arrays[binding.array] = (temporary.array, temporary.index)
            return True
        if isinstance(binding, Scalar):
            if isinstance(value, Integer):
                return True
            if value.shape:
                reader.note(
                    UnknownKind.UNKNOWN_SHAPE,
                    self.node,
                    f"{said} as a scalar (nothing in it indexes it), and `{_text(value)}` "
                    f"has shape {shape_text(value.shape)}; the call is not counted",
                )
                return False
            if not (isinstance(value, Scalar) and (value.constant or value.text.isidentifier())):
                self.scalars.append(value)  # `seq[i]`, `a[i] + 1`: evaluated by the caller
            return True
        reader.note(
            UnknownKind.UNKNOWN_SHAPE,
            self.node,
            f"`{parameter}` of `{self.name}` could not be typed; the call is not counted",
        )
        return False

    def _learn(self, binding: Binding, value: ArrayValue | Integer) -> None:
        """What an argument the helper does not take as it is says of the caller's
        inferred parameters (`FunctionLowering` lowers the caller again with it)."""
        reader = self.reader
        if isinstance(binding, Integer):
            if binding.value is None or not binding.value.free_symbols:
                return
            if isinstance(value, Scalar) and value.text in reader.inferred:
                # An un-annotated parameter of the caller passed as a size: it is one.
                reader.size_hints.add(value.text)
            return
        if not isinstance(binding, Leaf):
            return
        shape = () if isinstance(value, Integer) else value.shape
        if isinstance(value, Scalar) and value.text in reader.inferred:
            if len(shape) != len(binding.shape):
                # An un-annotated parameter of the caller passed as an array: it is one.
                reader.rank_hints[value.text] = len(binding.shape)
        elif len(shape) < len(binding.shape):
            # The caller's inferred parameters of that shape (`x`, of `self.attn(x)` or
            # `self.attn(self.ln_1(x))`): the code gave them fewer axes than the helper takes.
            for name in reader.inferred:
                origin = reader.scope.names.get(name)
                if isinstance(origin, Leaf) and origin.shape == shape:
                    reader.rank_hints[name] = len(binding.shape)

    def _solve(self, sizes: set[sympy.Symbol]) -> dict[sympy.Symbol, sympy.Expr] | None:
        """The helper's sizes in the caller's terms, from its parameters' extents and size
        arguments; two arguments that must agree and are not known to are taken as equal
        (NumPy raises where they differ), an assumption with the call's line."""
        mapping: dict[sympy.Symbol, sympy.Expr] = {}
        # An argument's extent 1 may broadcast: it names a size only where nothing else does.
        waiting = sorted(self.pairs, key=lambda pair: pair[1] == 1 and pair[2] != "__init__")
        self._pair_up(waiting, sizes, mapping)
        missing = sorted(str(s) for s in sizes if s not in mapping)
        if missing and self.module:
            # A submodule's sizes no argument gives are its configuration's attributes
            # (`args.n_heads`), the same sizes in every class of the file.
            mapping.update({s: s for s in sizes if s not in mapping})
            self.reader.note(
                UnknownKind.ASSUMPTION,
                self.node,
                f"`{self.text}`: {', '.join(missing)} of `{self.name}` taken as the same "
                "size here (a configuration attribute is one size in every class)",
            )
            self._pair_up(waiting, sizes, mapping)
            missing = []
        if missing:
            self.reader.note(
                UnknownKind.UNKNOWN_SHAPE,
                self.node,
                f"`{self.text}`: the size{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)} of `{self.name}` cannot be said in the caller's "
                "sizes; the call is not counted",
            )
            return None
        return mapping

    def _pair_up(
        self,
        waiting: list[tuple[sympy.Expr, sympy.Expr, str]],
        sizes: set[sympy.Symbol],
        mapping: dict[sympy.Symbol, sympy.Expr],
    ) -> None:
        """Solve each pair with one open size, in turn; check those with none."""
        progress = True
        while waiting and progress:
            progress = False
            for pair in list(waiting):
                helper, caller, parameter = pair
                open_ = [s for s in helper.free_symbols if s in sizes and s not in mapping]
                if len(open_) > 1:
                    continue
                waiting.remove(pair)
                progress = True
                if open_:
                    solved = _solve_linear(helper, open_[0], caller, mapping)
                    if solved is not None:
                        mapping[open_[0]] = solved
                        continue
                    waiting.append(pair)  # not linear in it: perhaps another pair names it
                    progress = False
                    continue
                given = helper.xreplace(mapping)
                if caller == 1 and parameter != "__init__":
                    continue  # broadcast along that axis (NumPy allows 1 against any extent)
                if not same_extent(given, caller):
                    self.reader.unify((given,), (caller,))
                    self.reader.note(
                        UnknownKind.ASSUMPTION,
                        self.node,
                        f"`{self.text}`: `{self.name}` needs extent {given} for `{parameter}`, "
                        f"given {caller}; taken as equal (NumPy raises where they differ)",
                    )
            if not progress and waiting:
                break

    # ---- the returned value -------------------------------------------------------------

    def _result(self, mapping: dict[sympy.Symbol, sympy.Expr]) -> Leaf | Scalar | None:
        """What the caller gets: a scalar, or the helper's returned array (renamed) or the
        caller's own array it hands back."""
        returns = self.summary.returns
        if not returns:
            return Scalar(dtypes.PYTHON_INT, True, "None", constant=True)
        if all(isinstance(r, (Integer, Scalar)) for r in returns):
            element, weak = dtypes.PYTHON_INT, True
            for r in returns:
                if isinstance(r, Scalar):
                    element = dtypes.promote(element, weak, r.element, r.weak)
                    weak = weak and r.weak
            return Scalar(element, weak, self.text)
        first = returns[0]
        if len(returns) > 1 and all(isinstance(r, Leaf) for r in returns):
            # `if n_rep == 1: return x` then `return x[...].expand(...).reshape(...)`
            # (llama2.c's `repeat_kv`): the work after the early return is counted on
            # every call, so the value is the last return's; said on the call.
            last = returns[-1]
            assert isinstance(last, Leaf)
            if any(
                not (isinstance(r, Leaf) and r.array == last.array and r.index == last.index)
                for r in returns
            ):
                self.reader.note(
                    UnknownKind.ASSUMPTION,
                    self.node,
                    f"`{self.name}` returns different arrays on different paths: the last "
                    "`return`'s is taken, and the work before it counted on every call, "
                    "as if no earlier `return` is taken",
                )
                first, returns = last, (last,)
        if isinstance(first, Leaf) and all(
            isinstance(r, Leaf) and r.array == first.array and r.index == first.index
            for r in returns
        ):
            shape = tuple(substituted(e, mapping, simultaneous=True) for e in first.shape)
            array, view = self._array(first.array)
            index = _composed(view, first.index, mapping)
            return Leaf(array, first.element, shape, index, self.text, self.span)

        why = next((r.reason for r in returns if isinstance(r, Opaque)), None)
        said = (
            f"the value `{self.name}` returns is unknown ({why} there)"
            if why is not None
            else f"the value `{self.name}` returns (not one array or scalar on every path) "
            "is not modeled"
        )
        self.reader.note(UnknownKind.UNKNOWN_CALL, self.node, f"{said}; the call is not counted")
        return None

    def _array(self, array: str) -> tuple[str, tuple[sympy.Expr, ...] | None]:
        """The caller's array (and view) for one of the helper's arrays."""
        if array in self.arrays:
            return self.arrays[array]
        return self.local(array), None

    def local(self, array: str) -> str:
        """The caller's name for an array of the helper's own (`conv2d_L45_out`)."""
        return f"{self.prefix}_{array}"

    # ---- instantiation ------------------------------------------------------------------

    def _copies(self, mapping: dict[sympy.Symbol, sympy.Expr]) -> tuple[list[Node], list[Region]]:
        """The helper's function-level notes (as a statement) and its regions, copied."""
        helper_regions = self.summary.function.regions
        loops = _loop_variables(n for r in helper_regions for n in r.body)
        # The eager view's calls have loops of their own (`_i5` over `_t2`): renamed too.
        loops |= _loop_variables(n for r in helper_regions for c in r.eager_calls for n in c.body)
        symbols: dict[sympy.Symbol, sympy.Expr] = dict(mapping)
        symbols |= {loop_symbol(v): loop_symbol(f"{self.prefix}_{v}") for v in loops}
        copier = _Copier(self, symbols)
        notes = tuple(copier.unknown(u) for u in self.summary.notes)
        first: list[Node] = []
        if notes:
            first.append(Statement(self.span, self.text, FlopTally(), unknowns=notes))
        regions = [copier.region(r) for r in self.summary.function.regions]
        if regions and first:
            # The notes go with the helper's work, not in a region of their own.
            regions[0] = replace(regions[0], body=(*first, *regions[0].body))
            first = []
        return first, regions

    def _instantiate(self, mapping: dict[sympy.Symbol, sympy.Expr], value: Leaf | Scalar) -> None:
        first, regions = self._copies(mapping)
        stores = tuple(self.stores)
        scalars = tuple(self.scalars)

        def build(_: Leaf, namer: Namer, span: Span) -> Construction:
            evaluated: list[Node] = []
            for scalar in scalars:
                evaluated += NestBuilder(namer, span).assign(Target(None), scalar, scalar.text)
            return Construction(stores, (*first, *evaluated), library=False, regions=tuple(regions))

        leaf = value if isinstance(value, Leaf) and value.array.startswith(self.prefix) else None
        if leaf is None or leaf.index != tuple(coordinate(d) for d in range(len(leaf.shape))):
            # A scalar, or a view of an array: no new array of the call's (no temporary).
            leaf = Leaf(self.prefix, value.element, (), (), self.text, self.span)
        allocation = Allocation(leaf.shape, leaf.element, False, self.text, build)
        self.reader.pending.append((leaf, allocation))


class _Copier:
    """The helper's nodes in the caller's names, located at the call."""

    def __init__(self, call: _CallSite, symbols: dict[sympy.Symbol, sympy.Expr]) -> None:
        self.call = call
        self.symbols = symbols

    def expression(self, expression: sympy.Expr) -> sympy.Expr:
        return substituted(expression, self.symbols, simultaneous=True)

    def unknown(self, unknown: Unknown) -> Unknown:
        call = self.call
        where = f"in `{call.name}` (line {unknown.span.line}, called here)"
        return replace(unknown, message=f"{where}: {unknown.message}", span=call.span)

    def region(self, region: Region) -> Region:
        """One of the helper's regions with its views (eager calls, temporaries, the arrays
        the jit view keeps in registers, contraction conventions) in the caller's names."""
        call = self.call
        return replace(
            region,
            body=tuple(self.nodes(region.body)),
            span=call.span,
            eager_calls=tuple(self.region(r) for r in region.eager_calls),
            temporaries=tuple(
                replace(
                    t,
                    name=call.local(t.name),
                    span=call.span,
                    elements=self.expression(t.elements),
                )
                for t in region.temporaries
            ),
            local_arrays=frozenset(call.local(a) for a in region.local_arrays),
            repeat=tuple(self.node(loop) for loop in region.repeat),  # type: ignore[misc]
            conventions=tuple((text, self.expression(e)) for text, e in region.conventions),
        )

    def nodes(self, body: Sequence[Node]) -> list[Node]:
        return [self.node(n) for n in body]

    def node(self, node: Node) -> Node:
        call = self.call
        if isinstance(node, Loop):
            return Loop(
                f"{call.prefix}_{node.var}",
                self.expression(node.start),
                node.step,
                self.expression(node.trip),
                tuple(self.nodes(node.body)),
                call.span,
                tuple(self.unknown(u) for u in node.unknowns),
            )
        if isinstance(node, Branch):
            condition = self.node(node.condition)
            assert isinstance(condition, Statement)
            return Branch(
                call.span,
                condition,
                self.expression(node.taken_fraction),
                tuple(self.nodes(node.then_body)),
                tuple(self.nodes(node.else_body)),
                tuple(self.unknown(u) for u in node.unknowns),
                None if node.guard is None else node.guard.xreplace(self.symbols),
            )
        return replace(
            node,
            span=call.span,
            text=f"{call.name}: {node.text}",
            accesses=tuple(self.access(a) for a in node.accesses),
            unknowns=tuple(self.unknown(u) for u in node.unknowns),
        )

    def access(self, access: Access) -> Access:
        array, view = self.call._array(access.array)
        index = None
        if access.index is not None:
            inner = tuple(self.expression(e) for e in access.index)
            if view is None:
                index = inner
            elif len(inner) == _rank(view):
                index = tuple(
                    substituted(e, {coordinate(d): c for d, c in enumerate(inner)}) for e in view
                )
        return Access(array, index, access.element, access.is_write, self.call.span, access.text)


def _composed(
    view: tuple[sympy.Expr, ...] | None,
    index: tuple[sympy.Expr, ...],
    mapping: Mapping[sympy.Symbol, sympy.Expr],
) -> tuple[sympy.Expr, ...]:
    """A helper's view `index` (of one of its arrays) seen through the caller's `view`."""
    inner = tuple(substituted(e, mapping, simultaneous=True) for e in index)
    if view is None:
        return inner
    return tuple(substituted(e, {coordinate(d): c for d, c in enumerate(inner)}) for e in view)


def _rank(view: tuple[sympy.Expr, ...]) -> int:
    """How many coordinates a view's index uses (its rank)."""
    free = frozenset().union(*(e.free_symbols for e in view))
    return next((d + 1 for d in range(63, -1, -1) if coordinate(d) in free), 0)


def _solve_linear(
    helper: sympy.Expr,
    symbol: sympy.Symbol,
    caller: sympy.Expr,
    mapping: Mapping[sympy.Symbol, sympy.Expr],
) -> sympy.Expr | None:
    """`symbol` from `helper == caller` when `helper` is `symbol` plus or minus known terms
    (`n - 1` given `m`: n is `m + 1`); None otherwise (`2*n`, `floor(n/2)`)."""
    known = helper.xreplace(mapping)
    if not known.is_polynomial(symbol) or sympy.degree(known, symbol) != 1:
        return None
    slope = sympy.diff(known, symbol)
    if slope not in (1, -1):
        return None
    return sympy.expand((caller - (known - slope * symbol)) / slope)


def _loop_variables(nodes: object) -> set[str]:
    found: set[str] = set()
    for node in nodes:  # type: ignore[attr-defined]
        if isinstance(node, Loop):
            found.add(node.var)
            found |= _loop_variables(node.body)
        elif isinstance(node, Branch):
            found |= _loop_variables((*node.then_body, *node.else_body))
    return found


def _prefix(reader: ExpressionReader, name: str, span: Span) -> str:
    """`conv2d_L45`: the call's name for the helper's loops and arrays; a second call of
    the same helper on the same line adds its column."""
    prefix = f"{name}_L{span.line}"
    taken = reader.call_names.setdefault(prefix, (span.line, span.column))
    if taken != (span.line, span.column):
        prefix = f"{prefix}_{span.column}"
    return prefix


def _text(value: Value) -> str:
    return value.text if hasattr(value, "text") else str(value)
