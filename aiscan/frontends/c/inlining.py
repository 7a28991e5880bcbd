"""Calls to functions of the same translation unit, counted as their bodies.

Real C and CUDA put their arithmetic in small helpers (`sq`, `axpy1`, a row kernel called
with `&a[i*n]`); counting such a call as unknown loses the kernel. So, before lowering, a
call `f(a, b)` to a function with a body becomes a block placed before the statement that
makes it: each parameter bound to its argument (a scalar to its value, a pointer or array
to the argument's address, so that `p[j]` indexes the caller's array at the offset), the
callee's body with its names made unique, and each `return e` an assignment to a result
variable that replaces the call. Lowering then counts it as it counts the hand-inlined
code; loops of the callee are loops of the caller's nest.

Every node of an inlined body is placed at the call (an `InlinedCoord`, which also keeps
the callee's own line): report lines, nest extents and lint stay in the caller's lines.

A call that cannot be inlined stays a call, and its reason goes with it to the unknown the
lowering reports: recursion, a variable number of arguments, `goto` or labels in the
callee, an argument count that does not match, nesting deeper than `MAX_DEPTH`, or a call
in a loop header (evaluated on every pass, which the lowering does not follow).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pycparser import c_ast

from aiscan.frontends.c.subtree import nodes_of
from aiscan.frontends.c.text import source_text

__all__ = ["MAX_CALLS", "MAX_DEPTH", "InlinedCall", "InlinedCoord", "Inlining", "inline_calls"]

MAX_DEPTH = 8
"""Calls nested deeper than this (a helper calling a helper ...) are not inlined."""
MAX_CALLS = 1000
"""Calls inlined into one function at most: helpers that each call several others grow
the body exponentially with the depth; past this, calls stay unknown (and say so)."""


class InlinedCoord:
    """A coordinate at the call site for a node of an inlined body, as pycparser's own
    coordinates read (`file`, `line`, `column`); `callee_line` is the line the node has in
    the callee (for names that must differ between its branches)."""

    __slots__ = ("callee_line", "column", "file", "line")

    def __init__(self, site: Any, callee_line: int) -> None:
        self.file = site.file
        self.line = site.line
        self.column = site.column
        self.callee_line = callee_line

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class InlinedCall:
    """One call counted as its callee's body."""

    callee: str
    callee_line: int
    """The line of the callee's definition (in the file that defines it)."""
    callee_file: str
    line: int
    column: int


@dataclass(slots=True)
class Inlining:
    """A function body with its calls inlined, and what became of each call."""

    body: c_ast.Compound
    calls: list[InlinedCall] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)
    """`id` of each call left in place (the node lives in `body`) -> why."""
    texts: dict[int, str] = field(default_factory=dict)
    """`id` of a statement or condition whose calls were replaced -> its text as written
    (`y[i] = sq(x[i]) + y[i]`, not the result variable), for the report."""
    early_returns: list[tuple[Any, str, int]] = field(default_factory=list)
    """A `return` before the end of a callee: the call's coordinate, the callee, the
    return's line in it."""


def inline_calls(
    body: c_ast.Compound,
    definitions: Mapping[str, c_ast.FuncDef],
    references: Mapping[str, frozenset[int]] | None = None,
) -> Inlining:
    """A copy of `body` with every call to a function of `definitions` inlined where it
    can be (the original tree is left alone: the callee is also analyzed on its own);
    `body` itself when it calls none of them (copying a tree cost a one-kernel run 2 ms).
    `references` names, per function, the positions of parameters that are C++
    references (CUDA `float &acc`): each use of one is its argument, an lvalue."""
    if not _calls_known(body, definitions):
        return Inlining(body)  # nothing to inline: no copy to keep the original from
    copied = copy.deepcopy(body)
    inliner = _Inliner(definitions, Inlining(copied), references or {})
    inliner.statement(copied, ())
    return inliner.result


