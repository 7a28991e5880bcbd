"""A Python file lowered through one line (`lower_source`'s `through_line`, the language
server's hovered nest before the rest of the file) gives that line's function exactly as
the whole file's lowering does: the hover it is described from is the one the finished
analysis keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aiscan.errors import InputError
from aiscan.ir.nodes import Function, Module
from aiscan.pipeline import PipelineOptions, lower_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# The Python fixtures with loop nests, but the one whose classes make every prefix a
# second of lowering (torch_llama.py: its classes are lowered in full either way).
PYTHON = sorted(
    p
    for p in (*FIXTURES.glob("python/**/*.py"), *FIXTURES.glob("gpu/*.py"))
    if p.name != "torch_llama.py"
)


def _holding(module: Module, line: int) -> Function:
    return next(
        f for f in module.functions for r in f.regions if r.span.line <= line <= r.span.end_line
    )


@pytest.mark.parametrize("path", PYTHON, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_each_nest_s_function_lowered_through_its_line_is_the_whole_file_s(path: Path) -> None:
    text = path.read_text()
    try:
        whole = lower_source(text, str(path), PipelineOptions())
    except InputError as error:  # the same error, wherever the editor hovers
        with pytest.raises(InputError, match=re.escape(str(error))):
            lower_source(text, str(path), PipelineOptions(), through_line=1)
        return
    lines = [(f.name, r.span.line) for f in whole.functions for r in f.regions if r.kind == "nest"]
    # The first, a middle and the last nest's functions: a class's prefix is its file's
    # lowering up to it, and every nest of a long file would take seconds.
    for name, line in dict([lines[0], lines[len(lines) // 2], lines[-1]] if lines else []).items():
        part = lower_source(text, str(path), PipelineOptions(), through_line=line)
        assert _holding(part, line) == _holding(whole, line), (name, line)


def test_a_prefix_of_plain_functions_lowers_the_hovered_one_alone() -> None:
    path = FIXTURES / "python" / "library.py"
    text = path.read_text()
    whole = lower_source(text, str(path), PipelineOptions())
    last = whole.functions[-1]
    part = lower_source(text, str(path), PipelineOptions(), through_line=last.span.line)
    assert [f.name for f in part.functions] == [last.name]
    assert len(whole.functions) == 42


CYCLE = """\
import numpy as np

N = 64


def first():
    x = np.zeros(N)
    for i in range(N):
        x[i] = x[i] * 2.0
    second()


def second():
    y = np.zeros(N)
    for i in range(N):
        y[i] = y[i] + 1.0
    first()
"""


def test_calls_in_a_cycle_are_cut_where_the_whole_file_cuts_them() -> None:
    whole = lower_source(CYCLE, "cycle.py", PipelineOptions())
    line = CYCLE.splitlines().index("        y[i] = y[i] + 1.0") + 1
    part = lower_source(CYCLE, "cycle.py", PipelineOptions(), through_line=line)
    second = _holding(whole, line)
    assert second.name == "second"
    assert _holding(part, line) == second
    # In the file's order `first` is lowered first: its call to `second` brings that nest
    # in, and `second`'s call back to `first` is the one cut (lowered from `second`, the
    # cut would fall in `first` and `second` would hold both nests).
    first = _holding(whole, CYCLE.splitlines().index("        x[i] = x[i] * 2.0") + 1)
    assert [r.kind for r in first.regions] == ["nest", "nest", "straight"]
    assert [r.kind for r in second.regions] == ["nest", "straight"]


def test_classes_the_hovered_class_does_not_name_are_not_lowered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Of the Llama block, `Gated` names none of the classes before it: lowered through
    its line, `Norm` and `Attend` (a second of lowering) are left out, and `Gated` is the
    whole file's. `Layer` names them all, and lowers them."""
    from aiscan.frontends.python.lowering import FunctionLowering

    path = FIXTURES / "python" / "torch_llama.py"
    text = path.read_text()
    whole = lower_source(text, str(path), PipelineOptions())
    lowered: list[str] = []
    original = FunctionLowering.function

    def counted(self: object, node: object, *rest: object) -> object:
        lowered.append(str(rest[0]) if rest else node.name.value)  # type: ignore[attr-defined]
        return original(self, node, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(FunctionLowering, "function", counted)
    gated = next(
        r.span.line for f in whole.functions for r in f.regions if f.name == "Gated.forward"
    )
    part = lower_source(text, str(path), PipelineOptions(), through_line=gated)
    assert _holding(part, gated) == _holding(whole, gated)
    assert not any(name.startswith(("Attend", "Norm")) for name in lowered)
    lowered.clear()
    layer = next(
        r.span.line for f in whole.functions for r in f.regions if f.name == "Layer.forward"
    )
    part = lower_source(text, str(path), PipelineOptions(), through_line=layer)
    assert _holding(part, layer) == _holding(whole, layer)
    assert any(name.startswith("Attend") for name in lowered)
