"""Shapes of parameters without a usable annotation, from what the function's code says.

Real NumPy kernels carry no annotations. Before a function is lowered, one pass over its
body gathers, for each such parameter, the evidence the code gives:

- its rank: the number of indices in `A[i, j]`, the names in `n, m = A.shape`, `A.shape[k]`,
  `len(A)`, `.T`, array methods (`A.sum()`), `@` and NumPy reductions/contractions on it;
- the names of its extents, best evidence first: `n, m = A.shape` and `n = A.shape[0]` /
  `n = len(A)` name them `n` and `m`; `for i in range(n): ... A[i, ...]` names the first
  extent `n` when `n` is a size (an `int`/un-annotated parameter, a module constant, or a
  name bound from a shape); otherwise the extent is named `A_d0`, `A_d1`, ... (parameter
  name, `_d`, the axis).

A parameter used as a `range` bound, a slice bound or an allocation extent is an integer
size. One that meets arrays (added to or subtracted from an array, `x @ w + b`; or mapped by
a NumPy elementwise function, `np.sin((t2 - t1) / 2)`, in a function with no other array)
is an array, of the rank the rest of the code gives, else a vector (broadcast against its
partner's last axis, as a bias is). One with no array evidence at all is taken as a Python
float scalar; where it is a factor of a product of such parameters added to an array
(`array_2 * b`), one of them is an array the code does not name, and that is flagged. Each
choice made without an annotation becomes one assumption line, located at the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from aiscan.frontends.python.buffers import registered_buffer
from aiscan.frontends.python.walk import walk

__all__ = [
    "Evidence",
    "additive_leaves",
    "class_sizes",
    "gather_evidence",
    "plain_name",
    "self_attributes",
]


def plain_name(name: str) -> str:
    """`self.N` is the size `N`; `self.A`'s extents are `A_d0`, ..."""
    return name.removeprefix("self.")


_ARRAY_METHODS = frozenset(
    [
        "sum",
        "prod",
        "max",
        "min",
        "mean",
        "std",
        "var",
        "dot",
        "astype",
        "copy",
        "reshape",
        "ravel",
        "flatten",
        "transpose",
        "swapaxes",
        "flip",
        "cumsum",
        "argmax",
        "argmin",
        "any",
        "all",
        "nonzero",
        "fill",
    ]
)
_ARRAY_FUNCTIONS = frozenset(
    [
        "sum",
        "prod",
        "max",
        "min",
        "amax",
        "amin",
        "mean",
        "std",
        "var",
        "dot",
        "matmul",
        "inner",
        "vdot",
        "outer",
        "einsum",
        "linalg",
        "transpose",
        "reshape",
        "ravel",
        "copy",
        "empty_like",
        "zeros_like",
        "ones_like",
        "full_like",
        "cumsum",
        "tril",
        "triu",
        "diag",
        "trace",
        "argmax",
        "argmin",
    ]
)


@dataclass
class Evidence:
    """What the body says about each candidate parameter."""

    rank: dict[str, int] = field(default_factory=dict)
    dims: dict[str, dict[int, tuple[int, str]]] = field(default_factory=dict)
    """Per parameter and axis: (priority, size name); a lower priority number wins."""
    sizes: set[str] = field(default_factory=set)
    """Parameters used as integer sizes (range bounds, slice bounds, shapes)."""
    stored_as: dict[str, str] = field(default_factory=dict)
    """`self.N = n`: candidate `n` stored as attribute `N`."""
    weak_rank: dict[str, int] = field(default_factory=dict)
    """Ranks taken only where nothing else says: 2 for `@` operands, and the ranks a first
    lowering found stores and broadcasts needed (`FunctionLowering`)."""
    ranked: set[str] = field(default_factory=set)
    """Parameters whose rank a use gives (`A[i, j]`, `n, m = A.shape`, `.T`, `@`), as
    opposed to uses any rank allows (`x.sum()`, `np.max(x, axis=-1)`, `x - m`)."""
    axis_use = False
    """The body reduces or maps along an axis (`axis=`, `keepdims=`): a count that a rank
    the code does not give would change."""
    products: set[str] = field(default_factory=set)
    """Operands of `dot`/`matmul`/`inner`/`vdot`/`tensordot` calls: what such a product
    counts depends on their ranks (two vectors make a dot, two matrices a matrix product)."""
    other_axis = False
    """Something in the body sees an axis other than the last: `axis=0`, a positional
    axis, indexing, `.shape`, `len`, `.T`, `@`, a reshape or a join (conservatively)."""
    meets_arrays: set[str] = field(default_factory=set)
    """Parameters that meet arrays elementwise (`x @ w + b`, `np.sin(t)`): arrays, vectors
    where nothing else gives their rank."""
    undecided_products: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """`array_2 * b` added to an array, its factors parameters with no other evidence: one
    of them at least is an array, and the code does not tell which (the product's code, its
    factors)."""

    def at_least(self, name: str, rank: int) -> None:
        self.rank[name] = max(self.rank.get(name, 0), rank)

    def name_dim(self, name: str, axis: int, size: str, priority: int) -> None:
        self.ranked.add(name)
        known = self.dims.setdefault(name, {}).get(axis)
        if known is None or priority < known[0]:
            self.dims[name][axis] = (priority, plain_name(size))

    def rank_unknown(self, name: str) -> bool:
        """A vector only because nothing gives `name` more axes, in a body whose counts
        along an axis depend on it (`softmax(x)` with no `.shape` of `x`)."""
        axis_wise = self.axis_use or name in self.products
        return axis_wise and name not in self.ranked and self.rank_of(name) == 1

    def leading_merged(self, name: str) -> bool:
        """`rank_unknown`, in a body that works along the last axis only (`np.max(x,
        axis=-1, keepdims=True)`, elementwise, full reductions): the leading axes can be
        one extent, their product, and the counts hold for any rank from 1 up."""
        return self.rank_unknown(name) and not self.other_axis

    def rank_only_from_meeting(self, name: str) -> bool:
        """The code gives `name` no rank of its own: a vector, because it meets arrays."""
        return (
            name in self.meets_arrays
            and not self.rank.get(name)
            and not self.dims.get(name)
            and self.weak_rank.get(name, 0) <= 1
        )

    def code_rank(self, name: str) -> int:
        """The least rank the body's own uses give `name` (`A[i, j]`, `n, m = A.shape`),
        weak evidence (a partner's rank, `@` operands) left out."""
        return max(self.rank.get(name, 0), max(self.dims.get(name, {}), default=-1) + 1)

    def rank_of(self, name: str) -> int:
        named = self.dims.get(name, {})
        rank = max(self.rank.get(name, 0), max(named, default=-1) + 1)
        return max(rank, self.weak_rank.get(name, 0))

    def dimension_names(self, name: str) -> tuple[tuple[str, bool], ...]:
        """Each axis's size name, and whether the code named it (False: `A_d0`)."""
        named = self.dims.get(name, {})
        rank = self.rank_of(name)
        out = []
        for axis in range(rank):
            if axis in named:
                out.append((named[axis][1], True))
            else:
                out.append((f"{plain_name(name)}_d{axis}", False))
        return tuple(out)


