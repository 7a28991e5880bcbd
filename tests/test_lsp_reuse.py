"""The language server's document path: a nest placed once per text of it, the nest the
editor hovers on described first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from aiscan.analysis import kernel as kernel_module
from aiscan.analysis.kernel import analyze_module
from aiscan.frontends.python import lower_python_source
from aiscan.frontends.python.lowering import FunctionLowering
from aiscan.frontends.python.reuse import Trail
from aiscan.lsp import document as document_module
from aiscan.lsp import hover as hover_module
from aiscan.lsp import view as view_module
from aiscan.lsp.document import settings_for
from aiscan.lsp.view import view_document
from aiscan.roofline import kernels
from aiscan.scan import AnalysisTimedOut

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "python"
TWO_FUNCTIONS = """\
void scale(int n, double a, double *restrict x)
{
    for (int i = 0; i < n; i++)
        x[i] = a * x[i];
}

void matvec(int n, int m, const double *restrict A, const double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[i] += A[i * m + j] * x[j];
}
"""
EDITED = TWO_FUNCTIONS.replace("j < m;", "j < i;")  # the second nest only, same lines


@pytest.fixture
def placed_lines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The first line of every nest placed from now on, in a process with nothing kept."""
    lines: list[int] = []
    original = kernels.place_on_devices

    def counting(spec: Any, options: Any, sizes: Any, result: Any = None, **given: Any) -> Any:
        lines.append(result.region.span.line)
        return original(spec, options, sizes, result, **given)

    monkeypatch.setattr(kernels, "place_on_devices", counting)
    monkeypatch.setattr(hover_module, "place_on_devices", counting)
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    return lines


def test_lint_and_hovers_place_each_nest_once(placed_lines: list[int], tmp_path: Path) -> None:
    path = str(tmp_path / "two.c")
    settings = settings_for(path, ("h100-sxm", "epyc-9654"))
    view = view_document(TWO_FUNCTIONS, path, settings, 60.0)
    assert sorted(placed_lines) == [3, 9]
    assert [n.span.line for n in view.nests] == [3, 9]
    assert all("**Roofline**" in n.hover and "epyc-9654" in n.hover for n in view.nests)


def test_an_edit_places_again_only_the_nest_it_changed(
    placed_lines: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "two.c")
    settings = settings_for(path, ("h100-sxm", "epyc-9654"))
    before = view_document(TWO_FUNCTIONS, path, settings, 60.0)
    placed_lines.clear()
    after = view_document(EDITED, path, settings, 60.0)
    assert placed_lines == [9]
    assert after.nests[0] == before.nests[0]
    assert after.nests[1].hover != before.nests[1].hover
    assert "- FLOPs: `2*m*n`" in before.nests[1].hover
    assert "- FLOPs: `n**2 - n`" in after.nests[1].hover  # the triangle: j < i
    # What was kept is what a process that kept nothing computes for the edited text.
    _keep_nothing(monkeypatch)
    assert view_document(EDITED, path, settings, 60.0) == after


