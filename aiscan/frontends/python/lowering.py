"""Function bodies to IR regions: explicit loops, branches, and vectorized statements.

Like the C frontend, each top-level `for`/`while` is a loop-nest region and the statements
between them form one region. A region of vectorized statements also carries its eager view
(one region per NumPy call), its temporaries and the FLOP conventions of its contractions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cache, lru_cache

import libcst as cst
import sympy

from aiscan.errors import Diagnostic, Severity
from aiscan.frontends.python import dtypes, grids
from aiscan.frontends.python.annotations import parameter_binding
from aiscan.frontends.python.autocast import Autocast, autocast_region
from aiscan.frontends.python.bounds import bound_choices, tile_point_trip
from aiscan.frontends.python.buffers import registered_buffer
from aiscan.frontends.python.calls import positional_out
from aiscan.frontends.python.eager import (
    EagerCalls,
    eager_calls,
    is_array,
    masked_store_calls,
)
from aiscan.frontends.python.evaluator import Evaluator
from aiscan.frontends.python.expressions import (
    CONFIGURATION_REASON,
    SLICE_REASON,
    Allocation,
    Binding,
    Opaque,
    Scope,
    Value,
    leaf_for,
    literal_mismatch,
    number_literal,
)
from aiscan.frontends.python.flags import decided
from aiscan.frontends.python.flax_modules import (
    FLAX_LAYERS,
    is_flax_module,
    read_flax_layer,
    read_flax_submodule,
    read_submodule_list,
)
from aiscan.frontends.python.inference import (
    Evidence,
    bound_name,
    gather_evidence,
    plain_name,
    self_attributes,
)
from aiscan.frontends.python.layers import ModuleList
from aiscan.frontends.python.modules import (
    LAYERS,
    range_count,
    read_layer,
    read_module_list,
    read_submodule,
    submodule_of,
)
from aiscan.frontends.python.names import SourceNames
from aiscan.frontends.python.nests import Namer, NestBuilder, ShapeMismatch, Target
from aiscan.frontends.python.random_calls import GENERATOR_REASON, GENERATORS
from aiscan.frontends.python.selections import mask_fraction, misplaced_selection
from aiscan.frontends.python.settings import SETTINGS_REASON, settings_parameters
from aiscan.frontends.python.shape_lists import shape_list
from aiscan.frontends.python.shapes import broadcast_shapes, same_extent, shape_text
from aiscan.frontends.python.splits import Pieces, split_pieces
from aiscan.frontends.python.symbols import (
    fraction_symbol,
    is_size_symbol,
    loop_symbol,
    size_symbol,
    trip_symbol,
)
from aiscan.frontends.python.values import (
    Apply,
    ArrayValue,
    Contract,
    Integer,
    Leaf,
    Reduce,
    Scalar,
    Select,
    Shape,
)
from aiscan.frontends.python.views import element_at, shape_assigned, sliced
from aiscan.given_shapes import GivenShape, extent_value
from aiscan.ir.nodes import (
    Branch,
    ElementType,
    FlopTally,
    Function,
    Loop,
    Node,
    Parameter,
    Region,
    Statement,
    Temporary,
    Unknown,
    UnknownKind,
)
from aiscan.ir.tiles import merged_tiles
from aiscan.ir.trips import never_below_zero
from aiscan.span import Span
from aiscan.substitution import substituted

__all__ = ["FunctionLowering"]

_AUGMENTED = {
    "AddAssign": "add",
    "SubtractAssign": "sub",
    "MultiplyAssign": "mul",
    "DivideAssign": "div",
}


_MAX_BODY_COPIES = 16

_RangeChoice = tuple[sympy.Expr, sympy.Expr, tuple[sympy.Basic, ...]]
"""One combination of a `range`'s `min`/`max` alternatives: start, stop, conditions."""


def _shape_target(target: cst.BaseExpression) -> bool:
    """`x.shape` as an assignment's target (an in-place reshape)."""
    return (
        isinstance(target, cst.Attribute)
        and target.attr.value == "shape"
        and isinstance(target.value, cst.Name)
    )


@dataclass(slots=True)
class _Lowered:
    """One statement's fused nodes, and at top level its eager calls and conventions."""

    nodes: list[Node] = field(default_factory=list)
    eager: EagerCalls | None = None
    conventions: list[tuple[str, sympy.Expr]] = field(default_factory=list)
    regions: list[tuple[int, Region]] = field(default_factory=list)
    """Regions of their own that run after the first `at` nodes (a summarized helper's nests,
    called from a statement of the function's top level)."""

    def extend(self, other: _Lowered) -> None:
        """`other` after this."""
        self.regions += [(at + len(self.nodes), r) for at, r in other.regions]
        self.nodes += other.nodes
        self.conventions += other.conventions
        self.eager = _merge(self.eager, other.eager)


