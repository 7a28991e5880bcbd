"""Performance figures for aiscan (a script, not a test: timing assertions do not belong in CI).

Prints:
1. wall time of one `aiscan analyze` of a small kernel in a fresh process (startup included),
   analyzed and then served from the result cache;
2. throughput on a generated C file of about 10,000 lines of varied kernels, side by side
   with pycparser's bare parse of the same file (the floor any C analysis pays);
3. a generated tree of 1,000 files (C and Python, about 100,000 lines) scanned cold and
   warm with `aiscan analyze DIR`, side by side with pycparser's and libcst's bare parse
   of the same tree on the same number of worker processes, then each language's files
   alone in one process, analyzed as a worker does and parsed bare (which frontend to work on),
   beside the floor of any analysis built this way: one walk of each parsed tree, as many
   IR objects as the analysis builds, and the JSON report serialized.

4. `aiscan roofline --device h100` (a PNG) on 5, about 30 and about 100 loop nests of the
   fixtures and on every C and Python fixture at once (issue 33: under 10 s, linear in the
   number of nests): wall and CPU time, and CPU milliseconds per nest, which stay level
   when the time is linear. `--roofline-only` runs this step alone; with `--baseline DIR`
   that checkout runs each set too, alternated with this one (before and after figures
   under the same load).

With `--kerncraft PATH` (a `kerncraft` executable, installed from PyPI into its own venv),
step 1 starts with a paired comparison on daxpy, dgemv, a 2-D Jacobi sweep and naive dgemm:
aiscan's `analyze K.c --no-cache --device xeon-8480plus` and Kerncraft's `-p RooflineFLOP`
on the same loop (Kerncraft's Skylake-SP machine file,
`../shared/peers/kerncraft/SkylakeSP_Gold-6148.yml`), alternated in rounds so that both see
the same load, each with its wall time, CPU time and peak RSS. `--baseline DIR` (another
checkout, e.g. `git archive main | tar -x -C DIR`) runs that checkout's aiscan in each round
too: before and after figures under the same load.

Every child runs with byte-code caching on (PYTHONDONTWRITEBYTECODE removed from its
environment) after one untimed run, as an installed package runs: timing a run that compiles
its own modules measures the compiler.

Usage: python scripts/benchmark.py [--lines 10000] [--files 1000] [--repeat 3] [--skip-tree]
                                   [--kerncraft PATH] [--pairs 5] [--baseline DIR]
                                   [--single-only] [--roofline-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_OPERATORS = ("+", "-", "*")


def _elementwise(rng: random.Random, k: int) -> str:
    arrays = rng.sample(["a", "b", "c", "d", "e"], rng.randint(2, 4))
    terms = [f"{x}[i{'+' + str(rng.randint(1, 3)) if rng.random() < 0.3 else ''}]" for x in arrays]
    expression = f" {rng.choice(_OPERATORS)} ".join(terms)
    scale = rng.choice(["", f"{rng.randint(2, 9)}.0 * "])
    step = rng.choice(["i++", "i++", "i += 2"])
    params = ", ".join(f"const double *restrict {x}" for x in arrays)
    return (
        f"void ew{k}(long n, {params}, double *restrict out)\n{{\n"
        f"    for (long i = 0; i < n; {step})\n"
        f"        out[i] = {scale}{expression};\n}}\n"
    )


def _stencil(rng: random.Random, k: int) -> str:
    radius = rng.randint(1, 3)
    terms = ["a[i][j]"] + [f"a[i{s}{r}][j]" for r in range(1, radius + 1) for s in "+-"]
    terms += [f"a[i][j{s}{r}]" for r in range(1, radius + 1) for s in "+-"]
    return (
        f"void st{k}(int n, int m, const double a[n][m], double b[n][m])\n{{\n"
        f"    for (int t = 0; t < {rng.randint(2, 50)}; t++)\n"
        f"        for (int i = {radius}; i < n - {radius}; i++)\n"
        f"            for (int j = {radius}; j < m - {radius}; j++)\n"
        f"                b[i][j] = {rng.randint(1, 9)}.0 * ({' + '.join(terms)});\n}}\n"
    )


def _matmul(rng: random.Random, k: int) -> str:
    order = rng.choice(["ijk", "ikj", "jik"])
    loops = {"i": "i < m", "j": "j < n", "k": "p < q"}
    names = {"i": "i", "j": "j", "k": "p"}
    header = "".join(
        f"    {'    ' * d}for (int {names[c]} = 0; {loops[c]}; {names[c]}++)\n"
        for d, c in enumerate(order)
    )
    return (
        f"void mm{k}(int m, int n, int q, const float *restrict A, const float *restrict B,"
        f" float *restrict C)\n{{\n{header}"
        f"                C[i * n + j] += A[i * q + p] * B[p * n + j];\n}}\n"
    )


def _triangular(rng: random.Random, k: int) -> str:
    relation = rng.choice(["<=", "<"])
    return (
        f"double tr{k}(int n, const double *restrict L, const double *restrict x,"
        f" double *restrict y)\n{{\n    double total = 0.0;\n"
        f"    for (int i = 0; i < n; i++) {{\n        double s = 0.0;\n"
        f"        for (int j = 0; j {relation} i; j++)\n"
        f"            s += L[i * n + j] * x[j];\n"
        f"        y[i] = s / {rng.randint(2, 9)}.0;\n        total += s;\n    }}\n"
        f"    return total;\n}}\n"
    )


def _reduction(rng: random.Random, k: int) -> str:
    return (
        f"double rd{k}(int n, const double *restrict x, const int *restrict idx)\n{{\n"
        f"    double s = 0.0;\n    for (int i = 0; i < n; i++) {{\n"
        f"        if (x[i] > {rng.randint(0, 9)}.0)\n            s += x[idx[i]] * x[i];\n"
        f"        else\n            s -= x[i];\n    }}\n    return s;\n}}\n"
    )


_TEMPLATES = (_elementwise, _stencil, _matmul, _triangular, _reduction)


def generate(lines: int, seed: int = 1) -> str:
    """Varied kernels (random shapes, operators, offsets), no includes or comments, so that
    pycparser can parse the very same text bare."""
    rng = random.Random(seed)
    parts: list[str] = []
    count = 0
    k = 0
    while count < lines:
        text = rng.choice(_TEMPLATES)(rng, k)
        parts.append(text)
        count += text.count("\n") + 1
        k += 1
    return "\n".join(parts)


def _python_kernel(rng: random.Random, k: int) -> str:
    dtype = rng.choice(["Float64", "Float32"])
    kind = rng.randrange(4)
    if kind == 0:
        scale = rng.randint(2, 9)
        return (
            f'def axpy{k}(a: float, x: {dtype}[np.ndarray, "n"], '
            f'y: {dtype}[np.ndarray, "n"]):\n'
            f"    z = a * x + {scale}.0 * y\n    return z\n"
        )
    if kind == 1:
        return (
            f'def loops{k}(A: {dtype}[np.ndarray, "n m"], x: {dtype}[np.ndarray, "m"],'
            f' y: {dtype}[np.ndarray, "n"]):\n'
            "    for i in range(A.shape[0]):\n        s = 0.0\n"
            "        for j in range(A.shape[1]):\n            s += A[i, j] * x[j]\n"
            f"        y[i] = s / {rng.randint(2, 9)}.0\n"
        )
    if kind == 2:
        return (
            f'def softmax{k}(x: {dtype}[np.ndarray, "b n"]):\n'
            "    e = np.exp(x - x.max(axis=1, keepdims=True))\n"
            "    return e / e.sum(axis=1, keepdims=True)\n"
        )
    return (
        f'def matmul{k}(A: {dtype}[np.ndarray, "m k"], B: {dtype}[np.ndarray, "k n"]):\n'
        f"    return A @ B + {rng.randint(1, 9)}.0\n"
    )


def generate_tree(root: Path, files: int, seed: int = 2) -> int:
    """`files` source files, 70% C and 30% Python, about 100 lines each; returns lines."""
    rng = random.Random(seed)
    lines = 0
    for number in range(files):
        folder = root / f"pkg{number % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        if number % 10 < 7:
            text = generate(100, seed=seed * 100_000 + number)
            path = folder / f"kernels{number}.c"
        else:
            parts = ["import numpy as np", "from jaxtyping import Float32, Float64", ""]
            k = 0
            while sum(p.count("\n") + 1 for p in parts) < 100:
                parts.append(_python_kernel(rng, k))
                k += 1
            text = "\n".join(parts)
            path = folder / f"kernels{number}.py"
        path.write_text(text)
        lines += text.count("\n") + 1
    return lines


_BARE_TREE = (
    "import sys, time, os\nfrom concurrent.futures import ProcessPoolExecutor\n"
    "def parse(path):\n"
    "    text = open(path).read()\n"
    "    if path.endswith('.c'):\n"
    "        from pycparser import c_parser\n"
    "        c_parser.CParser().parse(text, path)\n"
    "    else:\n"
    "        import libcst\n"
    "        libcst.parse_module(text)\n"
    "    return 1\n"
    "if __name__ == '__main__':\n"
    "    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs)\n"
    "    start = time.perf_counter()\n"
    "    with ProcessPoolExecutor(int(sys.argv[2])) as pool:\n"
    "        sum(pool.map(parse, files, chunksize=8))\n"
    "    print(time.perf_counter() - start)\n"
)


def language_split(root: Path) -> None:
    """Each language's files alone, in one fresh process (`_language_split_worker`), and
    where the time above the bare parse goes, phase by phase: the profile that says what
    stands between the cold scan and its aim."""
    result = subprocess.run(
        [sys.executable, __file__, "--language-split", str(root)],
        check=True,
        capture_output=True,
        text=True,
    )
    print("  each language alone, one process (bare parse -> analyzed, as a worker does):")
    rows = [json.loads(line) for line in result.stdout.strip().splitlines()]
    for row in rows:
        bare, analyzed, floor = row["bare"], row["analyzed"], row["floor"]
        print(
            f"    {row['count']} {row['suffix']} files: {bare:.2f} s -> {analyzed:.2f} s"
            f"   ratio {analyzed / bare:.2f}; floor (walk, IR objects, JSON) "
            f"{floor:.2f} s = {floor / bare:.2f} x the parse;"
            f" peak RSS so far {row['peak']:.0f} MiB"
        )
        parse = row["phases"]["parse"]
        row["phases"]["the rest (reading, the task, garbage)"] = analyzed - sum(
            row["phases"].values()
        )
        split = ", ".join(
            f"{name} {seconds:.2f} s ({seconds / parse:.2f}x)"
            for name, seconds in sorted(row["phases"].items(), key=lambda item: -item[1])
            if name != "parse"
        )
        print(f"      above its parse ({parse:.2f} s, inside the analysis): {split}")
    parse = sum(row["phases"]["parse"] for row in rows)
    analyzed = sum(row["analyzed"] for row in rows)
    print(
        f"    both: {analyzed:.2f} s = {analyzed / parse:.2f} x their parse; at 1.8 x,"
        f" {max(analyzed - 1.8 * parse, 0):.2f} s of the {analyzed - parse:.2f} s above it"
        " would have to go"
    )


# Each stage of one file's analysis, as `_phase_clock` names it: (module, attribute, phase).
# The frontends look these up at call time, so replacing the attribute times every call;
# a phase's time excludes the timed phases inside it.
_PHASE_POINTS = (
    ("aiscan.frontends.c.frontend", "preprocess", "preprocess"),
    ("pycparser.c_parser", "CParser.parse", "parse"),
    ("libcst", "parse_module", "parse"),
    ("aiscan.frontends.python.frontend", "_check_with_cpython_parser", "CPython's parse"),
    ("aiscan.frontends.c.lower", "lower_file", "lower"),
    ("aiscan.frontends.python.frontend", "SourceNames", "positions and names"),
    ("aiscan.frontends.python.frontend", "_lowered_functions", "lower"),
    ("aiscan.frontends.python.frontend", "read_frameworks", "lower"),
    ("aiscan.pipeline", "analyze_module", "analyze"),
    ("aiscan.report.file_task", "_renderer", "report"),
)
# Points that return the function doing the phase's work (a file's renderer): that function
# is timed, not the call that makes it.
_PHASE_FACTORIES = frozenset({("aiscan.report.file_task", "_renderer")})


def _phase_clock() -> tuple[dict[str, float], Any]:
    """CPU seconds per phase from now on, filled in as files are analyzed (a few calls a file,
    so the clock itself costs nothing measurable), and a function that stops the clock."""
    import importlib

    seconds: dict[str, float] = {}
    inner: list[float] = []

    def timed(original: Any, phase: str) -> Any:
        def call(*arguments: Any, **keywords: Any) -> Any:
            start = time.process_time()
            inner.append(0.0)
            try:
                return original(*arguments, **keywords)
            finally:
                spent = time.process_time() - start
                seconds[phase] = seconds.get(phase, 0.0) + spent - inner.pop()
                if inner:
                    inner[-1] += spent

        return call

    originals = []
    for module_name, attribute, phase in _PHASE_POINTS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)
        originals.append((owner, name, original))
        if (module_name, attribute) in _PHASE_FACTORIES:
            setattr(owner, name, _timing_what_it_returns(original, phase, timed))
        else:
            setattr(owner, name, timed(original, phase))

    def stop() -> None:
        for owner, name, original in originals:
            setattr(owner, name, original)

    return seconds, stop


def _timing_what_it_returns(factory: Any, phase: str, timed: Any) -> Any:
    def call(*arguments: Any, **keywords: Any) -> Any:
        return timed(factory(*arguments, **keywords), phase)

    return call


def _language_split_worker(root: str) -> None:
    """Per language: the bare parse, the analysis as a worker runs it (with the time of each
    phase), and the floor of any analysis built this way (one walk of each parsed tree, as
    many IR objects as the analysis builds, the JSON report serialized), printed as one
    JSON line each. In this process's CPU seconds: the ratios hold on a loaded machine,
    where wall seconds count other processes' turns too."""
    import libcst
    import sympy.tensor.tensor  # noqa: F401  (imports excluded, as in a worker that has run)
    from pycparser import c_parser

    from aiscan.analysis.kernel import analyze_module
    from aiscan.collector import retire_file_garbage, tune_collector_for_batch
    from aiscan.options import PipelineOptions
    from aiscan.pipeline import FileResult, lower_source
    from aiscan.report.file_task import AnalyzeOptions, analyze_task
    from aiscan.report.json_report import file_entry

    tune_collector_for_batch()
    task = analyze_task(AnalyzeOptions(PipelineOptions(), None, "json", "compulsory"))
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(root) for f in names)
    for suffix in (".c", ".py"):
        chosen = [f for f in files if f.endswith(suffix)]
        task.run(chosen[0], task.options)  # first-use imports and caches, as a worker's
        texts = [Path(path).read_text() for path in chosen]
        start = time.process_time()
        trees = [
            c_parser.CParser().parse(text, path) if suffix == ".c" else libcst.parse_module(text)
            for text, path in zip(texts, chosen, strict=True)
        ]
        bare = time.process_time() - start
        # The parsed trees survive; collected and frozen now, as a worker's imports are, or
        # the first file's collection inside the clock would trace all of them.
        retire_file_garbage()
        phases, stop_clock = _phase_clock()
        start = time.process_time()
        for path in chosen:
            task.run(path, task.options)
            retire_file_garbage()
        analyzed = time.process_time() - start
        stop_clock()
        pairs = zip(texts, chosen, strict=True)
        modules = [lower_source(text, path, PipelineOptions()) for text, path in pairs]
        entries = [file_entry(FileResult(m.path, analyze_module(m), ()), None) for m in modules]
        objects = [o for m in modules for o in _ir_objects(m)]
        start = time.process_time()
        for tree in trees:
            _walk_c(tree) if suffix == ".c" else _walk_cst(tree)
        for kind, arguments in ((type(o), _init_arguments(o)) for o in objects):
            kind(*arguments)
        for entry in entries:
            json.dumps(entry)
        floor = time.process_time() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        row = {"suffix": suffix, "count": len(chosen), "bare": bare, "analyzed": analyzed}
        print(json.dumps(row | {"floor": floor, "peak": peak, "phases": phases}))


