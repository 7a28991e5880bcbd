"""pycparser's AST to the IR: functions, top-level loop nests, loops, branches, statements.

Loops are recognised by their induction variable (`for` with `< <= > >= !=` and `++ -- += -=`,
or `while` with a counter); anything the lowering cannot turn into an exact trip count gets
a named symbol and an `Unknown` saying why, so nothing is silently guessed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from pycparser import c_ast

from aiscan.algebra import ONE, SYMPY, ZERO, constant, expand, is_poly, normal
from aiscan.frontends.c.expressions import (
    Evaluation,
    ExpressionReader,
    Scope,
    Variable,
)
from aiscan.frontends.c.geometric_loops import geometric_update, passes
from aiscan.frontends.c.inlining import InlinedCoord, Inlining, inline_calls
from aiscan.frontends.c.line_names import file_of
from aiscan.frontends.c.literals import integer_literal
from aiscan.frontends.c.loop_conditions import counter_bound, unsigned_wrap
from aiscan.frontends.c.openmp import OpenMPDirective, read_directive
from aiscan.frontends.c.pointer_walks import pointer_steps
from aiscan.frontends.c.subtree import SubtreeFacts, nodes_of, subtree_facts
from aiscan.frontends.c.text import source_text
from aiscan.frontends.c.types import CType, TypeResolver, element_type_named
from aiscan.ir.nodes import (
    Access,
    Branch,
    FlopTally,
    Function,
    InlinedFunction,
    Loop,
    Node,
    Parallel,
    Region,
    Statement,
    Unknown,
    UnknownKind,
)
from aiscan.ir.symbols import (
    fraction_symbol,
    is_size_symbol,
    loop_symbol,
    size_symbol,
    trip_symbol,
)
from aiscan.ir.tiles import merged_tiles
from aiscan.ir.trips import Enclosing, may_go_negative, never_below_zero
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["lower_file"]


def lower_file(
    ast: c_ast.FileAST, path: str, references: Mapping[str, frozenset[int]] | None = None
) -> tuple[Function, ...]:
    """Every function definition of a parsed file, lowered to the IR (`references`: see
    `inline_calls`)."""
    types = TypeResolver()
    globals_ = Scope()
    known_functions: dict[str, int] = {}
    definitions: list[c_ast.FuncDef] = []
    bodies: dict[str, c_ast.FuncDef] = {}
    for item in ast.ext:
        if isinstance(item, c_ast.Typedef):
            types.add_typedef(item)
        elif isinstance(item, c_ast.FuncDef):
            definitions.append(item)
            bodies[item.decl.name] = item
            if item.coord is not None and _same_file(item.coord.file, path):
                known_functions[item.decl.name] = item.coord.line
        elif isinstance(item, c_ast.Decl):
            if isinstance(item.type, c_ast.Struct):
                types.add_struct(item.type)
            elif item.name and not isinstance(item.type, c_ast.FuncDecl):
                globals_.variables[item.name] = Variable(item.name, types.resolve(item.type))
    functions = []
    for definition in definitions:
        if definition.coord is None or not _same_file(definition.coord.file, path):
            continue  # defined in an included header
        called: set[str] = set()
        facts = subtree_facts(definition.body, called)
        subtrees: dict[int, SubtreeFacts] | None
        if called.isdisjoint(bodies):
            inlining, subtrees = Inlining(definition.body), facts  # nothing to inline
        else:
            inlining = inline_calls(definition.body, bodies, references or {})
            subtrees = facts if inlining.body is definition.body else None
        lowering = _FunctionLowering(
            definition, inlining, path, types, globals_, known_functions, subtrees
        )
        functions.append(lowering.run())
    return tuple(functions)


class _NodeSpans:
    """A pycparser node's span; one without a coordinate gets its function's line.

    An object rather than a bound method of the lowering that hands it to its expression
    reader: that would be a reference cycle holding the function's tree until the garbage
    collector's next full pass."""

    __slots__ = ("fallback_line", "known", "path")

    def __init__(self, path: str, fallback_line: int) -> None:
        self.path = path
        self.fallback_line = fallback_line
        # One Span per position: a frozen dataclass costs a call per field to build, and
        # the lowering asks for the same node's (or line's) span again and again.
        self.known: dict[tuple[int, int], Span] = {}

    def __call__(self, node: c_ast.Node) -> Span:
        coord = node.coord
        line, column = (self.fallback_line, 1) if coord is None else (coord.line, coord.column or 1)
        span = self.known.get((line, column))
        if span is None:
            span = self.known[line, column] = Span(self.path, line, column)
        return span