def _keep_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as if it had analyzed nothing yet: no placements, analyses or
    lowerings kept."""
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    monkeypatch.setattr(view_module, "ANALYSES", view_module._Recent(64))
    monkeypatch.setattr(view_module, "REGIONS", view_module._Recent(64))
    monkeypatch.setattr(view_module, "_TRAILS", view_module._Recent(16))


def _counted(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """The functions lowered, and the functions analyzed, from now on."""
    lowered: list[str] = []
    analyzed: list[str] = []
    lowering, analyzing = FunctionLowering.function, kernel_module._analyze_function

    def lowering_counted(self: Any, node: Any, *rest: Any) -> Any:
        lowered.append(node.name.value)
        return lowering(self, node, *rest)

    def analyzing_counted(function: Any, *rest: Any) -> Any:
        analyzed.append(function.name)
        return analyzing(function, *rest)

    monkeypatch.setattr(FunctionLowering, "function", lowering_counted)
    monkeypatch.setattr(kernel_module, "_analyze_function", analyzing_counted)
    return lowered, analyzed


def test_the_memo_forgets_its_oldest_entries() -> None:
    memo = view_module._Recent(2)
    for key in "abc":
        memo[key] = ()
    assert list(memo) == ["b", "c"]


def _viewed_hovering_line_10(path: str, settings: Any, events: list[str]) -> Any:
    """TWO_FUNCTIONS viewed while the editor hovers on line 10 (inside the second nest),
    each nest noted in `events` as it is described."""
    return view_document(
        TWO_FUNCTIONS,
        path,
        settings,
        60.0,
        lambda nest: events.append(f"nest {nest.span.line}"),
        lambda: 10,
    )


def test_the_wanted_nest_is_described_first_and_the_lint_comes_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "two.c")
    settings = settings_for(path, ("h100-sxm",))
    events: list[str] = []
    lint = view_module.lint_document

    def linting(*args: Any) -> Any:
        events.append("lint")
        return lint(*args)

    monkeypatch.setattr(view_module, "lint_document", linting)
    view = _viewed_hovering_line_10(path, settings, events)
    assert events == ["nest 9", "nest 3", "lint"]
    assert view.findings  # the lint ran, on the placements the hovers made
    assert [n.span.line for n in view.nests] == [3, 9]  # the view keeps the file's order


def test_the_hovered_nest_is_described_before_the_whole_file_is_analyzed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hover during a document's first analysis waits for its own function's analysis,
    not the file's; what it gets is what the file's analysis gives that nest."""
    path = str(tmp_path / "two.c")
    settings = settings_for(path, ("h100-sxm", "epyc-9654"))
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    alone = view_document(TWO_FUNCTIONS, path, settings, 60.0)
    events: list[str] = []
    for module, label in ((document_module, "file"), (view_module, "function")):
        original = module.analyze_module

        def analyzing(
            ir: Any, options: Any, *memo: Any, original: Any = original, label: str = label
        ) -> Any:
            events.append(f"{label} {', '.join(f.name for f in ir.functions)}")
            return original(ir, options, *memo)

        monkeypatch.setattr(module, "analyze_module", analyzing)
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    view = _viewed_hovering_line_10(path, settings, events)
    assert events == ["function matvec", "nest 9", "file scale, matvec", "nest 3"]
    assert view == alone


TWO_NESTS = """\
void two(int n, double *restrict x, double *restrict y)
{
    for (int i = 0; i < n; i++)
        x[i] = 2.0 * x[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            y[i] += x[j];
}
"""


def test_the_hovered_nest_is_analyzed_alone_and_not_again_with_its_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hover during the first analysis waits for its own nest's analysis, not for the
    other nests of its function; the function's analysis then finds it kept, and every
    nest's view is what a process that kept nothing gives."""
    path = str(tmp_path / "two.c")
    settings = settings_for(path, ("h100-sxm",))
    _keep_nothing(monkeypatch)
    fresh = view_document(TWO_NESTS, path, settings, 60.0)
    _keep_nothing(monkeypatch)
    kernel_module._memo.clear()  # the counts too: each region's analysis is seen
    events: list[str] = []
    analyzing = kernel_module._analyze_region

    def analyzing_noted(region: Any, *rest: Any) -> Any:
        events.append(f"analyzed {region.span.line}")
        return analyzing(region, *rest)

    monkeypatch.setattr(kernel_module, "_analyze_region", analyzing_noted)
    view = view_document(
        TWO_NESTS,
        path,
        settings,
        60.0,
        lambda nest: events.append(f"nest {nest.span.line}"),
        lambda: 7,
    )
    assert events == ["analyzed 5", "nest 5", "analyzed 3", "nest 3"]
    assert view == fresh


