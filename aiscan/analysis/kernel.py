"""The analysis of a whole module: per region, per function, with typed results.

Pure functions from IR to results; nothing here parses, prints or exits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from aiscan.algebra import SYMPY, ZERO, expand
from aiscan.analysis.domain import sum_over_loops
from aiscan.analysis.flops import FlopCounts, count_flops
from aiscan.analysis.gpu_memory import (
    AtomicUpdates,
    BankConflict,
    atomic_updates,
    bank_conflicts,
    sector_traffic,
    shared_wavefront_bytes,
)
from aiscan.analysis.idle_loops import without_idle_loops
from aiscan.analysis.intensity import Intensity, intensity
from aiscan.analysis.traffic import (
    MODELS,
    NUMPY_VIEWS,
    Traffic,
    compulsory_traffic,
    streaming_traffic,
)
from aiscan.analysis.walk import Placed, placed_statements
from aiscan.ir.nodes import (
    Branch,
    Function,
    Loop,
    Module,
    Node,
    Region,
    Statement,
    Unknown,
    UnknownKind,
)
from aiscan.ir.trips import nonnegative_from
from aiscan.options import AnalysisOptions

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "AnalysisOptions",
    "FunctionAnalysis",
    "LoopSummary",
    "ModuleAnalysis",
    "RegionAnalysis",
    "analysis_key",
    "analyze_module",
]


@dataclass(frozen=True, slots=True)
class LoopSummary:
    var: str
    line: int
    start: sympy.Expr
    step: int
    trip: sympy.Expr
    depth: int
    nonnegative_from: tuple[str, int] | None = None
    """`("n", 5)` for a trip `n - 5`: the size from which the trip, and the counts that
    follow it, hold (`ir.trips.nonnegative_from`); below it the loop does not run."""


@dataclass(frozen=True, slots=True)
class RegionAnalysis:
    region: Region
    loops: tuple[LoopSummary, ...]
    flops: FlopCounts
    traffic: Mapping[str, Traffic]
    intensity: Mapping[str, Intensity]
    precision: str
    unknowns: tuple[Unknown, ...]
    special_calls: tuple[str, ...]
    contraction_flops: sympy.Expr = ZERO
    """The part of `flops.total` done by library contractions (NumPy eager calls marked
    `contraction`, GPU statements such as `tl.dot`); the rest runs on the vector units."""
    useful_flops: FlopCounts | None = None
    """GPU launches (`Region.gpu_launch`): the FLOPs of masked-in lanes
    (`Region.useful`); `flops` counts every lane the hardware executes."""
    shared_memory_bytes: sympy.Expr | None = None
    """GPU launches with shared-memory arrays (`Region.shared_memory`): every access to
    them, in bytes (the streaming model), apart from the global traffic."""
    sector_traffic: Traffic | None = None
    """GPU launches: the L2 → SM bytes in 32-byte sectors, each warp's access costing the
    sectors its lanes touch (`analysis.gpu_memory`)."""
    bank_conflicts: tuple[BankConflict, ...] = ()
    """GPU launches: shared-memory accesses whose warp hits one bank several times."""
    shared_wavefront_bytes: sympy.Expr | None = None
    """`shared_memory_bytes` as the banks serve them, each conflicting access times its
    ways; None where nothing conflicts."""
    atomics: tuple[AtomicUpdates, ...] = ()
    """GPU launches: each atomic update and how many times the launch makes it."""


@dataclass(frozen=True, slots=True)
class FunctionAnalysis:
    function: Function
    regions: tuple[RegionAnalysis, ...]
    flops: FlopCounts
    traffic: Mapping[str, Traffic]
    intensity: Mapping[str, Intensity]
    precision: str
    unknowns: tuple[Unknown, ...]


@dataclass(frozen=True, slots=True)
class ModuleAnalysis:
    module: Module
    functions: tuple[FunctionAnalysis, ...]
    sizes: Mapping[str, int]
    write_allocate: bool


def analyze_module(
    module: Module,
    options: AnalysisOptions | None = None,
    memo: MutableMapping[Hashable, FunctionAnalysis] | None = None,
    region_memo: MutableMapping[Hashable, RegionAnalysis] | None = None,
) -> ModuleAnalysis:
    """`memo`: each function's analysis, kept by the function (its value) and the options,
    for the next analysis of an edited file (the language server's), whose other
    functions lower as they did. `region_memo`: each region's, kept the same way, for a
    function whose hovered nest was analyzed alone first (a region's analysis is of the
    region alone)."""
    options = options or AnalysisOptions()
    sizes = {**dict(module.size_defaults), **options.sizes}
    functions = tuple(
        _remembered(
            f, options, sizes, memo, partial(_analyze_function, f, options, sizes, region_memo)
        )
        for f in module.functions
    )
    return ModuleAnalysis(module, functions, sizes, options.write_allocate)


_Analysis = TypeVar("_Analysis")
"""A function's or a region's analysis (`_remembered`)."""


def _remembered(
    part: Function | Region,
    options: AnalysisOptions,
    sizes: Mapping[str, int],
    memo: MutableMapping[Hashable, _Analysis] | None,
    analyze: Callable[[], _Analysis],
) -> _Analysis:
    """`analyze()`, kept in `memo` under `part`'s `analysis_key` where there is one."""
    if memo is None:
        return analyze()
    key = analysis_key(part, options, sizes)
    found = memo.get(key)
    if found is None:
        found = memo[key] = analyze()
    return found


def analysis_key(
    part: Function | Region, options: AnalysisOptions, sizes: Mapping[str, int]
) -> Hashable:
    """What decides a function's or a region's analysis (`analyze_module`'s memos): the
    IR, the sizes (which hold `options.sizes`) and the rest of the options the analysis
    reads."""
    return (
        part,
        options.write_allocate,
        options.special_weight,
        options.placed_view,
        tuple(sorted(sizes.items())),
    )


def _analyze_function(
    function: Function,
    options: AnalysisOptions,
    sizes: Mapping[str, int],
    region_memo: MutableMapping[Hashable, RegionAnalysis] | None = None,
) -> FunctionAnalysis:
    regions = tuple(
        _remembered(r, options, sizes, region_memo, partial(_analyze_region, r, options, sizes))
        for r in function.regions
    )
    unknowns = [*function.unknowns, *(u for r in regions for u in r.unknowns)]
    if len(regions) == 1:
        # Most functions are one loop nest: its counts are the function's, as they are.
        (only,) = regions
        return FunctionAnalysis(
            function,
            regions,
            only.flops,
            only.traffic,
            only.intensity,
            only.precision,
            tuple(unknowns),
        )
    flops = FlopCounts.zero()
    # Every region counts every model unless a placement asked for one view alone.
    models = [m for m in MODELS if all(m in r.traffic for r in regions)]
    traffic = {model: Traffic.zero(model) for model in models}
    for region in regions:
        flops = flops + region.flops
        for model in models:
            traffic[model] = traffic[model] + region.traffic[model]
    if options.placed_view is None and any(r.region.eager_calls for r in regions):
        # Regions without NumPy calls move the same bytes in every view.
        for view in NUMPY_VIEWS:
            traffic[view] = Traffic.zero(view)
            for region in regions:
                traffic[view] = traffic[view] + region.traffic.get(
                    view, region.traffic["compulsory"]
                )
    return FunctionAnalysis(
        function,
        regions,
        flops,
        traffic,
        _intensities(flops, traffic, options, sizes),
        _dominant([r.precision for r in regions if r.precision]),
        tuple(unknowns),
    )


def _analyze_region(
    region: Region, options: AnalysisOptions, sizes: Mapping[str, int]
) -> RegionAnalysis:
    loops = tuple(_loop_summaries(region.body, 0))
    written = placed_statements(region.body)
    elements = Counter(
        a.element.precision for p in written for a in p.statement.accesses if a.element.is_float
    )
    computed = _contraction_precisions(region)
    if computed and set(computed) != set(elements):
        # Its contractions run in their own dtype (inputs cast first, as under
        # `torch.autocast`): that dtype picks the matrix roof, not the inputs' majority.
        elements = computed
    # Loops that do not run lose their bodies before counting; the loops and the
    # precision stay those of the code as written.
    body, idle = without_idle_loops(region.body, sizes)
    statements = written
    if body is not region.body:
        region = replace(region, body=body)
        statements = placed_statements(body)
    counts = _region_counts(region, statements, options, sizes)
    unknowns = [*idle, *_structural_unknowns(region.body, _counted_branches(statements))]
    unknowns += [u for p in statements for u in p.statement.unknowns]
    unknowns += counts.footprint_unknowns
    useful = placed_statements(region.useful) if region.useful else []
    conflicts = bank_conflicts(region, sizes) if region.shared_memory else ()
    if useful:  # the fractions the useful FLOPs could not count exactly
        unknowns += _structural_unknowns(region.useful, _counted_branches(useful))
    return RegionAnalysis(
        region,
        loops,
        counts.flops,
        counts.traffic,
        counts.intensity,
        elements.most_common(1)[0][0] if elements else "",
        tuple(_unique(unknowns)),
        tuple(sorted({c for p in statements for c in p.statement.special_calls})),
        _contraction_flops(region, statements, options),
        count_flops(useful, options.special_weight) if region.gpu_launch else None,
        _shared_memory_bytes(region),
        sector_traffic(region, sizes, counts.traffic["streaming"]) if region.gpu_launch else None,
        conflicts,
        shared_wavefront_bytes(region, conflicts),
        atomic_updates(region) if region.gpu_launch else (),
    )


def _contraction_precisions(region: Region) -> Counter[str]:
    """The dtypes the region's contraction calls (eager view) read and write."""
    return Counter(
        a.element.precision
        for call in region.eager_calls
        if call.contraction
        for p in placed_statements(call.body)
        for a in p.statement.accesses
        if a.element.is_float
    )


def _shared_memory_bytes(region: Region) -> sympy.Expr | None:
    if not region.shared_memory:
        return None
    return streaming_traffic(region.shared_memory).total(False)


def _contraction_flops(
    region: Region, statements: list[Placed], options: AnalysisOptions
) -> sympy.Expr:
    """FLOPs of the region's contraction calls (each counted as NumPy runs it) and of
    its contraction statements (`tl.dot`)."""
    total = ZERO
    contractions = [p for p in statements if p.statement.contraction]
    if contractions:
        total += count_flops(contractions, options.special_weight).total
    for call in region.eager_calls:
        if call.contraction:
            flops = count_flops(placed_statements(call.body), options.special_weight).total
            total += (
                sum_over_loops(call.weight * flops, call.repeat)
                if call.repeat
                else (call.weight * flops)
            )
    return expand(total)


@dataclass(frozen=True, slots=True)
class _Counts:
    flops: FlopCounts
    traffic: Mapping[str, Traffic]
    intensity: Mapping[str, Intensity]
    footprint_unknowns: list[Unknown]


_MEMO_LIMIT = 4096
_memo: dict[object, _Counts] = {}


def _region_counts(
    region: Region,
    statements: list[Placed],
    options: AnalysisOptions,
    sizes: Mapping[str, int],
) -> _Counts:
    """FLOPs, traffic and intensity of a region, memoized on its structure.

    The counts depend only on the loops, the statements' operations and the accesses (names,
    indices, widths), never on where the region sits in the file, so a loop nest that
    recurs (the same daxpy in ten files) is counted once per process. Regions whose
    footprints raised unknowns are not memoized: those messages name source text.
    """
    key = (
        _structure(region.body),
        tuple(
            (_structure(call.body), call.weight, _structure(call.repeat))
            for call in region.eager_calls
        ),
        tuple(sorted(region.local_arrays)) if region.eager_calls else (),
        options.special_weight,
        _wanted_views(region, options.placed_view),
        options.write_allocate,
        tuple(sorted(sizes.items())),
    )
    found = _memo.get(key)
    if found is not None:
        return found
    counts = _count_region(region, statements, options, sizes)
    if not counts.footprint_unknowns:
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = counts
    return counts


def _structure(body: tuple[Node, ...]) -> tuple[object, ...]:
    """A region body with its source positions left out (see `_region_counts`)."""
    parts: list[object] = []
    for node in body:
        if isinstance(node, Loop):
            parts.append(("L", node.var, node.start, node.step, node.trip, _structure(node.body)))
        elif isinstance(node, Branch):
            parts.append(
                (
                    "B",
                    _structure((node.condition,)),
                    node.taken_fraction,
                    node.guard,
                    _structure(node.then_body),
                    _structure(node.else_body),
                )
            )
        else:
            parts.append(
                (
                    "S",
                    node.flops,
                    node.special_calls,
                    tuple((a.array, a.index, a.element, a.is_write) for a in node.accesses),
                )
            )
    return tuple(parts)


def _count_region(
    region: Region,
    statements: list[Placed],
    options: AnalysisOptions,
    sizes: Mapping[str, int],
) -> _Counts:
    flops = count_flops(statements, options.special_weight)
    wanted = _wanted_views(region, options.placed_view)
    traffic: dict[str, Traffic] = {}
    footprint_unknowns: list[Unknown] = []
    if wanted is None or wanted & {"compulsory", "fused"}:
        compulsory, footprint_unknowns = compulsory_traffic(statements)
        traffic["compulsory"] = compulsory
    traffic["streaming"] = streaming_traffic(region.body)
    if region.eager_calls and (wanted is None or "fused" in wanted):
        traffic["fused"] = Traffic(
            "fused",
            compulsory.read_bytes,
            compulsory.write_bytes,
            compulsory.allocate_bytes,
            compulsory.exact,
        )
    if region.eager_calls and (wanted is None or "eager" in wanted):
        eager = Traffic.zero("eager")
        for call in region.eager_calls:
            call_traffic, call_unknowns = compulsory_traffic(placed_statements(call.body))
            if call.repeat and call_unknowns:
                # A call in a loop, at one pass: its bound makes the eager figure a bound
                # (said by the report), not a statement about the compulsory model.
                call_traffic = replace(call_traffic, exact=False)
                call_unknowns = []
            eager = eager + _repeated(_weighted(call_traffic, call.weight), call.repeat)
            footprint_unknowns += call_unknowns
        traffic["eager"] = eager
    if region.eager_calls and (wanted is None or "jit" in wanted):
        jit, jit_unknowns = compulsory_traffic(
            placed_statements(_without_arrays(region.body, region.local_arrays))
        )
        traffic["jit"] = Traffic(
            "jit", jit.read_bytes, jit.write_bytes, jit.allocate_bytes, jit.exact
        )
        footprint_unknowns += [u for u in jit_unknowns if u not in footprint_unknowns]
    intensities = _intensities(flops, traffic, options, sizes)
    return _Counts(flops, traffic, intensities, footprint_unknowns)


def _wanted_views(region: Region, placed_view: str | None) -> frozenset[str] | None:
    """The traffic views a placement under the model `placed_view` reads of this region
    (`roofline.kernels._traffic_view`): under `auto`, a launch's compulsory bytes, a
    compiled function's jit view, other array code's eager view, loops' compulsory bytes;
    under another model that view, with the compulsory bytes it falls back to. None
    (every view) for the reports."""
    if placed_view is None:
        return None
    if placed_view == "auto" and not region.gpu_launch:
        if region.eager_calls:
            return frozenset({"jit" if region.view == "jit" else "eager"})
        return frozenset({"compulsory"})
    return frozenset({"compulsory", placed_view})


def _repeated(traffic: Traffic, loops: tuple[Loop, ...]) -> Traffic:
    """A call's traffic at one pass of the loops around it, summed over their passes."""
    if not loops:
        return traffic
    return Traffic(
        traffic.model,
        expand(sum_over_loops(traffic.read_bytes, loops)),
        expand(sum_over_loops(traffic.write_bytes, loops)),
        expand(sum_over_loops(traffic.allocate_bytes, loops)),
        traffic.exact,
    )


def _weighted(traffic: Traffic, weight: sympy.Expr) -> Traffic:
    """A call's traffic times the share of executions making it (`Region.weight`)."""
    if weight == 1:
        return traffic
    return Traffic(
        traffic.model,
        expand(weight * traffic.read_bytes),
        expand(weight * traffic.write_bytes),
        expand(weight * traffic.allocate_bytes),
        traffic.exact,
    )


def _without_arrays(body: tuple[Node, ...], arrays: frozenset[str]) -> tuple[Node, ...]:
    """`body` with no access to `arrays`: the jit view, where intermediates that do not
    escape the function stay in registers or fused loops (never in memory)."""
    if not arrays:
        return body
    out: list[Node] = []
    for node in body:
        if isinstance(node, Loop):
            out.append(replace(node, body=_without_arrays(node.body, arrays)))
        elif isinstance(node, Branch):
            (condition,) = _without_arrays((node.condition,), arrays)
            assert isinstance(condition, Statement)
            out.append(
                replace(
                    node,
                    condition=condition,
                    then_body=_without_arrays(node.then_body, arrays),
                    else_body=_without_arrays(node.else_body, arrays),
                )
            )
        elif isinstance(node, Statement):
            kept = tuple(a for a in node.accesses if a.array not in arrays)
            out.append(replace(node, accesses=kept) if len(kept) != len(node.accesses) else node)
        else:
            out.append(node)
    return tuple(out)


def _intensities(
    flops: FlopCounts,
    traffic: Mapping[str, Traffic],
    options: AnalysisOptions,
    sizes: Mapping[str, int],
) -> Mapping[str, Intensity]:
    return _Intensities(flops.total, dict(traffic), options.write_allocate, dict(sizes))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class _Intensities(Mapping[str, Intensity]):
    """Each traffic view's intensity, made when it is first read. The reports read them
    all; a plot reads none (it places the FLOPs and bytes on each device itself), and
    making them was a twentieth of its workers' time. The same `intensity` either way.
    A dataclass whose `made` is no `__init__` field: the editor moves the counts it is
    made of to a function's new lines (`relines`), and the intensities are made again
    from them, as a fresh analysis makes them."""

    flops: sympy.Expr
    traffic: Mapping[str, Traffic]
    write_allocate: bool
    sizes: Mapping[str, int]
    made: dict[str, Intensity] = field(default_factory=dict, init=False)

    def __getitem__(self, model: str) -> Intensity:
        made = self.made.get(model)
        if made is None:
            total = self.traffic[model].total(self.write_allocate)
            made = self.made[model] = intensity(self.flops, total, self.sizes)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self.traffic)

    def __len__(self) -> int:
        return len(self.traffic)

    def __repr__(self) -> str:
        return repr(dict(self))


