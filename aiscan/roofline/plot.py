"""Log-log roofline plots of kernels on devices, rendered headless with matplotlib (Agg).

The input is plain data (`KernelSpec`s, `Device`s, optional sizes); every point and line
comes from `place`, so the picture cannot disagree with the numbers. Artists carry a
`gid` (`roof:DEVICE:PRECISION`, `ceiling:DEVICE:LEVEL`, `ridge:DEVICE:PRECISION`,
`kernel:LABEL:DEVICE`, `path:LABEL:DEVICE`, `crossover:LABEL:DEVICE`, `label:LABEL:DEVICE`)
so tests and the HTML report can find them. matplotlib is imported inside functions only.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

import sympy

from aiscan.errors import UsageError
from aiscan.roofline.devices import Device
from aiscan.roofline.placement import (
    ComputePart,
    CrossoverKind,
    Placement,
    growing_symbols,
    place,
    select_bytes,
)
from aiscan.roofline.roofs import VECTOR, roof_for, roof_label
from aiscan.roofline.units import format_si

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Annotation
    from matplotlib.transforms import Bbox

__all__ = [
    "DEFAULT_SIZE_RANGE",
    "KernelSpec",
    "build_figure",
    "figure_svg",
    "placements",
    "render_roofline",
    "save_figure",
]

DEFAULT_SIZE_RANGE: Final = (8, 65536)
_MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
_OFFSETS: Final = tuple(
    (dx, dy) for dy in (6, -14, 18, -26, 30, -38, 42, -50) for dx in (8, -8)
)  # points, tried in order until a label overlaps nothing


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
    contraction_flops: sympy.Expr = sympy.S.Zero
    """The FLOPs of library contractions (tensor-core roof); the rest are vector FLOPs."""
    tf32: str | None = None
    """Why fp32 contractions run in TF32 (a framework's policy), or None for full FP32."""
    vector_reason: str = VECTOR
    traffic_view: str = ""
    """The traffic model or view the bytes come from (`eager`, `jit`, `compulsory`...)."""
    view_note: str | None = None

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
        contraction = sympy.sympify(self.contraction_flops)
        vector = sympy.expand(sympy.sympify(self.flops) - contraction)
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
        self, device: Device, *, sizes: Mapping[str, int] | None = None, sparse: bool = False
    ) -> Placement:
        """This kernel on `device`'s roofline, on the roof its kind of work runs on."""
        precision, reason, parts = self.roofs_on(device, sparse=sparse)
        placed = place(
            self.flops, self.bytes_on(device), precision, device,
            sizes=sizes, sparse=sparse, roof_reason=reason, parts=parts,
        )  # fmt: skip
        notes = (*placed.notes, self.view_note) if self.view_note else placed.notes
        return replace(placed, traffic_view=self.traffic_view, notes=notes)

    def bytes_on(self, device: Device) -> sympy.Expr:
        if self.bytes_write_allocate is None:
            return self.bytes_moved
        return select_bytes(
            device,
            without_write_allocate=self.bytes_moved,
            with_write_allocate=self.bytes_write_allocate,
            write_allocate=self.write_allocate,
        )


@dataclass(frozen=True, slots=True)
class _Drawn:
    kernel: KernelSpec
    placement: Placement


def placements(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
) -> tuple[list[tuple[KernelSpec, Placement]], list[str]]:
    """Every kernel on every device; pairs that cannot be placed become a reason string."""
    placed: list[tuple[KernelSpec, Placement]] = []
    skipped: list[str] = []
    for device in devices:
        for kernel in kernels:
            try:
                result = kernel.place_on(device, sizes=sizes, sparse=sparse)
            except UsageError as error:
                skipped.append(f"{kernel.label} on {device.key}: {error}")
                continue
            placed.append((kernel, result))
    return placed, skipped