def _walk_c(node: Any) -> None:
    for child in node:
        _walk_c(child)


_CST_FIELDS: dict[type, list[str]] = {}


def _walk_cst(node: Any) -> None:
    import libcst

    kind = type(node)
    if kind not in _CST_FIELDS:
        _CST_FIELDS[kind] = [f.name for f in dataclasses.fields(kind)]
    for name in _CST_FIELDS[kind]:
        value = getattr(node, name)
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, libcst.CSTNode):
                _walk_cst(item)


def _ir_objects(value: Any) -> list[Any]:
    """Every distinct IR dataclass instance reachable from `value`."""
    found = []
    seen: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            if id(current) in seen:
                continue
            seen.add(id(current))
            found.append(current)
            for field in dataclasses.fields(current):
                part = getattr(current, field.name)
                stack += part if isinstance(part, tuple) else [part]
    return found


def _init_arguments(value: Any) -> list[Any]:
    return [getattr(value, f.name) for f in dataclasses.fields(value) if f.init]


def tree_figures(files: int, repeat: int) -> None:
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "tree"
        lines = generate_tree(root, files)
        cache = Path(directory) / "cache"
        bare = [
            measured_output([sys.executable, "-c", _BARE_TREE, str(root), str(jobs)])
            for _ in range(repeat)
        ]
        command = [
            sys.executable,
            "-m",
            "aiscan",
            "analyze",
            str(root),
            "--format",
            "json",
            "-o",
            os.devnull,
            "--jobs",
            str(jobs),
            "--cache-dir",
            str(cache),
        ]
        cold = []
        for _ in range(repeat):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(measured_output(command, check=False)[1])
        warm = [measured_output(command, check=False)[1] for _ in range(repeat)]
        _print_tree_figures(files, lines, jobs, bare, cold, warm)
        language_split(root)


