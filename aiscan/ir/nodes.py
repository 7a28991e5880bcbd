"""The language-neutral intermediate representation of loop kernels.

Both frontends (C via pycparser, Python via libcst) produce these frozen nodes; everything
after them reads only these. Index expressions, starts and trip counts are sympy expressions
in the program's own names (sizes via `size_symbol`, loop variables via `loop_symbol`).

Statements, loops and branches memoize their hash: nests are keys of the analysis's memo
caches (`lru_cache`), and the generated hash walked a loop's whole body at every lookup (a
quarter of the analysis of PolyBench's kernels). The memo holds within one process (string
hashes differ between processes); nodes are never pickled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from aiscan.algebra import ONE, SYMPY
from aiscan.errors import Diagnostic
from aiscan.ir.symbols import is_data_symbol
from aiscan.span import Span

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "Access",
    "Branch",
    "ChainInput",
    "Dataflow",
    "ElementType",
    "FlopTally",
    "Function",
    "GpuLaunch",
    "InlinedFunction",
    "Loop",
    "LoopLike",
    "Module",
    "Node",
    "Parallel",
    "Parameter",
    "Region",
    "Statement",
    "Temporary",
    "Unknown",
    "UnknownKind",
]


@dataclass(frozen=True, slots=True)
class ElementType:
    """What one array element is: its width decides bytes, `precision` picks the device peak."""

    name: str
    width_bytes: int
    is_float: bool
    is_complex: bool = False
    precision: str = ""
    """Roofline precision key: fp64, fp32, fp16, bf16, fp8, int64, int32, int16, int8."""
    lanes: int = 1
    """Values in one element: 4 for CUDA's `float4`, 2 for `half2` (whose arithmetic is
    a FLOP per lane); 1 for a scalar."""


class UnknownKind(StrEnum):
    UNKNOWN_CALL = "unknown-call"
    INDIRECT_ACCESS = "indirect-access"
    DATA_DEPENDENT_BOUND = "data-dependent-bound"
    BRANCH_FRACTION = "branch-fraction"
    NON_AFFINE_INDEX = "non-affine-index"
    FOOTPRINT_BOUND = "footprint-bound"
    UNSUPPORTED = "unsupported"
    UNKNOWN_SHAPE = "unknown-shape"
    ALIASING = "aliasing"
    ASSUMPTION = "assumption"
    """A choice made where the code says nothing (an un-annotated parameter's shape or
    dtype): the counts hold under it, and the report says so with its line."""
    ATOMIC_CONTENTION = "atomic-contention"
    """A GPU atomic every thread (CUDA) or every program (Triton) applies to one address:
    the updates serialize there, so atomic throughput may bound the launch (the counts
    stand; its roofline time is optimistic). Lint rule AIS012 reports it."""


@dataclass(frozen=True, slots=True)
class Unknown:
    """Something the analysis could not derive exactly: said, located, never guessed.

    `symbol` names the quantity introduced in its place (a trip count, a branch fraction),
    when there is one; the reported expressions then contain it.
    """

    kind: UnknownKind
    message: str
    span: Span
    symbol: str | None = None


@dataclass(frozen=True, slots=True)
class FlopTally:
    """Floating-point operations of one execution, by kind (MODEL.md: `a*b + c` is 2)."""

    add: int = 0
    sub: int = 0
    mul: int = 0
    div: int = 0
    special: int = 0

    def __add__(self, other: FlopTally) -> FlopTally:
        # Most sums in lowering add nothing (a name, a subscript): skip building a tally.
        if other.is_zero():
            return self
        if self.is_zero():
            return other
        return FlopTally(
            self.add + other.add,
            self.sub + other.sub,
            self.mul + other.mul,
            self.div + other.div,
            self.special + other.special,
        )

    def is_zero(self) -> bool:
        return not (self.add or self.sub or self.mul or self.div or self.special)


@dataclass(frozen=True, slots=True)
class Access:
    """One array reference in a statement; `index` is None when it is not affine."""

    array: str
    index: tuple[sympy.Expr, ...] | None
    element: ElementType
    is_write: bool
    span: Span
    text: str
    """The reference as written in the source, e.g. `A[i*n + k]`."""
    extents: tuple[sympy.Expr | None, ...] = ()
    """Declared element counts of the indexed dimensions, outermost first, where the source
    declares them (`float a[m][n]`: m, n); None where unknown, () when nothing is declared."""

    def __post_init__(self) -> None:
        # An index read from data (`data_symbol`) names one element at an unknown address:
        # the access is indirect, whichever frontend built it.
        if self.index is not None and _reads_data(self.index):
            object.__setattr__(self, "index", None)


@lru_cache(maxsize=8192)
def _reads_data(index: tuple[sympy.Expr, ...]) -> bool:
    """Whether an index holds a `data_symbol`; remembered, as the same indices recur
    through a file (`A[i, j]`) and their symbols were a visible share of lowering."""
    return any(is_data_symbol(s) for e in index for s in getattr(e, "free_symbols", ()))


@dataclass(frozen=True, slots=True)
class ChainInput:
    """A floating-point value an assignment reads, and the operations between it and the
    value stored, innermost first: `add`, `add-fusable` (an add whose other operand is a
    product, which contraction makes one FMA with it), `mul`, `div`, `fma`, `special`."""

    name: str
    index: tuple[sympy.Expr, ...] | None
    """The element read (as `Access.index`); None for a scalar or a non-affine index."""
    is_scalar: bool
    operations: tuple[str, ...]

    def then(self, operation: str) -> ChainInput:
        """The same value one operation further on: `replace`'s result, built directly
        (every leaf of every C expression goes through it, and `replace` reads the
        fields anew each time)."""
        return ChainInput(self.name, self.index, self.is_scalar, (*self.operations, operation))


@dataclass(frozen=True, slots=True)
class Dataflow:
    """What one assignment stores and what it reads: enough to find a chain of dependent
    operations carried from one loop iteration to the next (`analysis.dependence`)."""

    target: str
    index: tuple[sympy.Expr, ...] | None
    is_scalar: bool
    inputs: tuple[ChainInput, ...]


@dataclass(frozen=True, slots=True)
class Statement:
    """One executed statement: its FLOPs and its array accesses in evaluation order."""

    span: Span
    text: str
    flops: FlopTally
    accesses: tuple[Access, ...] = ()
    special_calls: tuple[str, ...] = ()
    unknowns: tuple[Unknown, ...] = ()
    contraction: bool = False
    """GPU kernels: these FLOPs are a matrix contraction the hardware runs on its
    tensor cores (`tl.dot`), placed on the tensor-core roof of the operands' dtype."""
    dataflow: Dataflow | None = None
    """For a floating-point assignment, where a frontend records it (C)."""

    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        """Memoized (see the module docstring)."""
        if self._hash is not None:
            return self._hash
        return _remember_hash(
            self,
            self.span,
            self.text,
            self.flops,
            self.accesses,
            self.special_calls,
            self.unknowns,
            self.contraction,
            self.dataflow,
        )


