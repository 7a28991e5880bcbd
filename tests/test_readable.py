"""The text report's counts as people read them: factored, and without the `Max(0, c - n)`
terms that vanish at the sizes that matter (issue 32); the JSON keeps the expanded form."""

from __future__ import annotations

import json

import pytest
import sympy
from golden import FIXTURES

from aiscan.algebra import to_sympy
from aiscan.cli import main
from aiscan.ir.symbols import size_symbol
from aiscan.report.readable import readable


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["analyze", *argv, "--no-cache"])
    return capsys.readouterr().out


def test_a_stencils_counts_are_its_factors(capsys: pytest.CaptureFixture[str]) -> None:
    """heat7's FLOPs were an 8-term polynomial (`8*nx*ny*nz - 16*nx*ny - ...`)."""
    out = _report(capsys, str(FIXTURES / "c" / "linearized_twins.c"))
    heat7 = out[out.index("function heat7 ") :]
    assert (
        "FLOPs       8*(nx - 2)*(ny - 2)*(nz - 2)   [add 6*(nx - 2)*(ny - 2)*(nz - 2), "
        "mul 2*(nx - 2)*(ny - 2)*(nz - 2)]" in heat7
    )
    assert "streaming  64*(nx - 2)*(ny - 2)*(nz - 2)" in heat7


def test_the_json_keeps_the_expanded_form(capsys: pytest.CaptureFixture[str]) -> None:
    out = _report(capsys, str(FIXTURES / "c" / "linearized_twins.c"), "--format", "json")
    (heat7,) = [f for f in json.loads(out)["files"][0]["functions"] if f["name"] == "heat7"]
    assert heat7["flops"]["total"] == (
        "8*nx*ny*nz - 16*nx*ny - 16*nx*nz + 32*nx - 16*ny*nz + 32*ny + 32*nz - 64"
    )


def test_a_vanishing_max_is_left_out_with_where_it_vanishes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """jacobi_2d's compulsory bytes carry `- 8*Max(0, 4 - n)**2`, zero for n >= 4: the
    text leaves it out and says so; at a given n below 4 it matters and stays."""
    path = str(FIXTURES / "c" / "jacobi2d_time.c")
    out = _report(capsys, path)
    assert "compulsory 8*(n - 2)*(3*n - 2) (for n >= 4)   read 8*n**2 - 32 (for n >= 4)" in out
    assert "Max" not in out
    small = _report(capsys, path, "--size", "n=3,T=2")
    assert "compulsory 24*n**2 - 64*n - 8*Max(0, 4 - n)**2 + 32 = 48" in small


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "13*nx*ny*nz - 26*nx*ny - 26*nx*nz + 52*nx - 26*ny*nz + 52*ny + 52*nz - 104",
            "13*(nx - 2)*(ny - 2)*(nz - 2)",
        ),
        ("2*n**3", "2*n**3"),  # a monomial: nothing to factor
        ("n**2 + 1", "n**2 + 1"),  # irreducible
        ("n**2 - n", "n**2 - n"),  # `n*(n - 1)` is no shorter
    ],
)
def test_factored_only_where_it_is_a_real_product(text: str, shown: str) -> None:
    names = {s: size_symbol(s) for s in ("n", "nx", "ny", "nz")}
    expr = to_sympy(sympy.sympify(text, locals={k: v for k, v in names.items()}))
    assert readable(expr) == shown