def _print_tree_figures(
    files: int,
    lines: int,
    jobs: int,
    bare_runs: list[tuple[str, ProcessSample]],
    cold_runs: list[ProcessSample],
    warm_runs: list[ProcessSample],
) -> None:
    """Wall times are the parse's own clock (inside its process) and the whole aiscan
    process's; peak RSS is the largest process's, workers included."""
    bare = [float(output.strip()) for output, _ in bare_runs]
    cold, warm = [s.wall for s in cold_runs], [s.wall for s in warm_runs]
    print(f"generated tree: {files} files, {lines} lines, {jobs} worker processes")
    print(
        f"  bare parse (pycparser + libcst, same workers): {_best(bare):.2f} s  "
        f"({files / _best(bare):,.0f} files/s); {_peak([s for _, s in bare_runs])}"
    )
    print(
        f"  aiscan analyze, cold cache: {_best(cold):.2f} s  ({files / _best(cold):,.0f} files/s)"
        f"   ratio to bare parse {_best(cold) / _best(bare):.2f} (aim: <= 1.8);"
        f" {_peak(cold_runs)}"
    )
    print(
        f"  aiscan analyze, warm cache: {_best(warm):.2f} s  ({files / _best(warm):,.0f} files/s)"
        f"   (aim: < 2 s); {_peak(warm_runs)}"
    )