class FunctionLowering:
    """Lowers one function (or the module's own code) to an IR `Function`."""

    def __init__(
        self,
        names: SourceNames,
        scope: Scope,
        default_element: ElementType = dtypes.FLOAT64,
        hints: _Hints | None = None,
        class_sizes: frozenset[str] = frozenset(),
        dtypes_given: Mapping[str, tuple[ElementType, bool]] | None = None,
        *,
        dtype_source: str = "--python-dtype",
        framework: str | None = None,
        ranks_given: Mapping[str, int] | None = None,
        shapes_given: Mapping[str, GivenShape] | None = None,
    ) -> None:
        self.names = names
        self.class_sizes = class_sizes
        """In a method: the attributes `self.N` some method uses as a size."""
        self.scope = scope
        self.initial_scope = scope.copy()
        self.default_element = default_element
        self.dtype_source = dtype_source
        """Why un-annotated arrays have `default_element` (the setting, or the framework)."""
        self.framework = framework
        """The array library the function runs in (`frameworks.py`), for its methods."""
        self.hints = hints or _Hints(ranks=dict(ranks_given or {}))
        self.candidates: set[str] = set()
        self.merged: set[str] = set()
        """Parameters whose leading axes are one extent (`Evidence.leading_merged`)."""
        self.reader = Evaluator(names, scope)
        self.reader.framework = framework
        if framework == "torch":
            torch_default = dtype_source == "PyTorch's default dtype"
            self.reader.factory_element = default_element if torch_default else dtypes.FLOAT32
        self.namer = Namer()
        self.loop_depth = 0
        self.at_top = False
        """A simple statement of the function's top level is being lowered: a summarized
        call in it runs its helper's nests as regions of their own."""
        self.body_copies = 1
        """How many times the statement being lowered is lowered (once per combination of
        the `min`/`max` alternatives of the loops around it)."""
        self.enclosing: list[Loop] = []
        """The counted loops around the statement being lowered, outermost first (their
        bodies left empty): where a point loop looks for its tile loop."""
        self.function_unknowns: list[Unknown] = []
        self.loop_calls: list[Region] | None = None
        """The eager calls of the top-level loop being lowered (None outside one)."""
        self.loop_temporaries: list[Temporary] = []
        self.loop_eager_complete = True
        """False once a statement of that loop runs where its passes are not counted."""
        self.loop_vector_span: Span | None = None
        """The first vectorized statement in that loop (where its note goes, if any)."""
        self.loop_conventions: list[tuple[str, sympy.Expr]] = []
        """The `2*m*k*n` figures of a top-level loop's contractions (a module list's
        blocks, `_module_list_loop`), for its region."""
        self.spliced_conventions: list[tuple[str, sympy.Expr]] = []
        """Those of the helper regions spliced into the loop being lowered."""
        self.branch_weights: list[sympy.Expr | None] = []
        """The share of a loop's passes taking each `if` around the statement being lowered
        (`p_L<line>`, or its complement in the `else`); None for an `if` that restricts the
        iterations exactly (its share differs from pass to pass)."""
        self.rank_hints: dict[str, int] = {}
        self.parameters: set[str] | None = None
        """A function's parameters (None for module code, where every array escapes)."""
        self.errors = self.reader.errors
        """Located errors in the code (shapes NumPy rejects), for the module's diagnostics."""
        self.escaping: set[str] = set()
        """Arrays a `return` hands back: they escape, the jit view keeps their traffic."""
        self.dtypes_given = dict(dtypes_given or {})
        """Dtypes (and weakness) of un-annotated parameters, given by a call (`summaries.py`)
        in place of the default."""
        self.parameter_bindings: dict[str, Binding] = {}
        """Each parameter's binding once its shape is inferred (for a call's summary)."""
        self.parameter_notes: list[Unknown] = []
        """The assumptions made about the parameters (a call's arguments replace them)."""
        self.returns: list[Binding | None] = []
        self.tuple_returns: list[tuple[Binding | None, ...]] = []
        """What each `return` hands back."""
        self.shapes_given = dict(shapes_given or {})
        """Shapes the user states for parameters (`--shape`), by parameter name."""
        self.refused: set[str] = set()
        """Parameters whose stated shape the code contradicts: their code's shape stands."""
        self.parameter_sources: dict[str, tuple[str, str, str | None]] = {}
        """Per parameter: where its shape and its dtype came from, and the assumption made
        (`Parameter.shape_from`, `dtype_from`, `note`); annotations where absent."""

    def function(self, node: cst.FunctionDef, qualified: str | None = None) -> Function:
        """Lower `node` (named `qualified`, e.g. `Class.method`); `self.scope` then holds what
        the body bound, `self.*` attributes included (see `final_scope`)."""
        parameters: dict[str, cst.CSTNode] = {}
        for parameter in (
            *node.params.posonly_params,
            *node.params.params,
            *node.params.kwonly_params,
        ):
            name = parameter.name.value
            if name in ("self", "cls"):
                continue
            binding = parameter_binding(name, parameter.annotation, self.names)
            self.scope.names[name] = binding
            parameters[name] = parameter
        # Only a method's `self.X` are sizes or inputs (a walk of the body: skipped otherwise).
        attributes = self_attributes(node.body) if self._is_method(node) else {}
        for attribute, use in attributes.items():
            if attribute in self.scope.names or attribute in self.scope.layers:
                continue
            plain = attribute.removeprefix("self.")
            if plain in self.class_sizes:
                self.scope.names[attribute] = Integer(size_symbol(plain), attribute)
                continue
            reason = "is not set where this method can see it"
            self.scope.names[attribute] = Opaque(attribute, reason, True, True)
            parameters[attribute] = use
        for name, spec in self.shapes_given.items():
            if name in parameters:
                self._check_given(name, spec, self.scope.names[name], parameters[name])
        notes = len(self.function_unknowns)
        self._infer_parameters(node, parameters)
        self.parameter_notes = self.function_unknowns[notes:]
        self.parameter_bindings = {p: self.scope.names[p] for p in parameters}
        self.parameters = set(parameters)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        function = self.build(qualified or node.name.value, self.names.span(node), list(body))
        function = replace(function, parameters=self._parameter_records(parameters))
        if self.hints.learn(
            self.reader.equations,
            {**self.reader.rank_hints, **self.rank_hints},
            self.reader.size_hints,
        ):
            # A store or a broadcast told us more about an inferred shape: lower again.
            again = FunctionLowering(
                self.names,
                self.initial_scope,
                self.default_element,
                self.hints,
                self.class_sizes,
                self.dtypes_given,
                dtype_source=self.dtype_source,
                framework=self.framework,
                shapes_given=self.shapes_given,
            )
            function = again.function(node, qualified)
            self.scope = again.scope
            self.errors = again.errors
            self.parameter_bindings = again.parameter_bindings
            self.parameter_notes = again.parameter_notes
            self.returns = again.returns
            self.tuple_returns = again.tuple_returns
        return function

    @staticmethod
    def _is_method(node: cst.FunctionDef) -> bool:
        params = (*node.params.posonly_params, *node.params.params)
        return bool(params) and params[0].name.value == "self"

    def _given_shape(self, spec: GivenShape) -> Shape:
        return tuple(sympy.sympify(extent_value(extent, size_symbol)) for extent in spec.extents)

    def _check_given(
        self, name: str, spec: GivenShape, binding: Binding, where: cst.CSTNode
    ) -> None:
        """A stated shape against what an annotation says: where they differ, a located
        error, and the annotation stands (the stated shape is not used)."""
        given = self._given_shape(spec)
        annotated: Shape | None = None
        element = None
        if isinstance(binding, Leaf | Scalar):
            annotated, element = binding.shape, binding.element
        elif isinstance(binding, Integer):
            annotated = ()
            if given:
                self._contradiction(name, spec, "the annotation makes it an integer size", where)
                return
        elif isinstance(binding, Opaque):
            annotated, element = binding.shape, binding.element
        if annotated is not None and (
            len(annotated) != len(given)
            or not all(same_extent(a, b) for a, b in zip(annotated, given, strict=True))
        ):
            said = f"shape {shape_text(annotated)}" if annotated else "a scalar"
            self._contradiction(name, spec, f"its annotation gives {said}", where)
        elif element is not None and spec.dtype is not None and spec.dtype != element.name:
            self._contradiction(name, spec, f"its annotation gives dtype {element.name}", where)

    def _contradiction(self, name: str, spec: GivenShape, why: str, where: cst.CSTNode) -> None:
        """A stated shape the code contradicts: a located error; the code's shape is used."""
        message = f"{spec.source}: `{name}` cannot have that shape: {why} (not used)"
        self.errors.append(Diagnostic(self.names.span(where), Severity.ERROR, message))
        self.refused.add(name)

    def _given_conflict(self, name: str, given: Shape, evidence: Evidence) -> str | None:
        """What the body says that a stated shape contradicts, or None."""
        if name in evidence.sizes and given:
            return "the code uses it as an integer size"
        least = evidence.code_rank(name)
        if len(given) < least:
            return f"the code uses {least} axes of it"
        return None

    def _parameter_records(self, parameters: dict[str, cst.CSTNode]) -> tuple[Parameter, ...]:
        """The parameters as this lowering took them (`Parameter`), for the report."""
        records = []
        for name, where in parameters.items():
            binding = self.parameter_bindings.get(name, self.scope.names.get(name))
            shape_from, dtype_from, note = self.parameter_sources.get(
                name, ("annotation", "annotation", None)
            )
            shape: Shape = ()
            element: ElementType | None = None
            if isinstance(binding, Leaf):
                kind, shape, element = "array", binding.shape, binding.element
            elif isinstance(binding, Scalar):
                kind, element = "scalar", binding.element
            elif isinstance(binding, Integer):
                kind, dtype_from = "size", "code" if shape_from == "code" else dtype_from
            else:
                kind, shape_from, dtype_from = "unknown", "unknown", "unknown"
                if isinstance(binding, Opaque):
                    note = binding.reason
            span = self.names.span(where)
            records.append(
                Parameter(name, span, kind, shape, element, shape_from, dtype_from, note)
            )
        return tuple(records)

    def _infer_parameters(self, node: cst.FunctionDef, parameters: dict[str, cst.CSTNode]) -> None:
        """Parameters without a usable annotation get shapes from the body's evidence and
        the default dtype, each with one assumption line (see `inference.py`)."""
        candidates = {
            name
            for name in parameters
            if isinstance(b := self.scope.names[name], Opaque) and b.infer
        }
        if self.framework == "torch":
            typed = {  # `args: ModelArgs`, a dataclass of this file
                name
                for name, where in parameters.items()
                if isinstance(where, cst.Param)
                and where.annotation is not None
                and isinstance(where.annotation.annotation, cst.Name)
                and where.annotation.annotation.value in self.scope.classes
            }
            candidates -= self._settings(node, parameters, candidates | typed)
        if not candidates:
            return
        module_sizes = {n for n, b in self.scope.names.items() if isinstance(b, Integer)}
        evidence = gather_evidence(node.body, candidates, module_sizes)
        evidence.sizes |= self.hints.sizes & candidates
        for name, rank in self.hints.ranks.items():
            evidence.weak_rank[name] = max(evidence.weak_rank.get(name, 0), rank)
        for name in candidates:
            binding = self.scope.names[name]
            if isinstance(binding, Opaque) and binding.annotated_array:
                evidence.weak_rank[name] = max(evidence.weak_rank.get(name, 0), 1)
        for name in sorted(candidates & set(self.shapes_given), key=list(parameters).index):
            spec = self.shapes_given[name]
            conflict = self._given_conflict(name, self._given_shape(spec), evidence)
            if conflict is not None:
                self._contradiction(name, spec, conflict, parameters[name])
        given = {n for n in candidates if n in self.shapes_given and n not in self.refused}
        candidates = candidates - given
        self.merged = {  # a bias the code ranks only by adding it is a vector (below)
            n
            for n in candidates
            if evidence.leading_merged(n)
            and n not in self.hints.ranks
            and not evidence.rank_only_from_meeting(n)
        }
        for name in self.merged:
            # Its leading axes as one extent, their product: exact for any rank from 1 up.
            evidence.weak_rank[name] = 2
        self.candidates = candidates
        self.reader.inferred = candidates
        self.reader.trailing = {n for n in candidates if evidence.rank_only_from_meeting(n)}
        for name in sorted(candidates | given, key=list(parameters).index):
            if name in given:
                self._bind_given(name, self.shapes_given[name], parameters[name])
                continue
            binding = self.scope.names[name]
            assert isinstance(binding, Opaque)
            span = self.names.span(parameters[name])
            element, weak, dtype_note, dtype_from = self._parameter_dtype(name, binding)
            unannotated = _unannotated(parameters[name])
            shape_from = "code"
            if binding.shape is not None:
                self.scope.names[name] = leaf_for(name, binding.shape, element, span)
                message = f"`{name}`: its annotation gives no width{dtype_note}"
            elif evidence.rank_of(name) > 0:
                dims = dims0 = evidence.dimension_names(name)
                self.reader.free |= {size_symbol(d): name for d, named in dims if not named}
                shape = tuple(self.hints.resolve(size_symbol(d)) for d, _ in dims)
                self.scope.names[name] = leaf_for(name, shape, element, span)
                dims = tuple((str(e), named) for e, (_, named) in zip(shape, dims, strict=True))
                invented = [
                    d for d, named in dims if not named and d.startswith(f"{plain_name(name)}_d")
                ]
                said = ", ".join(d for d, _ in dims)
                how = (
                    f" ({', '.join(invented)} named here: nothing in the code gives "
                    f"{'that extent' if len(invented) == 1 else 'those extents'})"
                    if invented
                    else ""
                )
                if any(e != size_symbol(d) for e, (d, _) in zip(shape, dims0, strict=True)):
                    how += " (extents matched to the arrays it is combined with)"
                if evidence.rank_only_from_meeting(name) and name not in self.hints.ranks:
                    how += " (it meets arrays in arithmetic; a vector: the code gives no rank)"
                if name in self.merged:
                    how += (
                        f" ({dims[0][0]} the product of its leading extents, 1 for a vector: "
                        "the code works elementwise and along the last axis only, so the "
                        "counts hold for any rank)"
                    )
                message = f"`{name}` {unannotated}: taken as an array of shape ({said}){how}"
                message += dtype_note
                if evidence.code_rank(name) < len(shape) or evidence.rank_only_from_meeting(name):
                    shape_from = "assumed"  # the rank is a weak use's, or a partner's
                if (
                    evidence.rank_unknown(name)
                    and name not in self.hints.ranks
                    and not evidence.rank_only_from_meeting(name)  # a bias: rule 1 ranks it
                ):
                    shape_from = "assumed"
                    why = (
                        f"`{name}`: the code gives no rank and counts along an axis depend on "
                        "it: taken as a vector (a caller's argument or an annotation says more)"
                    )
                    self.function_unknowns.append(Unknown(UnknownKind.UNKNOWN_SHAPE, why, span))
            elif name in evidence.sizes:
                self.scope.names[name] = Integer(size_symbol(plain_name(name)), name)
                continue  # an `int` size: nothing assumed beyond what the code says
            elif evidence.stored_as.get(name) in self.class_sizes:
                # `self.N = N` in `__init__`, where a method uses `self.N` as a size.
                size = evidence.stored_as[name]
                self.scope.names[name] = Integer(size_symbol(size), name)
                continue
            else:
                self.scope.names[name] = Scalar(element, weak, name)
                message = (
                    f"`{name}` {unannotated} and is never indexed: taken as a scalar{dtype_note}"
                )
                shape_from = "assumed"
            if binding.shape is not None:
                shape_from = "annotation"
            self.parameter_sources[name] = (shape_from, dtype_from, message)
            self.function_unknowns.append(Unknown(UnknownKind.ASSUMPTION, message, span))
            self._undecided_product(name, evidence, span)

    def _undecided_product(self, name: str, evidence: Evidence, span: Span) -> None:
        """Issue 28, construct 1: never a scalar by default where a product of parameters
        meets an array; which factor is the array the code does not tell, so it is said."""
        for code, factors in evidence.undecided_products.items():
            if factors[0] != name or any(f not in self.candidates for f in factors):
                continue
            if all(evidence.rank_of(f) == 0 and f not in evidence.sizes for f in factors):
                named = ", ".join(f"`{f}`" for f in factors)
                why = (
                    f"`{code}` is added to an array, so one of {named} is an array, and the "
                    "code does not tell which: all taken as scalars (an annotation or --shape "
                    "says more)"
                )
                self.function_unknowns.append(Unknown(UnknownKind.UNKNOWN_SHAPE, why, span))

    def _parameter_dtype(self, name: str, binding: Opaque) -> tuple[ElementType, bool, str, str]:
        """An un-typed parameter's dtype, whether it is weak, the assumption's words for it
        and where it comes from (`Parameter.dtype_from`)."""
        if binding.element is not None:
            return binding.element, False, "", "annotation"
        if name in self.dtypes_given:
            element, weak = self.dtypes_given[name]
            return element, weak, f"; dtype {element.name} as the call passes", "caller"
        note = f"; dtype assumed {self.default_element.name} ({self.dtype_source})"
        return self.default_element, True, note, "assumed"

    def _bind_given(self, name: str, spec: GivenShape, where: cst.CSTNode) -> None:
        """A parameter the user gave a shape (`--shape`): bound to it, one assumption line
        saying so (the counts hold under it)."""
        binding = self.scope.names[name]
        assert isinstance(binding, Opaque)
        span = self.names.span(where)
        element, weak, dtype_note, dtype_from = self._parameter_dtype(name, binding)
        if spec.dtype is not None:
            given = dtypes.dtype_named(spec.dtype)
            assert given is not None  # `parse_shape` checked it
            element, weak, dtype_note, dtype_from = given, False, f"; dtype {given.name}", "given"
        shape = self._given_shape(spec)
        if shape:
            self.scope.names[name] = leaf_for(name, shape, element, span)
        else:
            self.scope.names[name] = Scalar(element, weak, name)
        said = f"an array of shape {shape_text(shape)}" if shape else "a scalar"
        message = f"`{name}` {_unannotated(where)}: {said} as given ({spec.source}){dtype_note}"
        self.parameter_sources[name] = ("given", dtype_from, message)
        self.function_unknowns.append(Unknown(UnknownKind.ASSUMPTION, message, span))

    def _settings(
        self, node: cst.FunctionDef, parameters: dict[str, cst.CSTNode], candidates: set[str]
    ) -> set[str]:
        """Parameters read only through attributes (`config.n_embd`): configuration objects
        whose attributes are sizes (`settings.py`), each with one assumption line."""
        found = settings_parameters(node.body, candidates)
        for name in sorted(found, key=list(parameters).index):
            self.scope.names[name] = Opaque(name, SETTINGS_REASON)
            where = parameters[name]
            said = (
                "is a class of this file"
                if isinstance(where, cst.Param) and where.annotation is not None
                else "has no annotation"
            )
            message = (
                f"`{name}` {said} and is only read through its attributes: a "
                f"configuration object, each `{name}.<attribute>` a size named after the attribute"
            )
            span = self.names.span(parameters[name])
            self.function_unknowns.append(Unknown(UnknownKind.ASSUMPTION, message, span))
        return found

    def build(self, name: str, span: Span, body: Sequence[cst.CSTNode]) -> Function:
        regions = tuple(self._regions(body))
        if self.parameters is not None:
            local = _local_arrays(regions, self.parameters | self.escaping)
            regions = tuple(
                replace(r, local_arrays=local & _arrays_of(r.body)) if r.eager_calls else r
                for r in regions
            )
        return Function(name, span, regions, tuple(self.function_unknowns))

    # ---- regions ------------------------------------------------------------------------

    def _regions(self, statements: Sequence[cst.CSTNode]) -> Iterator[Region]:
        run: list[_Lowered] = []
        for statement in self._unwrapped(statements):
            if isinstance(statement, (cst.For, cst.While)):
                yield from _flush(run)
                run = []
                yield from self._loop_region(statement)
            else:
                self.at_top = isinstance(statement, cst.SimpleStatementLine)
                lowered = self._statement(statement)
                self.at_top = False
                done = 0
                # With nothing after the call (`return f(x @ w + b)`), the statement's NumPy
                # calls are those computing the arguments: they go with them.
                before_only = bool(lowered.regions) and lowered.regions[-1][0] == len(lowered.nodes)
                for at, region in lowered.regions:
                    # What ran before the call (its arguments) closes the run; the helper's
                    # nests follow, then the rest of the statement opens a new run.
                    if at > done:
                        calls = lowered.eager if before_only and done == 0 else EagerCalls()
                        run.append(_Lowered(lowered.nodes[done:at], calls))
                    yield from _flush(run)
                    run = []
                    yield region
                    done = at
                rest = _Lowered(lowered.nodes[done:], lowered.eager, lowered.conventions)
                if rest.nodes:
                    run.append(rest)
        yield from _flush(run)

    def _loop_region(self, statement: cst.For | cst.While) -> Iterator[Region]:
        """A top-level loop nest; with its eager view where it runs NumPy calls (each call
        once per pass, `Region.repeat`) and every pass is counted."""
        self.loop_calls, self.loop_temporaries = [], []
        self.loop_eager_complete, self.loop_vector_span = True, None
        self.loop_conventions = []
        try:
            nodes = self._statement(statement).nodes
        finally:
            calls, temporaries = self.loop_calls, self.loop_temporaries
            conventions = tuple(self.loop_conventions)
            self.loop_calls = None
        if not nodes:
            return
        span = self.names.span(statement)
        if self.loop_vector_span is None:
            yield Region("nest", tuple(nodes), span, conventions=conventions)
        elif self.loop_eager_complete:
            yield Region("nest", tuple(nodes), span, tuple(calls), tuple(temporaries), conventions)
        else:
            self._note_once(self.loop_vector_span)
            yield Region("nest", tuple(nodes), span, conventions=conventions)

    # ---- statements ---------------------------------------------------------------------

    def _block(self, block: cst.BaseSuite) -> list[Node]:
        return self._lowered_statements(_statements(block))

    def _lowered_statements(self, statements: Sequence[cst.CSTNode]) -> list[Node]:
        nodes: list[Node] = []
        for statement in statements:
            nodes += self._statement(statement).nodes
        return nodes

    def _statement(self, node: cst.CSTNode) -> _Lowered:
        # A line of small statements, or the same after a colon (`for i in range(n): s += 1`).
        if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            lowered = _Lowered()
            for small in node.body:
                try:
                    part = self._small(small)
                except ShapeMismatch as error:
                    message = f"shapes do not broadcast ({error}); statement not counted"
                    span = self.names.span(small)
                    self.function_unknowns.append(Unknown(UnknownKind.UNKNOWN_SHAPE, message, span))
                    continue
                lowered.extend(part)
            return lowered
        if isinstance(node, cst.For):
            return _Lowered(self._for(node))
        if isinstance(node, cst.While):
            return _Lowered(self._while(node))
        if isinstance(node, cst.If):
            taken = self._decided_branch(node)
            if taken is not None:
                return _Lowered(self._lowered_statements(taken))
            return self._branch(node)
        if isinstance(node, cst.With):
            return _Lowered(self._with(node))
        if isinstance(node, cst.Try):
            return _Lowered(self._block(node.body))
        return _Lowered()

    def _with(self, node: cst.With) -> list[Node]:
        """A `with` block inside another statement: its body, under the block's autocast."""
        outer = self.reader.autocast
        self.reader.autocast = self._autocast_of(node)
        try:
            return self._block(node.body)
        finally:
            self.reader.autocast = outer

    def _unwrapped(self, statements: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
        """The statements with each top-level `with` block replaced by its body, as it
        runs (its statements keep their eager view), under the block's autocast."""
        for statement in statements:
            if isinstance(statement, cst.If):
                taken = self._decided_branch(statement)
                if taken is not None:  # `if self.flash:`: the branch taken, as it runs
                    yield from self._unwrapped(taken)
                    continue
            if not isinstance(statement, cst.With):
                yield statement
                continue
            outer = self.reader.autocast
            self.reader.autocast = self._autocast_of(statement)
            try:
                yield from self._unwrapped(_statements(statement.body))
            finally:
                self.reader.autocast = outer

    def _decided_branch(self, node: cst.If) -> list[cst.CSTNode] | None:
        """The statements of the branch a constant flag takes (`if self.flash:`, `flags.py`),
        with an assumption on the `if` line; None where the test is not a constant."""
        value = decided(self.reader, node.test)
        if value is None:
            return None
        self._note_decided(node.test, value, self.names.span(node))
        if value:
            return _statements(node.body)
        if isinstance(node.orelse, cst.Else):
            return _statements(node.orelse.body)
        if isinstance(node.orelse, cst.If):
            return [node.orelse]  # `elif`: tested in turn
        return []

    def _note_decided(self, test_node: cst.BaseExpression, value: bool, span: Span) -> None:
        test = self.names.text(test_node)
        why = " (a size is never None)" if isinstance(test_node, cst.Comparison) else ""
        message = (
            f"`{test}` is {value} on every call, as the code sets it{why}: only the branch "
            "taken is counted"
        )
        self.function_unknowns.append(Unknown(UnknownKind.ASSUMPTION, message, span))

    def _autocast_of(self, node: cst.With) -> Autocast | None:
        """The autocast in force inside `node`: under `torch.autocast(...)`
        (`autocast.py`) the listed operations run in the region's dtype, and
        `enabled=False` turns that off again inside."""
        region = self.reader.autocast
        for item in node.items:
            found = autocast_region(item.item, self.names)
            if isinstance(found, str):
                message = f"{found}: counted without autocast"
                span = self.names.span(item)
                self.function_unknowns.append(Unknown(UnknownKind.UNSUPPORTED, message, span))
            elif found is False:
                region = None
            elif found is not None:
                region = found
        return region

    def _small(self, node: cst.BaseSmallStatement) -> _Lowered:
        lowered = self._small_made(node)
        if self.loop_depth > 0:
            self._collect_in_loop(lowered, self.names.span(node))
        return lowered

    def _small_made(self, node: cst.BaseSmallStatement) -> _Lowered:
        self.reader.unknowns = []
        self.reader.pending = []
        lowered = self._small_statement(node)
        return self._constructed_first(lowered, node)

    def _constructed_first(self, lowered: _Lowered, node: cst.CSTNode) -> _Lowered:
        """`lowered` after the arrays its calls construct (`np.eye(n) - A`, a summarized
        helper's result), which are computed first."""
        if not self.reader.pending:
            return lowered
        span = self.names.span(node)
        first = _Lowered()
        for leaf, allocation in self.reader.pending:
            part = self._construct(leaf, allocation, allocation.text, span)
            first.extend(part)
            if first.eager is not None and leaf.shape:
                elements = sympy.Mul(*leaf.shape)
                first.eager.temporaries.append(
                    Temporary(leaf.array, allocation.text, span, elements, leaf.element)
                )
        # A builder refers to the reader: kept here, it would make a cycle (see
        # `tests/test_reference_cycles.py`).
        self.reader.pending = []
        first.extend(lowered)
        return first

    def _small_statement(self, node: cst.BaseSmallStatement) -> _Lowered:
        if isinstance(node, cst.Assign) and all(_shape_target(t.target) for t in node.targets):
            lowered = self._shape_assignment(node)
        elif isinstance(node, cst.Expr) and registered_buffer(node.value) is not None:
            # `self.register_buffer("freqs_cos", freqs_cos)`: as `self.freqs_cos = freqs_cos`
            target, value = registered_buffer(node.value)  # type: ignore[misc]
            lowered = self._assign(target, value, node)
        elif isinstance(node, cst.Assign) and _none_bound(node):
            lowered = _Lowered()  # `loss = None`: a name for nothing, no work
            for target in node.targets:
                bound = bound_name(target.target)
                assert bound is not None  # `_none_bound` checked it
                self.scope.names[bound] = Scalar(dtypes.BOOL, True, "None", constant=True)
        elif isinstance(node, cst.Assign):
            lowered = self._assign(node.targets[-1].target, node.value, node)
            # `a = b = expr`: computed once (into the last target), the others name it;
            # `A[s] = B[t] = expr` stores the one result twice: a copy from the last.
            last = bound_name(node.targets[-1].target)
            for other in node.targets[:-1]:
                if isinstance(other.target, cst.Subscript):
                    copy = self._assign(other.target, node.targets[-1].target, node)
                    lowered.nodes += copy.nodes
                    lowered.conventions += copy.conventions
                    lowered.eager = _merge(lowered.eager, copy.eager)
                    continue
                name = bound_name(other.target)
                binding = self.scope.names.get(last) if last is not None else None
                if name is None or binding is None:
                    self.reader.unsupported(
                        node, f"chained assignment to `{self.names.text(other.target)}`"
                    )
                    continue
                self.scope.names[name] = binding
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            lowered = self._assign(node.target, node.value, node)
        elif isinstance(node, cst.AugAssign):
            lowered = self._augmented(node)
        elif isinstance(node, cst.Return) and isinstance(node.value, cst.Tuple):
            lowered = _Lowered()
            for position, element in enumerate(node.value.elements):
                part = self._assign(cst.Name(f"return{position}"), element.value, node)
                lowered.nodes += part.nodes
                lowered.conventions += part.conventions
                lowered.eager = _merge(lowered.eager, part.eager)
            self.returns.append(None)  # a tuple: a call's value is not one array
            self.tuple_returns.append(
                tuple(self.scope.names.get(f"return{p}") for p in range(len(node.value.elements)))
            )
        elif isinstance(node, cst.Return) and node.value is not None:
            lowered = self._assign(cst.Name("return"), node.value, node)
            self.returns.append(self.scope.names.get("return"))
        elif isinstance(node, cst.Expr) and isinstance(
            node.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
        ):
            lowered = _Lowered()  # a docstring
        elif isinstance(node, cst.Expr) and _out_argument(node.value, self.names) is not None:
            lowered = self._into_out(node.value, node)
        elif isinstance(node, cst.Expr):
            value = self.reader.value(node.value)
            lowered = self._scalar_statement(
                value if isinstance(value, (Leaf, Scalar, Apply, Reduce, Contract)) else None, node
            )
        elif isinstance(node, cst.Assert):
            self._divisibility(node.test)
            lowered = _Lowered()
        elif isinstance(node, (cst.Break, cst.Continue)):
            word = "break" if isinstance(node, cst.Break) else "continue"
            self.reader.note(
                UnknownKind.UNSUPPORTED, node, f"`{word}`: trip counts assume it is not taken"
            )
            lowered = _Lowered()
        else:
            lowered = _Lowered()
        if self.reader.unknowns:
            span = self.names.span(node)
            lowered.nodes.append(
                Statement(
                    span, self.names.text(node), FlopTally(), unknowns=tuple(self.reader.unknowns)
                )
            )
        return lowered

    def _divisibility(self, test: cst.BaseExpression) -> None:
        """`assert n_heads % n_kv_heads == 0` (llama2.c's `Attention`): the floor division
        of those two sizes is exact from here on (`n_heads // n_kv_heads`)."""
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(test.left, cst.BinaryOperation)
            and isinstance(test.left.operator, cst.Modulo)
            and number_literal(test.comparisons[0].comparator) == 0
        ):
            return
        saved = self.reader.unknowns
        self.reader.unknowns = []
        sides = [self.reader.value(test.left.left), self.reader.value(test.left.right)]
        self.reader.unknowns = saved
        if all(isinstance(v, Integer) and v.value is not None for v in sides):
            a, b = (v.value for v in sides)  # type: ignore[union-attr]
            self.reader.divisible.add((a, b))

    def _shape_assignment(self, node: cst.Assign) -> _Lowered:
        """`x.shape = n * m` (`a.shape = b.shape = (n, m)`): each name rebound to its array
        under the new shape; no data moves."""
        for target in node.targets:
            assert isinstance(target.target, cst.Attribute)
            owner = target.target.value
            assert isinstance(owner, cst.Name)
            base = self.reader.value(owner)
            if base is None:
                continue
            reshaped = None
            if not isinstance(base, Leaf):
                self.reader.unsupported(target.target, f"`{self.names.text(target.target)} =`")
            else:
                reshaped = shape_assigned(self.reader, base, node.value, node)
            self.scope.names[owner.value] = reshaped or Opaque(
                owner.value, "its shape assignment could not be analyzed"
            )
        return _Lowered()

    def _binds_generator(self, value_node: cst.BaseExpression) -> bool:
        if not isinstance(value_node, cst.Call):
            return False
        module, _, name = (self.names.canonical(value_node.func) or "").rpartition(".")
        return module == "numpy.random" and name in GENERATORS

    def _assign(
        self,
        target: cst.BaseExpression | None,
        value_node: cst.BaseExpression,
        node: cst.CSTNode,
        given: tuple[Value | None] | None = None,
    ) -> _Lowered:
        """`target = value_node`; with `given`, the value already read (one part of what
        a call returns, `KE[0], PE[0] = energy(...)`)."""
        span = self.names.span(node)
        text = self.names.text(node)
        if isinstance(target, cst.Tuple):
            if grids.is_grid(self.reader, value_node):
                return self._unpack_grid(target, value_node)
            return self._unpack(target, value_node)
        if isinstance(value_node, cst.IfExp) and target is not None:
            taken = decided(self.reader, value_node.test)
            if taken is not None:  # `a if args.n_kv_heads is None else b`, a size: `b`
                self._note_decided(value_node.test, taken, self.names.span(value_node))
                chosen = value_node.body if taken else value_node.orelse
                return self._assign(target, chosen, node, given)
            return self._ternary(target, value_node, node)
        if isinstance(target, cst.Subscript):
            masked = self._masked_store(target, value_node, node)
            if masked is not None:
                return masked
        bound = bound_name(target)  # `x` or `self.x`
        if bound is not None and _out_argument(value_node, self.names) is not None:
            # `z = np.add(a, b, out=c)`: computed into c; z names c.
            lowered = self._into_out(value_node, node)
            out = self.reader.value(_out_argument(value_node, self.names))  # type: ignore[arg-type]
            if isinstance(out, Leaf):
                self.scope.names[bound] = out
            return lowered
        if target is None:
            self.reader.unsupported(node, "chained assignment")
            return _Lowered()
        if (
            bound is not None
            and isinstance(value_node, cst.Call)
            and self.names.canonical(value_node.func) == "builtins.slice"
        ):
            # `s = slice(1, n - 1)`: an index for later subscripts (`a[s]`), not a value.
            made = self.reader.slice_object(value_node)
            if made is not None:
                self.scope.slices[bound] = made
                self.scope.names[bound] = Opaque(bound, SLICE_REASON)
                return _Lowered()
        if (
            bound is not None
            and "." not in bound
            and isinstance(value_node, cst.Call)
            and isinstance(value_node.func, cst.Name | cst.Attribute)
        ):
            kind = self.names.canonical(value_node.func)
            if kind in FLAX_LAYERS:  # `wte = nn.Embed(V, C, name="wte")` under `@nn.compact`
                flax_layer = read_flax_layer(self.reader, value_node, kind, dtypes.FLOAT32)
                if flax_layer is not None:
                    self.scope.layers[bound] = flax_layer
                return _Lowered()
        if bound is not None and bound.startswith("self.") and isinstance(value_node, cst.ListComp):
            listed = read_submodule_list(self.reader, value_node)  # `[Block(c) for _ in ...]`
            if listed is not None:
                self.scope.layers[bound] = listed
                return _Lowered()
        if bound is not None and bound.startswith("self.") and isinstance(value_node, cst.Call):
            built = self._built_layer(bound, value_node, node)
            if built is not None:
                return built
        if (
            bound is not None
            and bound.startswith("self.")
            and isinstance(value_node, cst.Name)
            and isinstance(self.scope.names.get(value_node.value), Opaque)
            and self.scope.names[value_node.value].reason == SETTINGS_REASON  # type: ignore[union-attr]
        ):
            self.scope.names[bound] = self.scope.names[value_node.value]  # `self.config = config`
            return _Lowered()
        if bound is not None and self._names_configuration(bound, value_node):
            return _Lowered()
        if bound is not None and isinstance(value_node, cst.ListComp):
            extents = shape_list(self.reader, value_node)  # `[d if ... for i, d in ...]`
            if extents is not None:
                self.scope.shapes[bound] = tuple(extents)
                self.scope.names[bound] = Opaque(bound, "a list of extents")
                return _Lowered()
        if bound is not None and self._binds_generator(value_node):
            # `rng = np.random.default_rng(0)`: its methods make random arrays.
            self.scope.names[bound] = Opaque(bound, GENERATOR_REASON)
            return _Lowered()
        value = self.reader.value(value_node) if given is None else given[0]
        if not self._selections_placed(value, bound is not None, node):
            return _Lowered()
        if bound is not None and bound.startswith("return") and isinstance(value, Leaf):
            self.escaping.add(value.array)  # `return y`: y is handed back
        if bound is not None:
            name = bound
            if value is None:
                self.scope.names[name] = Opaque(
                    name, f"its value `{self.names.text(value_node)}` could not be analyzed"
                )
                return _Lowered()
            if isinstance(value, Integer):
                self.scope.names[name] = value
                return _Lowered()
            if isinstance(value, Allocation):
                return self._allocated(name, value, text, span)
            if isinstance(value, Leaf) and (value.shape or isinstance(value_node, cst.Name)):
                self.scope.names[name] = value  # a view or another name: no copy, no traffic
                return _Lowered()
            if isinstance(value, Scalar) and value.constant and value.element == dtypes.BOOL:
                self.scope.names[name] = value  # `self.flash = True`: a flag (`flags.py`)
                return _Lowered()
            if not is_array(value):
                self.scope.names[name] = Scalar(value.element, value.weak, name)
                return self._scalar_statement(value, node)
            leaf = leaf_for(self._fresh(name, span), value.shape, value.element, span)
            lowered = self._array_statement(Target(leaf), value, text, span, rebinds=True)
            self.scope.names[name] = leaf
            return lowered
        if isinstance(target, cst.Subscript):
            view = self.reader.value(target)
            if value is None or view is None:
                return _Lowered()
            if not isinstance(view, Leaf):
                self.reader.unsupported(target, f"assignment to `{self.names.text(target)}`")
                return _Lowered()
            array_value = self.reader.array(value_node) if isinstance(value, Integer) else value
            if isinstance(array_value, Allocation):
                array_value = self.reader.materialize(array_value, value_node)
            if array_value is None:
                return _Lowered()
            return self._array_statement(Target(view), array_value, text, span, rebinds=False)
        self.reader.unsupported(node, f"assignment to `{self.names.text(target)}`")
        return _Lowered()

    def _fresh(self, name: str, span: Span) -> str:
        """The array `name = value` writes: `name`, unless `name` is now a reshaped or
        transposed view of an array of that name (`y = y.transpose(1, 2).contiguous()
        .view(B, T, C)`, then `y = self.c_proj(y)`), which the value may read: a new array
        then, `name_L<line>`, or its reads and the new writes would be one array's."""
        old = self.scope.names.get(name)
        if not (isinstance(old, Leaf) and old.array == name):
            return name
        if old.index == leaf_for(name, old.shape, old.element, old.span).index:
            return name
        return f"{name}_L{span.line}"

    def _allocated(self, name: str, value: Allocation, text: str, span: Span) -> _Lowered:
        """`name = np.zeros(...)` or a constructor: a new array bound to `name`, and what
        the constructor writes into it."""
        leaf = leaf_for(name, value.shape, value.element, span)
        self.scope.names[name] = leaf
        if value.build is not None:
            return self._construct(leaf, value, text, span)
        if not value.fills:
            return _Lowered()
        fill = Scalar(value.element, False, value.text, constant=True)
        return self._array_statement(Target(leaf), fill, text, span, rebinds=False)

    def _unpack_grid(self, target: cst.Tuple, value_node: cst.BaseExpression) -> _Lowered:
        """`I, J = np.mgrid[0:n, 0:m]` (or `ogrid`, `meshgrid`): each name a new array
        (`grids.py`); an `mgrid`/`ogrid` part remembers the integer it holds."""
        names = [bound_name(e.value) for e in target.elements]
        parts = grids.grid_parts(self.reader, value_node)
        if parts is not None and len(parts) != len(names):
            self.reader.unsupported(
                target, f"unpacking the {len(parts)} arrays of `{self.names.text(value_node)}`"
            )
            parts = None
        if parts is None or any(n is None for n in names):
            for name in names:
                if name is not None:
                    self.scope.names[name] = Opaque(name, "its grid could not be analyzed")
            if parts is not None:
                self.reader.unsupported(target, f"unpacking `{self.names.text(value_node)}`")
            return _Lowered()
        lowered = _Lowered()
        span, text = self.names.span(target), self.names.text(value_node)
        for name, part in zip(names, parts, strict=True):
            assert name is not None
            self.scope.grids.pop(name, None)
            if isinstance(part.value, Leaf):
                self.scope.names[name] = part.value  # `copy=False`: a view
                continue
            lowered.extend(self._allocated(name, part.value, text, span))
            bound = self.scope.names[name]
            if part.holds is not None and isinstance(bound, Leaf):
                self.scope.grids[name] = (bound, part.holds)
        return lowered

    def _selections_placed(self, value: object, root: bool, node: cst.CSTNode) -> bool:
        """False, with a located note, when a boolean selection sits where its
        data-dependent length cannot be lined up with anything (`y[:] = x[m]`, `y +=
        x[m]`): only a value assigned to a name or returned, its elementwise work and
        full reductions of it are modeled (`selections.py`)."""
        if not isinstance(value, (Leaf, Scalar, Apply, Reduce, Contract, Select)):
            return True
        misplaced = misplaced_selection(value, root)
        if misplaced is None:
            return True
        self.reader.unsupported(
            node,
            f"`{self.names.text(node)}`: the boolean selection `{misplaced.text}` has a "
            "data-dependent length; only assigning it to a name, returning it, elementwise "
            "work on it and full reductions of it are modeled",
        )
        return False

    def _construct(self, leaf: Leaf, value: Allocation, text: str, span: Span) -> _Lowered:
        """A library constructor's work on its new array `leaf` (`library_calls.py`): its
        copies as statements, then its own loops (one eager call: a LAPACK routine)."""
        assert value.build is not None
        built = value.build(leaf, self.namer, span)
        lowered = _Lowered(conventions=list(built.conventions))
        for view, content in built.stores:
            # A computed value stored whole (`y = y * step + start`): NumPy's last call
            # writes it there, with no copy; so is a helper's argument (`f(x @ w + b)`):
            # Python passes the array the expression made.
            whole = (
                view == leaf or view.array in built.arguments or not built.library
            ) and isinstance(content, (Apply, Reduce, Contract))
            part = self._array_statement(Target(view), content, text, span, rebinds=whole)
            lowered.nodes += part.nodes
            lowered.conventions += part.conventions  # `F.gelu(x @ w)`: the argument's product
            lowered.eager = _merge(lowered.eager, part.eager)
        if built.nodes:
            lowered.nodes += built.nodes
            if self._eager_wanted():
                call = Region("nest", built.nodes, span, contraction=built.library)
                calls = list(built.dispatches) or [call]
                lowered.eager = _merge(lowered.eager, EagerCalls(calls, []))
        for region in built.regions:
            if self.at_top:
                lowered.regions.append((len(lowered.nodes), region))
            else:
                lowered.nodes += region.body
                self.spliced_conventions += region.conventions
                if self.loop_depth == 0:
                    lowered.eager = _merge(lowered.eager, EagerCalls([region], []))
                elif self.loop_calls is not None:
                    # A helper's region spliced into a loop: its own calls (each repeated
                    # over the helper's loops) run once per pass of the caller's too.
                    calls = list(region.eager_calls) or [Region("nest", region.body, span)]
                    lowered.eager = _merge(
                        lowered.eager, EagerCalls(calls, list(region.temporaries))
                    )
        return lowered

    def _into_out(self, call: cst.BaseExpression, node: cst.CSTNode) -> _Lowered:
        """`np.multiply(x, 2.0, out=y)`: the call's value written into `y` itself (no
        temporary and no copy: NumPy writes its result there)."""
        assert isinstance(call, cst.Call)
        out_node = _out_argument(call, self.names)
        assert out_node is not None
        view = self.reader.value(out_node)
        value = self.reader.value(call)  # calls read positional arguments: `out=` is ours
        if view is None or value is None:
            return _Lowered()
        if not isinstance(view, Leaf) or isinstance(value, (Integer, Allocation)):
            self.reader.unsupported(node, f"`out=` in `{self.names.text(node)}`")
            return _Lowered()
        span = self.names.span(node)
        return self._array_statement(Target(view), value, self.names.text(node), span, rebinds=True)

    def _unpack(self, target: cst.Tuple, value_node: cst.BaseExpression) -> _Lowered:
        """`n, m = A.shape` (or PyTorch's `A.size()`): bind each size; anything else is not
        understood."""
        shaped = _shape_owner(value_node, self.reader.framework == "torch")
        if shaped is not None:
            base = self.reader.value(shaped)
            names = [e.value for e in target.elements]
            if (
                isinstance(base, Leaf)
                and len(names) == len(base.shape)
                and all(isinstance(n, cst.Name) for n in names)
            ):
                for name_node, extent in zip(names, base.shape, strict=True):
                    assert isinstance(name_node, cst.Name)
                    self.scope.names[name_node.value] = Integer(extent, name_node.value)
                return _Lowered()
        if (
            isinstance(value_node, cst.Tuple)
            and len(value_node.elements) == len(target.elements)
            and all(isinstance(e.value, cst.Name) for e in target.elements)
        ):
            # `I, J, K = a.shape[0], a.shape[1], a.shape[2]`: integers, all read first.
            noted, constructed = len(self.reader.unknowns), len(self.reader.pending)
            values = [self.reader.value(e.value) for e in value_node.elements]
            if not all(isinstance(v, Integer) for v in values):
                del self.reader.unknowns[noted:]  # not integers: read again below
                del self.reader.pending[constructed:]
            else:
                for element, value in zip(target.elements, values, strict=True):
                    assert isinstance(element.value, cst.Name) and isinstance(value, Integer)
                    self.scope.names[element.value.value] = value
                return _Lowered()
        if (
            isinstance(value_node, cst.Tuple)
            and len(value_node.elements) == len(target.elements)
            and all(isinstance(e.value, cst.Name) for e in target.elements)
            and not any(
                target.elements[i].value.value in _names_read(value_node.elements[j].value)  # type: ignore[attr-defined]
                for j in range(len(target.elements))
                for i in range(j)
            )
        ):
            # `xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)`, `c, s = c.view(a), s.view(a)`:
            # no value reads a target assigned before it, so assigning each in turn is the
            # same as all at once.
            lowered = _Lowered()
            for element, value_element in zip(target.elements, value_node.elements, strict=True):
                outer, self.reader.pending = self.reader.pending, []
                made = self._assign(element.value, value_element.value, value_node)
                lowered.extend(self._constructed_first(made, value_node))  # each in turn
                self.reader.pending = outer
            return lowered
        pieces = split_pieces(value_node, len(target.elements), self.reader)
        if pieces is not None:
            return self._split(target, pieces, value_node)
        sections = self._split_sections(target, value_node)
        if sections is not None:
            return sections
        parts = self._returned_parts(value_node, len(target.elements))
        if parts is not None:
            lowered = _Lowered()
            for element, part in zip(target.elements, parts, strict=True):
                lowered.extend(self._assign(element.value, value_node, value_node, (part,)))
            return lowered
        self.reader.unsupported(target, f"unpacking `{self.names.text(value_node)}`")
        return _Lowered()

    def _returned_parts(
        self, value_node: cst.BaseExpression, count: int
    ) -> list[Value | None] | None:
        """`KE[0], PE[0] = energy(...)`, `a, b = f(...)`: each value of the tuple a helper
        of this module returns (its work counted once), or None."""
        if not isinstance(value_node, cst.Call) or not isinstance(value_node.func, cst.Name):
            return None
        definition = self.scope.helpers.get(value_node.func.value)
        if definition is None:
            return None
        return self.reader.inline_parts(value_node, definition, count)

    def _split(self, target: cst.Tuple, pieces: Pieces, node: cst.BaseExpression) -> _Lowered:
        """`q, k, v = x.split(n, dim=2)`: the tensor computed once (or named), each target
        a view of its part (`splits.py`): the parts move nothing of their own."""
        lowered = _Lowered()
        base = pieces.base
        if not isinstance(base, cst.Name):
            name = f"split_L{self.names.span(node).line}"
            lowered = self._assign(cst.Name(name), base, node)
            base = cst.Name(name)
        whole = self.reader.value(base)
        size = self.reader.value(pieces.size)
        if not isinstance(whole, Leaf) or not isinstance(size, Integer) or size.value is None:
            self.reader.unsupported(node, f"`{self.names.text(node)}`: its parts' extents")
            return lowered
        if not -len(whole.shape) <= pieces.axis < len(whole.shape):
            self.reader.unsupported(node, f"`{self.names.text(node)}`: axis out of range")
            return lowered
        if pieces.kind == "unbind":
            if whole.shape[pieces.axis] != size.value:
                message = f"`{self.names.text(node)}`: {size.value} names for an axis of "
                self.reader.unsupported(node, message + str(whole.shape[pieces.axis]))
                return lowered
        else:
            width = size.value
            if pieces.kind == "chunk":
                width = whole.shape[pieces.axis] / size.value
            self.scope.names[pieces.width_name] = Integer(width, pieces.width_name)
        for index, element in enumerate(target.elements):
            part = pieces.part(base, index)
            more = self._assign(element.value, part, node)
            lowered.nodes += more.nodes
            lowered.conventions += more.conventions
            lowered.eager = _merge(lowered.eager, more.eager)
        return lowered

    def _split_sections(self, target: cst.Tuple, value_node: cst.BaseExpression) -> _Lowered | None:
        """`q, k, v = jnp.split(x, 3, axis=-1)` (`array_split`, JAX's `x.split(3, -1)`):
        each name one equal part of `x` along the axis (a computed `x` is computed first):
        a view in NumPy, a copy in JAX (which has no views); None when this is no split of
        literal sections and axis."""
        if not isinstance(value_node, cst.Call):
            return None
        canonical = self.names.canonical(value_node.func)
        arguments = [a.value for a in value_node.args if a.keyword is None]
        method = isinstance(value_node.func, cst.Attribute) and (
            canonical is None or not isinstance(value_node.func.value, cst.Name | cst.Attribute)
        )  # `x.split(3)`, `(x @ w).split(3)`; not `np.split(...)`
        if canonical in ("numpy.split", "numpy.array_split") and arguments:
            base_node, rest = arguments[0], arguments[1:]
        elif method and self.reader.framework == "jax" and value_node.func.attr.value == "split":  # type: ignore[attr-defined]
            base_node, rest = value_node.func.value, arguments  # type: ignore[attr-defined]
        else:
            return None
        axis_node = next((a.value for a in value_node.args if _keyword_is(a, "axis")), None)
        axis_node = axis_node or (rest[1] if len(rest) > 1 else None)
        sections = number_literal(rest[0]) if rest else None
        axis = number_literal(axis_node) if axis_node is not None else 0
        names = [e.value for e in target.elements]
        if not (
            isinstance(sections, int) and isinstance(axis, int) and sections == len(names)
        ) or not all(isinstance(n, cst.Name) for n in names):
            return None
        lowered = _Lowered()
        base = self.reader.value(base_node)
        span = self.names.span(value_node)
        if base is None:
            return lowered
        if not isinstance(base, Leaf):
            if isinstance(base, Integer | Allocation) or not is_array(base):
                self.reader.unsupported(
                    value_node, f"`{self.names.text(value_node)}`: not an array"
                )
                return lowered
            leaf = leaf_for(self.namer.fresh("_split"), base.shape, base.element, span)
            lowered = self._array_statement(
                Target(leaf), base, self.names.text(base_node), span, rebinds=True
            )
            base = leaf
        rank = len(base.shape)
        if not -rank <= axis < rank:
            self.reader.unsupported(value_node, f"`{self.names.text(value_node)}`: axis {axis}")
            return lowered
        axis %= rank
        width = sympy.expand(base.shape[axis] / sections)
        for part, name in enumerate(names):
            assert isinstance(name, cst.Name)
            view = sliced(base, axis, sympy.expand(part * width), width)
            copied = self.reader.elementwise("free", "split", (view,), value_node)
            if self.reader.framework != "jax" or copied is None:
                self.scope.names[name.value] = replace(view, text=f"{name.value}")
                continue
            # JAX has no views: each part is a new array (eagerly, the `split` dispatch)
            leaf = leaf_for(name.value, view.shape, view.element, span)
            lowered.extend(self._array_statement(Target(leaf), copied, name.value, span, True))
            self.scope.names[name.value] = leaf
        return lowered

    def _augmented(self, node: cst.AugAssign) -> _Lowered:
        operator = _AUGMENTED.get(type(node.operator).__name__)
        span = self.names.span(node)
        text = self.names.text(node)
        current = self.reader.value(node.target)
        if isinstance(current, Integer) and isinstance(node.target, cst.Name):
            name = node.target.value
            value_now = self.reader.value(node.value)
            if isinstance(value_now, Integer) or value_now is None or operator is None:
                self.scope.names[name] = Integer(None, name)
                return _Lowered()
            if isinstance(value_now, Allocation):
                return _Lowered()
            # `s = 0` then `s += x[i] * y[i]`: Python makes `s` a float (or an array).
            element = dtypes.promote(dtypes.PYTHON_INT, True, value_now.element, value_now.weak)
            if is_array(value_now):
                self.reader.unsupported(node, f"`{text}`: an integer grown into an array")
                return _Lowered()
            self.scope.names[name] = Scalar(element, value_now.weak, name)
            nodes = NestBuilder(self.namer, span).assign(Target(None, operator), value_now, text)
            return _Lowered(nodes)
        value = self.reader.array(node.value)
        if operator is None:
            self.reader.unsupported(node, f"operator in `{text}`")
            return _Lowered()
        if not self._selections_placed(value, False, node):
            return _Lowered()
        if current is None or value is None or isinstance(current, Allocation):
            return _Lowered()
        if isinstance(current, Leaf):
            return self._array_statement(
                Target(current, operator), value, text, span, rebinds=False
            )
        if isinstance(current, Scalar):
            updated = bound_name(node.target)
            if updated is not None and updated in self.candidates and value.shape:
                # `x1 += A @ y` with x1 taken as a scalar: it is an array of that rank.
                self.rank_hints[updated] = len(value.shape)
                return _Lowered()
            nodes = NestBuilder(self.namer, span).assign(Target(None, operator), value, text)
            return _Lowered(nodes)
        self.reader.unsupported(node, f"`{text}` on a computed value")
        return _Lowered()

    def _array_statement(
        self, target: Target, value: ArrayValue, text: str, span: Span, rebinds: bool
    ) -> _Lowered:
        leaf = target.leaf
        if (
            leaf is not None
            and leaf.array in self.candidates
            and len(target.shape) < len(value.shape)
        ):
            # `C[:] = A @ B` with `C` inferred of rank 1: the store says it has more axes.
            base = self.scope.names.get(leaf.array)
            if isinstance(base, Leaf):
                missing = len(value.shape) - len(target.shape)
                self.rank_hints[leaf.array] = len(base.shape) + missing
        elif len(target.shape) == len(value.shape):
            self.reader.unify(target.shape, value.shape)
        if leaf is not None and not self._stored_shapes_agree(leaf, value, text, span):
            return _Lowered()
        nodes = NestBuilder(self.namer, span).assign(target, value, text)
        lowered = _Lowered(nodes, conventions=_conventions(value))
        is_call = target.shape or is_array(value)
        if is_call and self._eager_wanted():
            lowered.eager = eager_calls(target, value, self.namer, span, rebinds)
        if is_call and target.shape and self.loop_depth > 0:
            self.loop_vector_span = self.loop_vector_span or span
        return lowered

    def _names_configuration(self, bound: str, value_node: cst.BaseExpression) -> bool:
        """`config = self.config` in a Flax module: `config` names the configuration its
        sizes are read from (`config.n_embd`), no array."""
        binding = self.scope.names.get(self.names.text(value_node))
        if not (isinstance(binding, Opaque) and binding.reason == CONFIGURATION_REASON):
            return False
        self.scope.names[bound] = binding
        return True

    def _eager_wanted(self) -> bool:
        """At the top level, or inside a top-level loop whose eager view is being built."""
        return self.loop_depth == 0 or self.loop_calls is not None

    def _collect_in_loop(self, lowered: _Lowered, span: Span) -> None:
        """A statement inside explicit loops: its NumPy calls (or, for element code, its
        own reads and writes) run once per pass of the loops around it (`Region.repeat`).
        Where the passes are not counted loops (a `while`, an `if`, `min`/`max` bounds),
        the loop keeps the fused view only."""
        if self.loop_calls is None or not (lowered.nodes or lowered.eager):
            return
        loops = tuple(self.enclosing)
        if (
            None in self.branch_weights
            or self.body_copies > 1
            or len(loops) != self.loop_depth
            or any(loop.trip.has(sympy.Min, sympy.Max) for loop in loops)
        ):
            self.loop_eager_complete = False
            return
        # Under an `if` on data or sizes, a call runs on the share of passes taking it.
        weight = sympy.Mul(*(w for w in self.branch_weights if w is not None))
        if lowered.eager is not None:
            if any(_has_loop(call.body) for call in lowered.eager.regions):
                self.loop_vector_span = self.loop_vector_span or span
            for call in lowered.eager.regions:
                repeat = (*loops, *call.repeat)
                self.loop_calls.append(replace(call, repeat=repeat, weight=call.weight * weight))
            self.loop_temporaries += lowered.eager.temporaries
        elif lowered.nodes:
            kind = "straight"
            if _has_loop(lowered.nodes):
                # A statement with loops of its own (`A[i, j] -= A[i, :j] @ A[:j, j]`)
                # calls NumPy on arrays: the loop has vector work.
                self.loop_vector_span = self.loop_vector_span or span
                kind = "nest"
            self.loop_calls.append(
                Region(kind, tuple(lowered.nodes), span, repeat=loops, weight=weight)
            )

    def _stored_shapes_agree(self, leaf: Leaf, value: ArrayValue, text: str, span: Span) -> bool:
        """A store of `value` into `leaf` (`A[0:NI, 0:NJ] = B[0:NK, 0:NK]`): extents that are
        different literals are an error (NumPy raises; not counted); symbolic extents that
        are not provably equal are taken as equal, an assumption with its line."""
        mismatch = literal_mismatch(leaf.shape, value.shape)
        if mismatch is not None:
            message = (
                f"`{text}`: a value of shape {shape_text(value.shape)} cannot be stored into "
                f"shape {shape_text(leaf.shape)} (NumPy raises a ValueError)"
            )
            self.reader.errors.append(Diagnostic(span, Severity.ERROR, message))
            self.function_unknowns.append(
                Unknown(UnknownKind.UNKNOWN_SHAPE, f"{message}; not counted", span)
            )
            return False
        free = set(self.reader.free)
        for stored, given in zip(reversed(leaf.shape), reversed(value.shape), strict=False):
            if given == 1 or same_extent(stored, given):
                continue
            if (stored.free_symbols | given.free_symbols) & free:
                continue  # an inferred extent: matched by `unify` and a second lowering
            message = (
                f"`{text}`: extents {given} and {stored} are taken as equal "
                "(NumPy raises where they differ)"
            )
            self.function_unknowns.append(Unknown(UnknownKind.ASSUMPTION, message, span))
        return True

    def _note_once(self, span: Span) -> None:
        message = (
            "vectorized statements inside an explicit loop: only the fused view is counted there"
        )
        if not any(u.message == message for u in self.function_unknowns):
            self.function_unknowns.append(Unknown(UnknownKind.UNSUPPORTED, message, span))

    def _scalar_statement(self, value: ArrayValue | None, node: cst.CSTNode) -> _Lowered:
        if value is None:
            return _Lowered()
        span = self.names.span(node)
        if value.shape and isinstance(value, Leaf):
            return _Lowered()  # an array itself (`f(A)` handing back `A`): nothing computed
        if value.shape:
            # An array expression whose result is dropped (`a + b` alone): nothing to
            # assign it to, so say it is not counted rather than guess a destination.
            message = "array expression whose result is discarded: not counted"
            self.function_unknowns.append(Unknown(UnknownKind.UNSUPPORTED, message, span))
            return _Lowered()
        nodes = NestBuilder(self.namer, span).assign(Target(None), value, self.names.text(node))
        return _Lowered(nodes)

    # ---- control flow -------------------------------------------------------------------

    def _for(self, node: cst.For) -> list[Node]:
        listed = self._module_list_loop(node)
        if listed is not None:
            return listed
        iterated = self._iteration(node)
        if iterated is not None:
            return iterated
        header = self._range(node)
        if header is None:
            # What the reader noted of the bounds (`m` varies, `10**30` is too large) is why.
            why = self.reader.unknowns[0].message if self.reader.unknowns else ""
            return [self._loop_with_unknown_trip(node, node.body, node.target, why)]
        var, step, choices = header
        assert isinstance(node.iter, cst.Call)
        arguments = [a.value for a in node.iter.args]
        tile_trip = tile_point_trip(self.reader, arguments, self.enclosing) if step == 1 else None
        if tile_trip is not None:
            start = sympy.expand(choices[0][0])
            return [self._loop(var, start, 1, tile_trip, node, _statements(node.body))]
        copies = self.body_copies * len(choices)
        if copies > _MAX_BODY_COPIES:
            # Each alternative lowers the body once: nested `min`/`max` bounds multiply.
            why = f"more than {_MAX_BODY_COPIES} combinations of `min`/`max` bounds"
            return [self._loop_with_unknown_trip(node, node.body, node.target, why)]
        variants: list[tuple[tuple[sympy.Basic, ...], Node]] = []
        outer, self.body_copies = self.body_copies, copies
        try:
            for start, stop, conditions in choices:
                distance = stop - start if step.is_positive else start - stop
                if step.is_Integer and abs(step) == 1:
                    trip = distance
                else:
                    trip = sympy.ceiling(distance / abs(step))
                trip = never_below_zero(sympy.expand(trip))
                loop = self._counted_loop(var, sympy.expand(start), step, trip, node)
                variants.append((conditions, loop))
        finally:
            self.body_copies = outer
        return [self._chosen(variants, node)]

    def _built_layer(self, bound: str, value_node: cst.Call, node: cst.CSTNode) -> _Lowered | None:
        """`self.fc1 = nn.Linear(d, 4 * d)`, `self.attn = Block(config)`, a module list or
        dict: what `__init__` builds, called later (`modules.py`); None for other calls."""
        kind = self.names.canonical(value_node.func)
        owner = value_node.func
        if isinstance(owner, cst.Name) and owner.value in self.scope.classes:
            # `self.attn = CausalSelfAttention(config)`: a submodule, called later.
            definition = self.scope.classes[owner.value]
            read = read_flax_submodule if is_flax_module(definition, self.names) else read_submodule
            self.scope.layers[bound] = read(self.reader, value_node, definition)
            return _Lowered()
        if kind == "torch.nn.ModuleDict":  # `nn.ModuleDict(dict(wte=..., h=...))`
            return self._module_dict(bound, value_node, node)
        if kind == "torch.nn.ModuleList":  # `nn.ModuleList([Block(c) for _ in ...])`
            listed = read_module_list(self.reader, value_node, self.scope.classes)
            if listed is not None:
                self.scope.layers[bound] = listed
            return _Lowered()
        if kind in LAYERS:  # `self.fc1 = nn.Linear(d, 4 * d)`: a layer, called later
            layer = read_layer(self.reader, value_node, kind, self.default_element)
            if layer is not None:
                self.scope.layers[bound] = layer
            return _Lowered()
        if kind in FLAX_LAYERS:  # `self.c_fc = nn.Dense(4 * n_embd)` in a Flax setup()
            flax_layer = read_flax_layer(self.reader, value_node, kind, dtypes.FLOAT32)
            if flax_layer is not None:
                self.scope.layers[bound] = flax_layer
            return _Lowered()
        return None

    def _module_dict(self, bound: str, value_node: cst.Call, node: cst.CSTNode) -> _Lowered:
        """`self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, d), h=...))` (nanoGPT):
        each entry built as `self.transformer.wte = nn.Embedding(V, d)` would be."""
        entries: list[tuple[str, cst.BaseExpression]] = []
        argument = value_node.args[0].value if len(value_node.args) == 1 else None
        if (
            isinstance(argument, cst.Call)
            and self.names.canonical(argument.func) == "builtins.dict"
        ):
            entries = [(a.keyword.value, a.value) for a in argument.args if a.keyword is not None]
        elif isinstance(argument, cst.Dict):
            for element in argument.elements:
                if isinstance(element, cst.DictElement) and isinstance(
                    element.key, cst.SimpleString
                ):
                    entries.append((str(element.key.evaluated_value), element.value))
        if not entries:
            self.reader.unsupported(value_node, f"`{self.names.text(value_node)}`: its entries")
            return _Lowered()
        for key, entry in entries:
            built = (
                self._built_layer(f"{bound}.{key}", entry, node)
                if isinstance(entry, cst.Call)
                else None
            )
            if built is None:
                self.reader.unsupported(entry, f"`{self.names.text(entry)}` in a module dict")
        return _Lowered()

    def _module_list_loop(self, node: cst.For) -> list[Node] | None:
        """`for _ in range(n): self.layers.append(Block(i, args))` fills a module list with
        `n` blocks; `for block in self.h:` calls each, over a PyTorch or a Flax list: a loop
        of `count` passes with `block` the list's submodule (`layers.ModuleList`). None for
        any other loop."""
        body = _statements(node.body)
        first = body[0] if len(body) == 1 else None
        small = first.body[0] if isinstance(first, cst.SimpleStatementLine) else None
        if (
            isinstance(small, cst.Expr)
            and isinstance(small.value, cst.Call)
            and isinstance(small.value.func, cst.Attribute)
            and small.value.func.attr.value == "append"
            and len(small.value.args) == 1
        ):
            owner = self.names.text(small.value.func.value)
            listed = self.scope.layers.get(owner)
            if isinstance(listed, ModuleList) and listed.element is None:
                count = range_count(self.reader, node.iter)
                element = submodule_of(self.reader, small.value.args[0].value, self.scope.classes)
                if count is not None and element is not None:
                    self.scope.layers[owner] = ModuleList(element, count)
                    return []
        listed = self.scope.layers.get(self.names.text(node.iter))
        if not isinstance(listed, ModuleList) or not isinstance(node.target, cst.Name):
            return None
        span = self.names.span(node)
        if listed.element is None or listed.count is None:
            message = f"`{self.names.text(node.iter)}`: its modules are not known"
            self.function_unknowns.append(Unknown(UnknownKind.UNSUPPORTED, message, span))
            return []
        name = node.target.value
        self.scope.layers[name] = listed.element
        outer, self.spliced_conventions = self.spliced_conventions, []
        try:
            var = f"_layer_L{span.line}"
            loop = self._loop(var, sympy.Integer(0), 1, listed.count, node, body, {})
        finally:
            self.scope.layers.pop(name, None)
            spliced, self.spliced_conventions = self.spliced_conventions, outer
        # Each block's contractions, quoted `2*m*k*n`, once per block of the list.
        self.loop_conventions += [
            (str(listed.count * e) if "*" in text else text, listed.count * e)
            for text, e in spliced
        ]
        return [self._nonempty(loop, node, var, listed.count)]

    def _counted_loop(
        self, var: str, start: sympy.Expr, step: sympy.Expr, trip: sympy.Expr, node: cst.For
    ) -> Node:
        statements = _statements(node.body)
        if step.is_Integer:
            loop = self._loop(var, start, int(step), trip, node, statements)
            return self._nonempty(loop, node, var, trip)
        # A step that is a size (`range(0, n, B)`, as tile loops step): the loop counts its
        # tiles `t_L<line>` from 0 and `var` is `start + B*t_L<line>` in the body, as C's
        # frontend lowers `ii += BS`.
        tiles = f"t_L{self.names.span(node).line}"
        bindings: dict[str, Binding] = {var: Integer(start + step * loop_symbol(tiles), var)}
        loop = self._loop(tiles, sympy.Integer(0), 1, trip, node, statements, bindings)
        return self._nonempty(loop, node, var, trip)

    def _nonempty(self, loop: Loop, node: cst.For | cst.While, var: str, trip: sympy.Expr) -> Node:
        """`loop` (over the source's `var`, `trip` passes as written, before any tile
        merge), guarded by `trip >= 1` where the trip follows an enclosing loop (`range(i +
        2, n)`): negative where the loop does not run, so the branch analysis counts only
        the iterations that exist, not a closed form that goes below zero."""
        if all(is_size_symbol(s) for s in trip.free_symbols):
            return loop
        span = self.names.span(node)
        condition = Statement(span, f"if {var}'s range is not empty", FlopTally(), (), ())
        return Branch(span, condition, sympy.Integer(1), (loop,), (), (), sympy.Ge(trip, 1))

    def _chosen(self, variants: list[tuple[tuple[sympy.Basic, ...], Node]], node: cst.For) -> Node:
        """One loop per alternative of a `min`/`max` bound (`bounds.py`), each under a
        branch on the condition that selects it: exact where that condition is affine in
        loop variables, a named fraction `p_L<line>_<k>` otherwise."""
        conditions, loop = variants[0]
        if len(variants) == 1:
            return loop
        span = self.names.span(node)
        guard: sympy.Basic = sympy.And(*conditions)
        loop_variables = {s for s in guard.free_symbols if not is_size_symbol(s)}
        fraction = fraction_symbol(f"p_L{span.line}_{len(variants) - 1}")
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"bound of `{self.names.text(node.iter)}`: the fraction of executions where "
            f"`{guard}` selects the first alternative is named {fraction}",
            span,
            str(fraction),
        )
        test = Statement(span, f"if {guard}", FlopTally(), (), ())
        rest = self._chosen(variants[1:], node)
        return Branch(
            span,
            test,
            fraction,
            (loop,),
            (rest,),
            (unknown,),
            guard if loop_variables else None,
        )

    def _range(self, node: cst.For) -> tuple[str, sympy.Expr, list[_RangeChoice]] | None:
        """`(var, step, [(start, stop, conditions), ...])` of `for var in range(...)`, one
        entry per combination of `min`/`max` alternatives in the bounds (one for plain
        bounds); None, with the reader's notes on the bounds (if any) in
        `self.reader.unknowns`, when it is not one. The step is a nonzero integer or a
        positive size (`range(0, n, B)`)."""
        self.reader.unknowns = []
        iterator = node.iter
        if not (
            isinstance(node.target, cst.Name)
            and isinstance(iterator, cst.Call)
            and self.names.canonical(iterator.func) == "builtins.range"
        ):
            return None
        arguments = [a.value for a in iterator.args]
        if not 1 <= len(arguments) <= 3:
            return None
        bounds = [bound_choices(self.reader, a) for a in arguments[:2]]
        step: sympy.Expr = sympy.Integer(1)
        if len(arguments) == 3:
            literal = self.reader.integer(arguments[2])
            if literal is None or literal == 0:
                return None
            sized = literal.is_positive and all(is_size_symbol(s) for s in literal.free_symbols)
            if not (literal.is_Integer or sized):
                return None
            step = literal
        starts, stops = ([(sympy.Integer(0), ())], bounds[0]) if len(arguments) == 1 else bounds
        if starts is None or stops is None:
            return None
        choices = [
            (start, stop, (*start_conditions, *stop_conditions))
            for start, start_conditions in starts
            for stop, stop_conditions in stops
        ]
        return node.target.value, step, choices

    def _loop(
        self,
        var: str,
        start: sympy.Expr,
        step: int,
        trip: sympy.Expr,
        node: cst.For | cst.While,
        statements: Sequence[cst.CSTNode],
        bindings: dict[str, Binding] | None = None,
    ) -> Loop:
        """The loop over `var` running `statements` of `node`'s body; `bindings` are names
        the body sees at each pass (the source's counter where `var` counts tiles, the
        element of an iterated array). A tile loop whose body is just its point loop is
        that one loop (`ir.tiles.merged_tiles`)."""
        span = self.names.span(node)
        bindings = bindings or {}
        before = self.scope.copy()
        self._forget_assigned(node.body)
        self.scope.names[var] = Integer(loop_symbol(var), var)
        self.scope.names.update(bindings)
        self.loop_depth += 1
        self.enclosing.append(Loop(var, start, step, trip, (), span))
        nodes = self._lowered_statements(statements)
        self.enclosing.pop()
        self.loop_depth -= 1
        reshaped = self._reshaped_in_loop(before, span)
        reshaped += self._retyped_in_loop(before, span, node.body)
        self._restore_after_loop(before, var)
        for name in bindings:
            self._restore_after_loop(before, name)
        extent = span.through(self.names.span(node.body))
        return merged_tiles(Loop(var, start, step, trip, tuple(nodes), extent, reshaped))

    def _reshaped_in_loop(self, before: Scope, span: Span) -> tuple[Unknown, ...]:
        """Arrays the body rebinds to another shape (`Z = Z[I]`, a selection that shrinks
        each pass): the body was lowered once, at their shapes on entry, so say so."""
        notes = []
        for name, old in before.names.items():
            new = self.scope.names.get(name)
            if not isinstance(old, Leaf) or not old.shape or not isinstance(new, Leaf):
                continue
            if len(new.shape) == len(old.shape) and all(map(same_extent, new.shape, old.shape)):
                continue
            notes.append(
                Unknown(
                    UnknownKind.UNSUPPORTED,
                    f"`{name}` changes shape in the loop, from {shape_text(old.shape)} to "
                    f"{shape_text(new.shape)}: every pass is counted at its shape on entry",
                    span,
                )
            )
        return tuple(notes)

    def _retyped_in_loop(
        self, before: Scope, span: Span, body: cst.BaseSuite
    ) -> tuple[Unknown, ...]:
        """Integers the body turns into floats and also combines with integer literals
        (`h = 0`, then `h = h * 31 + x[i]`: `h * 31` is integer arithmetic on the first
        pass, a FLOP on every later one): the body was lowered once, at their dtypes on
        entry, so that operation is counted as on the first pass, and that is said.
        (`s = 0; s += x[i]` needs nothing: an int plus a float is a float add anyway.)"""
        notes = []
        combined: set[str] | None = None  # read off the body only when a name turns float
        for name, old in before.names.items():
            new = self.scope.names.get(name)
            was = dtypes.PYTHON_INT if isinstance(old, Integer) else getattr(old, "element", None)
            now = getattr(new, "element", None) if not isinstance(new, Integer) else was
            if not isinstance(was, ElementType) or not isinstance(now, ElementType):
                continue
            if was.is_float or not now.is_float:
                continue
            if combined is None:
                combined = _combined_with_integer_literals(body)
            if name not in combined:
                continue
            notes.append(
                Unknown(
                    UnknownKind.UNSUPPORTED,
                    f"`{name}` changes dtype in the loop, from {was.name} to {now.name}: "
                    "every pass is counted at its dtype on entry (its arithmetic with "
                    "integer literals as no FLOP, a float operation from the second pass on)",
                    span,
                )
            )
        return tuple(notes)

    def _iteration(self, node: cst.For) -> list[Node] | None:
        """`for v in A`, `for i, v in enumerate(A)` and `for a, b in zip(x, y)` over arrays
        of known shape: a counted loop over the first axis (of the shortest, for `zip`),
        each name bound to its array's element or row at the pass; None for any other
        iteration (ranges included)."""
        iterator, target = node.iter, node.target
        arrays: list[cst.BaseExpression]
        names: list[cst.BaseExpression]
        counter: str | None = None
        canonical = self.names.canonical(iterator.func) if isinstance(iterator, cst.Call) else None
        if isinstance(iterator, cst.Call) and canonical in ("builtins.enumerate", "builtins.zip"):
            positional = [a.value for a in iterator.args if a.keyword is None and not a.star]
            if len(positional) != len(iterator.args) or not isinstance(target, cst.Tuple):
                return None
            names = [e.value for e in target.elements]
            if canonical == "builtins.enumerate":
                if len(positional) != 1 or len(names) != 2 or not isinstance(names[0], cst.Name):
                    return None
                counter, names = names[0].value, names[1:]
            arrays = positional
        elif isinstance(iterator, cst.Name | cst.Attribute | cst.Subscript) and not (
            isinstance(iterator, cst.Name) and iterator.value not in self.scope.names
        ):
            arrays, names = [iterator], [target]
        else:
            return None
        if len(arrays) != len(names) or not all(isinstance(n, cst.Name) for n in names):
            return None
        noted = len(self.reader.unknowns)
        values = [self.reader.value(a) for a in arrays]
        if not all(isinstance(v, Leaf) and v.shape for v in values):
            del self.reader.unknowns[noted:]
            return None
        leaves = [v for v in values if isinstance(v, Leaf)]
        span = self.names.span(node)
        var = counter or f"_it_L{span.line}"
        extents = [leaf.shape[0] for leaf in leaves]
        trip = extents[0]
        for extent in extents[1:]:
            if not same_extent(trip, extent):
                trip = sympy.Min(trip, extent)  # `zip` stops at the shortest
        at = loop_symbol(var)
        bindings: dict[str, Binding] = {
            name.value: element_at(leaf, at)
            for name, leaf in zip(names, leaves, strict=True)
            if isinstance(name, cst.Name)
        }
        loop = self._loop(var, sympy.Integer(0), 1, trip, node, _statements(node.body), bindings)
        return [self._nonempty(loop, node, var, trip)]

    def _while(self, node: cst.While) -> list[Node]:
        """`i = a` ... `while i < n: ...; i += s` is `for i in range(a, n, s)`: a counted
        loop (`<=` runs to `n` included). Any other `while` has a named trip count."""
        counted = self._while_counter(node)
        if counted is None:
            return [self._loop_with_unknown_trip(node, node.body, None)]
        var, start, stop, step = counted
        if stop is None:  # `while x[i] > 0: ...; i += 1`: a counter, an unknown trip
            return [self._loop_with_unknown_trip(node, node.body, None, counter=(var, start, step))]
        distance = sympy.expand(stop - start)
        trip = never_below_zero(distance if step == 1 else sympy.ceiling(distance / step))
        statements = _statements(node.body)[:-1]  # without the counter's step
        loop = self._loop(var, start, step, trip, node, statements)
        return [self._nonempty(loop, node, var, trip)]

    def _while_counter(
        self, node: cst.While
    ) -> tuple[str, sympy.Expr, sympy.Expr | None, int] | None:
        """`(var, start, stop, step)` of a `while` whose last statement `var += step` is the
        only move of an integer `var` of known start, stop exclusive (None when the test is
        not `var < stop` or `var <= stop`); None without such a counter (or with a
        `break`/`continue`)."""
        test, body = node.test, node.body
        if not isinstance(body, cst.IndentedBlock) or not body.body or node.orelse:
            return None
        last = body.body[-1]
        increment = (
            last.body[0]
            if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
            else None
        )
        if not (
            isinstance(increment, cst.AugAssign)
            and isinstance(increment.operator, cst.AddAssign)
            and isinstance(increment.target, cst.Name)
        ):
            return None
        var = increment.target.value
        binding = self.scope.names.get(var)
        step = number_literal(increment.value)
        rest = body.with_changes(body=body.body[:-1])
        if not (isinstance(binding, Integer) and binding.value is not None):
            return None
        if not isinstance(step, int) or step < 1 or var in _assigned_names(rest) or _jumps(rest):
            return None
        if not (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.left, cst.Name)
            and test.left.value == var
            and isinstance(test.comparisons[0].operator, cst.LessThan | cst.LessThanEqual)
        ):
            return var, binding.value, None, step
        noted = len(self.reader.unknowns)
        stop = self.reader.integer(test.comparisons[0].comparator)
        del self.reader.unknowns[noted:]
        if stop is None or loop_symbol(var) in stop.free_symbols:
            return var, binding.value, None, step
        if isinstance(test.comparisons[0].operator, cst.LessThanEqual):
            stop = stop + 1
        return var, binding.value, stop, step

    def _loop_with_unknown_trip(
        self,
        node: cst.For | cst.While,
        body: cst.BaseSuite,
        target: cst.BaseAssignTargetExpression | None,
        why: str = "",
        counter: tuple[str, sympy.Expr, int] | None = None,
    ) -> Loop:
        """A loop of `trip_L<line>` iterations. With a `counter` `(name, start, step)` (a
        `while` ending in `name += step`), `name` is `start + step*pass` in the body, which
        is lowered without that last statement."""
        span = self.names.span(node)
        symbol = trip_symbol(f"trip_L{span.line}")
        header = self.names.text(node.iter if isinstance(node, cst.For) else node.test)
        because = f" ({why})" if why else ""
        unknown = Unknown(
            UnknownKind.DATA_DEPENDENT_BOUND,
            f"cannot derive the trip count of the loop over `{header}`{because}; named {symbol}",
            span,
            str(symbol),
        )
        var = target.value if isinstance(target, cst.Name) else f"_loop_L{span.line}"
        if isinstance(target, cst.Name):
            ranged = (
                isinstance(node, cst.For)
                and isinstance(node.iter, cst.Call)
                and self.names.canonical(node.iter.func) == "builtins.range"
            )
            reason = (
                f"it counts over `{header}`, whose bounds are not known sizes"
                if ranged
                else "it iterates over something other than `range(...)`"
            )
            self.scope.names[var] = Opaque(var, reason)
            iterator = node.iter if isinstance(node, cst.For) else None
            if ranged and isinstance(iterator, cst.Call) and len(iterator.args) == 1:
                # `range(m)` with `m` unknown still counts 0, 1, ...: the loop variable
                # of a loop of `trip_L<line>` iterations.
                self.scope.names[var] = Integer(loop_symbol(var), var)
        before = self.scope.copy()
        self._forget_assigned(body)  # `i += 1` in the body: `x[i]` is not one element
        if isinstance(target, cst.Name) and isinstance(self.scope.names.get(var), Integer):
            self.scope.names[var] = Integer(loop_symbol(var), var)
        statements = _statements(body)
        if counter is not None:
            name, start, step = counter
            value = sympy.expand(start + step * loop_symbol(var))
            self.scope.names[name] = Integer(value, name)
            statements = statements[:-1]
        self.loop_depth += 1
        # Its passes are counted (`trip_L<line>` of them): the calls in its body repeat.
        self.enclosing.append(Loop(var, sympy.Integer(0), 1, symbol, (), span))
        nodes = self._lowered_statements(statements)
        self.enclosing.pop()
        self.loop_depth -= 1
        self._restore_after_loop(before, var)
        return Loop(
            var,
            sympy.Integer(0),
            1,
            symbol,
            tuple(nodes),
            span.through(self.names.span(body)),
            (unknown,),
        )

    def _forget_assigned(self, body: cst.CSTNode) -> None:
        """Integers assigned in a loop body vary from one iteration to the next."""
        for name in _assigned_names(body):
            if isinstance(self.scope.names.get(name), Integer):
                self.scope.names[name] = Integer(None, name)

    def _restore_after_loop(self, before: Scope, var: str) -> None:
        for name, binding in list(self.scope.names.items()):
            if isinstance(binding, Integer) and before.names.get(name) != binding:
                self.scope.names[name] = Integer(None, name)
        if var not in before.names:
            self.scope.names.pop(var, None)

    def _condition(
        self, test: cst.BaseExpression, span: Span
    ) -> tuple[tuple[Node, ...], Statement]:
        """The statement evaluating a branch's condition (its reads, its FLOPs), after the
        loops that compute its reductions first (`if x.sum() > 1.0:`), which run before
        the branch whichever way it goes."""
        self.reader.unknowns = []
        self.reader.pending = []
        condition_value = self.reader.value(test)
        if self.reader.pending:
            self.reader.unsupported(test, "an array constructed in a condition")
            condition_value = None
            self.reader.pending = []  # dropped, as `_small` drops those it computes
        condition_unknowns = tuple(self.reader.unknowns)
        condition_nodes: list[Node] = []
        if isinstance(condition_value, (Leaf, Scalar, Apply, Reduce, Contract)):
            if condition_value.shape:
                message = f"`{self.names.text(test)}` is an array: its truth is ambiguous"
                unknown = Unknown(UnknownKind.UNSUPPORTED, message, self.names.span(test))
                condition_unknowns += (unknown,)
            else:
                condition_nodes = NestBuilder(self.namer, span).assign(
                    Target(None), condition_value, self.names.text(test)
                )
        accesses = tuple(a for n in condition_nodes if isinstance(n, Statement) for a in n.accesses)
        flops = sum((n.flops for n in condition_nodes if isinstance(n, Statement)), FlopTally())
        prelude = tuple(n for n in condition_nodes if not isinstance(n, Statement))
        return prelude, Statement(
            self.names.span(test),
            self.names.text(test),
            flops,
            accesses,
            unknowns=condition_unknowns,
        )

    def _ternary(
        self, target: cst.BaseExpression, value_node: cst.IfExp, node: cst.CSTNode
    ) -> _Lowered:
        """`y = a if c else b`: a branch like `if c: y = a` / `else: y = b`, weighted by
        the fraction `p_L<line>` of executions where `c` holds, as `if` statements are."""
        span = self.names.span(value_node)
        outer = self.reader.unknowns
        prelude, condition = self._condition(value_node.test, span)
        self.reader.unknowns = outer
        then = self._assign(target, value_node.body, node)
        bound = bound_name(target)
        then_binding = self.scope.names.get(bound) if bound is not None else None
        otherwise = self._assign(target, value_node.orelse, node)
        else_binding = self.scope.names.get(bound) if bound is not None else None
        if (
            isinstance(then_binding, Leaf)
            and isinstance(else_binding, Leaf)
            and len(then_binding.shape) != len(else_binding.shape)
        ):
            self.reader.unsupported(value_node, "the two values of the ternary differ in rank")
        fraction = fraction_symbol(f"p_L{span.line}")
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"`{self.names.text(value_node)}`: the fraction of executions where "
            f"`{self.names.text(value_node.test)}` holds is named {fraction}",
            span,
            str(fraction),
        )
        branch = Branch(
            span, condition, fraction, tuple(then.nodes), tuple(otherwise.nodes), (unknown,)
        )
        lowered = _Lowered([*prelude, branch], conventions=then.conventions + otherwise.conventions)
        if self._eager_wanted() and (then.eager is not None or otherwise.eager is not None):
            # NumPy makes one side's calls: each side's, weighted by the share taking it.
            lowered.eager = _merge(_weighted(then, fraction), _weighted(otherwise, 1 - fraction))
            if condition.accesses and lowered.eager is not None:
                test = Region("straight", (condition,), condition.span)
                lowered.eager.regions.insert(0, test)
        return lowered

    def _masked_store(
        self, target: cst.Subscript, value_node: cst.BaseExpression, node: cst.CSTNode
    ) -> _Lowered | None:
        """`A[mask] = value` with a boolean array `mask` (`x[x > 0] = 0.0`, `r[r > 0] = 1.0 /
        r[r > 0]`): per element the mask is evaluated, and the store runs for the fraction
        `p_L<line>` of elements it selects (a named fraction, as for `if`). Selections by
        the same mask on the right (`r[r > 0]`) are the element at hand. None when the
        index is not a boolean array."""
        items = target.slice
        if len(items) != 1 or not isinstance(items[0].slice, cst.Index):
            return None
        noted, constructed = len(self.reader.unknowns), len(self.reader.pending)
        mask_node = items[0].slice.value
        mask = self.reader.value(mask_node)
        if not (isinstance(mask, (Leaf, Apply)) and mask.shape and mask.element == dtypes.BOOL):
            del self.reader.unknowns[noted:]  # not a mask: the ordinary path reads it again
            del self.reader.pending[constructed:]
            return None
        base = self.reader.value(target.value)
        if base is None:
            return _Lowered()
        mask_text = self.names.text(mask_node)
        if not (
            isinstance(base, Leaf)
            and len(mask.shape) <= len(base.shape)
            and all(map(same_extent, mask.shape, base.shape))
        ):
            self.reader.unsupported(
                target, f"`{self.names.text(target)}`: the mask does not cover the array's axes"
            )
            return _Lowered()
        self.reader.masks[mask_text] = mask.shape
        try:
            value = self.reader.array(value_node)
        finally:
            del self.reader.masks[mask_text]
        if value is None:
            return _Lowered()
        if broadcast_shapes(base.shape, value.shape) != base.shape:
            self.reader.unsupported(
                node, f"`{self.names.text(value_node)}` does not broadcast to the masked array"
            )
            return _Lowered()
        if not self._selections_placed(value, False, node):
            return _Lowered()
        span = self.names.span(node)
        fraction = mask_fraction(self.reader, mask_node, span.line)
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"boolean mask `{mask_text}`: the fraction of elements it selects is named {fraction}",
            span,
            str(fraction),
        )
        condition = Statement(span, mask_text, FlopTally())
        branch = Branch(span, condition, fraction, (), (), (unknown,))
        text = self.names.text(node)
        nodes = NestBuilder(self.namer, span).masked_assign(base, mask, value, text, branch)
        lowered = _Lowered(nodes)
        if self._eager_wanted():
            lowered.eager = self._masked_store_eager(base, mask, value_node, branch, span)
        return lowered

    def _masked_store_eager(
        self,
        base: Leaf,
        mask: Leaf | Apply,
        value_node: cst.BaseExpression,
        branch: Branch,
        span: Span,
    ) -> EagerCalls | None:
        """The eager view of a masked store: its value read again as NumPy computes it,
        with `r[r > 0]` on the right a selection (a gather) rather than the element at
        hand; what that reading notes was said by the first one."""
        noted, constructed = len(self.reader.unknowns), len(self.reader.pending)
        value = self.reader.array(value_node)
        del self.reader.unknowns[noted:]
        del self.reader.pending[constructed:]
        if value is None or misplaced_selection(value, True) is not None:
            return None
        return masked_store_calls(base, mask, value, branch, self.namer, span)

    def _if(self, node: cst.If) -> list[Node]:
        return self._branch(node).nodes

    def _branch(self, node: cst.If) -> _Lowered:
        """The loops computing the condition's reductions, then the branch. At the
        function's top level, the branch's eager calls are each side's, made for the share
        of calls taking it (as a ternary's are), and so are its contractions' figures
        (`if targets is not None:` around the head of a model)."""
        span = self.names.span(node)
        prelude, condition = self._condition(node.test, span)
        if prelude and self.loop_calls is not None:
            self.loop_eager_complete = False  # the condition's own calls: not in the view
        fraction = fraction_symbol(f"p_L{span.line}")
        guard = self._index_guard(node.test)
        exact = guard is not None
        self.branch_weights.append(None if exact else fraction)
        try:
            then = self._side(_statements(node.body))
            otherwise = _Lowered()
            self.branch_weights[-1] = None if exact else 1 - fraction
            if isinstance(node.orelse, cst.Else):
                otherwise = self._side(_statements(node.orelse.body))
            elif isinstance(node.orelse, cst.If):
                otherwise = self._branch(node.orelse)  # `elif`: tested where `if` fails
        finally:
            self.branch_weights.pop()
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"branch `if {self.names.text(node.test)}`: the fraction of "
            f"executions taking it is named {fraction}",
            span,
            str(fraction),
        )
        branch = Branch(
            span, condition, fraction, tuple(then.nodes), tuple(otherwise.nodes), (unknown,), guard
        )
        lowered = _Lowered([*prelude, branch])
        if self.loop_depth == 0 and not exact and not prelude:
            lowered.conventions = _weighted_conventions(then, fraction) + _weighted_conventions(
                otherwise, 1 - fraction
            )
            if then.eager is not None or otherwise.eager is not None:
                lowered.eager = _merge(
                    _weighted(then, fraction), _weighted(otherwise, 1 - fraction)
                )
                if condition.accesses and lowered.eager is not None:
                    test = Region("straight", (condition,), condition.span)
                    lowered.eager.regions.insert(0, test)
        return lowered

    def _side(self, statements: Sequence[cst.CSTNode]) -> _Lowered:
        """One side of a branch: its statements' nodes, eager calls and conventions."""
        lowered = _Lowered()
        for statement in statements:
            lowered.extend(self._statement(statement))
        return lowered

    def _index_guard(self, test: cst.BaseExpression) -> sympy.Basic | None:
        """`if j - 1 >= 0:`, `if i < j - 1 and i + 1 < n:`: a condition on loop variables
        and sizes only, affine, restricts the iterations exactly (as C's `if` does); None
        for any other (data, sizes alone), which keeps its named fraction."""
        guard = self._affine_condition(test)
        if guard is None or guard in (sympy.true, sympy.false):
            return None
        if not any(not is_size_symbol(s) for s in guard.free_symbols):
            return None
        return guard

    def _affine_condition(self, test: cst.BaseExpression) -> sympy.Basic | None:
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            left, right = self._affine_condition(test.left), self._affine_condition(test.right)
            return None if left is None or right is None else sympy.And(left, right)
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None
        relation = _RELATIONS.get(type(test.comparisons[0].operator))
        if relation is None:
            return None
        sides = []
        for side in (test.left, test.comparisons[0].comparator):
            saved = self.reader.unknowns
            self.reader.unknowns = []
            value = self.reader.value(side)
            self.reader.unknowns = saved
            if not isinstance(value, Integer) or value.value is None:
                return None
            symbols = value.value.free_symbols
            if symbols and not (
                value.value.is_polynomial(*symbols)
                and sympy.Poly(value.value, *symbols).total_degree() <= 1
            ):
                return None
            sides.append(value.value)
        return relation(sides[0], sides[1])