def _loop_summaries(body: tuple[Node, ...], depth: int) -> list[LoopSummary]:
    summaries: list[LoopSummary] = []
    for node in body:
        if isinstance(node, Loop):
            summaries.append(
                LoopSummary(
                    node.var,
                    node.span.line,
                    node.start,
                    node.step,
                    node.trip,
                    depth,
                    nonnegative_from(node.trip),
                )
            )
            summaries += _loop_summaries(node.body, depth + 1)
        elif isinstance(node, Branch):
            summaries += _loop_summaries(node.then_body, depth)
            summaries += _loop_summaries(node.else_body, depth)
    return summaries


def _structural_unknowns(body: tuple[Node, ...], counted: set[int]) -> list[Unknown]:
    """The loops' and branches' unknowns, less the fraction of a branch in `counted`."""
    found: list[Unknown] = []
    for node in body:
        if isinstance(node, Loop):
            found += node.unknowns
            found += _structural_unknowns(node.body, counted)
        elif isinstance(node, Branch):
            found += [
                u
                for u in node.unknowns
                if not (id(node) in counted and u.kind is UnknownKind.BRANCH_FRACTION)
            ]
            found += _structural_unknowns(node.then_body, counted)
            found += _structural_unknowns(node.else_body, counted)
    return found


def _counted_branches(statements: list[Placed]) -> set[int]:
    """The branches (by id) with affine conditions under which every statement's runs
    are counted exactly: their fractions appear in no count."""
    from aiscan.analysis.polyhedral import guarded_runs

    counted: set[int] = set()
    failed: set[int] = set()
    for placed in statements:
        if not placed.branches:
            continue
        guards = placed.guards
        exact = guards is not None and guarded_runs(placed.loops, guards) is not None
        for branch, _ in placed.branches:
            (counted if exact else failed).add(id(branch))
    return counted - failed


def _unique(unknowns: list[Unknown]) -> list[Unknown]:
    return list(dict.fromkeys(unknowns))


def _dominant(precisions: list[str]) -> str:
    counts = Counter(precisions)
    return counts.most_common(1)[0][0] if counts else ""