def _best(samples: list[float]) -> float:
    return min(samples)


@dataclasses.dataclass(frozen=True)
class ProcessSample:
    """One child process: wall seconds, CPU seconds (user + system) and peak RSS in MiB."""

    wall: float
    cpu: float
    peak_mib: float


def measured_run(command: list[str]) -> ProcessSample:
    """`measured_output` of a child whose output is not wanted."""
    return measured_output(command)[1]


def measured_output(
    command: list[str],
    check: bool = True,
    environment: dict[str, str] | None = None,
    cwd: str | None = None,
) -> tuple[str, ProcessSample]:
    """Run `command` to completion: its standard output, and its own resource usage from
    `wait4`, so the figures are the child's alone (not every child's so far, as
    RUSAGE_CHILDREN gives). Its peak RSS is that of the largest process among it and the
    workers it waited for (`wait4` folds reaped children into a child's usage)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, env=environment, cwd=cwd
        )
        output = child.stdout.read().decode() if child.stdout else ""
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if check and code != 0:
            errors.seek(0)
            raise RuntimeError(f"{command[0]} exited {code}: {errors.read().decode()[-500:]}")
    return output, ProcessSample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def _peak(samples: list[ProcessSample]) -> str:
    return f"peak RSS {max(s.peak_mib for s in samples):.0f} MiB"


def _aiscan_kernel_command(cache: str | None, device: str | None = None) -> list[str]:
    command = [sys.executable, "-m", "aiscan", "analyze", str(ROOT / "fixtures/c/daxpy.c")]
    command += ["--cache-dir", cache] if cache else ["--no-cache"]
    return command + (["--device", device] if device else [])


def single_kernel_samples(repeat: int, cached: bool = False) -> list[ProcessSample]:
    """A fresh `aiscan analyze` of one small kernel: analyzed (`--no-cache`), or served
    from a result cache that already holds it."""
    with tempfile.TemporaryDirectory() as cache:
        command = _aiscan_kernel_command(cache if cached else None)
        subprocess.run(command, check=True, capture_output=True)  # byte code, cache filled
        return [measured_run(command) for _ in range(repeat)]


@dataclasses.dataclass(frozen=True)
class PairedKernel:
    """One loop written twice: as a C function for aiscan, and in Kerncraft's kernel format
    (declarations, then the loop, no function around it), with the sizes Kerncraft needs."""

    name: str
    aiscan: str
    kerncraft: str
    sizes: tuple[tuple[str, int], ...]


PAIRED_KERNELS = (
    PairedKernel(
        "daxpy",
        "void daxpy(int n, double s, double a[n], const double b[n])\n{\n"
        "    for (int i = 0; i < n; ++i)\n        a[i] = a[i] + s * b[i];\n}\n",
        "double a[N], b[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n    a[i] = a[i] + s * b[i];\n",
        (("N", 1_000_000),),
    ),
    PairedKernel(
        "dgemv",
        "void dgemv(int n, int m, const double a[n][m], const double x[m], double y[n])\n{\n"
        "    for (int i = 0; i < n; ++i)\n        for (int j = 0; j < m; ++j)\n"
        "            y[i] = y[i] + a[i][j] * x[j];\n}\n",
        "double a[N][M], x[M], y[N];\n"
        "for (int i = 0; i < N; ++i)\n    for (int j = 0; j < M; ++j)\n"
        "        y[i] = y[i] + a[i][j] * x[j];\n",
        (("N", 1000), ("M", 1000)),
    ),
    PairedKernel(
        "jacobi2d",
        "void jacobi2d(int m, int n, double s, const double a[m][n], double b[m][n])\n{\n"
        "    for (int j = 1; j < m - 1; ++j)\n        for (int i = 1; i < n - 1; ++i)\n"
        "            b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * s;\n}\n",
        "double a[M][N], b[M][N];\ndouble s;\n"
        "for (int j = 1; j < M - 1; ++j)\n    for (int i = 1; i < N - 1; ++i)\n"
        "        b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * s;\n",
        (("N", 1000), ("M", 1000)),
    ),
    PairedKernel(
        "dgemm",
        "void dgemm(int n, const double A[n][n], const double B[n][n], double C[n][n])\n{\n"
        "    for (int i = 0; i < n; ++i)\n        for (int j = 0; j < n; ++j)\n"
        "            for (int k = 0; k < n; ++k)\n"
        "                C[i][j] = C[i][j] + A[i][k] * B[k][j];\n}\n",
        "double A[N][N], B[N][N], C[N][N];\n"
        "for (int i = 0; i < N; ++i)\n    for (int j = 0; j < N; ++j)\n"
        "        for (int k = 0; k < N; ++k)\n"
        "            C[i][j] = C[i][j] + A[i][k] * B[k][j];\n",
        (("N", 1000),),
    ),
)

# aiscan's device and the nearest machine file Kerncraft ships for it (no Sapphire Rapids
# file exists; Skylake-SP is the closest Intel server core with AVX-512).
PAIRED_DEVICE = "xeon-8480plus"
KERNCRAFT_MACHINE = ROOT.parent / "shared" / "peers" / "kerncraft" / "SkylakeSP_Gold-6148.yml"


@dataclasses.dataclass
class PairedSamples:
    """Each tool's samples on one kernel, taken in alternation: aiscan, the baseline
    checkout's aiscan (when one is given) and Kerncraft."""

    ours: list[ProcessSample] = dataclasses.field(default_factory=list)
    baseline: list[ProcessSample] = dataclasses.field(default_factory=list)
    theirs: list[ProcessSample] = dataclasses.field(default_factory=list)