_RELATIONS: dict[type, Callable[[sympy.Expr, sympy.Expr], sympy.Basic]] = {
    cst.LessThan: sympy.Lt,
    cst.LessThanEqual: sympy.Le,
    cst.GreaterThan: sympy.Gt,
    cst.GreaterThanEqual: sympy.Ge,
}


_MAX_ROUNDS = 16
"""Lowerings a function may take to learn its inferred shapes: model code learns a rank,
then the extents, per tensor it meets (`q @ k.mT`, then `p @ v`); a deep network
(NPBench's `lenet`) needs more than four."""


def _unannotated(where: cst.CSTNode) -> str:
    """How a parameter without a usable annotation is described in its assumption."""
    if isinstance(where, cst.Param) and where.annotation is not None:
        return "has no shape in its annotation"
    if isinstance(where, cst.Param):
        return "has no annotation"
    return "is not set in a method seen before this one"


@dataclass(slots=True)
class _Hints:
    """What earlier lowerings of a function learned about its inferred parameter shapes."""

    equations: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    sizes: set[str] = field(default_factory=set)
    rounds: int = 0

    def learn(
        self,
        equations: dict[sympy.Symbol, sympy.Expr],
        ranks: dict[str, int],
        sizes: set[str] | None = None,
    ) -> bool:
        """Take what is new; True when there was some and another round is allowed."""
        new_sizes = (sizes or set()) - self.sizes
        if new_sizes and self.rounds < 16:
            self.sizes |= new_sizes
            self.rounds += 1
            return True
        new_ranks = {k: v for k, v in ranks.items() if self.ranks.get(k, 0) < v}
        for name in new_ranks:
            # The axes are renumbered: what was said of `x_d0` as the last axis is void.
            prefix = f"{plain_name(name)}_d"
            for symbol in [s for s in self.equations if s.name.startswith(prefix)]:
                del self.equations[symbol]
        # With a rank still wrong, axes were compared out of line: learn the ranks first.
        new = {} if new_ranks else {k: v for k, v in equations.items() if k not in self.equations}
        learned = False
        for symbol, value in new.items():
            resolved = self.resolve(value)
            if symbol not in resolved.free_symbols:  # `A_d0 -> B_d0 -> A_d0` is no news
                self.equations[symbol] = resolved
                learned = True
        if not (learned or new_ranks) or self.rounds >= _MAX_ROUNDS:
            return False
        self.rounds += 1
        self.ranks.update(new_ranks)
        return True

    def resolve(self, extent: sympy.Expr) -> sympy.Expr:
        """`extent` with what is known substituted (chains `A_d0 -> B_d1 -> n` included)."""
        for _ in range(8):
            following = sympy.expand(substituted(extent, self.equations))
            if following == extent:
                break
            extent = following
        return extent


