"""A self-contained HTML roofline report: the plot as inline SVG plus the placement tables.

One file, no external links or fetched scripts, so it can be mailed or attached to an issue
and opened offline; its one inline script (`aiscan.roofline.interactive`) adds zoom,
tooltips and toggles, and without it the page is the static SVG with browser tooltips.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

from aiscan.roofline.devices import Device
from aiscan.roofline.hover import attainable_text, hover_layer, lower_bound_text, point_figures
from aiscan.roofline.interactive import STYLE as INTERACTIVE_STYLE
from aiscan.roofline.interactive import controls, group_tags, script
from aiscan.roofline.placement import CrossoverKind, Placement, held_text
from aiscan.roofline.plot import (
    DEFAULT_SIZE_RANGE,
    KernelSpec,
    SizePath,
    build_figure,
    figure_svg,
    placements,
)
from aiscan.roofline.traffic_models import differing_traffic_models
from aiscan.roofline.units import format_bytes, format_si, format_time

__all__ = ["render_html", "write_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.5em; text-align: left; vertical-align: top;
         overflow-wrap: break-word; hyphens: manual; }
.table { max-width: 100%; overflow-x: auto; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.expr { font-family: ui-monospace, monospace; }
.plot svg { width: 100%; max-width: 72em; height: auto; }
#hover circle:hover { fill-opacity: 0.25; stroke: #000; stroke-opacity: 0.6; }
"""
"""Cells wrap between words only (`break-word` never narrows a column below its longest
word, where `anywhere` let the table split `precision` and `0.02775` mid-token); numbers
never wrap; an expression wraps after its operators (`<wbr>`), inside its own cell."""

_OPERATOR_BREAKS: Final = re.compile(r"(\*\*|[*/,])")
"""Where a long expression may wrap: after a product, a quotient or a comma."""