def _calls_known(node: c_ast.Node, definitions: Mapping[str, c_ast.FuncDef]) -> bool:
    return any(
        isinstance(n, c_ast.FuncCall)
        and isinstance(n.name, c_ast.ID)
        and n.name.name in definitions
        for n in nodes_of(node)
    )


class _Inliner:
    def __init__(
        self,
        definitions: Mapping[str, c_ast.FuncDef],
        result: Inlining,
        references: Mapping[str, frozenset[int]],
    ) -> None:
        self.definitions = definitions
        self.references = references
        self.result = result
        self.count = 0
        self.recursive: dict[str, bool] = {}

    # ---- statements ---------------------------------------------------------------------

    def statement(self, node: c_ast.Node, chain: tuple[str, ...]) -> c_ast.Node:
        """`node` with the calls it makes inlined: a block of the callees' bodies, then the
        statement itself reading their results."""
        if isinstance(node, c_ast.Compound):
            node.block_items = [self.statement(item, chain) for item in node.block_items or []]
            return node
        if isinstance(node, c_ast.For):
            self._refuse_in(node.init, "in a loop header", chain)
            self._refuse_in(node.cond, "in a loop header", chain)
            self._refuse_in(node.next, "in a loop header", chain)
            node.stmt = self.statement(node.stmt, chain) if node.stmt is not None else None
            return node
        if isinstance(node, (c_ast.While, c_ast.DoWhile)):
            self._refuse_in(node.cond, "in a loop header", chain)
            node.stmt = self.statement(node.stmt, chain) if node.stmt is not None else None
            return node
        if isinstance(node, (c_ast.Label, c_ast.Case, c_ast.Default)):
            return node  # not analyzed (a located unknown of its own)
        prelude: list[c_ast.Node] = []
        if isinstance(node, c_ast.If):
            before = self._text(node.cond)
            node.cond = self.expression(node.cond, prelude, chain)
            self._keep_text(node.cond, before, prelude)
            node.iftrue = self.statement(node.iftrue, chain) if node.iftrue is not None else None
            node.iffalse = self.statement(node.iffalse, chain) if node.iffalse is not None else None
        elif isinstance(node, c_ast.Switch):
            node.cond = self.expression(node.cond, prelude, chain)
        elif isinstance(node, c_ast.DeclList):
            for declaration in node.decls:
                before = self._text(declaration)
                self._declaration(declaration, prelude, chain)
                self._keep_text(declaration, before, prelude)
        elif isinstance(node, c_ast.FuncCall):
            replaced = self.expression(node, prelude, chain, value_used=False)
            if replaced is not node:
                return c_ast.Compound(prelude, node.coord)
        elif not isinstance(node, (c_ast.Pragma, c_ast.Goto, c_ast.Typedef)):
            before = self._text(node)
            if isinstance(node, c_ast.Decl):
                self._declaration(node, prelude, chain)
            elif isinstance(node, c_ast.Return):
                node.expr = self.expression(node.expr, prelude, chain) if node.expr else None
            else:
                node = self.expression(node, prelude, chain)
            self._keep_text(node, before, prelude)
        if not prelude:
            return node
        return c_ast.Compound([*prelude, node], node.coord)

    def _text(self, node: c_ast.Node) -> str | None:
        """The source text of a statement (or condition) that calls a known function,
        before its calls are replaced by their results."""
        return source_text(node) if _calls_known(node, self.definitions) else None

    def _keep_text(self, node: c_ast.Node, before: str | None, prelude: list[c_ast.Node]) -> None:
        if before is not None and prelude:
            self.result.texts[id(node)] = before

    def _declaration(
        self, node: c_ast.Decl, prelude: list[c_ast.Node], chain: tuple[str, ...]
    ) -> None:
        if node.init is not None:
            node.init = self.expression(node.init, prelude, chain)

    def _refuse_in(self, node: c_ast.Node | None, reason: str, chain: tuple[str, ...]) -> None:
        if node is None:
            return
        for found in nodes_of(node):
            if isinstance(found, c_ast.FuncCall) and self._callee(found) is not None:
                self.result.refused[id(found)] = reason

    # ---- expressions --------------------------------------------------------------------

    def expression(
        self,
        node: c_ast.Node,
        prelude: list[c_ast.Node],
        chain: tuple[str, ...],
        *,
        value_used: bool = True,
    ) -> c_ast.Node:
        """`node` with each call to a known function replaced by its result variable (its
        body appended to `prelude`), innermost and leftmost first, as C evaluates them."""
        if isinstance(node, c_ast.UnaryOp) and node.op == "sizeof":
            return node  # not evaluated
        for name, child in _child_slots(node):
            if isinstance(child, list):
                setattr(node, name, [self.expression(c, prelude, chain) for c in child])
            else:
                setattr(node, name, self.expression(child, prelude, chain))
        if not isinstance(node, c_ast.FuncCall):
            return node
        definition = self._callee(node)
        if definition is None:
            return node
        reason = self._refusal(definition, node, chain)
        if reason is not None:
            self.result.refused[id(node)] = reason
            return node
        return self._inline(definition, node, prelude, chain, value_used)

    def _callee(self, node: c_ast.FuncCall) -> c_ast.FuncDef | None:
        if not isinstance(node.name, c_ast.ID):
            return None
        return self.definitions.get(node.name.name)

    def _refusal(
        self, definition: c_ast.FuncDef, call: c_ast.FuncCall, chain: tuple[str, ...]
    ) -> str | None:
        name = definition.decl.name
        parameters = _parameters(definition)
        arguments = call.args.exprs if call.args is not None else []
        if name in chain or self._is_recursive(name):
            return "it is recursive"
        if len(chain) >= MAX_DEPTH:
            return f"calls nested deeper than {MAX_DEPTH}"
        if self.count >= MAX_CALLS:
            return f"more than {MAX_CALLS} calls inlined into this function already"
        if parameters is None or definition.param_decls:
            return "its parameters are not read (an old-style definition)"
        if any(isinstance(p, c_ast.EllipsisParam) for p in parameters):
            return "it takes a variable number of arguments"
        if any(isinstance(n, (c_ast.Goto, c_ast.Label)) for n in nodes_of(definition.body)):
            return "its body uses `goto`"
        if len(arguments) != len(parameters):
            return f"{len(arguments)} arguments for {len(parameters)} parameters"
        return None

    def _is_recursive(self, name: str) -> bool:
        """Whether `name` calls itself, directly or through other functions of the file:
        inlining it a few levels deep would count a guess."""
        if name not in self.recursive:
            seen: set[str] = set()
            stack = list(_callees(self.definitions[name], self.definitions))
            while stack:
                callee = stack.pop()
                if callee in seen:
                    continue
                seen.add(callee)
                stack.extend(_callees(self.definitions[callee], self.definitions))
            self.recursive[name] = name in seen
        return self.recursive[name]

    def _inline(
        self,
        definition: c_ast.FuncDef,
        call: c_ast.FuncCall,
        prelude: list[c_ast.Node],
        chain: tuple[str, ...],
        value_used: bool,
    ) -> c_ast.Node:
        name = definition.decl.name
        self.count += 1
        suffix = f"_{self.count}"
        parameters = _parameters(definition) or []
        arguments = call.args.exprs if call.args is not None else []
        body = copy.deepcopy(definition.body)
        header = copy.deepcopy(parameters)
        returns = _return_type(definition)
        site = call.coord or definition.coord
        result_name = f"{name}_result{suffix}" if returns is not None and value_used else None
        block: list[c_ast.Node] = []
        if result_name is not None and returns is not None:
            block.append(_declared(result_name, returns, None, site))
        by_reference = self.references.get(name, frozenset())
        renames = {
            p.name: f"{name}_{p.name}{suffix}"
            for at, p in enumerate(header)
            if p.name and at not in by_reference
        }
        renames.update(
            {d.name: f"{name}_{d.name}{suffix}" for d in nodes_of(body) if _is_variable(d)}
        )
        bound: dict[str, c_ast.Node] = {}
        for at, (parameter, argument) in enumerate(zip(header, arguments, strict=True)):
            if not parameter.name:
                continue
            if at in by_reference:
                bound[parameter.name] = argument
            else:
                block.append(_declared(renames[parameter.name], parameter.type, argument, site))
        _rename(body, renames)
        if bound:
            body = _substituted(body, bound)
        self._returns(body, result_name, site, name, tail=True)
        for node in [*nodes_of(c_ast.Compound(block)), *nodes_of(body)]:
            if site is not None and node.coord is not None:
                node.coord = InlinedCoord(site, node.coord.line)
        block.append(self.statement(body, (*chain, name)))
        prelude.append(c_ast.Compound(block, site))
        coord = definition.decl.coord or definition.coord
        self.result.calls.append(
            InlinedCall(
                name,
                coord.line if coord else 0,
                coord.file if coord else "",
                site.line if site else 0,
                (site.column or 1) if site else 1,
            )
        )
        if result_name is None:
            return c_ast.Constant("int", "0", site)
        return c_ast.ID(result_name, site)

    def _returns(
        self, node: c_ast.Node, result: str | None, site: Any, callee: str, *, tail: bool
    ) -> None:
        """Each `return e` becomes `result = e`; one before the end of the body is noted
        (what follows it is counted as if it ran)."""
        if isinstance(node, c_ast.Compound):
            items = node.block_items or []
            node.block_items = [
                self._returned(item, result, site, callee, tail=tail and at == len(items) - 1)
                for at, item in enumerate(items)
            ]
        elif isinstance(node, c_ast.If):
            node.iftrue = self._returned(node.iftrue, result, site, callee, tail=tail)
            node.iffalse = self._returned(node.iffalse, result, site, callee, tail=tail)
        elif isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            node.stmt = self._returned(node.stmt, result, site, callee, tail=False)
        elif isinstance(node, (c_ast.Case, c_ast.Default)):
            node.stmts = [
                self._returned(item, result, site, callee, tail=False) for item in node.stmts or []
            ]

    def _returned(
        self, node: c_ast.Node | None, result: str | None, site: Any, callee: str, *, tail: bool
    ) -> c_ast.Node | None:
        if node is None:
            return None
        if not isinstance(node, c_ast.Return):
            self._returns(node, result, site, callee, tail=tail)
            return node
        if not tail and node.coord is not None:
            self.result.early_returns.append((site, callee, node.coord.line))
        if node.expr is None:
            return c_ast.EmptyStatement(node.coord)
        if result is None:
            return node.expr  # evaluated for its work, its value unused
        return c_ast.Assignment("=", c_ast.ID(result, node.coord), node.expr, node.coord)


