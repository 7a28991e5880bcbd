"""System headers and the preprocessor: stubs, missing headers, the active `#if` branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy

from aiscan.cli import main
from aiscan.errors import Severity
from aiscan.ir.symbols import size_symbol
from aiscan.pipeline import PipelineOptions, analyze_text

NEW_STUBS = (
    "unistd.h",
    "sys/time.h",
    "sys/types.h",
    "sys/stat.h",
    "time.h",
    "errno.h",
    "fcntl.h",
    "pthread.h",
    "stdarg.h",
    "inttypes.h",
    "immintrin.h",
    "omp.h",
)
KERNEL = "void f(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 2.0 * x[i]; }\n"


def _analyze(text: str) -> tuple[object, tuple[object, ...]]:
    result = analyze_text(text, "k.c", PipelineOptions())
    return result.analysis, result.diagnostics


@pytest.mark.parametrize("header", NEW_STUBS)
@pytest.mark.parametrize("macro", [False, True], ids=["fast-path", "preprocessor"])
def test_stub_headers_analyze_cleanly(header: str, macro: bool) -> None:
    text = f"#include <{header}>\n" + ("#define TWO 2\n" if macro else "") + KERNEL
    analysis, diagnostics = _analyze(text)
    assert analysis is not None, diagnostics
    assert diagnostics == ()
    (function,) = analysis.functions  # type: ignore[attr-defined]
    assert function.flops.total == size_symbol("n")


def test_stub_declarations_are_usable() -> None:
    """The types the stubs declare parse in the user's code (timers, threads, SIMD types)."""
    text = (
        "#include <sys/time.h>\n#include <pthread.h>\n#include <immintrin.h>\n"
        "#include <inttypes.h>\n#include <unistd.h>\n#include <stdarg.h>\n"
        "double now(void) { struct timeval t; gettimeofday(&t, 0);"
        " return t.tv_sec + t.tv_usec * 1e-6; }\n"
        "void g(int64_t n, double *x) { __m256d v; pthread_mutex_t m; ssize_t k = 0;"
        " for (int64_t i = 0; i < n; i++) x[i] = 2.0 * x[i]; }\n"
    )
    analysis, diagnostics = _analyze(text)
    assert analysis is not None, diagnostics
    assert diagnostics == ()


def test_missing_system_header_is_a_warning() -> None:
    analysis, diagnostics = _analyze("#include <vendor/blas_ext.h>\n" + KERNEL)
    assert analysis is not None
    (warning,) = diagnostics
    assert warning.severity is Severity.WARNING  # type: ignore[attr-defined]
    assert warning.format() == (  # type: ignore[attr-defined]
        "k.c:1:1: warning: header <vendor/blas_ext.h> not found, treated as empty"
    )


def test_parse_failure_after_a_missing_header_names_it() -> None:
    text = "#include <vendor/types.h>\nvoid f(int n, real_t *x) { x[0] = 1.0; }\n"
    analysis, diagnostics = _analyze(text)
    assert analysis is None
    (error,) = diagnostics
    assert error.severity is Severity.ERROR  # type: ignore[attr-defined]
    assert "<vendor/types.h>" in error.message  # type: ignore[attr-defined]
    assert error.format().startswith("k.c:2:")  # type: ignore[attr-defined]


def test_missing_quoted_header_stays_an_error() -> None:
    analysis, diagnostics = _analyze('#include "mine.h"\n' + KERNEL)
    assert analysis is None
    assert diagnostics[0].severity is Severity.ERROR  # type: ignore[attr-defined]