class LoopLike(Protocol):
    """What sums, footprints and tiles need of a loop (a `Loop`, or its bounds alone):
    `var` takes `start + step*t` for `t < trip`."""

    @property
    def var(self) -> str: ...
    @property
    def start(self) -> sympy.Expr: ...
    @property
    def step(self) -> int: ...
    @property
    def trip(self) -> sympy.Expr: ...


@dataclass(frozen=True, slots=True)
class Parallel:
    """The construct that runs a loop on several threads (`#pragma omp parallel for`)."""

    span: Span
    text: str
    """As written, for the report: `#pragma omp parallel for`."""
    threads: int | None = None
    """Threads the code asks for (`num_threads(8)`, `omp_set_num_threads(8)`); None: the
    runtime's default, every core."""
    threads_line: int | None = None
    """Where `threads` comes from, when not from the construct itself."""


@dataclass(frozen=True, slots=True)
class Loop:
    """A counted loop: `var` takes `start`, `start + step`, ... for `trip` iterations."""

    var: str
    start: sympy.Expr
    step: int
    trip: sympy.Expr
    body: tuple[Node, ...]
    span: Span
    unknowns: tuple[Unknown, ...] = ()
    parallel: Parallel | None = None
    """Set where the code runs this loop's iterations on several threads."""

    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        """Memoized (see the module docstring)."""
        if self._hash is not None:
            return self._hash
        return _remember_hash(
            self,
            self.var,
            self.start,
            self.step,
            self.trip,
            self.body,
            self.span,
            self.unknowns,
            self.parallel,
        )