def _substituted(node: c_ast.Node, bound: Mapping[str, c_ast.Node]) -> Any:
    """`node` with each name in `bound` replaced by a copy of its expression (a reference
    parameter by its argument); member names after `.` and `->` are not variables."""
    if isinstance(node, c_ast.ID):
        found = bound.get(node.name)
        return copy.deepcopy(found) if found is not None else node
    for slot in type(node).__slots__:
        if slot in ("coord", "__weakref__") or slot in type(node).attr_names:
            continue
        if isinstance(node, c_ast.StructRef) and slot == "field":
            continue
        if isinstance(node, c_ast.FuncCall) and slot == "name":
            continue
        value = getattr(node, slot)
        if isinstance(value, list):
            setattr(node, slot, [_substituted(v, bound) for v in value])
        elif isinstance(value, c_ast.Node):
            setattr(node, slot, _substituted(value, bound))
    return node


def _callees(definition: c_ast.FuncDef, definitions: Mapping[str, c_ast.FuncDef]) -> set[str]:
    return {
        n.name.name
        for n in nodes_of(definition.body)
        if isinstance(n, c_ast.FuncCall)
        and isinstance(n.name, c_ast.ID)
        and n.name.name in definitions
    }


def _parameters(definition: c_ast.FuncDef) -> list[c_ast.Decl] | None:
    """The callee's parameters (`f(void)` has none); None where they are not declared."""
    signature = definition.decl.type
    if not isinstance(signature, c_ast.FuncDecl):
        return None
    if signature.args is None:
        return []
    params = list(signature.args.params)
    if (
        len(params) == 1
        and isinstance(params[0], c_ast.Typename)
        and isinstance(params[0].type, c_ast.TypeDecl)
        and isinstance(params[0].type.type, c_ast.IdentifierType)
        and params[0].type.type.names == ["void"]
    ):
        return []
    if not all(isinstance(p, (c_ast.Decl, c_ast.EllipsisParam)) for p in params):
        return None
    return params