_SHAPE_NAME = 0
_LOOP_BOUND = 1


def gather_evidence(body: cst.CSTNode, candidates: set[str], module_sizes: set[str]) -> Evidence:
    """One walk over `body` (nested functions and classes excluded)."""
    walker = _Walker(set(candidates), module_sizes)
    walk(body, walker)
    evidence = walker.evidence
    if not walker.array_form and not any(evidence.rank_of(c) for c in candidates):
        # `np.sin((t2 - t1) / 2)` in a function with no other array: its operands are.
        evidence.meets_arrays |= walker.mapped
    _meeting(walker.additions, walker.evidence, walker.reaches)
    _matmul_ranks(walker.matmuls, walker.evidence)
    _undecided(walker.added_products, walker.candidates, walker.evidence)
    for row, array in reversed(walker.rows.items()):  # inner loops first: `for v in row`
        rank = walker.evidence.rank_of(row)
        if rank:
            walker.evidence.at_least(array, rank + 1)
    return walker.evidence


def _meeting(
    additions: list[tuple[list[str], bool, list[str], bool]],
    evidence: Evidence,
    reaches: list[tuple[list[str], list[str]]],
) -> None:
    """Candidates added to (or subtracted from) an array are arrays: a side is an array by
    its form or by holding an array candidate, also as a factor (`y * g + b` with `y` an
    array makes `b` one), solved to a fixed point over the whole body (`t = a - b` then
    `np.sin(t)` is not needed: `a - b` inside `np.sin` already says so)."""
    evidence.meets_arrays -= evidence.sizes
    changed = True
    while changed:
        changed = False
        for (left, left_form, right, right_form), (left_reach, right_reach) in zip(
            additions, reaches, strict=True
        ):
            for these, others, other_form in (
                (left, right + right_reach, right_form),
                (right, left + left_reach, left_form),
            ):
                other_array = other_form or any(
                    o in evidence.meets_arrays or evidence.rank_of(o) > 0 for o in others
                )
                fresh = set(these) - evidence.meets_arrays - evidence.sizes
                if other_array and fresh:
                    evidence.meets_arrays |= fresh
                    changed = True
    for name in evidence.meets_arrays:
        evidence.weak_rank[name] = max(evidence.weak_rank.get(name, 0), 1)


def _matmul_ranks(pairs: list[tuple[str, str]], evidence: Evidence) -> None:
    """Ranks of `@` operands nothing else gives: an operand on the left of one product and
    the right of another (`A` in `(A @ x) @ A`, `r @ A, A @ p`) is a matrix, and what it
    multiplies there a vector; so is an operand only ever on the right of products by two
    or more different matrices (`x` in `alpha * A @ x + beta * B @ x`: one vector, as
    matrix-vector kernels share it); any other operand is a matrix (`alpha * A @ B`). Weak:
    any other evidence of rank wins."""
    lefts = {left for left, _ in pairs if left}
    rights = {right for _, right in pairs if right}
    matrices = lefts & rights
    partners: dict[str, set[str]] = {}
    for left, right in pairs:
        partners.setdefault(right, set()).add(left)
    shared = {r for r in rights - lefts if len(partners[r] - {""}) >= 2}
    for left, right in pairs:
        for this, other in ((left, right), (right, left)):
            if not this:
                continue
            vector = this in shared or (other in matrices and this not in matrices)
            rank = 1 if vector else 2
            evidence.weak_rank[this] = max(evidence.weak_rank.get(this, 0), rank)
            evidence.ranked.add(this)