def _keyword_is(argument: cst.Arg, name: str) -> bool:
    return argument.keyword is not None and argument.keyword.value == name


def _shape_owner(node: cst.BaseExpression, torch: bool) -> cst.BaseExpression | None:
    """`A` of `A.shape`, or of PyTorch's `A.size()`."""
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return node.value
    if (
        torch
        and isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "size"
    ):
        return node.func.value
    return None


def _has_loop(nodes: Sequence[Node]) -> bool:
    """Loops among `nodes`, guarded ones (`L[i, :i] @ x[:i]` under `i >= 1`) included."""
    return any(
        isinstance(n, Loop) or (isinstance(n, Branch) and _has_loop((*n.then_body, *n.else_body)))
        for n in nodes
    )


def _arrays_of(body: Sequence[Node]) -> frozenset[str]:
    found: set[str] = set()
    for node in body:
        if isinstance(node, Loop):
            found |= _arrays_of(node.body)
        elif isinstance(node, Branch):
            found |= _arrays_of((node.condition, *node.then_body, *node.else_body))
        elif isinstance(node, Statement):
            found.update(a.array for a in node.accesses)
    return frozenset(found)


def _local_arrays(regions: Sequence[Region], escaping: set[str]) -> frozenset[str]:
    """Arrays of the function that do not escape: not parameters (nor `self.*`), not
    returned (`return` / `return0`... are the returned values themselves)."""
    arrays: set[str] = set()
    for region in regions:
        arrays |= _arrays_of(region.body)
    return frozenset(
        a for a in arrays if a not in escaping and not a.startswith(("self.", "return"))
    )