def kerncraft_pairs(kerncraft: str, pairs: int, baseline: Path | None) -> dict[str, PairedSamples]:
    """aiscan (`analyze K.c --no-cache --device xeon-8480plus`) and Kerncraft's RooflineFLOP
    on each of `PAIRED_KERNELS`, alternated so that all see the same load; with `baseline`
    (another checkout's root) its aiscan runs in each round too, for before/after figures
    measured under the same load."""
    results: dict[str, PairedSamples] = {}
    with tempfile.TemporaryDirectory() as directory:
        for kernel in PAIRED_KERNELS:
            ours_file = Path(directory) / f"{kernel.name}.c"
            ours_file.write_text(kernel.aiscan)
            theirs_file = Path(directory) / "kerncraft" / f"{kernel.name}.c"
            theirs_file.parent.mkdir(exist_ok=True)
            theirs_file.write_text(kernel.kerncraft)
            theirs = [kerncraft, "-p", "RooflineFLOP", "-m", str(KERNCRAFT_MACHINE)]
            theirs += [str(theirs_file)]
            theirs += [part for name, size in kernel.sizes for part in ("-D", name, str(size))]
            ours = [sys.executable, "-m", "aiscan", "analyze", str(ours_file), "--no-cache"]
            ours += ["--device", PAIRED_DEVICE]
            runs: list[tuple[list[ProcessSample], list[str], dict[str, str] | None]] = []
            samples = PairedSamples()
            runs.append((samples.ours, ours, _checkout_environment(ROOT)))
            if baseline is not None:
                runs.append((samples.baseline, ours, _checkout_environment(baseline)))
            runs.append((samples.theirs, theirs, None))
            for _, command, environment in runs:  # byte code for each, untimed
                subprocess.run(
                    command, check=True, capture_output=True, env=environment, cwd=directory
                )
            for _ in range(pairs):
                for sink, command, environment in runs:
                    sink.append(measured_output(command, environment=environment, cwd=directory)[1])
            results[kernel.name] = samples
    return results