def build_figure(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
    title: str | None = None,
) -> Figure:
    """A roofline of `devices` with every kernel placed; see the module docstring for gids.

    A kernel whose AI depends on sizes that were not given is drawn as its path over
    `size_range` (all sizes equal), with its ridge crossing marked.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not devices:
        raise UsageError("a roofline needs at least one device")
    placed, skipped = placements(kernels, devices, sizes=sizes, sparse=sparse)
    drawn = [_Drawn(k, p) for k, p in placed]
    figure = Figure(figsize=(10, 8), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.set_xscale("log")
    axes.set_yscale("log")
    x_low, x_high = _x_range(drawn, devices, size_range)
    colors = {d.key: f"C{i % 10}" for i, d in enumerate(devices)}
    markers = {k.label: _MARKERS[i % len(_MARKERS)] for i, k in enumerate(kernels)}

    for device in devices:
        _draw_device(axes, device, drawn, colors[device.key], x_low, x_high)
    labels: list[Annotation] = []
    for item in drawn:
        color, marker = colors[item.placement.device], markers[item.kernel.label]
        label = _draw_kernel(axes, item, color, marker, size_range)
        if label is not None:
            labels.append(label)
        elif item.placement.intensity is None:
            skipped.append(f"{item.kernel.label}: no memory traffic, no finite AI to plot")

    axes.set_xlim(x_low, x_high)
    axes.set_ylim(*_y_range(axes))
    axes.set_xlabel("Arithmetic intensity [FLOP/byte]")
    axes.set_ylabel("Attainable performance [FLOP/s]")
    axes.grid(True, which="major", alpha=0.3)
    axes.set_title(title or "Roofline: " + ", ".join(d.name for d in devices), fontsize="medium")
    axes.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=2, fontsize="small", frameon=False
    )
    if skipped:
        figure.supxlabel("Not placed: " + "; ".join(skipped), fontsize="x-small", wrap=True)
    _spread_labels(figure, axes, labels)
    return figure


def save_figure(figure: Figure, path: Path) -> Path:
    """Write as PNG or SVG, chosen by the suffix."""
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in ("png", "svg"):
        raise UsageError(f"{path}: roofline output must end in .png or .svg")
    figure.savefig(path, format=suffix, dpi=150)
    return path


def render_roofline(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    path: Path,
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
) -> Path:
    """Build and save in one call (what `aiscan roofline -o plot.png` needs)."""
    figure = build_figure(kernels, devices, sizes=sizes, sparse=sparse, size_range=size_range)
    return save_figure(figure, path)


def figure_svg(figure: Figure) -> str:
    """The figure as an SVG document, for embedding in HTML."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def _draw_device(
    axes: Axes,
    device: Device,
    drawn: Sequence[_Drawn],
    color: str,
    x_low: float,
    x_high: float,
) -> None:
    """Roof per precision used on this device, ridge markers, dashed cache ceilings."""
    roofs: dict[str, tuple[float, bool]] = {}
    for d in drawn:
        if d.placement.device != device.key:
            continue
        # Work split over several roofs draws each part's ceiling, not the combined rate.
        parts = d.placement.part_roofs or ((d.placement.precision, d.placement.peak_flops_per_s),)
        for precision, peak in parts:
            roofs.setdefault(precision, (peak, d.placement.sparse))
    if not roofs:  # no kernel placed here: show the widest precision's dense roof
        roofs = {device.peaks[0].precision: (device.peaks[0].dense_flops_per_s, False)}
    # Each compute ceiling a kernel uses is drawn and named (tensor core or vector units).
    bandwidth = device.main_memory.bandwidth_bytes_per_s
    assert bandwidth is not None
    xs = _geometric(x_low, x_high, 200)
    top = max(peak for peak, _ in roofs.values())
    for index, (precision, (peak, sparse_peak)) in enumerate(roofs.items()):
        density = "sparse" if sparse_peak else "dense"
        axes.plot(
            xs, [min(peak, bandwidth * x) for x in xs],
            color=color, linestyle="-" if index == 0 else "-.", linewidth=2,
            gid=f"roof:{device.key}:{precision}",
            label=f"{device.key} {roof_label(precision, device)} {density}: "
            f"{format_si(peak, 'FLOP/s')}, "
            f"{device.main_memory.name} {format_si(bandwidth, 'B/s')}",
        )  # fmt: skip
        ridge = peak / bandwidth
        axes.plot(
            [ridge], [peak], marker="o", markersize=6, markerfacecolor="white", color=color,
            linestyle="none", gid=f"ridge:{device.key}:{precision}",
        )  # fmt: skip
        axes.annotate(
            f"ridge {ridge:.4g}", (ridge, peak), xytext=(0, 6), textcoords="offset points",
            ha="center", fontsize="x-small", color=color, gid=f"ridge-label:{device.key}",
        )  # fmt: skip
    for level in device.memory[1:]:
        if level.bandwidth_bytes_per_s is None:
            continue
        level_bw = level.bandwidth_bytes_per_s
        axes.plot(
            xs, [min(top, level_bw * x) for x in xs], color=color, linestyle="--",
            linewidth=1, alpha=0.7, gid=f"ceiling:{device.key}:{level.name}",
            label=f"{device.key} {level.name}: {format_si(level_bw, 'B/s')}",
        )  # fmt: skip