def _out_argument(node: cst.BaseExpression, names: SourceNames) -> cst.BaseExpression | None:
    """The `out=` argument of a call, or a ufunc's positional output, if any."""
    if not isinstance(node, cst.Call):
        return None
    keyword = next((a.value for a in node.args if a.keyword and a.keyword.value == "out"), None)
    return keyword or positional_out(names.canonical(node.func), node)


def _statements(block: cst.BaseSuite) -> list[cst.CSTNode]:
    """A suite's statements: an indented block's lines, or the one-line suite itself."""
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def _jumps(body: cst.CSTNode) -> bool:
    """A `break` or `continue` of this loop (not of a loop nested in it)."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Break | cst.Continue):
            return True
        if not isinstance(node, cst.For | cst.While | cst.FunctionDef | cst.BaseExpression):
            stack.extend(_children(node))
    return False


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The child nodes of `node`, read from its fields (no visitor: see below)."""
    for name in _node_fields(type(node)):
        child = getattr(node, name)
        if isinstance(child, cst.CSTNode):
            yield child
        elif isinstance(child, (tuple, list)):
            yield from (c for c in child if isinstance(c, cst.CSTNode))


def _combined_with_integer_literals(body: cst.CSTNode) -> set[str]:
    """Names `body` adds, subtracts, multiplies or raises with an integer literal
    (`h * 31`, `k += 1`). Walked through the fields, as `_assigned_names` is: a libcst
    visitor rebuilds every node it passes, and ran on every loop body, nested ones again."""
    found: set[str] = set()
    arithmetic = (cst.Add, cst.Subtract, cst.Multiply, cst.Power)
    in_place = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.PowerAssign)
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, arithmetic):
            for this, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(this, cst.Name) and isinstance(other, cst.Integer):
                    found.add(this.value)
        elif (
            isinstance(node, cst.AugAssign)
            and isinstance(node.operator, in_place)
            and isinstance(node.target, cst.Name)
            and isinstance(node.value, cst.Integer)
        ):
            found.add(node.target.value)
        stack.extend(_children(node))
    return found


