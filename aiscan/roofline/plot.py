"""Log-log roofline plots of kernels on devices, rendered headless with matplotlib (Agg).

The input is plain data (`KernelSpec`s, `Device`s, optional sizes); every point and line
comes from `place`, so the picture cannot disagree with the numbers. Artists carry a
`gid` (`roof:DEVICE:PRECISION`, `roof:DEVICE:PRECISION@THREADS` for a CPU's roof of
fewer threads than its other kernels run on, `ceiling:DEVICE:LEVEL`, `ridge:DEVICE:PRECISION`,
`kernel:LABEL:DEVICE`, `path:LABEL:DEVICE`, `crossover:LABEL:DEVICE`, `label:LABEL:DEVICE`)
so tests and the HTML report can find them. matplotlib is imported inside functions only.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from aiscan.algebra import SYMPY, ZERO, as_expression, expand
from aiscan.analysis.dependence import DependenceChain
from aiscan.analysis.flops import FlopCounts
from aiscan.errors import UsageError
from aiscan.roofline.devices import MAIN_MEMORY_LEVELS, Device
from aiscan.roofline.exact_values import rational_value
from aiscan.roofline.placement import (
    ComputePart,
    CrossoverKind,
    LevelPlacement,
    Placement,
    growing_symbols,
    place,
    place_hierarchical,
    select_bytes,
    simplified_intensity,
)
from aiscan.roofline.plot_labels import number_labels, place_texts, table_inches
from aiscan.roofline.roofs import VECTOR, roof_for, roof_label
from aiscan.roofline.threads import ThreadChoice, ThreadRequest, on_threads, scaled_to_threads
from aiscan.roofline.traffic_models import differing_traffic_models
from aiscan.roofline.units import format_si

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    from aiscan.roofline.hierarchy import DeviceCacheTraffic

__all__ = [
    "DEFAULT_SIZE_RANGE",
    "SAVE_DPI",
    "KernelSpec",
    "SizePath",
    "build_figure",
    "figure_svg",
    "import_drawing",
    "joined_paths",
    "joined_placements",
    "place_kernel",
    "placements",
    "render_roofline",
    "save_figure",
    "swept_path",
]

DEFAULT_SIZE_RANGE: Final = (8, 65536)
SAVE_DPI: Final = 150
"""The resolution a figure is written at (`save_figure`)."""
PNG_COMPRESSION: Final = 3
"""zlib's level for a PNG (`save_figure`)."""
_MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
_LEGEND_MARKERS_MAX: Final = len(_MARKERS)
"""Up to this many kernels the legend lists each one's marker and the plot its name;
beyond, shapes repeat and the kernels are numbered."""
_LEGEND_CHAR_INCHES: Final = 0.066
"""The width of an average character of the legend (font size `small`)."""
_LEGEND_LINE_INCHES: Final = 0.2
"""The height of a line of the legend below the plot (font size `small`, measured 0.19)."""


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """One loop nest to plot: its label, exact counts and element precision."""

    label: str
    flops: sympy.Expr
    bytes_moved: sympy.Expr
    precision: str
    bytes_write_allocate: sympy.Expr | None = None
    """Bytes when stores allocate (CPUs); placed on devices that write-allocate."""
    write_allocate: bool | None = None
    """Override of the devices' store policy; None follows each device."""
    contraction_flops: sympy.Expr = ZERO
    """The FLOPs of library contractions (tensor-core roof); the rest are vector FLOPs."""
    tf32: str | None = None
    """Why fp32 contractions run in TF32 (a framework's policy), or None for full FP32."""
    vector_reason: str = VECTOR
    traffic_view: str = ""
    """The traffic model or view the bytes come from (`eager`, `jit`, `compulsory`...)."""
    view_note: str | None = None
    flop_mix: FlopCounts | None = None
    """FLOPs by kind, for the in-core ceiling; None places against the plain peak."""
    cache_traffic: Mapping[str, DeviceCacheTraffic | None] | None = None
    """The `cache` model's traffic by device key: placed on the hierarchical roofline."""
    bytes_upper_bound: bool = False
    """`bytes_moved` is a flagged upper bound (the traffic is not exact)."""
    repeats: frozenset[str] = frozenset()
    """Names that only count repetitions (a time loop's trip): crossovers hold them."""
    threads: ThreadRequest | None = None
    """The threads the code asks for (`aiscan.roofline.threads`); None: the device as is."""
    chains: tuple[DependenceChain, ...] = ()
    """Loop-carried dependency chains: an in-core ceiling on CPUs."""
    size_paths: Mapping[str, tuple[tuple[int, float, float], ...]] | None = None
    """By device key, the `cache` model's (size, main-memory AI, attainable) at each size of
    the sweep, its layer conditions decided at that size: the path drawn when sizes are
    symbolic (`kernels.size_paths`). Without it the path evaluates the one symbolic AI."""

    def roofs_on(
        self, device: Device, *, sparse: bool = False
    ) -> tuple[str, str, tuple[ComputePart, ...]]:
        """The peak key and reason for this kernel on `device`, and the parts when its
        FLOPs split over two roofs (`aiscan.roofline.roofs`). 2:4 sparsity is a tensor-core
        mode: asking for it places all the work on the tensor roofs."""
        if sparse:
            roof = roof_for(self.precision, contraction=True, device_kind=device.kind,
                            tf32=self.tf32)  # fmt: skip
            return roof.precision, f"{roof.reason}; --sparse asks for the tensor cores", ()
        contraction = as_expression(self.contraction_flops)
        vector = expand(as_expression(self.flops) - contraction)
        kinds = [(contraction, True), (vector, False)]
        roofs = [
            (f, roof_for(self.precision, contraction=c, device_kind=device.kind,
                         tf32=self.tf32, vector_reason=self.vector_reason))
            for f, c in kinds if f != 0
        ]  # fmt: skip
        if not roofs:
            only = roof_for(
                self.precision, contraction=False, device_kind=device.kind,
                vector_reason=self.vector_reason,
            )  # fmt: skip
            return only.precision, only.reason, ()
        if len(roofs) == 1 or roofs[0][1] == roofs[1][1]:
            return roofs[0][1].precision, roofs[0][1].reason, ()
        parts = tuple(ComputePart(f, r.precision, r.reason) for f, r in roofs)
        return roofs[0][1].precision, roofs[0][1].reason, parts

    def place_on(
        self,
        device: Device,
        *,
        sizes: Mapping[str, int] | None = None,
        sparse: bool = False,
        point: bool = False,
        simplified: bool = True,
    ) -> Placement:
        """This kernel on `device`'s roofline, on the roof its kind of work runs on
        (`point`: the figures at `sizes` alone; `simplified` False: the figures a drawing
        reads; see `placement.place`)."""
        device, choice = self.on_threads(device)
        precision, reason, parts = self.roofs_on(device, sparse=sparse)
        placed = place(
            self.flops, self.bytes_on(device), precision, device,
            sizes=sizes, sparse=sparse, roof_reason=reason, parts=parts,
            flop_mix=self.flop_mix, repeats=self.repeats, chains=self._chains(device),
            point=point, simplified=simplified,
        )  # fmt: skip
        notes = (*placed.notes, self.view_note) if self.view_note else placed.notes
        return replace(
            placed,
            traffic_view=self.traffic_view,
            notes=notes,
            bytes_upper_bound=self.bytes_upper_bound,
            threads=None if choice is None else choice.count,
            threads_reason="" if choice is None else choice.reason,
        )

    def on_threads(self, device: Device) -> tuple[Device, ThreadChoice | None]:
        """`device` with the roofs of this kernel's threads (as it is on a GPU, or when
        the kernel carries no thread request)."""
        if self.threads is None:
            return device, None
        return on_threads(device, self.threads)

    def _chains(self, device: Device) -> tuple[DependenceChain, ...]:
        return self.chains if device.kind == "cpu" else ()

    def place_on_caches(
        self,
        device: Device,
        traffic: DeviceCacheTraffic,
        *,
        sizes: Mapping[str, int] | None = None,
        sparse: bool = False,
        point: bool = False,
        simplified: bool = True,
    ) -> Placement:
        """This kernel on `device`'s hierarchical roofline (the `cache` model's `traffic`,
        computed for the same threads), on the same compute roof `place_on` chooses
        (`simplified` False: the figures a drawing reads, as `place_on`)."""
        device, choice = self.on_threads(device)
        precision, reason, parts = self.roofs_on(device, sparse=sparse)
        placed = place_hierarchical(
            self.flops, traffic, precision, device,
            sizes=sizes, sparse=sparse, roof_reason=reason, parts=parts,
            flop_mix=self.flop_mix, repeats=self.repeats, chains=self._chains(device),
            point=point, simplified=simplified,
        )  # fmt: skip
        return replace(
            placed,
            traffic_view="cache",
            threads=None if choice is None else choice.count,
            threads_reason="" if choice is None else choice.reason,
        )

    def bytes_on(self, device: Device) -> sympy.Expr:
        if self.bytes_write_allocate is None:
            return self.bytes_moved
        return select_bytes(
            device,
            without_write_allocate=self.bytes_moved,
            with_write_allocate=self.bytes_write_allocate,
            write_allocate=self.write_allocate,
        )