def render_html(
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
    title: str = "aiscan roofline report",
    placed_already: tuple[list[tuple[KernelSpec, Placement]], list[str]] | None = None,
    paths: Sequence[SizePath] | None = None,
) -> str:
    """The report as one HTML string (`placed_already`: what `placements` gives for the
    same arguments, where the caller placed the kernels; `paths`: their `swept_path`s)."""
    if placed_already is None:
        placed_already = placements(kernels, devices, sizes=sizes, sparse=sparse)
    placed, skipped = placed_already
    figure = build_figure(
        kernels, devices, sizes=sizes, sparse=sparse, size_range=size_range,
        placed_already=(placed, skipped), paths=paths,
    )  # fmt: skip
    svg = re.sub(r"^<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", "", figure_svg(figure))
    svg = _with_tooltips(svg, placed)
    end = svg.rindex("</svg>")
    svg = svg[:end] + hover_layer(figure, placed, size_range) + svg[end:]
    tags = group_tags(figure, placed, devices)
    given = ", ".join(f"{k} = {v}" for k, v in sorted((sizes or {}).items())) or "none"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}{INTERACTIVE_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Sizes: {_e(given)}. Peaks: {'2:4 sparse' if sparse else 'dense'}.</p>",
        *_traffic_models_text(placed),
        controls(tags, devices),
        f'<div class="plot">{svg}</div>',
        "<h2>Placement</h2>",
        _placement_table(placed),
        *([f"<p>Not placed: {_e('; '.join(skipped))}</p>"] if skipped else []),
        "<h2>Devices</h2>",
        _device_table(devices),
        script(tags),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_html(
    path: Path,
    kernels: Sequence[KernelSpec],
    devices: Sequence[Device],
    *,
    sizes: Mapping[str, int] | None = None,
    sparse: bool = False,
    size_range: tuple[int, int] = DEFAULT_SIZE_RANGE,
    placed_already: tuple[list[tuple[KernelSpec, Placement]], list[str]] | None = None,
    paths: Sequence[SizePath] | None = None,
) -> Path:
    """Write `render_html(...)` to `path` (UTF-8)."""
    text = render_html(
        kernels, devices, sizes=sizes, sparse=sparse, size_range=size_range,
        placed_already=placed_already, paths=paths,
    )  # fmt: skip
    path.write_text(text, encoding="utf-8")
    return path


def _e(text: object) -> str:
    return html.escape(str(text))


def _row(cells: Sequence[str], kinds: Sequence[str] | None = None) -> str:
    """One table row; a cell's kind is `text`, `num` (never wraps) or `expr` (an expression
    that wraps after its operators)."""
    tds = []
    for cell, kind in zip(cells, kinds or ["text"] * len(cells), strict=True):
        if kind == "expr":
            tds.append(f'<td class="expr">{_breakable(cell)}</td>')
        elif kind == "num":
            tds.append(f'<td class="num">{_e(cell)}</td>')
        else:
            tds.append(f"<td>{_e(cell)}</td>")
    return f"<tr>{''.join(tds)}</tr>"


def _breakable(expression: str) -> str:
    """The escaped expression with a `<wbr>` after each operator, so `(2*N - 1)/(4*N + 2)`
    or a long product wraps at an operator and stays in its column."""
    return "".join(
        _e(part) + ("<wbr>" if _OPERATOR_BREAKS.fullmatch(part) else "")
        for part in _OPERATOR_BREAKS.split(expression)
        if part
    )


def _placement_table(placed: Sequence[tuple[KernelSpec, Placement]]) -> str:
    head = (
        "kernel", "device", "precision", "traffic model", "AI [F/B]", "AI value",
        "AI per level [F/B]", "ridge [F/B]", "bound",
        "attainable", "of peak", "T_math", "T_comms",
        "lower bound (overlap)", "upper bound (no overlap)", "crossover", "notes",
    )  # fmt: skip
    kinds = ["text", "text", "text", "text", "expr", "num", "text", "num", "text"]
    kinds += ["num"] * 6 + ["text", "text"]
    rows = [f"<tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>"]
    for kernel, p in placed:
        times = p.times
        lower = lower_bound_text(p)
        cells = [
            kernel.label,
            p.device
            + ("" if p.threads is None else f", {p.threads} thread(s): {p.threads_reason}"),
            p.precision + (" sparse" if p.sparse else ""),
            p.traffic_view or p.model,
            "no traffic" if p.intensity is None else str(p.intensity) + lower,
            _maybe(p.intensity_flops_per_byte, lambda v: f"{v:.4g}"),
            _levels_text(p),
            f"{p.ridge_flops_per_byte:.4g}",
            p.in_core.bound_name
            if p.latency_bound and p.in_core is not None
            else p.bound.value + (f" at {p.bound_level}" if p.bound_level else ""),
            attainable_text(p),
            _maybe(p.fraction_of_peak, lambda v: f"{100 * v:.3g} %"),
            _maybe(times.math_s if times else None, format_time),
            _maybe(times.comms_s if times else None, format_time),
            _maybe(times.lower_bound_s if times else None, format_time),
            _maybe(times.upper_bound_s if times else None, format_time),
            _crossover_text(p),
            "; ".join(p.notes),
        ]
        rows.append(_row(cells, kinds))
    return '<div class="table"><table>' + "".join(rows) + "</table></div>"


def _traffic_models_text(placed: Sequence[tuple[KernelSpec, Placement]]) -> list[str]:
    """A line naming each device's traffic model, where they differ (as the legend does)."""
    models = differing_traffic_models(placed)
    if not models:
        return []
    said = "; ".join(f"{device}: {text}" for device, text in models.items())
    return [f"<p>The devices' points use different traffic models: {_e(said)}.</p>"]


def _with_tooltips(svg: str, placed: Sequence[tuple[KernelSpec, Placement]]) -> str:
    """A `<title>` in each kernel's marker or path group (every run of a swept path):
    browsers show it when the pointer is on the line between the points."""
    for kernel, p in placed:
        key = f"{kernel.label}:{p.device}"
        title = f"<title>{_e(', '.join(point_figures(kernel, p)))}</title>"
        for kind in ("kernel", "path"):
            opening = re.compile(re.escape(f'<g id="{_e(f"{kind}:{key}")}') + r'(?::\d+)?">')
            svg = opening.sub("\\g<0>" + title.replace("\\", "\\\\"), svg)
    return svg


def _levels_text(p: Placement) -> str:
    """The hierarchical roofline's intensities, from the core outwards (`cache` model)."""
    return ", ".join(
        f"{lv.level} {_maybe(lv.intensity_flops_per_byte, lambda v: f'{v:.4g}')}" for lv in p.levels
    )


def _maybe(value: float | None, show: Callable[[float], str]) -> str:
    return "–" if value is None else show(value)


def _crossover_text(p: Placement) -> str:
    crossing = p.crossover
    names = " = ".join(crossing.size_names) or "size"
    if crossing.kind is CrossoverKind.AT:
        side = "compute" if crossing.compute_bound_above else "memory"
        exact = crossing.size_exact
        # an exact rational reads well; a surd (883/67 + sqrt(852585)/67) does not: the
        # decimal stands, the exact root is in the JSON report (`size_exact`)
        exact = f" = {exact}" if exact is not None and exact.is_Rational else ""
        return (
            f"{names}{exact} ≈ {crossing.size:.6g}; {side}-bound from "
            f"{crossing.first_integer_size}{held_text(crossing.held)}"
        )
    if crossing.kind is CrossoverKind.UNKNOWN and crossing.held and crossing.size_names:
        return f"in {names}: depends on {', '.join(crossing.held)} (held, not swept)"
    return {
        CrossoverKind.NEVER: "never (memory-bound at every size)",
        CrossoverKind.ALWAYS: "never (compute-bound at every size)",
        CrossoverKind.UNKNOWN: "unknown",
    }[crossing.kind] + held_text(crossing.held)


def _device_table(devices: Sequence[Device]) -> str:
    head = ("device", "figure", "value", "source")
    rows = [f"<tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>"]
    for device in devices:
        for peak in device.peaks:
            value = format_si(peak.dense_flops_per_s, "FLOP/s") + " dense"
            if peak.sparse_flops_per_s:
                value += f", {format_si(peak.sparse_flops_per_s, 'FLOP/s')} sparse"
            rows.append(_row([device.name, f"peak {peak.precision}", value, peak.source]))
        for level in device.memory:
            value = ", ".join(
                text
                for text in (
                    level.bandwidth_bytes_per_s and format_si(level.bandwidth_bytes_per_s, "B/s"),
                    level.capacity_bytes and format_bytes(level.capacity_bytes),
                )
                if text
            )
            rows.append(_row([device.name, level.name, value, level.source]))
        for link in device.interconnects:
            value = format_si(link.bandwidth_bytes_per_s, "B/s")
            rows.append(_row([device.name, link.name, value, link.source]))
        policy = "stores write-allocate" if device.write_allocate else "no write-allocate"
        rows.append(_row([device.name, "stores", policy, f"{device.kind}; {device.path.name}"]))
    return '<div class="table"><table>' + "".join(rows) + "</table></div>"