def test_warnings_reach_every_output_without_changing_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "k.c"
    source.write_text("#include <unistd.h>\n#include <nowhere.h>\n" + KERNEL)
    warning = f"{source}:2:1: warning: header <nowhere.h> not found, treated as empty"
    assert main(["analyze", str(source), "--no-cache"]) == 0
    assert warning in capsys.readouterr().out
    assert main(["analyze", str(source), "--no-cache", "--format", "json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["status"] == "analyzed"
    assert entry["diagnostics"] == [
        {
            "file": str(source),
            "line": 2,
            "column": 1,
            "severity": "warning",
            "message": "header <nowhere.h> not found, treated as empty",
        }
    ]
    assert main(["check", str(source), "--no-cache", "--select", "AIS008"]) == 0
    assert warning in capsys.readouterr().err


def _defaults(text: str) -> dict[str, int]:
    analysis, diagnostics = _analyze(text)
    assert analysis is not None, diagnostics
    return dict(analysis.module.size_defaults)  # type: ignore[attr-defined]


def test_sizes_come_from_the_active_branch_only() -> None:
    text = (
        "#define LARGE\n#ifdef LARGE\n#define N 1200\n#endif\n"
        "#ifdef HUGE\n#define N 3000\n#endif\n"
        "void f(double *x) { for (int i = 0; i < N; i++) x[i] = 2.0 * x[i]; }\n"
    )
    assert _defaults(text) == {"N": 1200}
    assert _defaults(text.replace("#define LARGE\n", "#define HUGE\n")) == {"N": 3000}
    assert _defaults(text.replace("#define LARGE\n", "")) == {}


def test_undef_drops_a_default_and_a_redefinition_replaces_it() -> None:
    kernel = "void f(double *x) { for (int i = 0; i < N; i++) x[i] = 2.0 * x[i]; }\n"
    assert _defaults("#define N 10\n#undef N\n" + kernel) == {}
    assert _defaults("#define N 10\n#undef N\n#define N 20\n" + kernel) == {"N": 20}


def test_stub_macros_are_not_sizes() -> None:
    """`EXIT_FAILURE`, `CLOCKS_PER_SEC` are the library's constants, not the user's sizes."""
    text = "#include <stdlib.h>\n#include <time.h>\n#define N 64\n" + KERNEL
    assert _defaults(text) == {"N": 64}


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "c"


@pytest.mark.parametrize(
    ("defines", "expected"),
    [
        ({}, {"N": 250, "TSTEPS": 100}),
        ({"SMALL_DATASET": ""}, {"N": 90, "TSTEPS": 40}),
        ({"LARGE_DATASET": "1"}, {"N": 1300, "TSTEPS": 500}),
        ({"N": "64"}, {"N": 64, "TSTEPS": 100}),  # -D N=64 wins over the dataset's N
    ],
)
def test_polybench_dataset_macros_pick_the_default_sizes(
    defines: dict[str, str], expected: dict[str, int]
) -> None:
    path = FIXTURES / "polybench_jacobi_2d.c"
    options = PipelineOptions(include_dirs=(str(FIXTURES / "polybench"),), defines=defines)
    result = analyze_text(path.read_text(), str(path), options)
    assert result.analysis is not None, result.diagnostics
    defaults = dict(result.analysis.module.size_defaults)
    defaults.pop("POLYBENCH_PADDING_FACTOR")
    assert defaults == expected


def test_polybench_scalar_loop_bounds_count_in_the_macro_sizes() -> None:
    """With POLYBENCH_USE_SCALAR_LB the loops run to the macros (`N`), not to `n`."""
    path = FIXTURES / "polybench_jacobi_2d.c"
    options = PipelineOptions(
        include_dirs=(str(FIXTURES / "polybench"),), defines={"POLYBENCH_USE_SCALAR_LB": "1"}
    )
    result = analyze_text(path.read_text(), str(path), options)
    assert result.analysis is not None, result.diagnostics
    (function,) = result.analysis.functions
    n, steps = size_symbol("N"), size_symbol("TSTEPS")
    assert (function.flops.total - 10 * steps * (n - 2) ** 2).expand() == 0


def test_a_polybench_style_file_analyzes_with_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's criterion: <unistd.h> and <sys/time.h> included, exit 0, no warning."""
    source = FIXTURES / "polybench_gemm.c"
    code = main(["analyze", str(source), "-I", str(FIXTURES / "polybench"), "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0
    assert "warning" not in out
    assert "FLOPs       3*ni*nj*nk + ni*nj" in out


def test_not_equal_with_a_larger_step_is_a_named_trip() -> None:
    """`i != n; i += 2` ends only when it lands on n: no closed form, never a guess."""
    text = "void f(int n, double *x) { for (int i = 0; i != n; i += 2) x[i] = 2.0 * x[i]; }\n"
    analysis, _ = _analyze(text)
    assert analysis is not None
    (function,) = analysis.functions  # type: ignore[attr-defined]
    assert [u.kind.value for u in function.unknowns] == ["data-dependent-bound"]


def test_polybench_c99_prototypes_give_the_same_counts() -> None:
    """With POLYBENCH_USE_C99_PROTO the array parameters are VLAs in the run-time sizes."""
    path = FIXTURES / "polybench_gemm.c"
    options = PipelineOptions(
        include_dirs=(str(FIXTURES / "polybench"),), defines={"POLYBENCH_USE_C99_PROTO": ""}
    )
    result = analyze_text(path.read_text(), str(path), options)
    assert result.analysis is not None, result.diagnostics
    gemm = next(f for f in result.analysis.functions if f.function.name == "kernel_gemm")
    ni, nj, nk = (size_symbol(s) for s in ("ni", "nj", "nk"))
    assert (gemm.flops.total - (3 * ni * nj * nk + ni * nj)).expand() == 0
    expected = 16 * ni * nj + 8 * ni * nk + 8 * nj * nk
    assert (gemm.traffic["compulsory"].total(False) - expected).expand() == 0


_BRANCHES = (
    "#define N 1000\n#if N > 100\n#define BIG 1\n#else\n#define BIG 0\n#endif\n"
    '#if NEVER_DEFINED\n#error "never"\n#endif\n'
    "void f(double *restrict a) {\n#if BIG\n"
    "  for (int i = 0; i < N; i++) a[i] = 2.0 * a[i];\n#else\n"
    "  for (int i = 0; i < N; i++) a[i] = 2.0 * a[i] + 1.0;\n#endif\n}\n"
)


@pytest.mark.parametrize(("defines", "flops"), [({}, "N"), ({"N": "50"}, "2*N")])
def test_if_sees_a_symbolic_size_as_its_value(defines: dict[str, str], flops: str) -> None:
    """`#define N 1000` keeps `N` symbolic in the code, but `#if N > 100` takes the branch
    the compiler takes (a `-D N=50` the other); an identifier defined nowhere is 0."""
    options = PipelineOptions(defines=defines)
    analysis = analyze_text(_BRANCHES, "k.c", options).analysis
    assert analysis is not None
    (function,) = analysis.functions  # type: ignore[attr-defined]
    assert function.flops.total == sympy.sympify(flops, locals={"N": size_symbol("N")})


def test_an_active_error_directive_is_a_located_diagnostic(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pcpp printed `#error` to stderr in its own format; it is one of our diagnostics."""
    text = '#define MODE 2\n#if MODE == 2\n#error "mode 2 is not written yet"\n#endif\n' + KERNEL
    _, diagnostics = _analyze(text)
    assert [d.format() for d in diagnostics] == [  # type: ignore[attr-defined]
        'k.c:3:1: error: #error "mode 2 is not written yet"'
    ]
    assert capsys.readouterr().err == ""