def _checkout_environment(root: Path) -> dict[str, str]:
    """The environment that makes `python -m aiscan` run the checkout at `root` (from a
    working directory that holds no `aiscan`: `-m` puts it first on the path)."""
    path = os.environ.get("PYTHONPATH")
    return os.environ | {"PYTHONPATH": str(root) + (os.pathsep + path if path else "")}


def _print_samples(label: str, samples: list[ProcessSample]) -> None:
    walls = [s.wall for s in samples]
    cpus = [s.cpu for s in samples]
    print(
        f"  {label}: wall best {min(walls):.3f} s, median {statistics.median(walls):.3f} s;"
        f" CPU median {statistics.median(cpus):.3f} s;"
        f" peak RSS {max(s.peak_mib for s in samples):.0f} MiB"
    )


def _paired_ratio(ours: list[ProcessSample], theirs: list[ProcessSample]) -> tuple[float, float]:
    """The median of the per-round wall ratios theirs / ours, and the ratio of the CPU medians."""
    walls = [t.wall / o.wall for o, t in zip(ours, theirs, strict=True)]
    cpu = statistics.median(t.cpu for t in theirs) / statistics.median(o.cpu for o in ours)
    return statistics.median(walls), cpu


def print_kerncraft_pairs(arguments: argparse.Namespace) -> None:
    """The paired table: per kernel each tool's median wall and CPU time and the ratios."""
    results = kerncraft_pairs(arguments.kerncraft, arguments.pairs, arguments.baseline)
    load = os.getloadavg()[0]
    print(
        f"one kernel, cold, whole process: aiscan --device {PAIRED_DEVICE} against Kerncraft"
        f" RooflineFLOP ({KERNCRAFT_MACHINE.name}), {arguments.pairs} rounds, medians;"
        f" load average {load:.1f} at the end"
    )
    wall_ratios = []
    for name, samples in results.items():
        print(f" {name}:")
        _print_samples("aiscan", samples.ours)
        if samples.baseline:
            _print_samples("aiscan, baseline checkout", samples.baseline)
        _print_samples("kerncraft", samples.theirs)
        wall, cpu = _paired_ratio(samples.ours, samples.theirs)
        wall_ratios.append(wall)
        line = f"  Kerncraft / aiscan: wall {wall:.1f}, CPU {cpu:.1f}"
        if samples.baseline:
            before_wall, before_cpu = _paired_ratio(samples.baseline, samples.theirs)
            line += f"; baseline: wall {before_wall:.1f}, CPU {before_cpu:.1f}"
        print(line)
    print(
        f"  median of the four wall ratios {statistics.median(wall_ratios):.1f},"
        f" lowest {min(wall_ratios):.1f}   (aim: median >= 10, none below 7)"
    )


def print_single_kernel(arguments: argparse.Namespace) -> None:
    if arguments.kerncraft:
        print_kerncraft_pairs(arguments)
    single = single_kernel_samples(arguments.repeat)
    print("single kernel (fixtures/c/daxpy.c), fresh process, no device:")
    _print_samples("analyzed (--no-cache)", single)
    _print_samples("served from the result cache", single_kernel_samples(arguments.repeat, True))


# The editor's path: a document opened (analyzed in a process that has imported the
# language server's modules), a hover on every loop nest with two devices, the document
# analyzed again after an edit, and the hovers again.
_EDITOR = (
    "import sys, time, json\n"
    "from pathlib import Path\n"
    "from aiscan.lsp.document import analyze_document, settings_for\n"
    "from aiscan.lsp.hover import hover_markdown\n"
    "def hovers(result, settings):\n"
    "    regions = [r for f in result.analysis.functions for r in f.regions\n"
    "               if r.region.kind == 'nest']\n"
    "    slowest = 0.0\n"
    "    for region in regions:\n"
    "        start = time.perf_counter()\n"
    "        hover_markdown(region, settings.devices, result.analysis.sizes, False)\n"
    "        slowest = max(slowest, time.perf_counter() - start)\n"
    "    return slowest\n"
    "rows = []\n"
    "for path in sys.argv[1:]:\n"
    "    text = Path(path).read_text()\n"
    "    settings = settings_for(path, ('h100', 'haswell'))\n"
    "    start = time.perf_counter()\n"
    "    result = analyze_document(text, path, settings)\n"
    "    opened = time.perf_counter() - start\n"
    "    if result.analysis is None:  # past the server's time limit (a loaded machine)\n"
    "        rows.append(None)\n"
    "        continue\n"
    "    first = hovers(result, settings)\n"
    "    start = time.perf_counter()\n"
    "    result = analyze_document(text + '\\n', path, settings)\n"
    "    edited = time.perf_counter() - start\n"
    "    rows.append([opened, first, edited, hovers(result, settings)])\n"
    "print(json.dumps(rows))\n"
)
_EDITOR_FILES = (
    "fixtures/c/dgemm_ijk.c",
    "fixtures/c/triangular.c",
    "fixtures/python/loops.py",
)