class _FunctionLowering:
    def __init__(
        self,
        definition: c_ast.FuncDef,
        inlining: Inlining,
        path: str,
        types: TypeResolver,
        globals_: Scope,
        known_functions: dict[str, int],
        subtrees: dict[int, SubtreeFacts] | None = None,
    ) -> None:
        """`subtrees`: `subtree_facts` of `inlining.body`, where the caller has them."""
        self.definition = definition
        self.inlining = inlining
        self.body = inlining.body
        self.path = path
        self.types = types
        self.scope = globals_.copy()
        self.span = _NodeSpans(path, definition.coord.line if definition.coord else 1)
        self.reader = ExpressionReader(
            self.scope, types, self.span, known_functions, inlining.refused
        )
        self.function_unknowns: list[Unknown] = []
        # The body alone: lowering asks only about its statements, and the declarator's
        # nodes (parameters, types) were two fifths of each walk.
        self.subtrees = subtree_facts(self.body) if subtrees is None else subtrees
        self.enclosing_loops: list[Enclosing] = []
        # OpenMP: the directive waiting for its statement, the loops it shares out, the
        # parallel region being lowered (and its loop depth), `omp_set_num_threads(N)`.
        self.directive: tuple[OpenMPDirective, Span] | None = None
        self.shared_loops: dict[int, Parallel] = {}
        self.parallel_region: tuple[Parallel, int] | None = None
        self.threads_set: tuple[int, int] | None = None

    def run(self) -> Function:
        declaration = self.definition.decl
        signature = declaration.type
        arguments = (
            getattr(signature, "args", None) if isinstance(signature, c_ast.FuncDecl) else None
        )
        parameters = arguments.params if arguments is not None else []
        pointer_parameters = []
        for parameter in parameters:
            if isinstance(parameter, c_ast.Decl) and parameter.name:
                ctype = self.types.resolve(parameter.type)
                self.scope.variables[parameter.name] = Variable(
                    parameter.name, ctype, is_parameter=True
                )
                if not ctype.is_scalar:
                    pointer_parameters.append((parameter.name, ctype))
        regions = tuple(self._regions(_items(self.body)))
        span = self.span(self.definition.decl)
        end = max((r.span.end_line for r in regions), default=span.line)
        self._note_possible_aliasing(pointer_parameters, regions, span)
        self._note_early_returns()
        return Function(
            declaration.name,
            Span(span.file, span.line, span.column, end),
            regions,
            tuple(self.function_unknowns),
            inlined=self._inlined(),
        )

    def _inlined(self) -> tuple[InlinedFunction, ...]:
        """Each callee counted inline, once, with the lines of its calls."""
        lines: dict[tuple[str, str, int], list[int]] = {}
        for call in self.inlining.calls:
            where = file_of(call.callee_file) if call.callee_file else self.path
            lines.setdefault((call.callee, where, call.callee_line), []).append(call.line)
        return tuple(
            InlinedFunction(name, Span(where, line, 1), tuple(sorted(set(calls))))
            for (name, where, line), calls in lines.items()
        )

    def _note_early_returns(self) -> None:
        for site, callee, line in self.inlining.early_returns:
            self.function_unknowns.append(
                Unknown(
                    UnknownKind.UNSUPPORTED,
                    f"`return` before the end of the inlined `{callee}` (its line {line}): "
                    "the statements after it are counted as if it were not taken",
                    Span(self.path, site.line, site.column or 1),
                )
            )

    def _note_possible_aliasing(
        self, pointers: list[tuple[str, CType]], regions: tuple[Region, ...], span: Span
    ) -> None:
        """Distinct pointer parameters are assumed not to overlap; say so when C allows it."""
        written = {a.array for r in regions for a in _accesses(r.body) if a.is_write}
        unrestricted = [name for name, ctype in pointers if not ctype.is_restrict]
        touched = {a.array for r in regions for a in _accesses(r.body)}
        candidates = [n for n in unrestricted if n in touched]
        if len(candidates) >= 2 and written & set(candidates):
            names = ", ".join(candidates)
            self.function_unknowns.append(
                Unknown(
                    UnknownKind.ALIASING,
                    f"pointer parameters {names} are not `restrict`: counts assume they do not "
                    "overlap",
                    span,
                )
            )

    # ---- regions ------------------------------------------------------------------------

    def _regions(self, items: Iterable[c_ast.Node]) -> Iterator[Region]:
        straight: list[Node] = []

        def flush() -> Iterator[Region]:
            nodes = [n for n in straight if _has_work(n)]
            if nodes:
                yield Region("straight", tuple(nodes), _span_of_nodes(nodes))
            straight.clear()

        for item in items:
            nodes = list(self._lower(item))
            if not nodes:
                continue
            _, holds_loop, _ = self._subtree(item)
            if holds_loop:
                yield from flush()
                work = [n for n in nodes if _has_work(n) or isinstance(n, Loop)]
                if work:
                    yield Region("nest", tuple(work), self._extent(item))
            else:
                straight.extend(nodes)
        yield from flush()

    def _extent(self, node: c_ast.Node) -> Span:
        """The lines a statement spans: from its start to its last coordinate."""
        start = self.span(node)
        last_line, _, _ = self._subtree(node)
        return Span(start.file, start.line, start.column, last_line or start.line)

    def _subtree(self, node: c_ast.Node) -> SubtreeFacts:
        found = self.subtrees.get(id(node))
        if found is None:
            # A node built during lowering (a while loop's body without its counter
            # update): computed afresh and not kept, since its id may be reused once it
            # is freed.
            found = subtree_facts(node)[id(node)]
        return found

    # ---- statements ---------------------------------------------------------------------

    def _lower(self, node: c_ast.Node) -> Iterator[Node]:
        if isinstance(node, c_ast.Pragma):
            found = read_directive(node.string or "")
            self.directive = None if found is None else (found, self.span(node))
            return
        if self.directive is not None:
            directive, span = self.directive
            self.directive = None
            parallel = self._parallel(directive, span)
            if directive.shares_loop and isinstance(node, c_ast.For):
                self.shared_loops[id(node)] = parallel
            elif not directive.shares_loop:
                outer = self.parallel_region
                self.parallel_region = (parallel, len(self.enclosing_loops))
                yield from self._lower(node)
                self.parallel_region = outer
                return
        if isinstance(node, c_ast.FuncCall) and self._sets_threads(node):
            return
        if isinstance(node, c_ast.Compound):
            for item in _items(node):
                yield from self._lower(item)
        elif isinstance(node, c_ast.For):
            yield from self._for(node)
        elif isinstance(node, c_ast.While):
            yield from self._while(node, at_least_once=False)
        elif isinstance(node, c_ast.DoWhile):
            yield from self._while(node, at_least_once=True)
        elif isinstance(node, c_ast.If):
            yield self._if(node)
        elif isinstance(node, c_ast.Decl):
            yield from self._declaration(node)
        elif isinstance(node, c_ast.DeclList):
            for decl in node.decls:
                yield from self._declaration(decl)
        elif isinstance(node, c_ast.Return):
            yield self._statement(node, self.reader.value(node.expr))
        elif isinstance(node, c_ast.Assignment):
            evaluation = self.reader.assign(node)
            self.reader.assign_integer_or_pointer(node)
            yield self._statement(node, evaluation)
        elif isinstance(node, (c_ast.Switch, c_ast.Goto, c_ast.Label)):
            yield self._unsupported(node, f"`{type(node).__name__.lower()}` is not analyzed")
        elif isinstance(
            node, (c_ast.Pragma, c_ast.EmptyStatement, c_ast.Break, c_ast.Continue, c_ast.Typedef)
        ):
            if isinstance(node, (c_ast.Break, c_ast.Continue)):
                yield self._unsupported(
                    node, f"`{type(node).__name__.lower()}`: trip counts assume it is not taken"
                )
        else:
            yield self._statement(node, self.reader.value(node))

    def _parallel(self, directive: OpenMPDirective, span: Span) -> Parallel:
        """The directive's threads: its `num_threads`, else the last `omp_set_num_threads`."""
        if directive.threads is not None or self.threads_set is None:
            return Parallel(span, directive.text, directive.threads)
        threads, line = self.threads_set
        return Parallel(span, directive.text, threads, line)

    def _sets_threads(self, node: c_ast.FuncCall) -> bool:
        """`omp_set_num_threads(8)`: remembered for the parallel loops after it."""
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        arguments = node.args.exprs if node.args is not None else []
        if name != "omp_set_num_threads" or len(arguments) != 1:
            return False
        argument = arguments[0]
        value = integer_literal(argument.value) if isinstance(argument, c_ast.Constant) else None
        if value is None or value < 1:
            return False
        self.threads_set = (value, self.span(node).line)
        return True

    def _declaration(self, node: c_ast.Decl) -> Iterator[Node]:
        if not node.name or isinstance(node.type, c_ast.FuncDecl):
            return
        ctype = self.types.resolve(node.type)
        self.scope.variables[node.name] = Variable(node.name, ctype)
        if node.init is not None:
            evaluation = self.reader.declare_value(node.name, node.init)
            yield self._statement(node, evaluation)

    def _statement(self, node: c_ast.Node, evaluation: Evaluation) -> Statement:
        return Statement(
            span=self.span(node),
            text=_one_line(self._text(node)),
            flops=evaluation.flops,
            accesses=tuple(evaluation.accesses),
            special_calls=tuple(evaluation.special_calls),
            unknowns=tuple(evaluation.unknowns),
            dataflow=evaluation.stored,
        )

    def _text(self, node: c_ast.Node) -> str:
        """A node's source text, as written where the inliner replaced its calls."""
        return self.inlining.texts.get(id(node)) or source_text(node)

    def _unsupported(self, node: c_ast.Node, message: str) -> Statement:
        unknown = Unknown(UnknownKind.UNSUPPORTED, message, self.span(node))
        return Statement(self.span(node), type(node).__name__, FlopTally(), unknowns=(unknown,))

    def _if(self, node: c_ast.If) -> Branch:
        condition = self._statement(node.cond, self.reader.value(node.cond))
        span = self.span(node)
        fraction = fraction_symbol(f"p_L{_line_label(node)}")
        guard = self._guard(node.cond)
        before = self.scope.copy()
        then_body = tuple(self._lower(node.iftrue)) if node.iftrue is not None else ()
        self._forget_changes(before)
        else_body = tuple(self._lower(node.iffalse)) if node.iffalse is not None else ()
        self._forget_changes(before)
        unknown = Unknown(
            UnknownKind.BRANCH_FRACTION,
            f"branch `if ({_one_line(self._text(node.cond))})`: the fraction of executions "
            f"taking it is named {fraction}",
            span,
            str(fraction),
        )
        return Branch(span, condition, fraction, then_body, else_body, (unknown,), guard)

    def _guard(self, node: c_ast.Node) -> sympy.Basic | None:
        """The condition as a relation of loop variables and sizes (`i < j - 1`, `k > 0
        && i != j`), or None when it reads data or calls something. A relation of sizes
        alone (`n > 64`) keeps its named fraction; one that is always true or false
        (`i != i`, `n > 0`: sizes are positive) is that constant."""
        guard = self._relation(node)
        if guard is None or isinstance(guard, sympy.logic.boolalg.BooleanAtom):
            return guard  # `i != i` is false, `n > 0` true: sizes are positive
        loop_vars = {s for s in guard.free_symbols if self._is_loop_symbol(s)}
        return guard if loop_vars else None

    def _is_loop_symbol(self, symbol: sympy.Basic) -> bool:
        variable = self.scope.lookup(str(symbol))
        return variable is not None and variable.is_loop_var and symbol == loop_symbol(str(symbol))

    def _relation(self, node: c_ast.Node) -> sympy.Basic | None:
        if isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
            left, right = self._relation(node.left), self._relation(node.right)
            if left is None or right is None:
                return None
            return sympy.And(left, right) if node.op == "&&" else sympy.Or(left, right)
        if isinstance(node, c_ast.UnaryOp) and node.op == "!":
            inner = self._relation(node.expr)
            return None if inner is None else sympy.Not(inner)
        if isinstance(node, c_ast.BinaryOp) and node.op in _RELATIONS:
            left, right = self.reader.affine(node.left), self.reader.affine(node.right)
            if left is None or right is None:
                return None
            return sympy.Rel(left, right, _RELATIONS[node.op])
        return None

    def _forget_changes(self, before: Scope) -> None:
        """After a branch or loop body, integers it may have changed are no longer known."""
        for name, variable in self.scope.variables.items():
            old = before.lookup(name)
            if old is None or old.integer_value != variable.integer_value:
                variable.integer_value = None
            if old is None or old.pointer_base != variable.pointer_base:
                if old is not None and not variable.ctype.is_scalar:
                    variable.pointer_varies = True  # moved on some paths only
                variable.pointer_base = None

    # ---- loops --------------------------------------------------------------------------

    def _for(self, node: c_ast.For) -> Iterator[Node]:
        init_nodes = [node.init] if node.init is not None else []
        for init in init_nodes:
            yield from (n for n in self._lower(init) if _has_work(n))
        values = self._geometric_passes(node)
        if values is not None:
            yield from self._unrolled(node, *values)
            return
        updates = node.next.exprs if isinstance(node.next, c_ast.ExprList) else [node.next]
        counters = [
            (index, *_induction_step(update))
            for index, update in enumerate(updates)
            if update is not None and self._is_integer(_induction_step(update)[0])
        ]
        mentioned = [c for c in counters if _mentions(node.cond, c[1])]
        position, var, step = (mentioned or counters or [(-1, None, None)])[0]
        tile_step = None
        if var is None:
            tiles = [
                (index, *found)
                for index, update in enumerate(updates)
                if (found := self._size_step(update)) is not None and _mentions(node.cond, found[0])
            ]
            if tiles:
                position, var, tile_step = tiles[0]
        # Other updates (`p++` in `i++, p++`) run at the end of every pass, after the body.
        rest = [u for index, u in enumerate(updates) if index != position and u is not None]
        stmt = _continue_as_branch(node.stmt)
        body = c_ast.Compound([stmt, *rest], node.coord) if rest else stmt
        start, alias = self._counter_start(var)
        header = _Header(var, step, node.cond, start, _init_of(node.init, var), alias)
        # Tiles count from a known start only (else the counter's value is unknown).
        header.tile_step = tile_step if start is not None and not alias else None
        if node.next is None:  # `for (size_t i = n; i-- > 0;)`: moved in the test
            header = self._condition_counter(node.cond) or header
        yield from self._loop(node, header, body, at_least_once=False)

    def _geometric_passes(self, node: c_ast.For) -> tuple[str, list[int]] | None:
        """The counter and its value in each pass of a loop whose counter is multiplied,
        divided or shifted by a constant between constant bounds (`geometric_loops`)."""
        update = geometric_update(node.next)
        if update is None:
            return None
        var, operator, amount = update
        variable = self.scope.lookup(var)
        start = variable.integer_value if variable is not None else None
        comparison = _comparison(node.cond, var)
        bound = self.reader.affine(comparison[1]) if comparison is not None else None
        if (
            comparison is None
            or start is None
            or bound is None
            or not (start.is_Integer and bound.is_Integer)
            or _assigns(node.stmt, var)
        ):
            return None
        values = passes(int(start), comparison[0], int(bound), operator, amount)
        return None if values is None else (var, values)

    def _unrolled(self, node: c_ast.For, var: str, values: list[int]) -> Iterator[Node]:
        """Each pass of a geometric loop lowered with its counter's value."""
        variable = self.scope.lookup(var)
        assert variable is not None
        for value in values:
            variable.integer_value = constant(value)
            yield from self._lower(node.stmt)
        variable.integer_value = None

    def _size_step(self, node: c_ast.Node | None) -> tuple[str, sympy.Expr] | None:
        """`ii += BS`, `ii = ii + bs`: an integer counter moved by a size (a `#define` or a
        parameter), as tiled loops step, and that size; None for anything else. A size is
        a positive integer (docs/model.md), so the counter moves up."""
        if not isinstance(node, c_ast.Assignment) or not isinstance(node.lvalue, c_ast.ID):
            return None
        name, value = node.lvalue.name, node.rvalue
        if node.op == "=":
            if not (
                isinstance(value, c_ast.BinaryOp)
                and value.op == "+"
                and isinstance(value.left, c_ast.ID)
                and value.left.name == name
            ):
                return None
            value = value.right
        elif node.op != "+=":
            return None
        if not self._is_integer(name):
            return None
        step = self.reader.affine(value)
        if step is None or step.is_Integer or not step.free_symbols:
            return None
        if not all(is_size_symbol(s) for s in step.free_symbols) or not step.is_positive:
            return None
        return name, step

    def _is_integer(self, name: str | None) -> bool:
        """Can `name` count a loop? Not a pointer (that one walks) nor a float."""
        if name is None:
            return False
        variable = self.scope.lookup(name)
        if variable is None:
            return True
        element = variable.ctype.element
        return variable.ctype.is_scalar and element is not None and not element.is_float

    def _while(self, node: c_ast.While | c_ast.DoWhile, *, at_least_once: bool) -> Iterator[Node]:
        body_items = list(_items(node.stmt))
        var, step, position = None, None, -1
        for index, item in enumerate(body_items):
            candidate, candidate_step = _induction_step(item)
            if self._is_integer(candidate) and _mentions(node.cond, candidate):
                var, step, position = candidate, candidate_step, index
        body = [item for index, item in enumerate(body_items) if index != position]
        start, alias = self._counter_start(var)
        header = _Header(var, step, node.cond, start, None, alias)
        if position != len(body_items) - 1 and var is not None:
            # The counter moves mid-body: uses after the update see start + step.
            header = _Header(None, None, node.cond, None, None)
            body = body_items
        if var is None and not at_least_once:
            header = self._condition_counter(node.cond) or header
        yield from self._loop(node, header, c_ast.Compound(body, node.coord), at_least_once)

    def _condition_counter(self, condition: c_ast.Node | None) -> _Header | None:
        """`while (n--)`, `while (n-- > 0)`, `while (--n >= 0)`: the counter moves in the
        test itself, so the body sees it already moved; it gets a counter `t_L<line>`."""
        found = _updated_in_condition(condition)
        if found is None:
            return None
        var, step, is_prefix, plain = found
        entry, _ = self._counter_start(var)
        if entry is None:
            return None
        start = entry + step if is_prefix else entry
        return _Header(
            var, step, plain, start, None, alias=True, seen_offset=0 if is_prefix else step
        )

    def _counter_start(self, var: str | None) -> tuple[sympy.Expr | None, bool]:
        """The counter's value on entry, and whether it is a size parameter counted down
        or up in place (`while (n > 0) { ...; n--; }`): its entry value is then the size
        `n`, and the loop gets a counter of its own, `t_L<line>`, from 0."""
        variable = self.scope.lookup(var) if var is not None else None
        if variable is None:
            return None, False
        if variable.integer_value is not None:
            return variable.integer_value, False
        element = variable.ctype.element
        if (
            variable.is_parameter
            and not variable.is_loop_var
            and variable.ctype.is_scalar
            and element is not None
            and not element.is_float
        ):
            assert var is not None
            return size_symbol(var), True
        return None, False

    def _loop(
        self, node: c_ast.Node, header: _Header, body: c_ast.Node, at_least_once: bool
    ) -> Iterator[Node]:
        """The loop, preceded by its bound's evaluation when that reads memory.

        A recognised bound (`j < rowptr[i + 1]`) is loop-invariant and counted once per
        entry, as compilers hoist it; an unrecognised condition is counted every iteration.
        """
        span = self.span(node)
        parallel = self.shared_loops.pop(id(node), None)
        if parallel is None and self.parallel_region is not None:
            region, depth = self.parallel_region
            parallel = region if depth == len(self.enclosing_loops) else None
        start, trip, unknowns, recognised = self._trip(
            header, span, _line_label(node), at_least_once
        )
        comparison = _comparison(header.condition, header.var) if header.var else None
        tested = None  # a condition evaluated on every pass, with the body
        if header.condition is not None:
            if recognised:
                hoisted = comparison[1] if comparison is not None else header.condition
                bound = self._statement(hoisted, self.reader.value(hoisted))
                if _has_work(bound):
                    yield bound
            else:
                tested = header.condition
        each_pass = body if tested is None else c_ast.Compound([tested, body], body.coord)
        var = header.var or f"_loop_L{span.line}"
        step: sympy.Expr = constant(header.step or 1)
        moves_by: sympy.Expr = constant(header.step or 1)
        if header.tile_step is not None and header.var is not None:
            # A counter moved by a size (`ii += BS`): the loop counts its tiles `t_L<line>`
            # from 0, and the counter is `start + BS*t_L<line>` in the body.
            moves_by = header.tile_step
        if header.alias or header.tile_step is not None:
            var, step = f"t_L{span.line}", ONE
            counter_entry, start = start, ZERO
        before = self.scope.copy()
        self._forget_assigned(each_pass)
        declared = before.lookup(var)
        ctype = declared.ctype if declared is not None and declared.ctype.is_scalar else None
        self.scope.variables[var] = Variable(var, ctype or _INT_CTYPE, is_loop_var=True)
        iteration = (loop_symbol(var) - start) / step
        if (header.alias or header.tile_step is not None) and (
            counter := self.scope.lookup(header.var or "")
        ) is not None:
            moved = counter_entry + moves_by * loop_symbol(var)
            counter.integer_value = moved + header.seen_offset
        walks = self._walk_pointers(each_pass, before, iteration)
        self.enclosing_loops.append((var, start, int(step), trip))
        per_iteration: list[Node] = []
        if tested is not None:
            condition = self._statement(tested, self.reader.value(tested))
            if _has_work(condition):
                per_iteration.append(condition)
        lowered = (*per_iteration, *self._lower(body))
        self.enclosing_loops.pop()
        self._forget_changes(before)
        self._after_walks(walks, trip)
        if header.var is not None and (variable := self.scope.lookup(header.var)) is not None:
            variable.is_loop_var = (
                before.variables[header.var].is_loop_var
                if (header.var in before.variables)
                else False
            )
            variable.integer_value = None
        if header.var not in before.variables:
            self.scope.variables.pop(var, None)
        # A tile loop around just its point loop is that one loop (`aiscan.ir.tiles`).
        extent = self._extent(node)
        loop = merged_tiles(Loop(var, start, int(step), trip, lowered, extent, unknowns, parallel))
        yield self._nonempty(loop, span)

    def _nonempty(self, loop: Loop, span: Span) -> Node:
        """`loop`, guarded by `trip >= 1` where its trip follows an enclosing loop and can
        go negative (`j = i + 2; j < n` at i = n - 1), so the branch analysis counts only
        the iterations that exist, not a closed form that counts -1 for that row."""
        if not may_go_negative(loop.trip, self.enclosing_loops):
            return loop
        condition = Statement(span, f"if {loop.var}'s range is not empty", FlopTally())
        return Branch(span, condition, ONE, (loop,), (), (), sympy.Ge(loop.trip, 1))

    def _walk_pointers(
        self, body: c_ast.Node, before: Scope, iteration: sympy.Expr
    ) -> dict[str, tuple[str, sympy.Expr, int] | None]:
        """Pointers the body moves by a constant each pass point, at iteration `t`, `t`
        steps past where they started; any other moved pointer varies (indirect)."""
        walks: dict[str, tuple[str, sympy.Expr, int] | None] = {}

        def is_pointer(name: str) -> bool:
            variable = self.scope.lookup(name)
            return variable is not None and not variable.ctype.is_scalar

        _, _, assigned = self._subtree(body)
        if not any(is_pointer(name) for name in assigned):
            return walks  # nothing moves a pointer: skip the walk of the whole body
        for name, step in pointer_steps(body, is_pointer).items():
            variable, entry = self.scope.lookup(name), before.lookup(name)
            assert variable is not None
            if step is None or entry is None or entry.pointer_varies:
                variable.pointer_base, variable.pointer_varies = None, True
                walks[name] = None
                continue
            base, offset = entry.pointer_base or (name, ZERO)
            variable.pointer_base = (base, expand(offset + step * iteration))
            walks[name] = (base, offset, step)
        return walks

    def _after_walks(
        self, walks: dict[str, tuple[str, sympy.Expr, int] | None], trip: sympy.Expr
    ) -> None:
        """After the loop, a walked pointer is `trip` steps on; a varying one stays unknown."""
        for name, walk in walks.items():
            variable = self.scope.lookup(name)
            if variable is None:
                continue
            if walk is None:
                variable.pointer_base, variable.pointer_varies = None, True
            else:
                base, offset, step = walk
                variable.pointer_base = (base, expand(offset + step * trip))
                variable.pointer_varies = False

    def _forget_assigned(self, body: c_ast.Node) -> None:
        """Integers assigned anywhere in a loop body vary from one iteration to the next."""
        _, _, assigned = self._subtree(body)
        for name in assigned:
            if (v := self.scope.lookup(name)) is not None:
                v.integer_value = None
                v.pointer_base = None

    def _trip(
        self, header: _Header, span: Span, label: str, at_least_once: bool
    ) -> tuple[sympy.Expr, sympy.Expr, tuple[Unknown, ...], bool]:
        """Start, trip count, unknowns, and whether the header's bound was recognised."""
        exact = self._exact_trip(header)
        if exact is not None:
            start, trip = exact
            if at_least_once:
                trip = normal(sympy.Max(trip, 1))
            wrap = unsigned_wrap(self.reader, header.condition)
            if self._never_ends(header):
                unknown = Unknown(
                    UnknownKind.DATA_DEPENDENT_BOUND,
                    f"unsigned `{_one_line(source_text(header.condition))}` is always true: "
                    f"the loop never ends (it wraps past zero); counted as {trip} iterations",
                    span,
                )
                return start, trip, (unknown,), True
            if wrap is None:
                return start, trip, (), True
            unknown = Unknown(
                UnknownKind.DATA_DEPENDENT_BOUND,
                f"unsigned `{wrap}` wraps around where it would go below zero, and the loop "
                f"then runs about 2**64 times: the trip count {trip} assumes it does not",
                span,
            )
            return start, trip, (unknown,), True
        csr = self._csr_trip(header)
        if csr is not None:
            start, trip, name = csr
            unknown = Unknown(
                UnknownKind.DATA_DEPENDENT_BOUND,
                f"loop bounds are data-dependent ({name}[...] .. {name}[...+1]); iterations "
                f"summed over the enclosing loop are named nnz_{name}",
                span,
                f"nnz_{name}",
            )
            return start, trip, (unknown,), True
        symbol = trip_symbol(f"trip_L{label}")
        condition = _one_line(source_text(header.condition)) if header.condition else "?"
        unknown = Unknown(
            UnknownKind.DATA_DEPENDENT_BOUND,
            f"cannot derive the trip count of the loop on `{condition}`; named {symbol}",
            span,
            str(symbol),
        )
        start = header.start if header.start is not None else ZERO
        return start, symbol, (unknown,), False

    def _exact_trip(self, header: _Header) -> tuple[sympy.Expr, sympy.Expr] | None:
        if header.var is None or header.start is None:
            return None
        if header.tile_step is not None:
            return self._tile_trip(header, header.tile_step)
        if header.step in (None, 0):
            return None
        found = counter_bound(self.reader, header.condition, header.var)
        if found is None:
            return None
        operator, bound = found
        start, step = header.start, header.step
        assert step is not None
        if operator == "!=" and abs(step) != 1:
            return None  # `i != n; i += 2` ends only if it lands on n: no closed form
        if step > 0 and operator in ("<", "<=", "!="):
            distance = _shifted(bound, (1 if operator == "<=" else 0) - start)
        elif step < 0 and operator in (">", ">=", "!="):
            distance = _shifted(-bound, start + (1 if operator == ">=" else 0))
        else:
            return None
        magnitude = abs(step)
        trip = distance if magnitude == 1 else normal(sympy.ceiling(distance / magnitude))
        if is_poly(trip) or not isinstance(trip, sympy.Min | sympy.Max):
            trip = expand(trip)
        return start, never_below_zero(trip)

    def _tile_trip(self, header: _Header, step: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
        """`for (ii = s; ii < n; ii += BS)`: ceiling((n - s)/BS) tiles."""
        assert header.var is not None and header.start is not None
        found = counter_bound(self.reader, header.condition, header.var)
        if found is None or found[0] not in ("<", "<="):
            return None
        operator, bound = found
        distance = expand(bound - header.start + (1 if operator == "<=" else 0))
        if not is_poly(bound) and isinstance(bound, sympy.Min | sympy.Max):
            return None
        return header.start, never_below_zero(normal(sympy.ceiling(expand(distance / step))))

    def _never_ends(self, header: _Header) -> bool:
        """`for (size_t i = n - 1; i >= 0; i--)`: an unsigned counter is never below 0."""
        if header.var is None or header.alias or (header.step or 0) >= 0:
            return False
        variable = self.scope.lookup(header.var)
        element = variable.ctype.element if variable is not None else None
        if element is None or "unsigned" not in element.name:
            return False
        found = counter_bound(self.reader, header.condition, header.var)
        return found is not None and found[0] == ">=" and bool(found[1] <= 0)

    def _csr_trip(self, header: _Header) -> tuple[sympy.Expr, sympy.Expr, str] | None:
        """`for (j = ptr[i]; j < ptr[i+1]; j++)`: a compressed-row loop over nnz entries."""
        if header.var is None or header.step != 1:
            return None
        comparison = _comparison(header.condition, header.var)
        if comparison is None or comparison[0] != "<" or header.start_node is None:
            return None
        low, high = header.start_node, comparison[1]
        if not (isinstance(low, c_ast.ArrayRef) and isinstance(high, c_ast.ArrayRef)):
            return None
        if source_text(low.name) != source_text(high.name):
            return None
        low_index, high_index = (
            self.reader.affine(low.subscript),
            self.reader.affine(high.subscript),
        )
        if low_index is None or high_index is None or expand(high_index - low_index) != 1:
            return None
        if not self.enclosing_loops or low_index != loop_symbol(self.enclosing_loops[-1][0]):
            return None
        name = source_text(low.name)
        # Summed over the enclosing loop the row lengths telescope to ptr[last+1] - ptr[0]:
        # nnz in all, the rows disjoint. Model each row as the average length, placed after
        # the previous rows, so footprints over `j` come out as nnz too.
        outer_var, outer_start, _, outer_trip = self.enclosing_loops[-1]
        row_length = size_symbol(f"nnz_{name}") / outer_trip
        return (loop_symbol(outer_var) - outer_start) * row_length, row_length, name


class _Header:
    """What a loop header says: the counter, its step, the condition, the counter's start."""

    def __init__(
        self,
        var: str | None,
        step: int | None,
        condition: c_ast.Node | None,
        start: sympy.Expr | None,
        start_node: c_ast.Node | None,
        alias: bool = False,
        seen_offset: int = 0,
    ) -> None:
        self.alias = alias
        self.seen_offset = seen_offset
        """How far the body sees the counter past the value the condition tested."""
        self.var = var
        self.step = step
        self.condition = condition
        self.start = start
        self.start_node = start_node
        self.tile_step: sympy.Expr | None = None
        """A size the counter moves up by each pass (`ii += BS`), when it is not a constant."""


_INT_CTYPE = CType(element_type_named(["int"]))


_RELATIONS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


def _shifted(bound: sympy.Expr, offset: sympy.Expr) -> sympy.Expr:
    """`bound + offset`, the offset moved into each side of a `Min`/`Max` bound
    (`min(ii + BS, n) - ii` is `Min(BS, n - ii)`), so that the tile loops of
    `analysis.domain.untiled` are recognised; `-Min(a, b)` is `Max(-a, -b)`."""
    if is_poly(bound):
        return expand(bound + offset)
    if isinstance(bound, sympy.Mul) and bound.args[0] == -1 and len(bound.args) == 2:
        inner = bound.args[1]
        if isinstance(inner, sympy.Min | sympy.Max):
            flipped = sympy.Max if isinstance(inner, sympy.Min) else sympy.Min
            return flipped(*(expand(offset - a) for a in inner.args))
    if isinstance(bound, sympy.Min | sympy.Max):
        return type(bound)(*(expand(a + offset) for a in bound.args))
    return expand(bound + offset)


def _induction_step(node: c_ast.Node | None) -> tuple[str | None, int | None]:
    """`i++`, `--i`, `i += 2`, `i -= 1`, `i = i + 4`: the counter and its constant step."""
    if isinstance(node, c_ast.UnaryOp) and isinstance(node.expr, c_ast.ID):
        if node.op in ("++", "p++"):
            return node.expr.name, 1
        if node.op in ("--", "p--"):
            return node.expr.name, -1
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID):
        name = node.lvalue.name
        value = node.rvalue
        if node.op in ("+=", "-=") and isinstance(value, c_ast.Constant) and value.type == "int":
            step = integer_literal(value.value)
            if step is None:
                return None, None
            return name, step if node.op == "+=" else -step
        if (
            node.op == "="
            and isinstance(value, c_ast.BinaryOp)
            and value.op in "+-"
            and isinstance(value.left, c_ast.ID)
            and value.left.name == name
            and isinstance(value.right, c_ast.Constant)
            and value.right.type == "int"
        ):
            step = integer_literal(value.right.value)
            if step is None:
                return None, None
            return name, step if value.op == "+" else -step
    if isinstance(node, c_ast.ExprList) and len(node.exprs) == 1:
        return _induction_step(node.exprs[0])
    return None, None