def _draw_kernel(
    axes: Axes, item: _Drawn, color: str, marker: str, size_range: tuple[int, int]
) -> Annotation | None:
    """A point at (AI, attainable), or the path over sizes when AI is still symbolic."""
    placement, label = item.placement, item.kernel.label
    key = f"{label}:{placement.device}"
    if placement.intensity is None:
        return None
    if placement.intensity_flops_per_byte is not None:
        x, y = placement.intensity_flops_per_byte, placement.attainable_flops_per_s
        assert y is not None
        axes.plot(
            [x], [y], marker=marker, markersize=8, color=color, markeredgecolor="black",
            linestyle="none", gid=f"kernel:{key}",
        )  # fmt: skip
        return _label(axes, label, x, y, key)
    path = _path(placement, size_range)
    if not path:
        return None
    axes.plot(
        [p[1] for p in path], [p[2] for p in path], marker=marker, markersize=4,
        markevery=max(1, len(path) // 8), color=color, linewidth=1.2, alpha=0.9,
        markeredgecolor="black", gid=f"path:{key}",
    )  # fmt: skip
    crossing = placement.crossover
    low, high = size_range
    if crossing.kind is CrossoverKind.AT and crossing.size and low <= crossing.size <= high:
        axes.plot(
            [placement.ridge_flops_per_byte], [placement.peak_flops_per_s], marker="x",
            markersize=10, markeredgewidth=2, color="black", linestyle="none",
            gid=f"crossover:{key}",
        )  # fmt: skip
    names = "=".join(placement.crossover.size_names) or "size"
    end_size, end_x, end_y = path[-1]
    return _label(axes, f"{label} ({names} = {path[0][0]}…{end_size})", end_x, end_y, key)


def _path(placement: Placement, size_range: tuple[int, int]) -> list[tuple[int, float, float]]:
    """(size, AI, attainable) at powers of two across `size_range`, all sizes equal."""
    assert placement.intensity is not None
    growing = growing_symbols(placement.intensity)
    if set(placement.intensity.free_symbols) - set(growing):
        return []
    low, high = size_range
    sizes = [2**k for k in range(math.ceil(math.log2(low)), math.floor(math.log2(high)) + 1)]
    points = []
    for size in sizes:
        ai = float(placement.intensity.subs({s: size for s in growing}))
        if ai > 0:
            attainable = min(placement.peak_flops_per_s, ai * placement.bandwidth_bytes_per_s)
            points.append((size, ai, attainable))
    return points


def _label(axes: Axes, text: str, x: float, y: float, key: str) -> Annotation:
    return axes.annotate(
        text, (x, y), xytext=_OFFSETS[0], textcoords="offset points", fontsize="small",
        gid=f"label:{key}",
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.8, "linewidth": 0},
        arrowprops={"arrowstyle": "-", "color": "0.5", "linewidth": 0.6},
    )  # fmt: skip


def _spread_labels(figure: Figure, axes: Axes, labels: Sequence[Annotation]) -> None:
    """Greedy placement: each label takes the first offset that overlaps no earlier one."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    figure.draw_without_rendering()
    frame = axes.get_window_extent(renderer)
    fixed = [t for t in axes.texts if str(t.get_gid()).startswith("ridge-label:")]
    taken: list[Bbox] = [t.get_window_extent(renderer) for t in fixed]
    taken += _marker_boxes(axes)
    for label in labels:
        best, best_cost = _OFFSETS[0], math.inf
        for offset in _OFFSETS:
            _move(label, offset)
            box = label.get_window_extent(renderer)
            cost = sum(_area(box, other) for other in taken)
            if not (frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)):
                cost += box.width * box.height
            if cost < best_cost:
                best, best_cost = offset, cost
            if cost == 0:
                break
        _move(label, best)
        taken.append(label.get_window_extent(renderer))


def _move(label: Annotation, offset: tuple[int, int]) -> None:
    label.set_position(offset)
    label.set_horizontalalignment("left" if offset[0] > 0 else "right")


def _area(box: Bbox, other: Bbox) -> float:
    width = min(box.x1, other.x1) - max(box.x0, other.x0)
    height = min(box.y1, other.y1) - max(box.y0, other.y0)
    return float(max(0.0, width) * max(0.0, height))


def _marker_boxes(axes: Axes, half_px: float = 6.0) -> list[Bbox]:
    """Display boxes around kernel points, so that no label hides a marker."""
    from matplotlib.transforms import Bbox

    boxes = []
    for line in axes.get_lines():
        if str(line.get_gid()).startswith("kernel:"):
            xy = line.get_xydata()
            for x, y in axes.transData.transform(xy):
                boxes.append(Bbox.from_extents(x - half_px, y - half_px, x + half_px, y + half_px))
    return boxes


def _x_range(
    drawn: Sequence[_Drawn], devices: Sequence[Device], size_range: tuple[int, int]
) -> tuple[float, float]:
    values = []
    for device in devices:
        bandwidth = device.main_memory.bandwidth_bytes_per_s
        assert bandwidth is not None
        values += [p.dense_flops_per_s / bandwidth for p in device.peaks]
    for item in drawn:
        if item.placement.intensity_flops_per_byte is not None:
            values.append(item.placement.intensity_flops_per_byte)
        elif item.placement.intensity is not None:
            values += [ai for _, ai, _ in _path(item.placement, size_range)]
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
    return 10 ** math.floor(math.log10(min(ys))), 10 ** math.ceil(math.log10(max(ys) * 3))


def _geometric(low: float, high: float, count: int) -> list[float]:
    ratio = (high / low) ** (1 / (count - 1))
    return [low * ratio**i for i in range(count)]