def print_editor(repeat: int) -> None:
    """Open, hover, edit, hover: the best of `repeat` fresh processes, and their peak RSS."""
    command = [sys.executable, "-c", _EDITOR, *(str(ROOT / f) for f in _EDITOR_FILES)]
    runs = [measured_output(command) for _ in range(repeat)]
    rows = [json.loads(output) for output, _ in runs]
    peak = _peak([sample for _, sample in runs])
    print(f"editor (the language server's document path, fresh process, imports excluded; {peak}):")
    for index, name in enumerate(_EDITOR_FILES):
        timed = [row[index] for row in rows if row[index] is not None]
        if not timed:
            print(f"  {Path(name).name}: past the language server's time limit in every run")
            continue
        best = [min(row[k] for row in timed) for k in range(4)]
        print(
            f"  {Path(name).name}: open {best[0] * 1000:.0f} ms, slowest first hover"
            f" {best[1] * 1000:.1f} ms, after an edit {best[2] * 1000:.0f} ms,"
            f" hover {best[3] * 1000:.1f} ms"
        )


def bare_parse_seconds(text: str, repeat: int) -> tuple[list[float], str]:
    code = (
        "import sys, time\nfrom pycparser import c_parser\n"
        "text = open(sys.argv[1]).read()\nstart = time.perf_counter()\n"
        "c_parser.CParser().parse(text, sys.argv[1])\n"
        "print(time.perf_counter() - start)\n"
    )
    return _timed_in_process(code, text, repeat)


# Throughput figures exclude imports (step 1 times a whole process). aiscan imports sympy at
# the first value that needs it (`aiscan.algebra`), which in these runs is inside the clock:
# import it, and the module sympy's `Add` imports at first use, before the clock starts, or
# the phase that first needs it pays the import (0.25 s, once).
_THROUGHPUT_IMPORTS = "import sympy, sympy.tensor.tensor\n"


def analysis_seconds(text: str, repeat: int) -> tuple[list[float], str]:
    code = (
        "import sys, time, io, contextlib\nfrom aiscan.cli import main\n"
        f"{_THROUGHPUT_IMPORTS}"
        "start = time.perf_counter()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['analyze', sys.argv[1], '--format', 'json', '--no-cache', '-o', '/dev/null'])\n"
        "print(time.perf_counter() - start)\n"
    )
    return _timed_in_process(code, text, repeat)


_PHASES = (
    "import sys, time, json, gc\n"
    "gc.freeze(); gc.set_threshold(200_000, 30, 30)\n"
    "from aiscan.frontends.c.preprocess import preprocess\n"
    "from aiscan.frontends.c.lower import lower_file\n"
    "from aiscan.analysis.kernel import analyze_module\n"
    "from aiscan.ir.nodes import Module\n"
    "from aiscan.pipeline import FileResult\n"
    "from aiscan.report.json_report import file_entry\n"
    "from pycparser import c_parser\n"
    f"{_THROUGHPUT_IMPORTS}"
    "path = sys.argv[1]\n"
    "text = open(path).read()\n"
    "t0 = time.perf_counter(); source = preprocess(text, path)\n"
    "t1 = time.perf_counter(); ast = c_parser.CParser().parse(source.text, path)\n"
    "t2 = time.perf_counter(); functions = lower_file(ast, path)\n"
    "t3 = time.perf_counter()\n"
    "module = Module(path, 'c', functions, (), (), ())\n"
    "analysis = analyze_module(module)\n"
    "t4 = time.perf_counter(); json.dumps(file_entry(FileResult(path, analysis, ()), None))\n"
    "t5 = time.perf_counter()\n"
    "print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)\n"
)


def phase_seconds(text: str, repeat: int) -> list[float]:
    """Best time of each phase of one analysis: preprocess, parse, lower, analyze, report."""
    rows, _ = _timed_rows(_PHASES, text, repeat)
    return [min(row[i] for row in rows) for i in range(5)]


def _timed_in_process(code: str, text: str, repeat: int) -> tuple[list[float], str]:
    """Time inside a fresh interpreter, imports excluded (they are measured by step 1),
    and the interpreters' peak RSS."""
    rows, samples = _timed_rows(code, text, repeat)
    return [row[0] for row in rows], _peak(samples)