def _return_type(definition: c_ast.FuncDef) -> c_ast.Node | None:
    """The type the function returns, None for `void`."""
    signature = definition.decl.type
    returned = signature.type if isinstance(signature, c_ast.FuncDecl) else None
    if (
        isinstance(returned, c_ast.TypeDecl)
        and isinstance(returned.type, c_ast.IdentifierType)
        and returned.type.names == ["void"]
    ):
        return None
    return returned


def _declared(name: str, ctype: c_ast.Node, init: c_ast.Node | None, site: Any) -> c_ast.Decl:
    """`ctype name = init;`, an array parameter's type kept (lowering aliases it)."""
    typed = copy.deepcopy(ctype)
    _set_declname(typed, name)
    return c_ast.Decl(name, [], [], [], [], typed, init, None, coord=site)


def _set_declname(node: c_ast.Node, name: str) -> None:
    while not isinstance(node, c_ast.TypeDecl):
        inner = getattr(node, "type", None)
        if inner is None:
            return
        node = inner
    node.declname = name


def _is_variable(node: c_ast.Node) -> bool:
    return (
        isinstance(node, c_ast.Decl)
        and bool(node.name)
        and not isinstance(node.type, (c_ast.FuncDecl, c_ast.Struct, c_ast.Union, c_ast.Enum))
    )


