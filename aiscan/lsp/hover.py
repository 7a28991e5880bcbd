"""What the editor shows for a loop nest: hover text and the code-lens title."""

from __future__ import annotations

from collections.abc import Mapping

from aiscan.analysis.kernel import RegionAnalysis
from aiscan.report.placement_format import placement_lines
from aiscan.roofline.devices import Device
from aiscan.roofline.kernels import PlacementOptions, kernel_spec, place_on_devices

__all__ = ["hover_markdown", "lens_title"]


def hover_markdown(
    region: RegionAnalysis,
    devices: tuple[Device, ...],
    sizes: Mapping[str, int],
    write_allocate: bool,
) -> str:
    span = region.region.span
    flops = region.flops
    kinds = ", ".join(
        f"{kind} {value}"
        for kind in ("add", "sub", "mul", "div", "special")
        if (value := getattr(flops, kind)) != 0
    )
    lines = [
        f"**aiscan: loop nest, lines {span.lines()}** ({region.precision or 'no float data'})",
        "",
        f"- FLOPs: `{flops.total}`" + (f" ({kinds})" if kinds else ""),
    ]
    for model, traffic in region.traffic.items():
        lines.append(f"- bytes, {model}: `{traffic.total(write_allocate)}`")
    for model, intensity in region.intensity.items():
        if intensity.expr is None:
            lines.append(f"- AI, {model}: no memory traffic")
            continue
        text = f"- AI, {model}: `{intensity.expr}` F/B"
        if intensity.limit is not None and intensity.expr.free_symbols:
            text += f", → `{intensity.limit}` as sizes grow"
        if intensity.value is not None:
            text += f", {float(intensity.value):.4g} at the configured sizes"
        lines.append(text)
    if devices:
        options = PlacementOptions(devices=devices, model="auto")  # framework views
        spec = kernel_spec(f"line {span.line}", region, options)
        lines += ["", "**Roofline**", ""]
        for placement in place_on_devices(spec, options, sizes):
            first, *rest = placement_lines(placement)
            lines.append(f"- {first}")
            lines += [f"  - {line.strip()}" for line in rest if line.strip()]
    else:
        lines += ["", "_No target device: set `devices` in `[tool.aiscan]` for a placement._"]
    for unknown in region.unknowns:
        lines.append(f"- unknown ({unknown.kind.value}): {unknown.message}")
    return "\n".join(lines)


def lens_title(region: RegionAnalysis, write_allocate: bool) -> str:
    """`AI 1/12 F/B · 2*n FLOPs · 24*n B` for the compulsory model."""
    intensity = region.intensity["compulsory"]
    bytes_moved = region.traffic["compulsory"].total(write_allocate)
    if intensity.expr is None:
        return f"aiscan: {region.flops.total} FLOPs, no memory traffic"
    value = ""
    if intensity.expr.is_number:
        value = f" ≈ {float(intensity.expr):.3g}"
    elif intensity.value is not None:
        value = f" = {float(intensity.value):.3g} at the configured sizes"
    return f"aiscan: AI {intensity.expr}{value} F/B · {region.flops.total} FLOPs · {bytes_moved} B"