@dataclass(frozen=True, slots=True)
class Branch:
    """An `if`: both sides counted, weighted by a named fraction of executions taking `then`."""

    span: Span
    condition: Statement
    taken_fraction: sympy.Expr
    then_body: tuple[Node, ...]
    else_body: tuple[Node, ...]
    unknowns: tuple[Unknown, ...] = ()
    guard: sympy.Basic | None = None
    """The condition, when it is affine in loop variables and sizes (`i < j - 1`): the
    analysis then counts the iterations that take each side exactly and drops the
    fraction's unknown; it keeps both where it cannot (docs/model.md)."""

    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        """Memoized (see the module docstring)."""
        if self._hash is not None:
            return self._hash
        return _remember_hash(
            self,
            self.span,
            self.condition,
            self.taken_fraction,
            self.then_body,
            self.else_body,
            self.unknowns,
            self.guard,
        )


Node = Statement | Loop | Branch


@dataclass(frozen=True, slots=True)
class GpuLaunch:
    """The configuration of one GPU kernel launch (CUDA): the grid and the block, three
    axes each, and where it was given."""

    kernel: str
    grid: tuple[sympy.Expr, ...]
    block: tuple[sympy.Expr, ...]
    origin: str
    """`launched in main, line 40`, `--launch`, `configuration`, or `no launch` (the grid
    and the block are then the symbols `gridDim_x`, `blockDim_x`, ...)."""
    atomic_lines: tuple[int, ...] = ()
    """Lines of the kernel's atomic updates (`atomicAdd`), whose writes analysis counts."""


def _remember_hash(node: Node, *parts: object) -> int:
    value = hash(parts)
    object.__setattr__(node, "_hash", value)
    return value


