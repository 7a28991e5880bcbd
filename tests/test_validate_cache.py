"""The cache-validation harness (scripts/validate_cache.py): its parsing, its C twins, and one
cheap end-to-end measurement. The full table stays a script (a few minutes under valgrind)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "validate_cache.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validate_cache", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["validate_cache"] = module
    spec.loader.exec_module(module)
    return module


validate_cache = _load()

PROFILE = """\
version: 1
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw ILdmr DLdmr DLdmw
fl=t.c
fn=aiscan_kernel
0 5 1
cfn=daxpy
calls=1 0
0 100 20 10 0 3 1 0 3 1 0 1 0
fn=daxpy
0 100 20 10 0 3 1 0 3 1 0 1
fn=aiscan_drain
0 40 8 0 0 8 0 0 8 0 0 2 0
cfn=aiscan_flush
calls=1 0
0 999 999 999 999 999 999 999 999 999 999 999 999
totals: 145 29 10 0 11 1 0 11 1 0 3
"""


def test_parse_callgrind_separates_the_drain_and_reads_short_lines() -> None:
    totals, drain = validate_cache.parse_callgrind(PROFILE)
    # totals leave out the trailing zero (DLdmw); the drain's call line is inclusive, not its own
    assert totals["DLmr"] == 11 and totals["DLdmr"] == 3 and "DLdmw" not in totals
    assert drain["DLmr"] == 8 and drain["DLdmr"] == 2 and drain["DLdmw"] == 0


def test_driver_renames_its_names_so_none_clashes_with_the_fixture() -> None:
    twin = next(t for t in validate_cache.TWINS if t.function == "relax")
    text = validate_cache.driver_text(twin, {"g_n": 1000}, Path("fixtures/c/real_world.c"))
    assert "static long aiscan_g_n = 1000;" in text
    assert "aiscan_grid.n = aiscan_g_n; aiscan_grid.u = aiscan_u;" in text
    assert "aiscan_target(&aiscan_grid, 0.5);" in text
    assert "aiscan_u= aiscan_array((size_t)(aiscan_g_n) * sizeof(double));" in text


def test_defines_are_rewritten_once_each() -> None:
    source = "#define M 512\n#define K 1024\nint x;\n"
    assert validate_cache._rewrite_defines(source, {"M": 8, "K": 4}) == (
        "#define M 8\n#define K 4\nint x;\n"
    )
    with pytest.raises(ValueError, match="N"):
        validate_cache._rewrite_defines(source, {"N": 8})


@pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("valgrind") is None,
    reason="needs gcc and valgrind",
)
def test_daxpy_measured_traffic_is_its_three_streams() -> None:
    twin = next(t for t in validate_cache.TWINS if t.function == "daxpy")
    n = 20_000  # 320 KB of x and y: more than the 256 KiB LL
    row = validate_cache.run_twin(twin, {"n": n})
    # x read, y read and written back: 24n bytes, plus a few lines of the driver's stack
    assert row.measured.read_bytes == pytest.approx(16 * n, abs=1024)
    assert row.measured.write_bytes == pytest.approx(8 * n, abs=1024)
    assert row.predicted.compulsory_bytes == 24 * n
    assert row.within
    table = validate_cache.markdown_table([row])
    assert "| daxpy | n=20000 |" in table and "1 of 1 within 15%." in table


def test_the_table_says_whether_the_measurement_lies_inside_the_stated_range() -> None:
    """docs/model.md's lu and syrk rows at n = 200: valgrind inside lu's range (14,267,712
    to 638,400), under both ends of syrk's (27,756,464 to 11,523,744)."""
    lu = next(t for t in validate_cache.TWINS if t.function == "kernel_lu")
    syrk = next(t for t in validate_cache.TWINS if t.function == "kernel_syrk")
    rows = [
        validate_cache.Row(
            twin,
            {"n": 200},
            validate_cache.Measurement(measured, 0),
            validate_cache.Prediction(placed, None, None, whole_cache_bytes=whole),
        )
        for twin, measured, placed, whole in (
            (lu, 638_848, 14_267_712.0, 638_400.0),
            (syrk, 8_665_856, 27_756_464.0, 11_523_744.0),
        )
    ]
    assert [r.in_range for r in rows] == [True, False]
    table = validate_cache.markdown_table(rows)
    assert "| 638,400 (0.999), yes |" in table and "| 11,523,744 (1.330), no |" in table
    assert "2 rows state a range; the measurement is inside 1." in table