SizePath = tuple[tuple[int, float, float], ...]
"""(size, AI, attainable) at each size of a sweep."""


@dataclass(frozen=True, slots=True)
class _Drawn:
    kernel: KernelSpec
    placement: Placement
    path: SizePath = ()
    """(size, AI, attainable) over the sizes where the AI is still symbolic (`swept_path`):
    computed once, read by the axis range and the drawing."""


def placements(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
) -> tuple[list[tuple[KernelSpec, Placement]], list[str]]:
    """Every kernel on every device; pairs that cannot be placed become a reason string."""
    each = [[place_kernel(k, d, sizes=sizes, sparse=sparse) for d in devices] for k in kernels]
    return joined_placements(kernels, devices, each)


def place_kernel(
    kernel: KernelSpec,
    device: Device,
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    simplified: bool = True,
) -> Placement | str:
    """The kernel on the device as the plot draws it (on its caches where it carries their
    traffic), or why it cannot be placed there. `simplified` False: for a drawing alone,
    which reads no symbolic AI's printed form (`placement.place`); the caches' levels are
    chosen by their limits, so those keep them (`placement.place_hierarchical`)."""
    traffic = (kernel.cache_traffic or {}).get(device.key)
    try:
        if traffic is not None:
            return kernel.place_on_caches(
                device, traffic, sizes=sizes, sparse=sparse, simplified=simplified
            )
        return kernel.place_on(device, sizes=sizes, sparse=sparse, simplified=simplified)
    except UsageError as error:
        return str(error)