def _undecided(
    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]],
    candidates: set[str],
    evidence: Evidence,
) -> None:
    """Products of parameters only (`array_2 * b`) added to an array, none of whose factors
    anything shows to be an array: one of them is, and which one decides the count."""
    for side, other in pairs:
        if not _is_array(other, evidence):
            continue
        for product in _candidate_products(side, candidates):
            factors = tuple(dict.fromkeys(_arithmetic_names(product, candidates)))
            if all(evidence.rank_of(f) == 0 and f not in evidence.sizes for f in factors):
                code = cst.Module([]).code_for_node(product)
                evidence.undecided_products.setdefault(code, factors)


def _candidate_products(node: cst.BaseExpression, candidates: set[str]) -> list[cst.BaseExpression]:
    """The terms of `node` (through `+`, `-`) that multiply or divide two or more
    candidates and literals only."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _candidate_products(node.expression, candidates)
    if not isinstance(node, cst.BinaryOperation):
        return []
    if isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _candidate_products(node.left, candidates) + _candidate_products(
            node.right, candidates
        )
    if not isinstance(node.operator, (cst.Multiply, cst.Divide)):
        return []
    names = _arithmetic_names(node, candidates)
    if names.count("") != len(_product_numbers(node)):
        return []  # a factor that is neither a parameter nor a literal
    return [node] if len(set(names) - {""}) >= 2 else []


def _product_numbers(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The literal factors of a product (`2` in `2 * a * b`)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Multiply, cst.Divide)
    ):
        return _product_numbers(node.left) + _product_numbers(node.right)
    return [node] if _is_number(node) else []


def _is_array(node: cst.BaseExpression, evidence: Evidence) -> bool:
    """An array by its form, or built by arithmetic and elementwise NumPy functions from
    a parameter that is one."""
    name = bound_name(node)
    if name is not None:
        return evidence.rank_of(name) > 0 or name in evidence.meets_arrays
    if isinstance(node, cst.BinaryOperation):
        return _is_array(node.left, evidence) or _is_array(node.right, evidence)
    if isinstance(node, cst.UnaryOperation):
        return _is_array(node.expression, evidence)
    if isinstance(node, cst.Call) and _callee(node) in _ELEMENTWISE_FUNCTIONS:
        return any(_is_array(a.value, evidence) for a in node.args if a.keyword is None)
    return _array_form(node)


class _Walker(cst.CSTVisitor):
    def __init__(self, candidates: set[str], module_sizes: set[str]) -> None:
        self.candidates = candidates
        self.module_sizes = module_sizes
        self.shape_names: set[str] = set()
        self.evidence = Evidence()
        self.matmuls: list[tuple[str, str]] = []
        """`@` operands (candidate names, "" for anything else), for `matmul_ranks`."""
        self.loops: list[tuple[str, str | None]] = []
        """Enclosing `for v in range(...)`: the variable and its stop's size name."""
        self.rows: dict[str, str] = {}
        """`for v in A`: the loop variable `v` and the array `A` whose rows it takes."""
        self.additions: list[tuple[list[str], bool, list[str], bool]] = []
        """`a + b`, `a - b`: each side's additive leaves (candidates) and whether the side
        is an array by its form (`@`, a sliced subscript, an array call), for `_meeting`."""
        self.added_products: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        """`a * b + x`: a side of an addition and the other side, for `_undecided`."""
        self.mapped: set[str] = set()
        """Candidates NumPy maps elementwise (`np.sin(t)`): arrays only in a function that
        has no other array (`np.exp(-alpha)` beside an image is a scalar's exponential)."""
        self.array_form = False
        """Some expression of the body is an array by its form (`@`, a slice, an array)."""
        self.reaches: list[tuple[list[str], list[str]]] = []
        """Each of `additions`' sides' candidates reached through `* /` too (`_reach`)."""
        self.reached: dict[str, list[str]] = {}
        """`y = (x - m) / s`: the candidates a local's value reaches through `+ - * /`."""
        self.locals: dict[str, tuple[list[str], bool]] = {}
        """`d = b - a`: a local's additive leaves (candidates, through other locals) and
        whether its value is an array by its form; a local that meets arrays says so of
        its leaves."""

    # Nested scopes are lowered (or not) on their own.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _candidate(self, node: cst.BaseExpression) -> str | None:
        name = bound_name(node)
        return name if name is not None and name in self.candidates else None

    def _size_name(self, node: cst.BaseExpression) -> str | None:
        name = bound_name(node)
        if name is None:
            return None
        if name in self.candidates or name in self.module_sizes or name in self.shape_names:
            return name
        return None

    def _mark_sizes(self, node: cst.CSTNode) -> None:
        """Candidate names inside an integer position are sizes."""
        for name in _names_in(node):
            if name in self.candidates:
                self.evidence.sizes.add(name)

    # ---- assignments of shapes --------------------------------------------------------

    def _leaves(self, node: cst.BaseExpression) -> tuple[list[str], bool]:
        """`node`'s additive leaves among the candidates, locals followed to theirs, and
        whether it is an array by its form or through a local that is."""
        found: list[str] = []
        form = _array_form(node)
        self.array_form = self.array_form or form
        for leaf in additive_leaves(node, self.candidates | set(self.locals)):
            if leaf in self.candidates:
                found.append(leaf)
            else:
                leaves, local_form = self.locals[leaf]
                found += leaves
                form = form or local_form
        return found, form

    def _reach(self, node: cst.BaseExpression) -> list[str]:
        """Candidates `node` reaches through `+ - * /`, locals followed: where one is an
        array, so is `node` (a product of an array and a factor is an array)."""
        found: list[str] = []
        for name in _arithmetic_names(node, self.candidates | set(self.reached)):
            found += [name] if name in self.candidates else self.reached.get(name, [])
        return found

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if name not in self.candidates:
                self.reached[name] = self._reach(value)
                self.locals[name] = self._leaves(value)
        for target in node.targets:
            target_node = target.target
            stored = self._candidate(value)
            attribute = bound_name(target_node)
            if stored is not None and attribute is not None and attribute.startswith("self."):
                self.evidence.stored_as[stored] = plain_name(attribute)
            shaped = _is_shape_of(value) or _sizes_of(value)
            if isinstance(target_node, cst.Tuple) and shaped is not None:
                array = self._candidate(shaped)
                names = [e.value for e in target_node.elements]
                if array is not None:
                    self.evidence.at_least(array, len(names))
                    for axis, element in enumerate(names):
                        if isinstance(element, cst.Name) and element.value != "_":
                            self.shape_names.add(element.value)
                            self.evidence.name_dim(array, axis, element.value, _SHAPE_NAME)
            elif isinstance(target_node, cst.Name):
                self._name_extent(target_node, value)
            elif (
                isinstance(target_node, cst.Tuple)
                and isinstance(value, cst.Tuple)
                and len(target_node.elements) == len(value.elements)
            ):
                # `I, J = A.shape[0], A.shape[1]`: each name as if assigned alone.
                for part, item in zip(target_node.elements, value.elements, strict=True):
                    if isinstance(part.value, cst.Name):
                        self._name_extent(part.value, item.value)

    def _name_extent(self, target: cst.Name, value: cst.BaseExpression) -> None:
        """`n = A.shape[k]`, `n = A.size(k)` or `n = len(A)`: `n` names that extent of A."""
        found = _one_extent(value) or _size_of(value)
        if found is not None:
            array_node, axis = found
            array = self._candidate(array_node)
            self.shape_names.add(target.value)
            if array is not None and axis >= 0:
                self.evidence.at_least(array, axis + 1)
                self.evidence.name_dim(array, axis, target.value, _SHAPE_NAME)

    # ---- loops ------------------------------------------------------------------------

    def visit_For(self, node: cst.For) -> None:
        var = node.target.value if isinstance(node.target, cst.Name) else ""
        bound: str | None = None
        iterator = node.iter
        if isinstance(iterator, cst.Call) and _callee(iterator) == "range":
            arguments = [a.value for a in iterator.args]
            for argument in arguments[:2]:
                self._mark_sizes(argument)
            if arguments and len(arguments) <= 2:
                bound = self._size_name(_stop_name(arguments[-1]))
        iterated: list[cst.BaseExpression] = [iterator]
        targets: list[cst.BaseExpression] = [node.target]
        if isinstance(iterator, cst.Call) and _callee(iterator) in ("enumerate", "zip"):
            iterated = [a.value for a in iterator.args]
            elements = node.target.elements if isinstance(node.target, cst.Tuple) else ()
            targets = [e.value for e in elements]
            if _callee(iterator) == "enumerate":
                targets = targets[1:]
        for position, value in enumerate(iterated):
            # `for v in A`, `enumerate(A)`, `zip(x, y)`: each is at least a vector, and
            # what the body says of `v` (`v.sum()`, `v[j]`) is said of A one axis down.
            name = self._candidate(value)
            if name is None:
                continue
            self.evidence.at_least(name, 1)
            target = targets[position] if position < len(targets) else None
            if isinstance(target, cst.Name) and target.value not in self.candidates:
                self.rows[target.value] = name
                self.candidates.add(target.value)
        self.loops.append((var, bound))

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    # ---- uses -------------------------------------------------------------------------

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.evidence.other_axis = True
        base = node.value
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            array = self._candidate(base.value)
            index = _int_index(node)
            if array is not None and index is not None and index >= 0:
                self.evidence.at_least(array, index + 1)
            return
        array = self._candidate(base)
        items = [e.slice for e in node.slice]
        for item in items:
            if isinstance(item, cst.Slice):
                for bound in (item.lower, item.upper):
                    if bound is not None:
                        self._mark_sizes(bound)
            elif isinstance(item, cst.Index):
                self._mark_sizes(item.value)
        if array is None:
            return
        if any(_is_ellipsis(i) for i in items):
            self.evidence.at_least(array, sum(1 for i in items if not _is_newaxis(i)) - 1)
            return
        axes = [i for i in items if not _is_newaxis(i)]
        self.evidence.at_least(array, len(axes))
        self.evidence.ranked.add(array)
        loop_bounds = dict(self.loops)
        for axis, item in enumerate(axes):
            if isinstance(item, cst.Index):
                var = _loop_variable(item.value)
                if var is not None and loop_bounds.get(var):
                    self.evidence.name_dim(array, axis, loop_bounds[var] or "", _LOOP_BOUND)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _AXIS_ATTRIBUTES:
            self.evidence.other_axis = True
        array = self._candidate(node.value)
        if array is None:
            return
        attribute = node.attr.value
        if attribute in ("T", "mT"):
            self.evidence.at_least(array, 2)
            self.evidence.ranked.add(array)
        elif attribute in ("shape", "ndim", "size", "dtype") or attribute in _ARRAY_METHODS:
            self.evidence.at_least(array, 1)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            self.additions.append((*self._leaves(node.left), *self._leaves(node.right)))
            self.added_products += [(node.left, node.right), (node.right, node.left)]
            self.reaches.append((self._reach(node.left), self._reach(node.right)))
        if isinstance(node.operator, cst.MatrixMultiply):
            self.evidence.other_axis = True
            # `alpha * A @ B` is `(alpha * A) @ B`: the operand is the leaf next to `@`.
            left = _arithmetic_names(node.left, self.candidates)
            right = _arithmetic_names(node.right, self.candidates)
            pair = (left[-1] if left else "", right[0] if right else "")
            self.matmuls.append(pair)

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee(node)
        positional = [a.value for a in node.args if a.keyword is None]
        if callee in _PRODUCTS:
            operands = [self._candidate(p) for p in positional[:2]]
            owner = node.func.value if isinstance(node.func, cst.Attribute) else None
            if isinstance(owner, cst.Name) and owner.value not in _MODULES:
                operands.append(self._candidate(owner))  # `a.dot(b)`
            self.evidence.products |= {o for o in operands if o is not None}
        _tensor_evidence(self, node, callee, positional)
        if any(a.keyword is not None and a.keyword.value in _AXIS_WORDS for a in node.args):
            self.evidence.axis_use = True
        if any(
            a.keyword is not None
            and a.keyword.value in _AXIS_WORDS - {"keepdims", "keepdim"}
            and not _is_last_axis(a.value)
            for a in node.args
        ):
            self.evidence.other_axis = True
        if callee in _AXIS_FUNCTIONS or (
            callee in _REDUCTIONS_BY_AXIS
            and any(not _is_last_axis(p) for p in _axis_arguments(node, positional))
        ):
            self.evidence.other_axis = True
        if (
            callee in _ELEMENTWISE_FUNCTIONS
            and isinstance(node.func, cst.Attribute)
            and not (
                isinstance(node.func.value, cst.Name) and node.func.value.value in _SCALAR_MATH
            )
        ):
            # `np.sin((t2 - t1) / 2)`, `np.maximum(x, 0)`: the operands are arrays.
            for argument in positional:
                self.mapped.update(self._leaves(argument)[0])
        if callee == "len" and positional:
            array = self._candidate(positional[0])
            if array is not None:
                self.evidence.at_least(array, 1)
        elif callee in _ALLOCATORS and positional:
            # `np.linspace(a, b, num)`: the size is the third argument.
            if callee != "linspace":
                self._mark_sizes(positional[0])
            elif len(positional) > 2:
                self._mark_sizes(positional[2])
        elif callee in ("repeat", "tile") and len(positional) > 1:
            # `np.repeat(a, r, axis=d)`: the count is a size.
            self._mark_sizes(positional[1])
        elif callee in ("meshgrid", "histogram") and positional:
            # `np.meshgrid(x, y)`: vectors; `np.histogram(a, bins, weights=w)`: `a` and `w`
            # arrays, `bins` a size.
            arrays = positional if callee == "meshgrid" else positional[:1]
            arrays += [a.value for a in node.args if _keyword_is(a, "weights")]
            for argument in arrays:
                array = self._candidate(argument)
                if array is not None:
                    self.evidence.at_least(array, 1)
            if callee == "histogram" and len(positional) > 1:
                self._mark_sizes(positional[1])
        elif callee in _MATRIX_FUNCTIONS and positional:
            # `np.linalg.cholesky(A)`, `np.triu(A)`: the operand is a matrix.
            array = self._candidate(positional[0])
            if array is not None:
                self.evidence.at_least(array, 2)
                self.evidence.ranked.add(array)
        elif callee in ("transpose", "swapaxes"):
            # `np.transpose(A)`, `A.swapaxes(0, 1)`: at least a matrix, as `A.T` says.
            method = isinstance(node.func, cst.Attribute) and self._candidate(node.func.value)
            array = method or (self._candidate(positional[0]) if positional else None)
            if array:
                self.evidence.at_least(array, 2)
        elif callee == "reshape":
            # `x.reshape(n, m)`, `np.reshape(x, (n, m))`: the extents are sizes.
            method = isinstance(node.func, cst.Attribute) and self._candidate(node.func.value)
            for extent in positional if method else positional[1:]:
                self._mark_sizes(extent)
        elif callee in _ARRAY_FUNCTIONS:
            # `np.sum(x * x)`: an argument of one candidate only must be an array.
            for argument in positional[:2]:
                names = set(_arithmetic_names(argument, self.candidates))
                if len(names) == 1 and "" not in names:
                    self.evidence.at_least(names.pop(), 1)