def _assigned_names(body: cst.CSTNode) -> set[str]:
    """Names assigned (`x = ...`, `x += ...`) anywhere in `body`, nested blocks included.

    Only statements hold assignments, so expressions are not searched (a libcst visitor
    over every node cost a tenth of the frontend's time).
    """
    found: set[str] = set()
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign):
            found.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                found.add(node.target.value)
        elif not isinstance(node, cst.BaseExpression):
            stack.extend(_children(node))
    return found


@cache
def _names_read(node: cst.CSTNode) -> set[str]:
    """Every plain name `node` reads (`x` and `self` of `self.wq(x)`, not `wq`)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _names_read(node.value)
    return {name for child in _children(node) for name in _names_read(child)}


@cache
def _node_fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _conventions(value: ArrayValue) -> list[tuple[str, sympy.Expr]]:
    """`2*M*K*N` for each contraction: the figure ML tooling quotes beside the exact count."""
    found: list[tuple[str, sympy.Expr]] = []
    if isinstance(value, Contract):
        summed = [label for label, _ in value.extents if label not in value.out]
        if summed and len(value.operands) == 2:
            figure = 2 * sympy.Mul(*(extent for _, extent in value.extents))
            found.append((_printed(figure), figure))
        children: tuple[ArrayValue, ...] = value.operands
    elif isinstance(value, Apply):
        children = value.operands
    elif isinstance(value, Reduce):
        children = (value.operand,)
    else:
        children = ()
    for child in children:
        found += _conventions(child)
    return found


@lru_cache(maxsize=4096)
def _printed(figure: sympy.Expr) -> str:
    """sympy's printing of a figure; the same few shapes recur through a file."""
    return str(figure)