def joined_placements(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    each: Sequence[Sequence[Placement | str]],
) -> tuple[list[tuple[KernelSpec, Placement]], list[str]]:
    """What `placements` gives, from every kernel's `place_kernel` on each device (in the
    order of `devices`), wherever they were made: device by device, kernels in order."""
    placed: list[tuple[KernelSpec, Placement]] = []
    skipped: list[str] = []
    for device, kernel, result, _ in _device_major(kernels, devices, each):
        if isinstance(result, str):
            skipped.append(f"{kernel.label} on {device.key}: {result}")
        else:
            placed.append((kernel, result))
    return placed, skipped


def joined_paths(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    each: Sequence[Sequence[Placement | str]],
    paths: Sequence[Sequence[SizePath]],
) -> list[SizePath]:
    """The `swept_path` of each pair `joined_placements` gives, in its order, from every
    kernel's paths on each device (made where it was placed: in the workers)."""
    return [
        paths[row][column]
        for _, _, result, (row, column) in _device_major(kernels, devices, each)
        if not isinstance(result, str)
    ]


def _device_major(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    each: Sequence[Sequence[Placement | str]],
) -> Iterator[tuple[Device, KernelSpec, Placement | str, tuple[int, int]]]:
    """Device by device, kernels in order: the device, the kernel, its result there, and
    where that result is in `each` (the kernel's row, the device's column)."""
    for column, device in enumerate(devices):
        for row, (kernel, results) in enumerate(zip(kernels, each, strict=True)):
            yield device, kernel, results[column], (row, column)


