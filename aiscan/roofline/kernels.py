"""Analysis results to roofline inputs: one `KernelSpec` per loop nest (or function).

The bridge between `aiscan.analysis` and the placement and plots: it picks the traffic
model, the bytes with and without write-allocate, and the precision (the kernel's element
type unless the user overrides it with `--dtype`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, ZERO, as_expression, expand
from aiscan.analysis.dependence import DependenceChain, compiler_flags, find_chains
from aiscan.analysis.intensity import finite_value, size_bindings, substitute_sizes
from aiscan.analysis.kernel import FunctionAnalysis, ModuleAnalysis, RegionAnalysis
from aiscan.errors import UsageError
from aiscan.ir.nodes import Node
from aiscan.options import PlacementOptions
from aiscan.printable import printable
from aiscan.roofline.devices import MAIN_MEMORY_LEVELS, Device
from aiscan.roofline.hierarchy import DeviceCacheTraffic, device_cache_traffic
from aiscan.roofline.launch_memory import launch_memory
from aiscan.roofline.placement import Crossover, CrossoverKind, Placement, growing_symbols
from aiscan.roofline.plot import KernelSpec, sweep_sizes
from aiscan.roofline.repeats import repeat_symbols
from aiscan.roofline.roofs import LOOPS, VECTOR
from aiscan.roofline.threads import ThreadRequest, on_threads, thread_request

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = [
    "PlacementOptions",
    "cache_traffic_on",
    "file_kernels",
    "kernel_spec",
    "labelled_by_file",
    "module_kernels",
    "place_on_devices",
]

LAUNCH_NOTE = (
    "GPU launch: placed with its compulsory (main-memory) bytes and every executed FLOP; "
    "which re-reads the L2 holds is decided at given sizes (--size), where the layer "
    "conditions can decide them"
)
TRITON_LAUNCH_NOTE = (
    "GPU launch: placed with its compulsory (main-memory) bytes and every executed FLOP; "
    "at given sizes (--size) the L2 model's bytes replace them where it decides every "
    "re-read and loses none between programs (programs running at once share those; "
    "`aiscan check` names such a spill, AIS014)"
)
NO_CACHE_NOTE = "no cache level with a capacity and a line size: placed with compulsory traffic"


def cache_traffic_on(
    result: RegionAnalysis | FunctionAnalysis,
    device: Device,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    *,
    whole_cache: bool = True,
) -> DeviceCacheTraffic | None:
    """The `cache` model's traffic of a nest (or a function's nests) on one device, with
    the device's store policy unless the user overrides it; None without modelled caches.
    `whole_cache`: with each level's bytes at the whole capacity, which the reports show
    and no placement reads (a size path's points go without: a sixth of its time)."""
    if isinstance(result, RegionAnalysis):
        bodies: tuple[tuple[Node, ...], ...] = (result.region.body,)
    else:
        bodies = tuple(r.region.body for r in result.regions)
    write_allocate = (
        device.write_allocate if options.write_allocate is None else options.write_allocate
    )
    device, _ = on_threads(device, _threads(result, options))
    return _cache_traffic(bodies, device, write_allocate, tuple(sorted(sizes.items())), whole_cache)


def _threads(result: RegionAnalysis | FunctionAnalysis, options: PlacementOptions) -> ThreadRequest:
    """The threads the code (or the user) asks for, for every device it is placed on."""
    regions = tuple(r.region for r in _regions(result))
    return thread_request(regions, options.threads, options.threads_reason)


def _chains(
    result: RegionAnalysis | FunctionAnalysis, options: PlacementOptions
) -> tuple[DependenceChain, ...]:
    """The loop-carried dependency chains of the nest (or the function's nests) under the
    compiler flags the user gives."""
    flags = compiler_flags(options.cflags)
    return tuple(c for r in _regions(result) for c in find_chains(r.region.body, flags))


@lru_cache(maxsize=1024)
def _cache_traffic(
    bodies: tuple[tuple[Node, ...], ...],
    device: Device,
    write_allocate: bool,
    size_items: tuple[tuple[str, int], ...],
    whole_cache: bool,
) -> DeviceCacheTraffic | None:
    """Memoized: the JSON's `cache_traffic` and the placement ask for the same traffic."""
    return device_cache_traffic(
        bodies, device, write_allocate=write_allocate, sizes=dict(size_items),
        whole_cache=whole_cache,
    )  # fmt: skip


def kernel_spec(
    label: str, result: RegionAnalysis | FunctionAnalysis, options: PlacementOptions
) -> KernelSpec:
    model, view_note = _traffic_view(result, options.model)
    if model not in result.traffic:  # `cache`: these are the compulsory bytes, said so
        model = "compulsory"  # (the cache model's own traffic is placed per device)
    traffic = result.traffic[model]
    return KernelSpec(
        label=label,
        flops=result.flops.total,
        bytes_moved=traffic.total(False),
        precision=options.dtype or result.precision or "fp64",
        bytes_write_allocate=traffic.total(True),
        write_allocate=options.write_allocate,
        contraction_flops=_contraction_flops(result),
        vector_reason=VECTOR if _has_calls(result) else LOOPS,
        tf32=_tf32(result),
        traffic_view=model,
        view_note=view_note,
        flop_mix=result.flops,
        bytes_upper_bound=not traffic.exact,
        repeats=repeat_symbols(r.region.body for r in _regions(result)),
        threads=_threads(result, options),
        chains=_chains(result, options),
    )


def _traffic_view(result: RegionAnalysis | FunctionAnalysis, model: str) -> tuple[str, str | None]:
    """The traffic to place. `auto` (the default) follows the code: a compiled function
    (jax.jit, torch.compile, numba.njit) the jit view, other array code the eager view (each
    call its own kernel, temporaries included), loops the compulsory model."""
    if _is_launch(result) and model in ("auto", "cache"):
        cuda = any(r.region.launch is not None for r in _regions(result))
        return "compulsory", LAUNCH_NOTE if cuda else TRITON_LAUNCH_NOTE
    if model != "auto":
        return model, None
    regions = _regions(result)
    if any(r.region.view == "jit" for r in regions):
        if "jit" in result.traffic:
            return "jit", None
        if _has_calls(result):
            return "compulsory", (
                "compiled function without a jit traffic view: placed with the compulsory "
                "per-statement traffic, which stores named intermediates"
            )
        return "compulsory", None  # compiled loops (numba.njit): the compulsory model
    if "eager" in result.traffic:
        return "eager", None
    return "compulsory", None


def _tf32(result: RegionAnalysis | FunctionAnalysis) -> str | None:
    """The TF32 policy of the regions' framework (the first region that states one)."""
    return next((r.region.tf32 for r in _regions(result) if r.region.tf32), None)


def _regions(result: RegionAnalysis | FunctionAnalysis) -> tuple[RegionAnalysis, ...]:
    return (result,) if isinstance(result, RegionAnalysis) else result.regions


def _contraction_flops(result: RegionAnalysis | FunctionAnalysis) -> sympy.Expr:
    return expand(sum((r.contraction_flops for r in _regions(result)), ZERO))


def _is_launch(result: RegionAnalysis | FunctionAnalysis) -> bool:
    """A GPU kernel launch (its regions count useful FLOPs apart)."""
    return any(r.region.gpu_launch for r in _regions(result))


def _has_calls(result: RegionAnalysis | FunctionAnalysis) -> bool:
    """NumPy-style code (array calls) rather than explicit loops."""
    return any(r.region.eager_calls for r in _regions(result))


def place_on_devices(
    spec: KernelSpec,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    result: RegionAnalysis | FunctionAnalysis | None = None,
    *,
    simplified: bool = True,
) -> list[Placement | str]:
    """The kernel on each device, or the reason it cannot be placed there. The `cache`
    model needs the analysis `result` (its loop nests); without modelled caches on a
    device it falls back to compulsory traffic, with a note. `simplified` False: the
    figures `placement_lines` prints, the AI kept in a form sympy's `simplify` did not
    make (`placement.place`)."""
    placed: list[Placement | str] = []
    for device in options.devices:
        try:
            placed.append(_placed(spec, device, options, sizes, result, simplified))
        except UsageError as error:
            placed.append(f"{device.key}: {error}")
    return placed


def module_kernels(
    analyses: Sequence[ModuleAnalysis],
    options: PlacementOptions,
    size_range: tuple[int, int] | None = None,
) -> list[KernelSpec]:
    """Every loop nest with FLOPs of every module (`file_kernels`), labelled with the
    file too when there are several."""
    several = len(analyses) > 1
    return [
        labelled_by_file(spec, analysis.module.path) if several else spec
        for analysis in analyses
        for spec in file_kernels(analysis, options, size_range)
    ]


def labelled_by_file(spec: KernelSpec, path: str) -> KernelSpec:
    """`spec` labelled `file:function:line`, as a plot of several files names its kernels."""
    stem = printable(path.rsplit("/", 1)[-1])
    return replace(spec, label=f"{stem}:{spec.label}")


def file_kernels(
    analysis: ModuleAnalysis,
    options: PlacementOptions,
    size_range: tuple[int, int] | None = None,
) -> list[KernelSpec]:
    """Every loop nest with FLOPs, labelled `function:line`, its counts evaluated at the
    module's sizes (`#define` defaults, `-D`, `--size`), as `analyze` evaluates them;
    symbols without a size stay and are drawn as a path. With the `cache` model each
    carries its traffic on every device, for the hierarchical roofline, and, given a
    `size_range`, its path over sizes (`size_paths`)."""
    specs = []
    for function in analysis.functions:
        for region in function.regions:
            if region.region.kind != "nest" or region.flops.total == 0:
                continue
            label = f"{function.function.name}:{region.region.span.line}"
            spec = kernel_spec(label, region, options)
            if _uses_cache_model(spec, options, region):
                traffic = {
                    d.key: cache_traffic_on(region, d, options, analysis.sizes)
                    for d in options.devices
                }
                spec = replace(spec, cache_traffic=traffic)
                if size_range is not None:
                    paths = size_paths(spec, region, options, analysis.sizes, size_range)
                    spec = replace(spec, size_paths=paths or None)
            specs.append(_at_sizes(spec, analysis.sizes))
    return specs


def size_paths(
    spec: KernelSpec,
    region: RegionAnalysis,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    size_range: tuple[int, int],
) -> dict[str, tuple[tuple[int, float, float], ...]]:
    """The `cache` model swept over sizes (all free sizes equal, at the plot's powers of
    two): at each size its layer conditions are decided there, as `--size` would decide
    them, and the point is (main-memory AI, attainable). The symbolic traffic alone is the
    large-size regime (every growing working set taken not to fit): drawn at small sizes
    it put a naive dgemm at 0.09 F/B where its traffic at n = 64 is 6 F/B, compute-bound.
    Empty when a branch fraction or a non-size symbol stays free; `spec.cache_traffic`,
    the traffic at the module's sizes, says which devices model caches."""
    at = _at_sizes(spec, sizes)
    free = as_expression(at.flops).free_symbols | as_expression(at.bytes_moved).free_symbols
    growing = growing_symbols(sympy.Add(*free)) if free else ()
    if not growing or len(growing) != len(free):
        return {}
    paths: dict[str, tuple[tuple[int, float, float], ...]] = {}
    for device in options.devices:
        if (spec.cache_traffic or {}).get(device.key) is None:
            continue  # no modelled caches: one symbolic intensity, drawn as it is
        points = []
        for size in sweep_sizes(size_range):
            swept = {**sizes, **{s.name: size for s in growing}}
            placed = _place_one(spec, device, options, swept, region, point=True)
            main = [lv for lv in placed.levels if lv.kind in MAIN_MEMORY_LEVELS]
            x = main[-1].intensity_flops_per_byte if main else placed.intensity_flops_per_byte
            y = placed.attainable_flops_per_s
            if x is not None and y is not None and x > 0:
                points.append((size, x, y))
        if points:
            paths[device.key] = tuple(points)
    return paths


def _placed(
    spec: KernelSpec,
    device: Device,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    result: RegionAnalysis | FunctionAnalysis | None,
    simplified: bool = True,
) -> Placement:
    """On the roofs `--roof` asks for; with the other roofs' times beside when the device
    file has measured figures."""
    attainable = options.roof == "attainable"
    used = device.attainable() if attainable else device
    placed = _place_one(spec, used, options, sizes, result, simplified=simplified)
    if not device.has_attainable:
        if attainable:
            note = f"{device.key} has no attainable figures: datasheet roofs"
            return replace(placed, notes=(*placed.notes, note))
        return placed
    if attainable:
        placed = replace(placed, notes=(*placed.notes, _measured_note(device, placed)))
    other_device = device if attainable else device.attainable()
    other_times = None
    if _timed(spec, sizes, result):
        other_times = _place_one(
            spec, other_device, options, sizes, result, simplified=simplified
        ).times
    times = {"attainable": placed.times, "datasheet": other_times}
    if not attainable:
        times = {"datasheet": placed.times, "attainable": other_times}
    return replace(placed, times_by_roof=tuple(times.items()))


def _timed(
    spec: KernelSpec, sizes: Mapping[str, int], result: RegionAnalysis | FunctionAnalysis | None
) -> bool:
    """Whether a placement at `sizes` can have times: not without a number of FLOPs there
    (`placement._times`), on any roof. Placing on the other roofs then only solved their
    crossover again (sympy's limits and roots, most of a strided nest's hover) for none.
    A launch's FLOPs are simplified at the sizes before they are placed: always placed."""
    if result is not None and _is_launch(result):
        return True
    flops = as_expression(spec.flops)
    bindings = size_bindings(flops, sizes)  # as `place` substitutes them
    return finite_value(flops.subs(bindings) if bindings else flops) is not None


def _measured_note(device: Device, placed: Placement) -> str:
    """Which of the roofs used are measured (`--roof attainable`) and which the datasheet's,
    since a device file may measure some figures only."""
    measured_peaks = {p.precision for p in device.attainable_peaks}
    measured_levels = {m.name.lower() for m in device.attainable_memory}
    peak = "measured" if placed.precision in measured_peaks else "datasheet (none measured)"
    level = placed.memory_level
    memory = "measured" if level.lower() in measured_levels else "datasheet (none measured)"
    return f"roofs from --roof attainable: {placed.precision} peak {peak}, {level} {memory}"


def _uses_cache_model(
    spec: KernelSpec, options: PlacementOptions, result: RegionAnalysis | FunctionAnalysis
) -> bool:
    """`cache` when asked for, and by default (`auto`) for loop code; array code keeps its
    framework's view (eager or jit), which is what the H100's counters confirmed. GPU
    launches (Triton) are placed with their compulsory bytes: the layer conditions model
    one core's cache, not an L2 shared by every program of a grid."""
    if _is_launch(result):
        return False
    if options.model == "cache":
        return True
    return options.model == "auto" and spec.traffic_view == "compulsory"


def _place_one(
    spec: KernelSpec,
    device: Device,
    options: PlacementOptions,
    sizes: Mapping[str, int],
    result: RegionAnalysis | FunctionAnalysis | None,
    *,
    point: bool = False,
    simplified: bool = True,
) -> Placement:
    """One device's placement: hierarchical under the `cache` model where the device
    describes its caches, else on main memory with the kernel's own traffic. `point`:
    the figures at `sizes` alone (a point of a size path, `placement.place`);
    `simplified` as `place_on_devices`'s."""
    if result is not None and _uses_cache_model(spec, options, result):
        traffic = cache_traffic_on(result, device, options, sizes, whole_cache=not point)
        if traffic is not None and not traffic.levels:
            # No loop nest at all (a function of scalars): nothing for caches to model.
            plain = spec.place_on(
                device, sizes=sizes, sparse=options.sparse, point=point, simplified=simplified
            )
            return replace(plain, model="compulsory")
        if traffic is not None:
            # A size path's point is drawn, never printed (`simplified` False).
            return spec.place_on_caches(
                device, traffic, sizes=sizes, sparse=options.sparse, point=point,
                simplified=simplified and not point,
            )  # fmt: skip
        fallback = spec.place_on(
            device, sizes=sizes, sparse=options.sparse, point=point, simplified=simplified
        )
        return replace(fallback, notes=(*fallback.notes, NO_CACHE_NOTE))
    if result is not None and _is_launch(result) and options.model in ("auto", "cache"):
        memory = launch_memory(tuple(r.region for r in _regions(result)), device, sizes)
        if memory is not None:
            # Decided at the sizes: the FLOPs at them too, so no crossover size is
            # solved against bytes that hold at these sizes only.
            spec = replace(
                _at_sizes(spec, sizes),
                bytes_moved=memory.bytes_moved,
                bytes_write_allocate=memory.bytes_moved,
                traffic_view="dram",
                view_note=memory.note,
            )
    plain = spec.place_on(
        device, sizes=sizes, sparse=options.sparse, point=point, simplified=simplified
    )
    if spec.traffic_view == "dram":  # bytes that hold at these sizes: no size to solve for
        plain = replace(plain, crossover=Crossover(CrossoverKind.UNKNOWN, ()))
    return replace(plain, model=spec.traffic_view or "compulsory")


def _at_sizes(spec: KernelSpec, sizes: Mapping[str, int]) -> KernelSpec:
    if not sizes:
        return spec
    allocate = spec.bytes_write_allocate
    return replace(
        spec,
        flops=substitute_sizes(spec.flops, sizes),
        bytes_moved=substitute_sizes(spec.bytes_moved, sizes),
        bytes_write_allocate=None if allocate is None else substitute_sizes(allocate, sizes),
        contraction_flops=substitute_sizes(spec.contraction_flops, sizes),
        cache_traffic=None
        if spec.cache_traffic is None
        else {key: _traffic_at(t, sizes) for key, t in spec.cache_traffic.items()},
    )


def _traffic_at(
    traffic: DeviceCacheTraffic | None, sizes: Mapping[str, int]
) -> DeviceCacheTraffic | None:
    """The cache model's bytes at the given sizes, as the FLOPs beside them are: an
    intensity of substituted FLOPs over unsubstituted bytes read `15*(n - 2)/(8*T*...)`
    with `T = 10` given (issue 34: one verdict on every surface)."""
    if traffic is None:
        return None

    def at(expr: sympy.Expr | None) -> sympy.Expr | None:
        return None if expr is None else substitute_sizes(expr, sizes)

    levels = tuple(
        replace(
            level,
            read=substitute_sizes(level.read, sizes),
            write=substitute_sizes(level.write, sizes),
            read_lower=at(level.read_lower),
            write_lower=at(level.write_lower),
        )
        for level in traffic.levels
    )
    return replace(traffic, levels=levels)
