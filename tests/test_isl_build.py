"""`isl_build.built_map`: a reference's map built through isl's constraint API is the map
its text (`polyhedral._map_text`) parses to, over the sizes as parameters and at fixed
sizes, for every reference the fixtures' exact counts read; what it does not build (a
floor, a disjunction, `!=`, a name isl reads otherwise) is left to the text."""

from __future__ import annotations

from typing import Any

import islpy as isl
import pytest
import sympy
from exact_count_calls import COUNTED, sized_counts

from aiscan.analysis import polyhedral
from aiscan.analysis.domain import Bounds
from aiscan.analysis.isl_build import built_map
from aiscan.analysis.isl_text import NotAffine
from aiscan.analysis.polyhedral import PolyReference
from aiscan.ir.symbols import loop_symbol, size_symbol

LEFT_TO_THE_TEXT = {
    "c/strided_domains.c",
    "cuda/half2_fma.cu",
    "cuda/transpose_tiled.cu",
    "python/tiles.py",
    "python/torch_rotary.py",
}


def _built(reference: PolyReference, sizes: dict[sympy.Symbol, Any], width: int) -> Any:
    times = polyhedral.fixed_times(reference, width)
    guards = [polyhedral._negation_normal_form(g) for g in reference.guards]
    assert reference.access.index is not None
    return built_map(
        reference.access.array, reference.access.index, reference.loops, times, guards, sizes, width
    )


@pytest.mark.parametrize("path", COUNTED)
def test_a_built_map_is_the_map_its_text_parses_to(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = compared = 0
    for references, sizes in sized_counts(path, monkeypatch):
        width = 2 * max(len(r.loops) for r in references) + 2
        at_numbers = [dict(zip(sizes, values, strict=False)) for values in ((9, 11), (1, 3))]
        for reference in references:
            for given in (polyhedral._parameters(sizes), *at_numbers):
                try:
                    text = polyhedral._map_text(reference, dict(given), width)
                    parsed = isl.Map(text)
                except (NotAffine, isl.Error):
                    assert _built(reference, dict(given), width) is None
                    continue
                found = _built(reference, dict(given), width)
                compared += 1
                if found is not None:
                    built += 1
                    assert found.is_equal(parsed), text
    assert compared
    # Loops and subscripts of sizes and indices alone are built; tiles and strides (`floor`,
    # `ceiling`), CUDA's thread indices (`Mod`) and heads' reshapes are not.
    assert (built > 0) == (path not in LEFT_TO_THE_TEXT), (built, compared)


def test_what_is_not_built_is_left_to_the_text() -> None:
    n, i = size_symbol("n"), loop_symbol("i")
    loops = (Bounds("i", sympy.Integer(0), 1, n),)
    sizes = {n: 12}

    def built(index: sympy.Expr, guards: tuple[sympy.Basic, ...] = (), array: str = "a") -> Any:
        return built_map(array, (index,), loops, [0, None, 0, 0], guards, sizes, 4)

    assert built(i + 1) is not None
    assert built(sympy.floor(i / 2)) is None  # isl's text has floor
    assert built(i, (sympy.Or(sympy.Lt(i, 2), sympy.Gt(i, 5)),)) is None
    assert built(i, (sympy.Ne(i, 3),)) is None
    assert built(i, (sympy.And(sympy.Lt(i, 7), sympy.Ge(i, 2)),)) is not None
    assert built(i, array="x.y") is None  # not one name to isl's parser
    assert built(n * i) is not None  # a size times a variable: affine at a number
    assert (
        built_map("a", (n * i,), loops, [0, None, 0, 0], (), {n: polyhedral._parameters([n])[n]}, 4)
        is None
    )