def _keyword_is(argument: cst.Arg, name: str) -> bool:
    return argument.keyword is not None and argument.keyword.value == name


def _tensor_evidence(
    walker: _Walker, node: cst.Call, callee: str, positional: list[cst.BaseExpression]
) -> None:
    """What framework calls say of ranks: einsum subscripts give each operand's rank
    (`"bhqd,bhkd->bhqk"`), `x.permute(0, 2, 1, 3)` the permutation's; the weight and bias
    of `layer_norm`/`rms_norm` are vectors, `linear`'s weight a matrix, an operator's or a
    layer's (`self.fc1(x)`) input a tensor; `x.view(b, n, d)` extents and `nn.Linear(d, h)`
    sizes are sizes."""
    if callee == "einsum" and positional and isinstance(positional[0], cst.SimpleString):
        subscripts = positional[0].raw_value.replace(" ", "").split("->")[0].split(",")
        for letters, operand in zip(subscripts, positional[1:], strict=False):
            array = walker._candidate(operand)
            if array is not None and letters.isalpha():
                walker.evidence.at_least(array, len(letters))
        return
    method = isinstance(node.func, cst.Attribute) and walker._candidate(node.func.value)
    if callee == "permute" and method:
        axes = positional[0].elements if len(positional) == 1 and isinstance(
            positional[0], cst.Tuple | cst.List) else positional  # fmt: skip
        walker.evidence.at_least(method, len(axes))
    elif callee == "view" and method:
        walker.evidence.at_least(method, 1)
        for extent in positional:
            walker._mark_sizes(extent)
    if callee in (
        "Linear",
        "LayerNorm",
        "RMSNorm",
        "GroupNorm",
        "Conv1d",
        "Conv2d",
    ):  # `nn.Linear(d, h)`
        for extent in positional[: 3 if callee.startswith("Conv") else 2]:
            walker._mark_sizes(extent)
    if str(bound_name(node.func)).startswith("self.") and positional:
        called = walker._candidate(positional[0])  # `self.fc1(x)`: a layer's input is a tensor
        if called is not None:
            walker.evidence.at_least(called, 1)
    ranks = _TENSOR_OPERANDS.get(callee, ())
    if callee in _QUALIFIED_ONLY and not isinstance(node.func, cst.Attribute):
        ranks = ()  # a NumPy helper of the file named `conv2d(image, filters)`: not torch's
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    for position, (keyword, rank) in enumerate(ranks):
        passed = keywords.get(keyword) or (
            positional[position] if position < len(positional) else None
        )
        array = walker._candidate(passed) if passed is not None else None
        if array is not None and rank:
            walker.evidence.at_least(array, rank)
    # `X.mean(axis=1)`, `np.sum(A, axis=(0, 2))`, `x.sum(dim=1)`: an axis k needs k + 1 axes;
    # `x.pow(2).mean(-1)` (llama2.c's RMSNorm): an axis -k needs k, through the methods
    # that keep the shape.
    axis = keywords.get("axis", keywords.get("dim"))
    if axis is None and callee in _REDUCTIONS_BY_AXIS:
        axis = next(iter(_axis_arguments(node, positional)), None)
    if not method and callee in _REDUCTIONS_BY_AXIS and isinstance(node.func, cst.Attribute):
        method = walker._candidate(_shape_kept(node.func.value))
    reduced = method or (walker._candidate(positional[0]) if positional else None)
    needed = _axes_needed(axis) if axis is not None else 0
    if reduced and needed:
        walker.evidence.at_least(reduced, needed)