def build_figure(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
    title: str | None = None,
    placed_already: tuple[list[tuple[KernelSpec, Placement]], list[str]] | None = None,
    paths: Sequence[SizePath] | None = None,
    dpi: float = 100,
) -> Figure:
    """A roofline of `devices` with every kernel placed; see the module docstring for gids.

    A kernel whose AI depends on sizes that were not given is drawn as its path over
    `size_range` (all sizes equal), with its ridge crossing marked. `placed_already`:
    what `placements` gives for the same arguments, when the caller needs it too (the
    HTML report's tables): a placement costs sympy's simplify and root solves. `paths`:
    the `swept_path` of each of its pairs, in order, where they were made with the
    placements (`aiscan roofline`'s workers). `dpi`: the resolution it is laid out at; a
    file is written at `SAVE_DPI`, and a figure laid out at it reuses its texts' measures
    when saved (452 nests: 0.3 s).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not devices:
        raise UsageError("a roofline needs at least one device")
    if placed_already is None:
        placed_already = placements(kernels, devices, sizes=sizes, sparse=sparse)
    placed, skipped = placed_already[0], list(placed_already[1])
    if paths is None:
        paths = [swept_path(k, p, size_range) for k, p in placed]
    drawn = [_Drawn(k, p, path) for (k, p), path in zip(placed, paths, strict=True)]
    figure = Figure(figsize=(10, 8), layout="constrained", dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.set_xscale("log")
    axes.set_yscale("log")
    x_low, x_high = _x_range(drawn, devices)
    colors = {d.key: f"C{i % 10}" for i, d in enumerate(devices)}
    markers = {k.label: _MARKERS[i % len(_MARKERS)] for i, k in enumerate(kernels)}

    for device in devices:
        _draw_device(axes, device, drawn, colors[device.key], x_low, x_high)
    labels: list[Text] = []
    labelled: set[str] = set()
    for item in drawn:
        color, marker = colors[item.placement.device], markers[item.kernel.label]
        label = _draw_kernel(axes, item, color, marker, size_range)
        if label is None:
            if item.placement.intensity is None and item.kernel.label not in labelled:
                skipped.append(f"{item.kernel.label}: no memory traffic, no finite AI to plot")
                labelled.add(item.kernel.label)
        elif item.kernel.label in labelled:  # one label per kernel, on its first device
            label.remove()
        else:
            labelled.add(item.kernel.label)
            labels.append(label)

    axes.set_xlim(x_low, x_high)
    axes.set_ylim(*_y_range(axes))
    axes.set_xlabel("Arithmetic intensity [FLOP/byte]")
    axes.set_ylabel("Attainable performance [FLOP/s]")
    axes.grid(True, which="major", alpha=0.3)
    axes.set_title(title or "Roofline: " + ", ".join(d.name for d in devices), fontsize="medium")
    handles, names = axes.get_legend_handles_labels()
    handles_more, names_more = _marker_legend(axes, kernels, markers, size_range)
    rows = number_labels(axes, labels, _LEGEND_MARKERS_MAX)
    from matplotlib.lines import Line2D

    # Devices whose points use different traffic models say which (the L4 without cache
    # geometry gets compulsory bytes where the others get the cache model).
    models = differing_traffic_models(placed)
    handles_more += [Line2D([], [], marker="o", color=colors[d], linestyle="none") for d in models]
    names_more += [f"{device} points: {text}" for device, text in models.items()]
    notes = [f"not placed: {reason}" for reason in skipped]
    entries = names + names_more + notes
    handles_all = handles + handles_more + [Line2D([], [], linestyle="none") for _ in notes]
    table_width, table_height = table_inches(axes, rows)
    width = 10 + table_width
    columns = _legend_columns(entries, width)
    lines = math.ceil(len(entries) / columns)
    # The plot keeps its size: the legend below adds height, the numbered table beside it
    # width. A table taller than the plot ran down over the legend: the plot grows to it.
    height = max(8 + 0.2 * max(0, lines - 8), table_height + _LEGEND_LINE_INCHES * lines + 1.2)
    figure.set_size_inches(width, height)
    figure.legend(
        handles_all, entries, loc="outside lower center", ncols=columns, fontsize="small",
        frameon=False,
    )  # fmt: skip
    place_texts(figure, axes, labels)
    return figure


def _legend_columns(entries: Sequence[str], width_inches: float) -> int:
    """Two columns while both fit the figure's width, else one: several devices' roof names
    (`epyc-9654 (96 threads) FP64 vector units dense: ..., DDR5-4800 (12 channels) ...`)
    ran off both edges of the figure side by side."""
    half = math.ceil(len(entries) / 2)
    widest = [max((len(e) for e in part), default=0) for part in (entries[:half], entries[half:])]
    return 2 if sum(widest) * _LEGEND_CHAR_INCHES + 0.6 <= width_inches else 1


def _marker_legend(
    axes: Axes,
    kernels: Sequence[KernelSpec],
    markers: Mapping[str, str],
    size_range: tuple[int, int],
) -> tuple[list[Any], list[str]]:
    """Legend entries for what the marks mean: each kernel's shape (while shapes are
    unique), a path over sizes, and the × where a path crosses the ridge."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    names: list[str] = []
    if len(kernels) <= _LEGEND_MARKERS_MAX:
        for kernel in kernels:
            handles.append(Line2D([], [], marker=markers[kernel.label], color="0.4",
                                  markeredgecolor="black", linestyle="none"))  # fmt: skip
            names.append(f"kernel {kernel.label}")
    else:
        handles.append(Line2D([], [], marker="o", color="0.4", markeredgecolor="black",
                              linestyle="none"))  # fmt: skip
        names.append("kernel at the given sizes (labelled in the plot)")
    if any(line.get_gid() and str(line.get_gid()).startswith("path:") for line in axes.lines):
        handles.append(Line2D([], [], marker="o", markersize=4, color="0.4", linewidth=1.2))
        low, high = size_range
        names.append(f"kernel over sizes (none given: all set to one value, {low} to {high})")
    if any(str(line.get_gid()).startswith("crossover:") for line in axes.lines):
        handles.append(Line2D([], [], marker="x", markersize=8, markeredgewidth=2,
                              color="black", linestyle="none"))  # fmt: skip
        names.append("× size where a kernel meets the ridge")
    return handles, names