def _updated_in_condition(
    condition: c_ast.Node | None,
) -> tuple[str, int, bool, c_ast.Node] | None:
    """`n--` -> ('n', -1, postfix, `n != 0`); `--n > 0` -> ('n', -1, prefix, `n > 0`)."""
    compared: c_ast.Node = c_ast.Constant("int", "0")
    operator = "!="
    update = condition
    if isinstance(condition, c_ast.BinaryOp) and condition.op in _FLIPPED:
        update, compared, operator = condition.left, condition.right, condition.op
    if not (
        isinstance(update, c_ast.UnaryOp)
        and update.op in ("++", "--", "p++", "p--")
        and isinstance(update.expr, c_ast.ID)
    ):
        return None
    name = update.expr.name
    if _mentions(compared, name):
        return None
    step = 1 if "+" in update.op else -1
    plain = c_ast.BinaryOp(operator, update.expr, compared, condition.coord if condition else None)
    return name, step, not update.op.startswith("p"), plain


def _same_file(a: str | None, b: str) -> bool:
    """Is `a`, a parser coordinate's file (a `#line` name), the file `b`?"""
    if a is None:
        return False
    a = file_of(a)
    return a == b or os.path.abspath(a) == os.path.abspath(b)


def _init_of(init: c_ast.Node | None, var: str | None) -> c_ast.Node | None:
    """The expression a `for` header initialises its counter with."""
    if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        return init.rvalue if init.lvalue.name == var else None
    if isinstance(init, c_ast.DeclList):
        return next((d.init for d in init.decls if d.name == var), None)
    return None


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