def _axes_needed(axis: cst.BaseExpression) -> int:
    """The rank a literal `axis=` argument needs (`1` -> 2, `(0, 2)` -> 3, `-1` -> 1)."""
    items = [e.value for e in axis.elements] if isinstance(axis, cst.Tuple) else [axis]
    values = [_axis_rank(i) for i in items]
    return max(v for v in values if v is not None) if None not in values and values else 0


def _axis_rank(item: cst.BaseExpression) -> int | None:
    if isinstance(item, cst.Integer):
        return int(item.value) + 1
    if (
        isinstance(item, cst.UnaryOperation)
        and isinstance(item.operator, cst.Minus)
        and isinstance(item.expression, cst.Integer)
    ):
        return int(item.expression.value)
    return None


_SHAPE_KEPT = frozenset({"pow", "float", "half", "double", "bfloat16", "type_as", "contiguous"})
"""Tensor methods whose result has their tensor's shape."""


def _shape_kept(node: cst.BaseExpression) -> cst.BaseExpression:
    """`x` of `x.pow(2)`, `x.float()`: the tensor a shape-keeping method chain starts at."""
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _SHAPE_KEPT
    ):
        node = node.func.value
    return node


_QUALIFIED_ONLY = frozenset({"conv1d", "conv2d", "group_norm"})
"""Names that code of its own also gives its helpers (`def conv2d(image, filters)` on an
`(h, w, c)` image): read as PyTorch's only when spelled `F.conv2d`."""