def import_drawing() -> None:
    """Import what drawing needs (matplotlib's figure, canvas and artists: about 0.4 s),
    for `aiscan roofline` to do while its workers analyze the files, not after them."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure
    import matplotlib.legend
    import matplotlib.lines  # noqa: F401


def save_figure(figure: Figure, path: Path) -> Path:
    """Write as PNG or SVG, chosen by the suffix."""
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("png", "svg"):
        raise UsageError(f"{path}: roofline output must end in .png or .svg")
    options: dict[str, Any] = {}
    if suffix == "png":
        # zlib's level 3 over PIL's default 6: 0.18 s against 0.28 s for the 452 nests'
        # 5558 x 1390 image, and a smaller file (1.58 MB against 1.89 MB).
        options["pil_kwargs"] = {"compress_level": PNG_COMPRESSION}
    with _text_as_text():
        figure.savefig(path, format=suffix, dpi=SAVE_DPI, **options)
    return path


def render_roofline(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    path: Path,
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
    placed_already: tuple[list[tuple[KernelSpec, Placement]], list[str]] | None = None,
    paths: Sequence[SizePath] | None = None,
) -> Path:
    """Build and save in one call (what `aiscan roofline -o plot.png` needs), its text
    unhinted (`_unhinted_text`)."""
    with _unhinted_text():
        figure = build_figure(
            kernels, devices, sizes=sizes, sparse=sparse, size_range=size_range,
            placed_already=placed_already, paths=paths, dpi=SAVE_DPI,
        )  # fmt: skip
        return save_figure(figure, path)


def _unhinted_text() -> Any:
    """Glyphs rendered without FreeType's hinting, measured and drawn alike (the setting
    is read at both). Hinting runs the font's instructions for every glyph drawn: the
    452 nests' numbered table and labels took 0.58 s more to lay out and draw with it
    (2.62 s against 2.04 s), for text as legible at the plot's 150 dpi."""
    import matplotlib

    return matplotlib.rc_context({"text.hinting": "no_hinting"})


def figure_svg(figure: Figure) -> str:
    """The figure as an SVG document, for embedding in HTML."""
    buffer = io.StringIO()
    with _text_as_text():
        figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def _text_as_text() -> Any:
    """SVG text stays `<text>` (searchable, selectable, small), not glyph outlines."""
    import matplotlib

    return matplotlib.rc_context({"svg.fonttype": "none"})


def _draw_device(
    axes: Axes,
    device: Device,
    drawn: Sequence[_Drawn],
    color: str,
    x_low: float,
    x_high: float,
) -> None:
    """Roof per precision used on this device, ridge markers, dashed cache ceilings; on a
    CPU the roofs of the threads its kernels run on (the most, where they differ, and a
    dotted roof for each other thread count, so that every point has its own roof)."""
    here = [d for d in drawn if d.placement.device == device.key]
    counts = {d.placement.threads for d in here if d.placement.threads is not None}
    threads = max(counts, default=None)
    xs = _geometric(x_low, x_high, 200)
    unscaled = device
    cores = ""
    if threads is not None:
        device = scaled_to_threads(device, threads)
        cores = f" ({_threads_text(threads)})"
    roofs = _roofs_used([d for d in here if d.placement.threads in (threads, None)])
    if not roofs:  # no kernel placed here: show the widest precision's dense roof
        roofs = {device.peaks[0].precision: (device.peaks[0].dense_flops_per_s, False)}
    # Each compute ceiling a kernel uses is drawn and named (tensor core or vector units).
    bandwidth = device.main_memory.bandwidth_bytes_per_s
    assert bandwidth is not None
    top = max(peak for peak, _ in roofs.values())
    for index, (precision, (peak, sparse_peak)) in enumerate(roofs.items()):
        density = "sparse" if sparse_peak else "dense"
        axes.plot(
            xs, [min(peak, bandwidth * x) for x in xs],
            color=color, linestyle="-" if index == 0 else "-.", linewidth=2,
            gid=f"roof:{device.key}:{precision}",
            label=f"{device.key}{cores} {roof_label(precision, device)} {density}: "
            f"{format_si(peak, 'FLOP/s')}, "
            f"{device.main_memory.name} {format_si(bandwidth, 'B/s')}",
        )  # fmt: skip
        ridge = peak / bandwidth
        axes.plot(
            [ridge], [peak], marker="o", markersize=6, markerfacecolor="white", color=color,
            linestyle="none", gid=f"ridge:{device.key}:{precision}",
        )  # fmt: skip
        sharing = [p for p, (other, _) in roofs.items() if other == peak]
        if sharing[0] == precision:  # one label per ridge point: `bf16/fp16` when equal
            axes.text(
                ridge, peak, f"{device.key} {'/'.join(sharing)}: ridge {ridge:.3g}",
                ha="right", va="bottom", fontsize="x-small", color=color,
                gid=f"ridge-label:{device.key}",
            )  # fmt: skip
    for fewer in sorted(counts - {threads}, reverse=True):  # after these, in the legend too
        on_fewer = [d for d in here if d.placement.threads == fewer]
        _draw_thread_roofs(axes, unscaled, on_fewer, fewer, color, xs)
    for level in device.memory[1:]:
        if level.bandwidth_bytes_per_s is None:
            continue
        level_bw = level.bandwidth_bytes_per_s
        axes.plot(
            xs, [min(top, level_bw * x) for x in xs], color=color, linestyle="--",
            linewidth=1, alpha=0.7, gid=f"ceiling:{device.key}:{level.name}",
            label=f"{device.key} {level.name}: {format_si(level_bw, 'B/s')}",
        )  # fmt: skip
        x_name = x_low * 1.6
        axes.annotate(
            level.name, (x_name, min(top, level_bw * x_name)), xytext=(0, 4),
            textcoords="offset points", fontsize="x-small", color=color, rotation=0,
            gid=f"ceiling-label:{device.key}:{level.name}",
        )  # fmt: skip


