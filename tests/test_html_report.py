"""The HTML report as a reader uses it: a tooltip on every plotted point (scripts off too), and a
table whose cells wrap between words and after operators, never inside a number."""

from __future__ import annotations

import html
import re

from test_hierarchical_plot import SIZES, dgemm_kernels
from test_plot import KERNELS, devices

from aiscan.roofline.html import render_html

_USE = re.compile(r'<use xlink:href="#[^"]+" x="([-\d.]+)" y="([-\d.]+)"')
_CIRCLE = re.compile(
    r'<circle cx="([-\d.]+)" cy="([-\d.]+)" r="[\d.]+"[^>]*><title>([^<]*)</title>'
)


def _groups(page: str, prefix: str) -> dict[str, str]:
    """The SVG's marker groups whose id starts with `prefix`, by id."""
    found = {}
    for match in re.finditer(rf'<g id="({re.escape(prefix)}[^"]*)">', page):
        end = page.find('<g id="', match.end())
        found[html.unescape(match.group(1))] = page[match.end() : end]
    return found


def _hover(page: str) -> list[tuple[float, float, str]]:
    layer = page[page.index('<g id="hover"') :]
    layer = layer[: layer.index("</g>")]
    return [(float(x), float(y), html.unescape(t)) for x, y, t in _CIRCLE.findall(layer)]


def _titles_at(hover: list[tuple[float, float, str]], x: float, y: float) -> list[str]:
    return [t for cx, cy, t in hover if abs(cx - x) < 0.05 and abs(cy - y) < 0.05]


def test_every_point_of_a_symbolic_path_has_a_tooltip_with_its_size() -> None:
    """With no size given, daxpy's AI is a value but the bf16 dot's grows with N: a path,
    one marker every few sizes, each under a circle whose title names that size."""
    page = render_html(KERNELS[:3], devices("h100"))
    hover = _hover(page)
    ((_, body),) = _groups(page, "path:bf16 dot:h100-sxm").items()
    uses = _USE.findall(body)
    assert len(uses) >= 3
    pattern = re.compile(r"bf16 dot on h100-sxm \(bf16\) at N = (\d+): AI ([\d.]+) F/B, .*")
    sizes = set()
    for x, y in uses:
        # points of nearby sizes may share a position (the AI tends to 1/2): one or more
        titles = _titles_at(hover, float(x), float(y))
        assert titles
        for title in titles:
            match = pattern.fullmatch(title)
            assert match is not None, title
            size = int(match.group(1))
            sizes.add(size)
            # the AI in the title is the one the point is drawn at: (2N - 1)/(4N + 2)
            assert float(match.group(2)) == float(f"{(2 * size - 1) / (4 * size + 2):.4g}")
    assert min(sizes) == 8 and len(sizes) >= len(uses)
    (daxpy,) = _USE.findall(_groups(page, "kernel:daxpy:h100-sxm")["kernel:daxpy:h100-sxm"])
    (title,) = _titles_at(hover, float(daxpy[0]), float(daxpy[1]))
    assert title == "daxpy on h100-sxm (fp64), AI 0.08333 F/B, memory-bound, 279.2 GFLOP/s"
    assert not re.search(r"<script[^>]*\bsrc=", page)  # the script is inline


def test_each_memory_level_of_the_hierarchical_roofline_has_its_own_tooltip() -> None:
    kernels, haswell = dgemm_kernels("cache")
    page = render_html(kernels, [haswell], sizes=SIZES)
    hover = _hover(page)
    key = "dgemm:7:haswell-e5-2695v3"
    levels = _groups(page, f"level:{key}:")
    assert levels
    for gid, body in levels.items():
        ((x, y),) = _USE.findall(body)
        level = gid.rsplit(":", 1)[1]
        titles = _titles_at(hover, float(x), float(y))
        start = f"dgemm:7 on haswell-e5-2695v3 (fp64): {level} AI "
        assert any(title.startswith(start) for title in titles), titles
    ((x, y),) = _USE.findall(_groups(page, f"kernel:{key}")[f"kernel:{key}"])
    titles = _titles_at(hover, float(x), float(y))
    assert any(re.search(r"memory-bound at L\d", title) for title in titles), titles


def test_table_cells_wrap_between_words_and_after_operators_only() -> None:
    page = render_html(KERNELS, devices("h100"), sizes={"n": 1000})
    style = page[page.index("<style>") : page.index("</style>")]
    assert "anywhere" not in style and "break-all" not in style  # split `precision`
    assert re.search(r"td\.num \{[^}]*white-space: nowrap", style)
    cells = re.findall(r'<td class="expr">(.*?)</td>', page)
    assert "(2*<wbr>N - 1)/<wbr>(2*<wbr>(2*<wbr>N + 1))" in cells  # the bf16 dot's AI
    for cell in cells:
        assert "<" not in cell.replace("<wbr>", "")
    numbers = re.findall(r'<td class="num">(.*?)</td>', page)
    assert "0.08333" in numbers and not any("<wbr>" in cell for cell in numbers)