_TENSOR_OPERANDS = {
    "layer_norm": (("input", 1), ("normalized_shape", 0), ("weight", 1), ("bias", 1)),
    "rms_norm": (("input", 1), ("normalized_shape", 0), ("weight", 1)),
    "linear": (("input", 1), ("weight", 2), ("bias", 1)),
    "scaled_dot_product_attention": (("query", 2), ("key", 2), ("value", 2)),
    "cross_entropy": (("input", 2), ("target", 1)),
    "nll_loss": (("input", 2), ("target", 1)),
    "conv1d": (("input", 3), ("weight", 3), ("bias", 1)),
    "group_norm": (("input", 2), ("num_groups", 0), ("weight", 1), ("bias", 1)),
    "conv2d": (("input", 4), ("weight", 4), ("bias", 1)),
    **{
        name: (("input", 1),)
        for name in (
            "softmax",
            "log_softmax",
            "logsumexp",
            "gelu",
            "silu",
            "relu",
            "sigmoid",
            "tanh",
            "dropout",
            "masked_fill",
        )
    },
}
"""Per framework function, each argument's keyword and the rank it has at least."""


def _size_of(node: cst.BaseExpression) -> tuple[cst.BaseExpression, int] | None:
    """`A.size(k)` (PyTorch): the tensor and the axis."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "size"
        and len(node.args) == 1
    ):
        value = node.args[0].value
        if isinstance(value, cst.Integer):
            return node.func.value, int(value.value, 0)
    return None


def _sizes_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`A.size()` (PyTorch): the whole shape, as `A.shape`."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "size"
        and not node.args
    ):
        return node.func.value
    return None


_ALLOCATORS = frozenset(
    {"empty", "zeros", "ones", "full", "arange", "linspace", "eye", "identity", "ndarray"}
)
_MATRIX_FUNCTIONS = frozenset({"cholesky", "inv", "solve", "triu", "tril"})


def bound_name(node: cst.CSTNode | None) -> str | None:
    """`A` or `self.A`: the name a candidate goes by, or an assignment binds."""
    if isinstance(node, cst.Name):
        return node.value
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        return f"self.{node.attr.value}"
    return None


def self_attributes(body: cst.CSTNode, include_bound: bool = False) -> dict[str, cst.Attribute]:
    """`self.X` used in `body` and not bound there (`self.X = ...`): each one's first use."""
    uses = _SelfUses()
    walk(body, uses)
    return {n: use for n, use in uses.found.items() if include_bound or n not in uses.bound}