def _roofs_used(drawn: Sequence[_Drawn]) -> dict[str, tuple[float, bool]]:
    """Each compute roof the placements use, by precision: its peak and whether sparse.
    Work split over several roofs gives each part's ceiling, not the combined rate."""
    roofs: dict[str, tuple[float, bool]] = {}
    for d in drawn:
        parts = d.placement.part_roofs or ((d.placement.precision, d.placement.peak_flops_per_s),)
        for precision, peak in parts:
            roofs.setdefault(precision, (peak, d.placement.sparse))
    return roofs


def _threads_text(threads: int) -> str:
    return f"{threads} thread{'s' if threads != 1 else ''}"


def _draw_thread_roofs(
    axes: Axes,
    device: Device,
    drawn: Sequence[_Drawn],
    threads: int,
    color: str,
    xs: Sequence[float],
) -> None:
    """The roofs of `threads` threads of a CPU whose other kernels run on more: dotted,
    named with their thread count (`roof:DEVICE:PRECISION@THREADS`)."""
    scaled = scaled_to_threads(device, threads)
    bandwidth = scaled.main_memory.bandwidth_bytes_per_s
    assert bandwidth is not None
    for precision, (peak, sparse_peak) in _roofs_used(drawn).items():
        density = "sparse" if sparse_peak else "dense"
        axes.plot(
            xs, [min(peak, bandwidth * x) for x in xs],
            color=color, linestyle=":", linewidth=1.5,
            gid=f"roof:{device.key}:{precision}@{threads}",
            label=f"{device.key} ({_threads_text(threads)}) {roof_label(precision, scaled)} "
            f"{density}: {format_si(peak, 'FLOP/s')}, "
            f"{scaled.main_memory.name} {format_si(bandwidth, 'B/s')}",
        )  # fmt: skip


