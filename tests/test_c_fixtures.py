"""Every C fixture's counts against the expectations written beside it (MODEL.md rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from golden import FIXTURES, analyze_fixture, load_expectations, same

C_FIXTURES = sorted(
    p for p in (FIXTURES / "c").glob("*.c") if p.with_suffix(".expected.toml").exists()
)


def _function_checks(function: Any, expected: dict[str, Any], write_allocate: bool) -> list[str]:
    failures = []
    suffix = "_write_allocate" if write_allocate else ""

    def check(key: str, actual: Any) -> None:
        if key in expected and not same(actual, str(expected[key])):
            failures.append(f"{key}: got {actual}, expected {expected[key]}")

    check("flops", function.flops.total)
    for kind in ("add", "sub", "mul", "div", "special"):
        check(kind, getattr(function.flops, kind))
    for model in ("compulsory", "streaming"):
        if write_allocate and f"{model}_write_allocate" not in expected:
            continue
        check(f"{model}{suffix}", function.traffic[model].total(write_allocate))
    check(f"intensity{suffix}", function.intensity["compulsory"].expr)
    check(f"limit{suffix}", function.intensity["compulsory"].limit)
    if not write_allocate:
        if "precision" in expected and function.precision != expected["precision"]:
            failures.append(f"precision: got {function.precision}")
        if "unknowns" in expected:
            kinds = sorted({u.kind.value for u in function.unknowns})
            if kinds != sorted(expected["unknowns"]):
                failures.append(
                    f"unknowns: got {kinds}, expected {expected['unknowns']}: "
                    + "; ".join(u.message for u in function.unknowns)
                )
        for key, text in expected.get("values", {}).items():
            value = function.intensity["compulsory"].value if key == "intensity" else None
            if not same(value, str(text)):
                failures.append(f"value of {key}: got {value}, expected {text}")
        for nest_expected in expected.get("nests", []):
            matching = [r for r in function.regions if r.region.span.line == nest_expected["line"]]
            if not matching:
                failures.append(f"no nest at line {nest_expected['line']}")
                continue
            region = matching[0]
            for key, text in nest_expected.items():
                if key == "flops" and not same(region.flops.total, str(text)):
                    failures.append(f"nest {nest_expected['line']} flops: {region.flops.total}")
                if key in ("compulsory", "streaming") and not same(
                    region.traffic[key].total(False), str(text)
                ):
                    failures.append(
                        f"nest {nest_expected['line']} {key}: {region.traffic[key].total(False)}"
                    )
    return failures


@pytest.mark.parametrize("source", C_FIXTURES, ids=lambda p: p.stem)
@pytest.mark.parametrize("write_allocate", [False, True], ids=["plain", "write-allocate"])
def test_fixture_counts(source: Path, write_allocate: bool) -> None:
    expectations = load_expectations(source.with_suffix(".expected.toml"))
    functions = analyze_fixture(source, expectations, write_allocate=write_allocate)
    failures = []
    for name, expected in expectations.get("functions", {}).items():
        if name not in functions:
            failures.append(f"function {name} not found (have {sorted(functions)})")
            continue
        failures += [
            f"{name}: {f}" for f in _function_checks(functions[name], expected, write_allocate)
        ]
    assert not failures, "\n".join(failures)


def test_every_model_row_has_a_fixture() -> None:
    """MODEL.md's C rows are the contract; losing a fixture must fail loudly."""
    stems = {p.stem for p in C_FIXTURES}
    required = {
        "daxpy",
        "vector_add",
        "reuse_x",
        "sum_squares",
        "mixed_precision",
        "shared_input_one_loop",
        "shared_input_two_loops",
        "daxpy_plus_square",
        "triad",
        "stencil_cross9",
        "dgemm_ijk",
        "scalar_recurrence",
        "bf16_dot",
        "bf16_matmul",
        "fp16_linear",
    }
    assert required <= stems