class _SelfUses(cst.CSTVisitor):
    """A module-level class, not one made per call: a class is a reference cycle, and each
    one kept the file's trees alive until a collection traced them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, cst.Attribute] = {}
        self.bound: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = bound_name(node)
        if name is not None and name.startswith("self.") and name != "self.register_buffer":
            self.found.setdefault(name, node)

    def visit_Call(self, node: cst.Call) -> None:
        buffer = registered_buffer(node)
        if buffer is not None:  # `self.register_buffer("freqs_cos", ...)` binds `self.freqs_cos`
            self.bound.add(f"self.{buffer[0].attr.value}")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        name = bound_name(node.target)
        if name is not None and name.startswith("self."):
            self.bound.add(name)


def class_sizes(node: cst.ClassDef) -> set[str]:
    """Attributes `self.N` any method uses as a size (a `range` or slice bound, an
    allocation extent): `N` is then a size symbol in every method."""
    attributes = set(self_attributes(node, include_bound=True))
    walker = _Walker(attributes, set())
    for statement in node.body.body:
        if isinstance(statement, cst.FunctionDef):
            walk(statement.body, walker)
    return {plain_name(n) for n in walker.evidence.sizes}


def _callee(node: cst.Call) -> str:
    func = node.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


def _arithmetic_names(node: cst.BaseExpression, candidates: set[str]) -> list[str]:
    """Leaves reached from `node` through `+ - * /` and parentheses only (in order; names
    that are no candidates are kept as empty strings, so the leaf next to `@` is known)."""
    name = bound_name(node)
    if name is not None:
        return [name if name in candidates else ""]
    if isinstance(node, cst.BinaryOperation) and isinstance(
        node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
    ):
        return _arithmetic_names(node.left, candidates) + _arithmetic_names(node.right, candidates)
    return [""]


def additive_leaves(node: cst.BaseExpression, candidates: set[str]) -> list[str]:
    """Candidates `node` adds or subtracts as they are (`a - b`, `-a`, `(a + b) / 2`, `2 * a`):
    where `node` is an array, so are they. A factor that is not a literal (`alpha * A`)
    stops the walk: a scalar scales arrays as well."""
    name = bound_name(node)
    if name is not None:
        return [name] if name in candidates else []
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return additive_leaves(node.expression, candidates)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            return additive_leaves(node.left, candidates) + additive_leaves(node.right, candidates)
        if isinstance(node.operator, (cst.Multiply, cst.Divide)):
            if _is_number(node.right):
                return additive_leaves(node.left, candidates)
            if isinstance(node.operator, cst.Multiply) and _is_number(node.left):
                return additive_leaves(node.right, candidates)
    return []


def _is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_number(node.expression)
    return isinstance(node, (cst.Integer, cst.Float))


def _array_form(node: cst.BaseExpression) -> bool:
    """An expression that is an array whatever its names are: a product `@`, a sliced
    subscript (`u[1:-1]`), or a NumPy call that makes or maps arrays."""
    finder = _ArrayForm()
    walk(node, finder)
    return finder.found


class _ArrayForm(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.MatrixMultiply):
            self.found = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if any(isinstance(e.slice, cst.Slice) for e in node.slice):
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        callee = _callee(node)
        if callee in ("dot", "matmul", "outer", "einsum", *_ALLOCATORS):
            self.found = True


_ELEMENTWISE_FUNCTIONS = frozenset(
    [
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "arcsinh",
        "arccosh",
        "arctanh",
        "exp",
        "exp2",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sqrt",
        "cbrt",
        "square",
        "absolute",
        "abs",
        "fabs",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "add",
        "subtract",
        "multiply",
        "divide",
        "true_divide",
        "negative",
        "reciprocal",
        "power",
        "hypot",
        "clip",
        "floor",
        "ceil",
        "rint",
        "trunc",
        "sign",
    ]
)
"""NumPy functions that map arrays elementwise: an operand a parameter is, is an array."""
_SCALAR_MATH = frozenset({"math", "cmath"})
_AXIS_WORDS = frozenset({"axis", "axes", "keepdims", "dim", "keepdim"})


_AXIS_ATTRIBUTES = frozenset(
    {"shape", "ndim", "T", "mT", "reshape", "ravel", "flatten", "transpose", "swapaxes"}
)
_AXIS_FUNCTIONS = frozenset(
    {
        "len", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
        "transpose", "swapaxes", "moveaxis", "reshape", "ravel", "expand_dims", "squeeze",
        "flip", "roll", "tile", "repeat", "split", "einsum", "dot", "matmul", "outer",
        "tensordot", "inner", "diag", "triu", "tril", "cumsum", "cumprod", "sort",
        "argsort", "linalg", "fft",
    }
)  # fmt: skip
_PRODUCTS = frozenset({"dot", "matmul", "inner", "vdot", "tensordot"})
_REDUCTIONS_BY_AXIS = frozenset(
    {"sum", "max", "min", "mean", "prod", "std", "var", "amax", "amin", "argmax", "argmin"}
)
"""Reductions whose positional arguments after the array are an axis (`np.sum(x, 0)`,
`x.sum(0)`)."""
_MODULES = frozenset({"np", "numpy", "jnp", "cp", "cupy", "torch", "math"})


def _axis_arguments(
    node: cst.Call, positional: list[cst.BaseExpression]
) -> list[cst.BaseExpression]:
    """The positional arguments that can be an axis: after the array in `np.sum(x, 0)`,
    all of them in the method form `x.sum(0)`."""
    func = node.func
    method = isinstance(func, cst.Attribute) and not (
        isinstance(func.value, cst.Name) and func.value.value in _MODULES
    )
    return positional if method else positional[1:]


def _is_last_axis(value: cst.BaseExpression) -> bool:
    """`-1`, as written in `axis=-1`."""
    return (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
        and value.expression.value == "1"
    )


def _names_in(node: cst.CSTNode) -> list[str]:
    names = _Names()
    walk(node, names)
    return names.found


class _Names(cst.CSTVisitor):
    """The names an expression reads, in order (module level, as `_SelfUses`)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def visit_Name(self, name: cst.Name) -> None:
        self.found.append(name.value)

    def visit_Attribute(self, attribute: cst.Attribute) -> bool:
        name = bound_name(attribute)
        if name is not None and name.startswith("self."):
            self.found.append(name)  # `range(self.N)`: the attribute is a size
        return False  # `A.shape[0]`: A is not a size

    def visit_Subscript(self, subscript: cst.Subscript) -> bool:
        return False  # `x[i]` inside a bound: x is an array