def _draw_kernel(
    axes: Axes, item: _Drawn, color: str, marker: str, size_range: tuple[int, int]
) -> Text | None:
    """A point at (AI, attainable), or the path over sizes when AI is still symbolic."""
    placement, label = item.placement, item.kernel.label
    key = f"{label}:{placement.device}"
    if placement.intensity is None:
        return None
    levels = [lv for lv in placement.levels if lv.intensity_flops_per_byte is not None]
    if len(levels) > 1 and len(levels) == len(placement.levels):
        return _draw_levels(axes, item, color, marker)
    if placement.intensity_flops_per_byte is not None:
        x, y = placement.intensity_flops_per_byte, placement.attainable_flops_per_s
        assert y is not None
        axes.plot(
            [x], [y], marker=marker, markersize=8, color=color, markeredgecolor="black",
            linestyle="none", gid=f"kernel:{key}",
        )  # fmt: skip
        return _label(axes, label, x, y, key)
    swept = bool((item.kernel.size_paths or {}).get(placement.device))
    path = item.path
    if not path:
        return None
    names = "=".join(placement.crossover.size_names) or "size"
    if swept:
        _draw_regimes(axes, path, names, color, marker, key)
    else:
        axes.plot(
            [p[1] for p in path], [p[2] for p in path], marker=marker, markersize=4,
            markevery=max(1, len(path) // 8), color=color, linewidth=1.2, alpha=0.9,
            markeredgecolor="black", gid=f"path:{key}",
        )  # fmt: skip
    crossing = placement.crossover
    low, high = size_range
    if (
        not swept  # the symbolic crossover is the large-size regime's; the sweep shows its own
        and crossing.kind is CrossoverKind.AT
        and crossing.size
        and low <= crossing.size <= high
    ):
        axes.plot(
            [placement.ridge_flops_per_byte], [placement.peak_flops_per_s], marker="x",
            markersize=10, markeredgewidth=2, color="black", linestyle="none",
            gid=f"crossover:{key}",
        )  # fmt: skip
    # At the highest intensity: the end of a path that only rises, the peak of a sweep
    # that falls where a layer condition breaks (its end sits among the other kernels').
    _, end_x, end_y = max(path, key=lambda point: point[1])
    return _label(axes, f"{label} ({names} = {path[0][0]}…{path[-1][0]})", end_x, end_y, key)


def _draw_regimes(
    axes: Axes,
    path: Sequence[tuple[int, float, float]],
    names: str,
    color: str,
    marker: str,
    key: str,
) -> None:
    """The cache model's sweep: a solid line while the intensity grows with the size (the
    working sets still fit), a dotted step where a layer condition breaks and it falls; the
    first size written under its point, and the last size before each break above it."""
    runs: list[list[tuple[int, float, float]]] = [[path[0]]]
    for point in path[1:]:
        if point[1] < runs[-1][-1][1] * 0.999:
            runs.append([point])
        else:
            runs[-1].append(point)
    for number, run in enumerate(runs):
        axes.plot(
            [p[1] for p in run], [p[2] for p in run], marker=marker, markersize=4,
            color=color, linewidth=1.2, alpha=0.9, markeredgecolor="black",
            gid=f"path:{key}:{number}",
        )  # fmt: skip
        if number:
            before = runs[number - 1][-1]
            axes.plot(
                [before[1], run[0][1]], [before[2], run[0][2]], color=color, linewidth=0.8,
                linestyle=":", alpha=0.8, gid=f"path-step:{key}:{number}",
            )  # fmt: skip
        if number < len(runs) - 1:  # the last size before a break: where the fall starts
            _size_note(axes, f"{names}={run[-1][0]}", run[-1], color, key)
    _size_note(axes, f"{names}={path[0][0]}", path[0], color, key)


def _size_note(
    axes: Axes, text: str, point: tuple[int, float, float], color: str, key: str
) -> None:
    # At its point for now: `place_texts` sets it near, clear of the roofs and other texts
    # (at a fixed offset, size notes lay on the roofs and on each other).
    axes.text(
        point[1], point[2], text, fontsize="xx-small", color=color, gid=f"path-size:{key}",
    )  # fmt: skip


def _draw_levels(axes: Axes, item: _Drawn, color: str, marker: str) -> Text | None:
    """The integrated (hierarchical) roofline: one marker per memory level at that level's
    intensity, all at the kernel's attainable rate, joined by a line (Intel Advisor's
    picture). The bounding level's marker is filled; the others are hollow."""
    placement, label = item.placement, item.kernel.label
    key = f"{label}:{placement.device}"
    y = placement.attainable_flops_per_s
    if y is None:
        return None
    xs = [lv.intensity_flops_per_byte or 0.0 for lv in placement.levels]
    axes.plot(
        xs, [y] * len(xs), color=color, linewidth=1, alpha=0.8, gid=f"levels:{key}",
    )  # fmt: skip
    bound = placement.bound_level
    names: dict[float, list[str]] = {}
    for level, x in zip(placement.levels, xs, strict=True):
        filled = level.level == bound
        axes.plot(
            [x], [y], marker=marker, markersize=8 if filled else 7, linestyle="none",
            color=color, markerfacecolor=color if filled else "white", markeredgecolor="black",
            gid=f"kernel:{key}" if filled else f"level:{key}:{level.level}",
        )  # fmt: skip
        names.setdefault(round(math.log10(x), 2) if x > 0 else 0.0, []).append(_short(level))
    for x_key, same in names.items():
        # At its marker for now: `place_texts` sets it clear of the other tags and labels
        # (tags of nearby kernels overlapped when each sat a fixed offset below its marker).
        axes.text(
            10**x_key, y, "/".join(same), ha="center", va="top", fontsize="xx-small",
            color=color, gid=f"level-label:{key}",
        )  # fmt: skip
    bounding = next((lv for lv in placement.levels if lv.level == bound), None)
    where = f"{_short(bounding)}-bound" if bounding else "compute-bound"
    if placement.latency_bound and placement.in_core is not None:
        where = placement.in_core.bound_name
    anchor = next(
        (x for lv, x in zip(placement.levels, xs, strict=True) if lv.level == bound), xs[-1]
    )
    return _label(axes, f"{label} ({where})", anchor, y, key)


def _short(level: LevelPlacement) -> str:
    """A level's name on the plot: main memory by its kind (DRAM, HBM), caches by name."""
    return level.kind.upper() if level.kind in MAIN_MEMORY_LEVELS else level.level


def sweep_sizes(size_range: tuple[int, int]) -> list[int]:
    """The powers of two across `size_range`: the sizes a path is drawn at."""
    low, high = size_range
    return [2**k for k in range(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)]


def swept_path(kernel: KernelSpec, placement: Placement, size_range: tuple[int, int]) -> SizePath:
    """The kernel's path: the cache model's own sweep where it was made, else `_path`;
    none where the AI has a value."""
    if placement.intensity_flops_per_byte is not None or placement.intensity is None:
        return ()
    found = (kernel.size_paths or {}).get(placement.device)
    return tuple(found) if found else tuple(_path(placement, size_range))


def _path(placement: Placement, size_range: tuple[int, int]) -> list[tuple[int, float, float]]:
    """(size, AI, attainable) at powers of two across `size_range`, all sizes equal."""
    assert placement.intensity is not None
    growing = growing_symbols(placement.intensity)
    if set(placement.intensity.free_symbols) - set(growing):
        return []
    points = []
    for size in sweep_sizes(size_range):
        exact = _value_at(placement.intensity, growing, size)
        if not _finite(exact):  # a ratio kept as it stands, 0/0 where `simplify` cancelled
            simplified = simplified_intensity(placement)
            assert simplified is not None
            exact = _value_at(simplified, growing_symbols(simplified), size)
        ai = float(exact)
        if ai > 0:
            attainable = min(placement.peak_flops_per_s, ai * placement.bandwidth_bytes_per_s)
            points.append((size, ai, attainable))
    return points


def _value_at(
    intensity: sympy.Expr, growing: Sequence[sympy.Symbol], size: int
) -> Fraction | sympy.Expr:
    """`intensity` with every growing symbol at `size`, exactly."""
    exact = rational_value(intensity, dict.fromkeys(growing, size))
    if exact is not None:
        return exact
    # xreplace, not subs: the same value, without subs' rewriting
    return intensity.xreplace({s: sympy.Integer(size) for s in growing})


def _finite(value: Fraction | sympy.Expr) -> bool:
    return isinstance(value, Fraction) or bool(value.is_finite)


def _label(axes: Axes, text: str, x: float, y: float, key: str) -> Text:
    return axes.text(
        x, y, text, fontsize="small", gid=f"label:{key}",
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.8, "linewidth": 0},
    )  # fmt: skip