def test_a_nest_placed_for_its_hover_alone_is_placed_in_full_after_the_reply(
    placed_lines: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hovered nest described before the file's analysis is placed for its hover
    alone; once the reply is sent, `place_described_early` places it in full, as the
    rules place the others (they skip a nest with unknowns, as this one), and an edit
    elsewhere places nothing again."""
    path = str(FIXTURES / "torch_llama.py")
    text = Path(path).read_text()
    settings = settings_for(path, ("h100-sxm",))
    _keep_nothing(monkeypatch)
    view = view_document(text, path, settings, 600.0, lambda nest: None, lambda: 71)
    hovered = view.nest_at(71)
    assert hovered is not None and "**Roofline**" in hovered.hover
    placed_lines.clear()
    view_module.place_described_early(600.0)
    assert placed_lines == [71]
    placed_lines.clear()
    edited = text.replace("class Gated(nn.Module):", "class Gated(nn.Module):  # edited")
    again = view_document(edited, path, settings, 600.0)
    assert placed_lines == []
    assert again.nest_at(71) == hovered


def test_placing_the_early_nests_past_the_time_limit_ends_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the reply, nothing may end the analysis process: a placement stopped by the
    time limit (a BaseException) or failing is left to the next analysis."""

    class Stopped:
        def placements(self, region: Any) -> None:
            raise AnalysisTimedOut

    monkeypatch.setattr(view_module, "_UNPLACED", [(Stopped(), None), (Stopped(), None)])
    view_module.place_described_early(1.0)
    assert view_module._UNPLACED == []


def test_nests_that_share_a_span_keep_their_own_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """`self.attend.forward(self.norm_1(x), ...)` on one line makes nests of one span (the
    inlined call's): the hovered one, described first, is its own view, not theirs."""
    path = str(FIXTURES / "torch_llama.py")
    text = Path(path).read_text()
    settings = settings_for(path, ("h100-sxm",))
    _keep_nothing(monkeypatch)
    plain = view_document(text, path, settings, 600.0)
    spans = [n.span for n in plain.nests if n.span.line == 101]
    assert len(spans) > len(set(spans))  # the case: two nests of one span
    _keep_nothing(monkeypatch)
    assert view_document(text, path, settings, 600.0, lambda nest: None, lambda: 101) == plain


PYTHON_TWO = """\
import numpy as np


def scale(x: np.ndarray, a: float):
    for i in range(x.shape[0]):
        x[i] = a * x[i]


def matvec(A: np.ndarray, x: np.ndarray, y: np.ndarray):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j]
"""


def test_a_line_asked_for_during_the_files_lowering_stops_it_and_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hover arrives after the whole file's lowering began (an editor's hover sent
    right after the open): the lowering stops between top-level statements, the hovered
    function is lowered and described first, then the file, and the view is the same."""
    path = str(tmp_path / "two.py")
    settings = settings_for(path, ("h100-sxm",))
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    alone = view_document(PYTHON_TWO, path, settings, 60.0)
    events: list[str] = []
    original = view_module.lower_source

    def lowering(*args: Any, **keywords: Any) -> Any:
        through = args[3] if len(args) > 3 else keywords.get("through_line")
        interruptible = keywords.get("between") is not None
        events.append(f"lower {through or 'file'}{' (stops if asked)' if interruptible else ''}")
        return original(*args, **keywords)

    monkeypatch.setattr(view_module, "lower_source", lowering)
    monkeypatch.setattr(view_module, "PLACEMENTS", view_module._Recent(64))
    asked: list[int | None] = [None]  # nothing asked when the lowering starts

    def wanted_line() -> int | None:
        line, asked[0] = asked[0], 11  # then the editor hovers on matvec's inner loop
        return line

    view = view_document(
        PYTHON_TWO,
        path,
        settings,
        60.0,
        lambda nest: events.append(f"nest {nest.span.line}"),
        wanted_line,
    )
    assert events == [
        "lower file (stops if asked)",
        "lower 11",
        "nest 10",
        "lower file",
        "nest 5",
    ]
    assert view == alone


def test_an_edit_lowers_and_analyzes_again_only_the_function_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process keeps each Python file's last lowering and each function's analysis:
    an edit to `matvec` leaves `scale` as it was, neither lowered nor analyzed again, and
    the view is what a process that kept nothing gives."""
    path = str(tmp_path / "two.py")
    settings = settings_for(path, ("h100-sxm",))
    _keep_nothing(monkeypatch)
    view_document(PYTHON_TWO, path, settings, 60.0)
    lowered, analyzed = _counted(monkeypatch)
    edited = PYTHON_TWO.replace("y[i] += A[i, j] * x[j]", "y[i] += A[i, j] * x[j] * x[j]")
    after = view_document(edited, path, settings, 60.0)
    assert lowered == ["matvec"]
    assert analyzed == ["matvec"]
    assert "- FLOPs: `3*" in after.nests[1].hover
    _keep_nothing(monkeypatch)
    lowered.clear()
    assert view_document(edited, path, settings, 60.0) == after
    assert sorted(lowered) == ["matvec", "scale"]