def _timed_rows(code: str, text: str, repeat: int) -> tuple[list[list[float]], list[ProcessSample]]:
    """The numbers `code` prints on its last line, once per fresh interpreter, given
    `text` as a C file, and each interpreter's own usage."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "generated.c"
        path.write_text(text)
        rows, samples = [], []
        for _ in range(repeat):
            output, sample = measured_output([sys.executable, "-c", code, str(path)])
            rows.append([float(x) for x in output.strip().splitlines()[-1].split()])
            samples.append(sample)
        return rows, samples


ROOFLINE_SETS: dict[str, tuple[str, ...]] = {
    "5 nests": ("c/daxpy.c", "c/dgemm_ijk.c", "c/stencil_cross9.c", "c/triad.c",
                "c/jacobi2d_time.c"),
    "about 30": ("c/while_loops.c", "c/loop_conditions.c", "c/loop_forms.c",
                 "c/time_stencil.c", "c/triangular.c"),
    "about 100": ("c/while_loops.c", "c/loop_conditions.c", "c/loop_forms.c",
                  "c/index_conditions.c", "c/polyhedral_footprints.c", "python/library.py",
                  "python/views.py", "python/grids.py"),
    "every fixture": ("c", "python"),
}  # fmt: skip
"""Fixture sets for the roofline's curve, C and Python mixed (paths under `fixtures/`)."""


def roofline_samples(
    paths: tuple[str, ...], root: Path, folder: str
) -> tuple[int | None, ProcessSample]:
    """One `aiscan roofline` of the checkout at `root` on the fixtures `paths`: the nests it
    drew and the process's figures (it exits 2: some fixtures are errors on purpose)."""
    command = [sys.executable, "-m", "aiscan", "roofline"]
    command += [str(ROOT / "fixtures" / p) for p in paths]
    command += ["--device", "h100", "-o", str(Path(folder) / "roofline.png")]
    output, sample = measured_output(
        command, check=False, environment=_checkout_environment(root), cwd=folder
    )
    found = re.search(r"\((\d+) loop nests? on", output)
    return (int(found.group(1)) if found else None), sample


def print_roofline(repeat: int, baseline: Path | None) -> None:
    """The roofline on growing fixture sets: its time and CPU milliseconds per nest."""
    roots = {"this checkout": ROOT} | ({"baseline": baseline} if baseline else {})
    print(f"aiscan roofline --device h100 -o x.png, best of {repeat} (aim: every fixture < 10 s):")
    with tempfile.TemporaryDirectory(prefix="aiscan-roofline-") as folder:
        for label, paths in ROOFLINE_SETS.items():
            for name, root in roots.items():
                roofline_samples(("c/daxpy.c",), root, folder)  # byte code, untimed
                runs = [roofline_samples(paths, root, folder) for _ in range(repeat)]
                nests = runs[0][0]
                wall = min(s.wall for _, s in runs)
                cpu = min(s.cpu for _, s in runs)
                each = f"{1000 * cpu / nests:.0f} ms CPU a nest" if nests else "no nest drawn"
                print(
                    f"  {label} ({nests} nests), {name}: wall {wall:.2f} s, CPU {cpu:.2f} s,"
                    f" {each}; {_peak([s for _, s in runs])}; load {os.getloadavg()[0]:.1f}"
                )


def main() -> None:
    sys.path.insert(0, str(ROOT))  # this checkout's aiscan, installed or not
    if sys.argv[1:2] == ["--language-split"]:  # the fresh process of `language_split`
        _language_split_worker(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--skip-tree", action="store_true")
    parser.add_argument("--kerncraft", help="a kerncraft executable, for the paired comparison")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout's root, timed in each Kerncraft round and on each roofline set",
    )
    parser.add_argument("--single-only", action="store_true", help="stop after step 1")
    parser.add_argument("--roofline-only", action="store_true", help="only step 4")
    arguments = parser.parse_args()
    # Children run as an installed package does: with byte code cached (see the docstring).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    if arguments.roofline_only:
        print_roofline(arguments.repeat, arguments.baseline)
        return
    print_single_kernel(arguments)
    print_editor(arguments.repeat)
    if arguments.single_only:
        return
    text = generate(arguments.lines)
    lines = text.count("\n") + 1
    bare, bare_peak = bare_parse_seconds(text, arguments.repeat)
    full, full_peak = analysis_seconds(text, arguments.repeat)
    print(f"generated C file: {lines} lines, {text.count('{') // 1} blocks")
    print(
        f"  pycparser bare parse: {_best(bare):.3f} s  ({lines / _best(bare):,.0f} lines/s)"
        f"; {bare_peak}"
    )
    print(
        f"  aiscan analyze (JSON): {_best(full):.3f} s  ({lines / _best(full):,.0f} lines/s)"
        f"; {full_peak}"
    )
    print(f"  ratio analyze / bare parse: {_best(full) / _best(bare):.2f}   (aim: <= 1.5)")
    phases = phase_seconds(text, arguments.repeat)
    names = ("preprocess", "parse", "lower", "analyze", "report")
    split = ", ".join(f"{n} {t:.2f} s" for n, t in zip(names, phases, strict=True))
    print(f"  where the time goes: {split}")
    if not arguments.skip_tree:
        tree_figures(arguments.files, arguments.repeat)
    print_roofline(arguments.repeat, arguments.baseline)


if __name__ == "__main__":
    main()
