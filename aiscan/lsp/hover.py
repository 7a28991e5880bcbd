"""What the editor shows for a loop nest: hover text and the code-lens title.

Both answer for every nest: a value that still has unresolved symbols at the configured
sizes is said to depend on them (never `float()` of a symbolic expression), and a nest
whose placement fails gets the reason in its own hover, leaving the other nests alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY
from aiscan.analysis.kernel import RegionAnalysis
from aiscan.report.placement_format import placement_lines
from aiscan.roofline.devices import Device
from aiscan.roofline.kernels import PlacementOptions, kernel_spec, place_on_devices
from aiscan.roofline.placement import Placement

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["LENS_MAX_CHARS", "expression_text", "hover_markdown", "lens_title"]

LENS_MAX_CHARS = 80
"""Code-lens titles stay on one short line; the hover carries the detail."""

_INFINITY = re.compile(r"(?<![A-Za-z_])oo(?![A-Za-z_0-9])")


def expression_text(expr: sympy.Expr) -> str:
    """sympy's text with `∞` for its `oo`."""
    return _text(expr)


@lru_cache(maxsize=8192, typed=True)
def _text(expr: sympy.Expr) -> str:
    """Remembered by the expression and its type: after an edit the server describes every
    nest again, mostly the same counts, and sympy's printer took a fifth of an edit."""
    return _INFINITY.sub("∞", str(expr))


def _unresolved(expr: sympy.Expr) -> str:
    return ", ".join(sorted(str(s) for s in expr.free_symbols))


def hover_markdown(
    region: RegionAnalysis,
    devices: tuple[Device, ...],
    sizes: Mapping[str, int],
    write_allocate: bool,
    placements: Callable[[], Sequence[Placement | str]] | None = None,
) -> str:
    """The nest's hover. `placements` gives its placements on `devices` as `analyze` makes
    them (the server's lint has usually made them already); None places it here."""
    span = region.region.span
    flops = region.flops
    kinds = ", ".join(
        f"{kind} {expression_text(value)}"
        for kind in ("add", "sub", "mul", "div", "special")
        if (value := getattr(flops, kind)) != 0
    )
    kind = "GPU launch" if region.useful_flops is not None else "loop nest"
    lines = [
        f"**aiscan: {kind}, {span.labelled()}** ({region.precision or 'no float data'})",
        "",
        f"- FLOPs: `{expression_text(flops.total)}`" + (f" ({kinds})" if kinds else ""),
    ]
    if region.useful_flops is not None:
        useful = expression_text(region.useful_flops.total)
        streaming = expression_text(region.traffic["streaming"].total(False))
        launch = region.region.launch
        if launch is None:
            lines.append(f"- useful FLOPs (masked-in lanes): `{useful}`; placement uses all lanes")
        else:
            grid = ", ".join(expression_text(v) for v in launch.grid)
            block = ", ".join(expression_text(v) for v in launch.block)
            lines.append(f"- launch: grid `({grid})`, block `({block})` ({launch.origin})")
        lines.append(f"- bytes, L2 → SM (every program's loads and stores): `{streaming}`")
        if region.sector_traffic is not None:
            sectors = expression_text(region.sector_traffic.total(False))
            lines.append(f"- bytes, L2 → SM in 32-byte sectors (per warp): `{sectors}`")
        if region.shared_memory_bytes is not None:
            shared = expression_text(region.shared_memory_bytes)
            lines.append(f"- bytes, shared memory (apart): `{shared}`")
        for conflict in region.bank_conflicts:
            lines.append(
                f"- bank conflict, line {conflict.access.span.line}: "
                f"`{conflict.access.text}` {conflict.ways}-way"
            )
        for atomic in region.atomics:
            lines.append(
                f"- atomics, line {atomic.access.span.line}: `{atomic.access.text}` updated "
                f"`{expression_text(atomic.count)}` times"
            )
    for model, traffic in region.traffic.items():
        lines.append(f"- bytes, {model}: `{expression_text(traffic.total(write_allocate))}`")
    for model, intensity in region.intensity.items():
        if intensity.expr is None:
            lines.append(f"- AI, {model}: no memory traffic")
            continue
        text = f"- AI, {model}: `{expression_text(intensity.expr)}` F/B"
        if intensity.limit is not None and intensity.expr.free_symbols:
            text += f", → `{expression_text(intensity.limit)}` as sizes grow"
        if intensity.value is not None:
            if intensity.value.is_number:
                text += f", {float(intensity.value):.4g} at the configured sizes"
            else:
                text += (
                    f", `{expression_text(intensity.value)}` at the configured sizes "
                    f"({_unresolved(intensity.value)} not set)"
                )
        lines.append(text)
    if devices:
        lines += ["", "**Roofline**", ""]
        try:
            if placements is None:
                options = PlacementOptions(devices=devices, model="auto")  # as `analyze` places
                spec = kernel_spec(f"line {span.line}", region, options)
                placed: Sequence[Placement | str] = place_on_devices(spec, options, sizes, region)
            else:
                placed = placements()
            for placement in placed:
                first, *rest = placement_lines(placement)
                lines.append(f"- {first}")
                lines += [f"  - {line.strip()}" for line in rest if line.strip()]
        except Exception as error:  # one nest's failure stays in its own hover
            lines.append(f"- no placement for this nest: {type(error).__name__}: {error}")
    else:
        lines += ["", "_No target device: set `devices` in `[tool.aiscan]` for a placement._"]
    for unknown in region.unknowns:
        lines.append(f"- unknown ({unknown.kind.value}): {unknown.message}")
    return "\n".join(lines)


def lens_title(region: RegionAnalysis, write_allocate: bool) -> str:
    """`aiscan: AI 1/12 ≈ 0.0833 F/B · 2*n FLOPs · 24*n B`, shortened to fit
    `LENS_MAX_CHARS` by dropping the counts, then the exact intensity."""
    intensity = region.intensity["compulsory"]
    bytes_moved = expression_text(region.traffic["compulsory"].total(write_allocate))
    flops = expression_text(region.flops.total)
    if intensity.expr is None:
        return _fit([f"aiscan: {flops} FLOPs, no memory traffic", "aiscan: no memory traffic"])
    # The unit follows each figure: `AI n/12 F/B = 341 F/B at the configured sizes`, not
    # `= 341 at the configured sizes F/B`.
    exact = f"{expression_text(intensity.expr)} F/B"
    value = ""
    if intensity.expr.is_number:
        exact, value = expression_text(intensity.expr), f"≈ {float(intensity.expr):.3g} F/B"
    elif intensity.value is not None and intensity.value.is_number:
        value = f"= {float(intensity.value):.3g} F/B at the configured sizes"
    elif intensity.value is not None:
        value = f"(needs {_unresolved(intensity.value)})"
    elif intensity.limit is not None and intensity.limit.is_number:
        value = f"→ {expression_text(intensity.limit)} F/B as sizes grow"
    head = f"aiscan: AI {exact} {value}".rstrip()
    return _fit(
        [
            f"{head} · {flops} FLOPs · {bytes_moved} B",
            head,
            f"aiscan: AI {value}" if value and "F/B" in value else "aiscan: AI (see hover)",
            "aiscan: AI (see hover)",
        ]
    )


def _fit(candidates: list[str]) -> str:
    return next((c for c in candidates if len(c) <= LENS_MAX_CHARS), candidates[-1])