def _comparison(condition: c_ast.Node | None, var: str) -> tuple[str, c_ast.Node] | None:
    """`i < n` -> ('<', n); `n > i` -> ('<', n); anything else -> None."""
    if not isinstance(condition, c_ast.BinaryOp) or condition.op not in _FLIPPED:
        return None
    if isinstance(condition.left, c_ast.ID) and condition.left.name == var:
        return condition.op, condition.right
    if isinstance(condition.right, c_ast.ID) and condition.right.name == var:
        return _FLIPPED[condition.op], condition.left
    return None


def _assigns(node: c_ast.Node | None, name: str) -> bool:
    """Whether `node` assigns to (or increments) the variable `name`."""
    return node is not None and any(
        (
            isinstance(n, c_ast.Assignment)
            and isinstance(n.lvalue, c_ast.ID)
            and n.lvalue.name == name
        )
        or (
            isinstance(n, c_ast.UnaryOp)
            and n.op in ("++", "--", "p++", "p--")
            and isinstance(n.expr, c_ast.ID)
            and n.expr.name == name
        )
        for n in nodes_of(node)
    )


def _mentions(node: c_ast.Node | None, name: str | None) -> bool:
    return (
        node is not None
        and name is not None
        and any(isinstance(n, c_ast.ID) and n.name == name for n in nodes_of(node))
    )


