"""The HTML report's interactive roofline, read from the page: which device and memory level
each drawn group and hover point belongs to (what the toggles hide), the richer tooltip,
the controls, and a line naming each device's traffic model where they differ. The page in
a browser: tests/test_html_browser.py."""

from __future__ import annotations

import html
import json
import re
from functools import cache

from golden import FIXTURES

from aiscan.analysis.kernel import AnalysisOptions, analyze_module
from aiscan.options import PlacementOptions
from aiscan.pipeline import PipelineOptions, lower_source
from aiscan.roofline.devices import load_devices
from aiscan.roofline.html import render_html
from aiscan.sources import read_source

SIZES = {"n": 2000}
HASWELL, L4 = "haswell-e5-2695v3", "l4"
_CIRCLE = re.compile(r'<circle [^>]*data-device="([^"]*)" data-level="([^"]*)" data-tip="([^"]*)">')


@cache
def _page() -> str:
    """Naive dgemm at n = 2000 on a CPU with cache geometry (cache model, one marker per
    level) and on the L4, whose file has none (compulsory bytes)."""
    source = FIXTURES / "c" / "dgemm_ijk.c"
    module = lower_source(read_source(str(source)), str(source), PipelineOptions())
    analysis = analyze_module(module, AnalysisOptions(sizes=SIZES))
    catalog = load_devices()
    devices = (catalog.get(HASWELL), catalog.get(L4))
    from aiscan.roofline.kernels import module_kernels

    kernels = module_kernels([analysis], PlacementOptions(devices=devices, model="cache"))
    return render_html(kernels, list(devices), sizes=SIZES)


def _tags() -> dict[str, list[str]]:
    found = re.search(r'<script type="application/json" id="aiscan-tags">(.*?)</script>', _page())
    assert found is not None
    tags: dict[str, list[str]] = json.loads(found.group(1))
    return tags


def test_each_drawn_group_is_tagged_with_its_device_and_level() -> None:
    tags = _tags()
    key = f"dgemm:7:{HASWELL}"
    levels = {gid.rsplit(":", 1)[1] for gid in tags if gid.startswith(f"level:{key}:")}
    assert levels == {"L1d", "L2", "DDR4-2133 (4 channels)"}
    for level in levels:
        assert tags[f"level:{key}:{level}"] == [HASWELL, level]
    # the filled marker stands for the bounding level (L3 at n = 2000), the others hollow
    assert tags[f"kernel:{key}"] == [HASWELL, "L3"]
    assert tags[f"ceiling:{HASWELL}:L2"] == [HASWELL, "L2"]
    assert tags[f"roof:{HASWELL}:fp64"] == [HASWELL, ""]  # a roof goes with its device only
    assert tags[f"label:{key}"] == [HASWELL, "L3"]  # a name goes with the marker it names
    assert tags[f"levels:{key}"] == [HASWELL, ""]
    assert tags["kernel:dgemm:7:l4"] == [L4, "GDDR6"]
    # every id the page names is a group of the SVG
    for gid in tags:
        assert f'<g id="{html.escape(gid)}"' in _page(), gid


def test_every_hover_point_carries_its_device_level_and_figures() -> None:
    points = [(d, lv, html.unescape(tip)) for d, lv, tip in _CIRCLE.findall(_page())]
    assert {d for d, _, _ in points} == {HASWELL, L4}
    (l4,) = [tip for d, _, tip in points if d == L4]
    lines = l4.split("\n")
    assert lines[0] == "dgemm:7 on l4 (fp64)"
    assert "traffic model: compulsory" in lines
    assert "FLOPs 16000000000" in lines  # 2*n**3 at n = 2000
    assert "bytes 96000000" in lines  # compulsory: 3 matrices of n**2 doubles
    assert "AI 166.7 F/B" in lines and "compute-bound" in lines
    assert any(line.endswith("% of peak") for line in lines)
    haswell_levels = {lv for d, lv, _ in points if d == HASWELL}
    assert haswell_levels == {"L1d", "L2", "L3", "DDR4-2133 (4 channels)"}


def test_the_page_has_toggles_per_device_and_level_and_says_the_models_differ() -> None:
    page = _page()
    boxes = re.findall(r'<input type="checkbox" data-toggle="(\w+)" value="([^"]*)" checked>', page)
    assert ("device", HASWELL) in boxes and ("device", L4) in boxes
    assert {("level", "L1d"), ("level", "L3"), ("level", "GDDR6")} <= set(boxes)
    assert (
        f"<p>The devices' points use different traffic models: {HASWELL}: cache model "
        f"(layer conditions on its caches); {L4}: compulsory traffic (no cache geometry in "
        "its file).</p>"
    ) in page
    assert "<noscript>" in page  # says the plot is static without scripts
    rows = re.findall(r"<tr><td>dgemm:7</td><td>([^<]*)</td><td>fp64</td><td>(\w+)</td>", page)
    assert [(device.split(",")[0], model) for device, model in rows] == [
        (HASWELL, "cache"),
        (L4, "compulsory"),
    ]