def _x_range(drawn: Sequence[_Drawn], devices: Sequence[Device]) -> tuple[float, float]:
    """From the ridges and the kernels that have values. Paths over sizes (symbols with
    no value) widen it only within two decades of the ridges, so a path running to an
    intensity of 10^18 cannot squeeze the plot into a thin column; the axes clip it."""
    # The ridges of the roofs the kernels are placed on; every peak's only when none is,
    # so an fp8 tensor ridge does not widen a plot of fp64 loops by two decades.
    ridges = [item.placement.ridge_flops_per_byte for item in drawn]
    for device in devices if not ridges else ():
        bandwidth = device.main_memory.bandwidth_bytes_per_s
        assert bandwidth is not None
        ridges += [p.dense_flops_per_s / bandwidth for p in device.peaks]
    values = list(ridges)
    for item in drawn:
        if item.placement.intensity_flops_per_byte is not None:
            values.append(item.placement.intensity_flops_per_byte)
    floor, ceiling = min(ridges) / 100, max(ridges) * 100
    for item in drawn:
        if item.placement.intensity_flops_per_byte is None and item.placement.intensity is not None:
            path = [ai for _, ai, _ in item.path]
            values += [min(max(ai, floor), ceiling) for ai in path]
    positive = [v for v in values if v > 0]
    low = 10 ** math.floor(math.log10(min(positive) / 2))
    high = 10 ** math.ceil(math.log10(max(positive) * 4))
    return low, high


def _y_range(axes: Axes) -> tuple[float, float]:
    import numpy

    ys = [
        float(y)
        for line in axes.get_lines()
        for y in numpy.asarray(line.get_ydata(), dtype=float).ravel()
        if y > 0
    ]
    # Room above the highest roof for its label, not a decade of empty axis.
    return 10 ** math.floor(math.log10(min(ys))), max(ys) * 3


def _geometric(low: float, high: float, count: int) -> list[float]:
    ratio = (high / low) ** (1 / (count - 1))
    return [low * ratio**i for i in range(count)]