def _weighted(lowered: _Lowered, weight: sympy.Expr) -> EagerCalls | None:
    """`lowered`'s eager calls (its fused nodes where it makes none), each made for the
    share `weight` of executions."""
    if lowered.eager is not None:
        regions = [replace(r, weight=r.weight * weight) for r in lowered.eager.regions]
        return EagerCalls(regions, list(lowered.eager.temporaries))
    if not lowered.nodes:
        return None
    kind = "nest" if any(isinstance(n, Loop) for n in lowered.nodes) else "straight"
    return EagerCalls(
        [Region(kind, tuple(lowered.nodes), lowered.nodes[0].span, weight=weight)], []
    )


def _none_bound(node: cst.Assign) -> bool:
    """`loss = None`, `self.last_loss = None` (and `a = b = None`): names, not stores,
    bound to None."""
    value = node.value
    return (
        isinstance(value, cst.Name)
        and value.value == "None"
        and all(bound_name(t.target) is not None for t in node.targets)
    )


def _weighted_conventions(lowered: _Lowered, weight: sympy.Expr) -> list[tuple[str, sympy.Expr]]:
    """`lowered`'s quoted figures, each for the share `weight` of executions."""
    found = []
    for _, figure in lowered.conventions:
        weighted = sympy.expand(figure * weight)
        found.append((str(weighted), weighted))
    return found


def _merge(a: EagerCalls | None, b: EagerCalls | None) -> EagerCalls | None:
    if a is None or b is None:
        return a or b
    return EagerCalls(a.regions + b.regions, a.temporaries + b.temporaries)


def _flush(run: list[_Lowered]) -> Iterator[Region]:
    """One region for a run of statements; its eager view when it makes NumPy calls."""
    nodes = [n for lowered in run for n in lowered.nodes]
    if not nodes:
        return
    first, last = nodes[0].span, nodes[-1].span
    span = Span(first.file, first.line, first.column, max(last.end_line, last.line))
    kind = "nest" if any(isinstance(n, Loop) for n in nodes) else "straight"
    eager: list[Region] = []
    temporaries: list[Temporary] = []
    if any(lowered.eager is not None for lowered in run):
        for lowered in run:
            if lowered.eager is not None:
                eager += lowered.eager.regions
                temporaries += lowered.eager.temporaries
            elif lowered.nodes:
                eager.append(Region("straight", tuple(lowered.nodes), lowered.nodes[0].span))
    conventions = tuple(c for lowered in run for c in lowered.conventions)
    yield Region(kind, tuple(nodes), span, tuple(eager), tuple(temporaries), conventions)
