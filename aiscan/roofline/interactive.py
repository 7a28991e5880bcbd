"""The HTML roofline's interactive layer: zoom, a tooltip per point, toggles per device and
per memory level, as one small inline script over the matplotlib SVG.

Why not Plotly or Bokeh: each page would inline the library (plotly.min.js 4.8 MB, Bokeh's
1.4 MB before its widgets) and draw a second picture beside the PNG/SVG one. The script
here is a few kilobytes, needs no extra install, works offline, and acts on the very SVG
`aiscan roofline -o plot.svg` writes: without scripts the page is that static SVG, with a
browser tooltip on every point.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Final

from aiscan.roofline.devices import Device
from aiscan.roofline.hover import owner_of, point_level
from aiscan.roofline.placement import Placement
from aiscan.roofline.plot import KernelSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["STYLE", "controls", "group_tags", "script"]

STYLE: Final = """
.controls { margin: 0.5em 0; font-size: 0.9em; display: flex; flex-wrap: wrap; gap: 0.3em 1em;
            align-items: center; }
.controls fieldset { border: 1px solid #ccc; padding: 0.2em 0.6em; margin: 0; }
.controls label { margin-right: 0.6em; white-space: nowrap; }
.plot svg { cursor: grab; touch-action: none; }
.tip { position: fixed; z-index: 10; pointer-events: none; background: #fffff4;
       border: 1px solid #888; padding: 0.3em 0.5em; font-size: 0.85em; white-space: pre;
       box-shadow: 1px 1px 4px rgba(0, 0, 0, 0.25); }
"""

_DEVICE_KINDS: Final = ("roof", "ridge", "ridge-label", "ceiling", "ceiling-label")
"""Gids whose tail starts with a device key; ceilings go on with their level's name."""
_POINT_KINDS: Final = {"kernel": "kernel", "level": "level", "path": "path",
                       "path-step": "path", "path-size": "path", "crossover": "path",
                       "label": "kernel", "leader": "kernel"}  # fmt: skip
"""A kernel's artists that stand for a memory level, and what kind of point each is: its
name and leader go with the marker they name (hidden with it)."""


def group_tags(
    figure: Figure,
    placed: Sequence[tuple[KernelSpec, Placement]],
    devices: Sequence[Device],
) -> dict[str, tuple[str, str]]:
    """By the gid of each drawn artist: the device it belongs to and the memory level it
    stands for ("" for a roof or the line joining a kernel's levels: its device only)."""
    owners = {f"{kernel.label}:{p.device}": (kernel, p) for kernel, p in placed}
    keys = sorted((d.key for d in devices), key=len, reverse=True)
    tags: dict[str, tuple[str, str]] = {}
    for artist in figure.axes[0].get_children():
        gid = artist.get_gid()
        if not gid:
            continue
        kind, _, rest = str(gid).partition(":")
        if kind in _DEVICE_KINDS:
            device = next((k for k in keys if rest == k or rest.startswith(k + ":")), None)
            if device is not None:
                level = rest[len(device) + 1 :] if kind.startswith("ceiling") else ""
                tags[str(gid)] = (device, level)
            continue
        owner = owner_of(rest, owners)
        if owner is None:
            continue
        key, (_, placement) = owner
        point = _POINT_KINDS.get(kind)
        tail = rest.removeprefix(key)
        level = "" if point is None else point_level(point, tail, placement)
        tags[str(gid)] = (placement.device, level)
    return tags


def controls(tags: dict[str, tuple[str, str]], devices: Sequence[Device]) -> str:
    """The toggles, the zoom reset and a hint; hidden until the script shows them, with a
    `<noscript>` line saying the plot is static without scripts."""
    levels = list(dict.fromkeys(level for _, level in tags.values() if level))
    boxes = [
        _fieldset("Devices", "device", [d.key for d in devices]),
        _fieldset("Memory levels", "level", levels),
    ]
    return (
        '<div id="aiscan-controls" class="controls" hidden>'
        + "".join(boxes)
        + '<span><button id="aiscan-reset" type="button">Whole plot</button> '
        + 'zoom <span id="aiscan-zoom">1.0×</span></span>'
        + "<span>wheel: zoom at the pointer · drag: pan · double-click: whole plot · "
        + "pointer on a point: its figures</span></div>"
        + "<noscript><p>Scripts are off: the plot is static (no zoom or toggles); a point's "
        + "figures show as the browser's tooltip.</p></noscript>"
        + '<div id="aiscan-tip" class="tip" hidden></div>'
    )


def script(tags: dict[str, tuple[str, str]]) -> str:
    """The tags as JSON and the inline script that reads them."""
    data = json.dumps(tags, sort_keys=True).replace("</", "<\\/")
    code = resources.files("aiscan.roofline").joinpath("interactive.js").read_text("utf-8")
    return (
        f'<script type="application/json" id="aiscan-tags">{data}</script><script>{code}</script>'
    )


def _fieldset(legend: str, kind: str, values: Sequence[str]) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" data-toggle="{kind}" value="{html.escape(v)}" checked> '
        f"{html.escape(v)}</label>"
        for v in values
    )
    return f"<fieldset><legend>{legend}</legend>{boxes}</fieldset>"