@dataclass(frozen=True, slots=True)
class Region:
    """A top-level loop nest, or a run of straight-line code between nests.

    The compulsory traffic model starts cold at each region (MODEL.md).
    """

    kind: str
    """`nest` or `straight`."""
    body: tuple[Node, ...]
    span: Span
    eager_calls: tuple[Region, ...] = ()
    """NumPy code only: the same work as NumPy runs it, one region per ufunc/matmul call,
    temporaries included. When present, the `fused` (this body) and `eager` (the sum over
    these calls) traffic views are reported besides the classic models."""
    temporaries: tuple[Temporary, ...] = ()
    conventions: tuple[tuple[str, sympy.Expr], ...] = ()
    """Other FLOP figures people quote for the same work, e.g. ("2*m*k*n", 2*m*k*n) for a
    matmul whose exact count is m*n*(2k - 1)."""
    local_arrays: frozenset[str] = frozenset()
    """NumPy code only: arrays that do not escape the function (not a parameter, not
    returned, not on `self`). The `jit` traffic view (whole-function fusion, as `jax.jit`
    or XLA run it) does not materialize them: their reads and writes move no bytes."""
    contraction: bool = False
    """NumPy eager calls only: this call is a contraction (`@`, `matmul`, `dot`, `einsum`,
    `tensordot`, `linalg.*`) that the library hands to BLAS, so it runs on the matrix
    (tensor-core) roof of its dtype where the device has one (`aiscan.roofline.roofs`)."""
    tf32: str | None = None
    """Why this region's float32 contractions run in TF32 (the framework's precision
    policy, `frontends/python/frameworks.py`), or None for full FP32."""
    view: str = ""
    """`jit` (a compiled function: XLA, TorchInductor, Numba fuse it) or `eager` (each array
    call its own kernel) for code under a detected framework; empty otherwise."""
    weight: sympy.Expr = ONE
    """NumPy eager calls only: the share of executions that make this call (`y = a if c
    else b`: the named fraction of `c` for `a`'s calls, its complement for `b`'s); the
    call's bytes and FLOPs count weighted by it, as a branch's are."""
    gpu_launch: bool = False
    """One launch of a GPU kernel (Triton): its grid is the outer loops, and `body`
    counts every lane, as the hardware executes masked-off lanes too."""
    useful: tuple[Node, ...] = ()
    """GPU launches only: the arithmetic of `body`, each statement under the condition
    that its lanes' inputs are masked in; the FLOPs counted over it are the useful ones."""
    repeat: tuple[Loop, ...] = ()
    """NumPy eager calls inside explicit loops only: the loops around the call (bodies
    empty), outermost first. The call runs once per pass, each time reading its operands
    and writing its result: its traffic at one pass (in the loops' variables) is summed
    over them."""
    shared_memory: tuple[Node, ...] = ()
    """GPU launches only: the same loops with only the accesses to on-chip shared memory
    (CUDA `__shared__` arrays), which `body` leaves out; counted apart, every access."""
    launch: GpuLaunch | None = None
    """GPU launches only: the launch configuration, where the frontend records one."""
    launch_order: tuple[Loop, ...] = ()
    """Triton launches only: the grid's loops in the order the GPU starts programs,
    outermost first (bodies empty), where `body` nests them otherwise (`pid_0` runs
    fastest on the GPU but is `body`'s outer loop; grouped program ids are merged back
    into a 2-D grid there). The L2 model (`analysis.gpu_dram`) runs the body in it."""


@dataclass(frozen=True, slots=True)
class Temporary:
    """An array NumPy allocates for an intermediate result (eager view only)."""

    name: str
    expression: str
    span: Span
    elements: sympy.Expr
    element: ElementType


@dataclass(frozen=True, slots=True)
class Parameter:
    """A function's parameter as the analysis took it: the shape and dtype its counts hold
    under, and where each came from, so a program (or a user) can check or correct them.

    `kind` is `array`, `scalar`, `size` (an integer extent) or `unknown`; `shape_from` and
    `dtype_from` are `annotation`, `code` (`.shape` unpacking, indexing, a use), `assumed`
    (nothing in the code says; `note` says what was taken) or `given` (`--shape`)."""

    name: str
    span: Span
    kind: str
    shape: tuple[sympy.Expr, ...] = ()
    element: ElementType | None = None
    shape_from: str = "code"
    dtype_from: str = "code"
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    span: Span
    regions: tuple[Region, ...]
    unknowns: tuple[Unknown, ...] = ()
    parameters: tuple[Parameter, ...] | None = None
    """The parameters as the frontend took them (Python); None where it records none."""
    inlined: tuple[InlinedFunction, ...] = ()
    """Functions of the same file whose calls are counted here as their bodies."""


@dataclass(frozen=True, slots=True)
class InlinedFunction:
    """A callee counted inline: its name, where it is defined, the lines calling it."""

    name: str
    span: Span
    call_lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Module:
    """One analyzed source file."""

    path: str
    language: str
    functions: tuple[Function, ...]
    size_defaults: tuple[tuple[str, int], ...] = ()
    """Sizes the source itself fixes (`#define N 1024`), used when the user gives none."""
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    dependencies: tuple[tuple[str, str | None], ...] = ()
    """Other files the result depends on, for cache validation: each included header with
    the digest of the bytes read, and each header candidate looked for and absent (None)."""