MOVED_BY_AN_EDIT = """\
import numpy as np


def rows(x: np.ndarray):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return x


def forward(a: np.ndarray, n: int):
    y = rows(a)
    k = 0
    while k < n:
        if a[k] > 0.0:
            a[k] = a[k] * 2.0
        k += 1
    return y
"""


def test_a_line_added_above_moves_the_functions_without_lowering_or_analyzing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, placed_lines: list[int]
) -> None:
    """Two comment lines above the import move both functions down two lines: their
    lowerings, analyses and placements are moved (`relines.py`), spans and the names that
    hold a line (`rows_L11_i`, `p_L14`) with them, and the view is what a process that
    kept nothing gives for the edited text."""
    path = str(tmp_path / "moved.py")
    settings = settings_for(path, ("h100-sxm",))
    _keep_nothing(monkeypatch)
    before = view_document(MOVED_BY_AN_EDIT, path, settings, 60.0)
    assert sorted(placed_lines) == [5, 11, 13]
    placed_lines.clear()
    lowered, analyzed = _counted(monkeypatch)
    edited = "# two lines\n# above\n" + MOVED_BY_AN_EDIT
    after = view_document(edited, path, settings, 60.0)
    assert lowered == analyzed == placed_lines == []
    assert [n.span.line for n in before.nests] == [5, 11, 13]
    assert [n.span.line for n in after.nests] == [7, 13, 15]
    assert "p_L14" in before.nests[2].hover and "p_L16" in after.nests[2].hover
    assert "p_L14" not in after.nests[2].hover
    _keep_nothing(monkeypatch)
    assert view_document(edited, path, settings, 60.0) == after
    assert sorted(lowered) == ["forward", "rows"]


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.glob("*.py") if p.name != "syntax_error.py")
)
def test_a_moved_analysis_is_the_analysis_of_the_moved_ir(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line added at the top, then one above the middle `def` or class: each function's
    analysis the editor moves instead of analyzing again equals the moved IR's own."""
    path = str(FIXTURES / name)
    text = (FIXTURES / name).read_text()
    options = settings_for(path).pipeline.analysis
    memo = view_module._Recent(4096)
    monkeypatch.setattr(view_module, "ANALYSES", memo)
    trail = Trail()
    module = lower_python_source(text, path, trail=trail)
    analyze_module(module, options, memo)
    middle = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(middle) if line.startswith(("def ", "class "))]
    edits = ["# a line\n" + text]
    if starts:
        middle.insert(starts[len(starts) // 2], "# a line above the middle\n")
        edits.append("# a line\n" + "".join(middle))
    moved_functions = 0
    for edited in edits:
        before = module
        module = lower_python_source(edited, path, trail=trail)
        if trail.relines is not None:  # the middle one moves nothing when it is the last
            view_module._move_analyses(before, module, trail.relines, options)
        fresh = analyze_module(module, options)
        sizes = fresh.sizes
        for function, analysis in zip(module.functions, fresh.functions, strict=True):
            kept = memo.get(kernel_module.analysis_key(function, options, sizes))
            if kept is not None:
                assert kept == analysis, function.name
                moved_functions += 1
        analyze_module(module, options, memo)
    assert moved_functions >= len(module.functions) - 1  # `<module>` is lowered anew