def _rename(node: c_ast.Node, renames: Mapping[str, str]) -> None:
    """Names of the callee's parameters and locals made unique to this call (a member
    name after `.` or `->` is not a variable)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, c_ast.ID) and current.name in renames:
            current.name = renames[current.name]
        elif isinstance(current, c_ast.Decl) and current.name in renames and _is_variable(current):
            current.name = renames[current.name]
            _set_declname(current.type, current.name)
        if isinstance(current, c_ast.StructRef):
            stack.append(current.name)
            continue
        if isinstance(current, c_ast.FuncCall):
            if current.args is not None:
                stack.append(current.args)
            if not isinstance(current.name, c_ast.ID):
                stack.append(current.name)
            continue
        stack.extend(child for _, child in current.children())


def _child_slots(node: c_ast.Node) -> Iterator[tuple[str, c_ast.Node | list[c_ast.Node]]]:
    """An expression node's children by slot (a list slot as one list)."""
    kind = type(node)
    skip = {*kind.attr_names, "coord", "__weakref__"}
    for slot in kind.__slots__:
        if slot in skip:
            continue
        value = getattr(node, slot)
        if value is None:
            continue
        if isinstance(value, (c_ast.Compound, c_ast.Typename, c_ast.TypeDecl)):
            continue  # a type or a statement inside an expression: not evaluated here
        if isinstance(value, (list, c_ast.Node)):
            yield slot, value