def _items(node: c_ast.Node | None) -> list[c_ast.Node]:
    if node is None:
        return []
    if isinstance(node, c_ast.Compound):
        return list(node.block_items or [])
    return [node]


def _has_work(node: Node) -> bool:
    if isinstance(node, Statement):
        return bool(node.accesses) or not node.flops.is_zero() or bool(node.unknowns)
    return True


def _accesses(body: tuple[Node, ...]) -> Iterator[Access]:
    for node in body:
        if isinstance(node, Statement):
            yield from node.accesses
        elif isinstance(node, Loop):
            yield from _accesses(node.body)
        else:
            yield from node.condition.accesses
            yield from _accesses(node.then_body)
            yield from _accesses(node.else_body)


def _span_of_nodes(nodes: list[Node]) -> Span:
    first, last = nodes[0].span, nodes[-1].span
    return Span(first.file, first.line, first.column, max(last.end_line, last.line))


def _line_label(node: c_ast.Node) -> str:
    """The line in a symbol's name: `12`, or `12_3` for line 3 of a callee inlined at line
    12 (two branches of one callee are two fractions)."""
    coord = node.coord
    if isinstance(coord, InlinedCoord):
        return f"{coord.line}_{coord.callee_line}"
    return str(coord.line) if coord is not None else "0"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _continue_as_branch(body: c_ast.Node | None) -> c_ast.Node | None:
    """`if (c) continue;` among a for loop's statements is `if (!c) { the rest }`: the
    statements after it run where `c` is false, which the branch analysis counts (exactly
    for an index condition such as `j == i`). A `continue` anywhere else stays an unknown."""
    if not isinstance(body, c_ast.Compound) or not body.block_items:
        return body
    items = list(body.block_items)
    for position, item in enumerate(items):
        if (
            isinstance(item, c_ast.If)
            and item.iffalse is None
            and _only_continue(item.iftrue)
            and position + 1 < len(items)
        ):
            rest = c_ast.Compound(items[position + 1 :], items[position + 1].coord)
            negated = c_ast.UnaryOp("!", item.cond, item.cond.coord)
            skip = c_ast.If(negated, _continue_as_branch(rest), None, item.coord)
            return c_ast.Compound([*items[:position], skip], body.coord)
    return body


def _only_continue(node: c_ast.Node | None) -> bool:
    if isinstance(node, c_ast.Continue):
        return True
    return (
        isinstance(node, c_ast.Compound)
        and node.block_items is not None
        and len(node.block_items) == 1
        and isinstance(node.block_items[0], c_ast.Continue)
    )