def _is_shape_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return node.value
    return None


def _one_extent(node: cst.BaseExpression) -> tuple[cst.BaseExpression, int] | None:
    """`A.shape[k]` or `len(A)`: the array and the axis."""
    if isinstance(node, cst.Subscript):
        base = _is_shape_of(node.value)
        index = _int_index(node)
        if base is not None and index is not None:
            return base, index
    if isinstance(node, cst.Call) and _callee(node) == "len" and node.args:
        return node.args[0].value, 0
    return None


def _int_index(node: cst.Subscript) -> int | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    if (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
    ):
        return -int(value.expression.value, 0)
    return None


def _stop_name(node: cst.BaseExpression) -> cst.BaseExpression:
    """`n`, `n - 1`, `n + 1`: the size the stop is measured from."""
    if (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, (cst.Add, cst.Subtract))
        and isinstance(node.right, cst.Integer)
    ):
        return node.left
    return node


def _loop_variable(node: cst.BaseExpression) -> str | None:
    """`i`, `i + 1`, `i - 1`: the loop variable an index follows."""
    if isinstance(node, cst.Name):
        return node.value
    if (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, (cst.Add, cst.Subtract))
        and isinstance(node.left, cst.Name)
        and isinstance(node.right, cst.Integer)
    ):
        return node.left.value
    return None


def _is_ellipsis(item: cst.BaseSlice) -> bool:
    return isinstance(item, cst.Index) and isinstance(item.value, cst.Ellipsis)


def _is_newaxis(item: cst.BaseSlice) -> bool:
    if not isinstance(item, cst.Index):
        return False
    value = item.value
    if isinstance(value, cst.Name):
        return value.value == "None"
    return isinstance(value, cst.Attribute) and value.attr.value == "newaxis"
