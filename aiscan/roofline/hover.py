"""The HTML roofline's hover layer: a transparent circle over every plotted point, each with
a `<title>` that browsers show as its tooltip (kernel, device, size, level, AI, rate), and
the data the page's script reads (`data-device`, `data-level` for the toggles, `data-tip`
for its richer tooltip).

Plain SVG, so the tooltips work with scripts off too, and the report stays one file. The
circles sit at the points' own coordinates, read from the drawn figure after it was saved
as SVG.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from aiscan.roofline.placement import Placement
from aiscan.roofline.plot import KernelSpec, swept_path
from aiscan.roofline.units import format_si

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "HOVER_GID",
    "attainable_text",
    "hover_layer",
    "lower_bound_text",
    "owner_of",
    "point_figures",
    "point_level",
]

HOVER_GID: Final = "hover"
_RADIUS_POINTS: Final = 6.0
"""A little larger than a marker (8 pt across), so the tooltip is easy to reach."""
_POINT_KINDS: Final = ("kernel", "level", "path")


def lower_bound_text(placement: Placement) -> str:
    """As the text report labels it: flagged upper-bound bytes make AI a lower bound."""
    return " (lower bound: bytes are an upper bound)" if placement.bytes_upper_bound else ""


def attainable_text(placement: Placement) -> str:
    """The rate at the given sizes, or its limit as the sizes grow."""
    if placement.attainable_flops_per_s is not None:
        return format_si(placement.attainable_flops_per_s, "FLOP/s")
    if placement.attainable_limit_flops_per_s is not None:
        limit = format_si(placement.attainable_limit_flops_per_s, "FLOP/s")
        return f"→ {limit} as sizes grow"
    return "–"


def point_figures(kernel: KernelSpec, placement: Placement) -> list[str]:
    """What a kernel's tooltip says: where it runs, its AI, its bound and its rate."""
    figures = [f"{kernel.label} on {placement.device} ({placement.precision})"]
    lower = lower_bound_text(placement)
    if placement.intensity_flops_per_byte is not None:
        figures.append(f"AI {placement.intensity_flops_per_byte:.4g} F/B{lower}")
    elif placement.intensity is not None:
        figures.append(f"AI {placement.intensity} F/B{lower}")
    level = f" at {placement.bound_level}" if placement.bound_level else ""
    return [*figures, f"{placement.bound.value}-bound{level}", attainable_text(placement)]


def hover_layer(
    figure: Figure,
    placed: Sequence[tuple[KernelSpec, Placement]],
    size_range: tuple[int, int],
) -> str:
    """The `<g id="hover">` to append to the figure's SVG (saved at 72 points per inch)."""
    import numpy

    axes = figure.axes[0]
    owners = {f"{kernel.label}:{p.device}": (kernel, p) for kernel, p in placed}
    scale = 72 / figure.dpi
    height = figure.get_figheight() * 72
    frame = axes.get_window_extent()
    circles: list[str] = []
    path_sizes: dict[str, dict[float, int]] = {}
    for line in axes.get_lines():
        kind, _, rest = str(line.get_gid()).partition(":")
        owner = owner_of(rest, owners) if kind in _POINT_KINDS else None
        if owner is None:
            continue
        key, (kernel, placement) = owner
        sizes: Mapping[float, int] = {}
        if kind == "path":  # a path may be drawn as several runs: its sizes are found once
            if key not in path_sizes:
                path_sizes[key] = _sizes_by_intensity(kernel, placement, size_range)
            sizes = path_sizes[key]
        xs = numpy.asarray(line.get_xdata(), dtype=float)
        ys = numpy.asarray(line.get_ydata(), dtype=float)
        points = axes.transData.transform(numpy.column_stack([xs, ys]))
        for x_data, y_data, (x, y) in zip(xs, ys, points, strict=True):
            if not (frame.x0 <= x <= frame.x1 and frame.y0 <= y <= frame.y1):
                continue
            tail = rest.removeprefix(key)
            title = _title(kind, tail, kernel, placement, float(x_data), float(y_data), sizes)
            level = point_level(kind, tail, placement)
            tip = "\n".join([*title.split(", "), *_more_figures(kind, placement)])
            circles.append(
                f'<circle cx="{x * scale:.2f}" cy="{height - y * scale:.2f}" '
                f'r="{_RADIUS_POINTS}" data-device="{html.escape(placement.device)}" '
                f'data-level="{html.escape(level)}" data-tip="{html.escape(tip)}">'
                f"<title>{html.escape(title)}</title></circle>"
            )
    return (
        f'<g id="{HOVER_GID}" fill="#fff" fill-opacity="0" pointer-events="all">'
        + "".join(circles)
        + "</g>"
    )


def point_level(kind: str, tail: str, placement: Placement) -> str:
    """The memory level a plotted point stands for (its toggle in the page): a level
    marker's own, the bounding level of a kernel, else the device's main memory."""
    if kind == "level":
        return tail.lstrip(":")
    if kind == "kernel" and placement.bound_level:
        return placement.bound_level
    return placement.memory_level


def _more_figures(kind: str, placement: Placement) -> list[str]:
    """What the script's tooltip adds to the title: the traffic model, the counts and
    the share of peak (a kernel's marker), so the figures need no trip to the table."""
    if kind != "kernel":
        return [f"traffic model: {placement.traffic_view or placement.model}"]
    more = [
        f"traffic model: {placement.traffic_view or placement.model}",
        f"FLOPs {placement.flops}",
        f"bytes {placement.bytes_moved}",
    ]
    if placement.fraction_of_peak is not None:
        more.append(f"{100 * placement.fraction_of_peak:.3g} % of peak")
    return more


def owner_of(
    rest: str, owners: Mapping[str, tuple[KernelSpec, Placement]]
) -> tuple[str, tuple[KernelSpec, Placement]] | None:
    """The kernel and placement a gid's tail names (`KEY`, `KEY:L2`, `KEY:0`): the longest
    key it starts with, as labels may hold colons themselves."""
    found = [key for key in owners if rest == key or rest.startswith(key + ":")]
    if not found:
        return None
    key = max(found, key=len)
    return key, owners[key]


def _sizes_by_intensity(
    kernel: KernelSpec, placement: Placement, size_range: tuple[int, int]
) -> dict[float, int]:
    """The size each point of a path was drawn at, by its AI (the same floats as drawn)."""
    return {ai: size for size, ai, _ in swept_path(kernel, placement, size_range)}


def _title(
    kind: str,
    tail: str,
    kernel: KernelSpec,
    placement: Placement,
    x: float,
    y: float,
    sizes: Mapping[float, int],
) -> str:
    rate = format_si(y, "FLOP/s")
    where = f"{kernel.label} on {placement.device} ({placement.precision})"
    if kind == "kernel":
        return ", ".join(point_figures(kernel, placement))
    if kind == "level":
        level = tail.lstrip(":")
        return f"{where}: {level} AI {x:.4g} F/B, not the bound level; {rate}"
    names = " = ".join(placement.crossover.size_names) or "size"
    size = sizes.get(x)
    at = f" at {names} = {size}" if size is not None else ""
    return f"{where}{at}: AI {x:.4g} F/B, {rate}"
