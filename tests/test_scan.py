"""Whole trees: discovery, parallel workers, deterministic order, the cache, time limits."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from aiscan import collector
from aiscan.cli import main
from aiscan.scan import Payload, Task, run_task

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def analyze_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(["analyze", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "kernels" / "deep").mkdir(parents=True)
    for name in ("daxpy.c", "triad.c", "dgemm_ijk.c", "stencil_cross9.c"):
        shutil.copy(FIXTURES / "c" / name, root / "kernels" / name)
    shutil.copy(FIXTURES / "c" / "sum_squares.c", root / "kernels" / "deep" / "sum.c")
    shutil.copy(FIXTURES / "python" / "loops.py", root / "kernels" / "loops.py")
    (root / "README.txt").write_text("not source\n")
    os.symlink("..", root / "kernels" / "deep" / "up")  # a link loop must not trap the walk
    return root


def paths(report: dict[str, object]) -> list[str]:
    files = report["files"]
    assert isinstance(files, list)
    return [Path(f["path"]).name for f in files]


def test_directories_are_scanned_in_a_stable_order(
    capsys: pytest.CaptureFixture[str], tree: Path
) -> None:
    code, serial = analyze_json(capsys, str(tree), "--jobs", "1", "--no-cache")
    assert code == 0
    assert paths(serial) == [
        "daxpy.c",
        "sum.c",
        "dgemm_ijk.c",
        "loops.py",
        "stencil_cross9.c",
        "triad.c",
    ]
    code, parallel = analyze_json(capsys, str(tree), "--jobs", "2", "--no-cache")
    assert code == 0
    assert parallel == serial


def test_gitignore_is_respected(capsys: pytest.CaptureFixture[str], tree: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("kernels/deep/\n*.py\n")
    code, report = analyze_json(capsys, str(tree), "--no-cache")
    assert code == 0
    assert paths(report) == ["daxpy.c", "dgemm_ijk.c", "stencil_cross9.c", "triad.c"]


def test_cache_serves_unchanged_files_and_never_stale_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    source = tmp_path / "k.c"
    header = tmp_path / "k.h"
    header.write_text("#define SCALE 2.0\n")
    source.write_text(
        '#include "k.h"\nvoid f(int n, double *restrict y, const double *'
        "restrict x) { for (int i = 0; i < n; i++) y[i] = SCALE * x[i]; }\n"
    )
    common = ("--cache-dir", str(cache), "--jobs", "1")

    def flops(*extra: str) -> str:
        code, report = analyze_json(capsys, str(source), *common, *extra)
        assert code == 0
        files = report["files"]
        assert isinstance(files, list)
        return str(files[0]["functions"][0]["flops"]["total"])

    assert flops() == "n"
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 1
    # A hit is served from the entry: tamper with it to prove the entry is what is read.
    entry = json.loads(entries[0].read_text())
    output = json.loads(entry["payload"]["output"])
    output["functions"][0]["flops"]["total"] = "from-cache"
    entry["payload"]["output"] = json.dumps(output)
    entries[0].write_text(json.dumps(entry))
    assert flops() == "from-cache"
    # Changing the file, an option, or an included header is a miss.
    source.write_text(source.read_text().replace("SCALE * x[i]", "SCALE * x[i] + 1.0"))
    assert flops() == "2*n"
    assert flops("--special-weight", "3") == "2*n"
    assert len(list(cache.rglob("*.json"))) == 3
    header.write_text("#define SCALE 2.0 * 3.0\n")
    assert flops() == "3*n"


def test_cache_key_includes_device_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    device = tmp_path / "lab.toml"

    def write_device(bandwidth: float) -> None:
        device.write_text(
            'schema = 1\nname = "Lab"\naliases = ["lab"]\nkind = "cpu"\nwrite_allocate = false\n'
            '[peaks.fp64]\ndense_flops_per_s = 1e12\nsource = "ERT"\n'
            f'[[memory]]\nname = "DRAM"\nlevel = "dram"\nbandwidth_bytes_per_s = {bandwidth}\n'
            'capacity_bytes = 1e11\nsource = "STREAM"\n'
        )

    def attainable() -> float:
        code, report = analyze_json(
            capsys,
            str(FIXTURES / "c" / "daxpy.c"),
            "--device",
            "lab",
            "--device-file",
            str(device),
            "--cache-dir",
            str(tmp_path / "cache"),
        )
        assert code == 0
        files = report["files"]
        assert isinstance(files, list)
        return float(files[0]["functions"][0]["nests"][0]["placement"][0]["attainable_flops_per_s"])

    write_device(1.2e11)
    assert attainable() == pytest.approx(1e10)
    write_device(2.4e11)
    assert attainable() == pytest.approx(2e10)


def test_time_limit_gives_a_located_error_and_the_scan_goes_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = tmp_path / "slow.c"
    slow.write_text((FIXTURES / "c" / "stencil_cross9.c").read_text())
    code = main(
        [
            "analyze",
            str(slow),
            str(FIXTURES / "c" / "daxpy.c"),
            "--timeout",
            "0.001",
            "--no-cache",
            "--jobs",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{slow}:1:1: error: analysis timed out after 0.001 s (--timeout)" in err


def test_no_sources_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    assert main(["analyze", str(tmp_path)]) == 2
    err = capsys.readouterr().err  # the languages read, CUDA too, with their suffixes
    assert "no C (.c, .h), Python (.py, .pyi) or CUDA (.cu, .cuh) source files" in err


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_a_scan_served_from_the_cache_never_imports_sympy(
    tree: Path, tmp_path: Path, output_format: str
) -> None:
    """Warm scans (pre-commit, editors re-running CI) must not pay for the analysis."""
    cache = tmp_path / "cache"
    command = ["analyze", str(tree), "--format", output_format, "--cache-dir", str(cache)]

    def script(marker: Path) -> str:
        """The scan, noting in `marker` an import of sympy in this process or a worker
        (forked, so the audit hook is theirs too)."""
        return (
            "import sys, io, contextlib, os\n"
            "def hook(event, args):\n"
            "    if event == 'import' and args[0] == 'sympy':\n"
            f"        open({str(marker)!r}, 'a').close()\n"
            "sys.addaudithook(hook)\n"
            "from aiscan.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    code = main({command!r})\n"
            f"print(code, os.path.exists({str(marker)!r}), len(out.getvalue()))\n"
        )

    runs = [
        subprocess.run(
            [sys.executable, "-c", script(tmp_path / f"sympy-{run}")],
            capture_output=True,
            text=True,
            check=True,
        )
        for run in range(2)
    ]
    cold_code, cold_sympy, cold_length = runs[0].stdout.split()
    warm_code, warm_sympy, warm_length = runs[1].stdout.split()
    assert (cold_code, cold_sympy) == ("0", "True")
    assert (warm_code, warm_sympy) == ("0", "False")
    assert warm_length == cold_length  # the same report, straight from the cache


class _Cyclic:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.itself = self


def _leave_a_cycle(path: str, refs: list[weakref.ref[_Cyclic]]) -> Payload:
    """Leave a cycle, and say which cycles earlier files left (in this worker) are alive."""
    alive = [ref() is not None for ref in refs]
    refs.append(weakref.ref(_Cyclic()))
    return {"ok": True, "output": alive, "frozen": gc.get_freeze_count()}


@pytest.mark.parametrize("batch", [True, False])
def test_batch_runs_collect_each_files_cycles_after_it(
    monkeypatch: pytest.MonkeyPatch, batch: bool
) -> None:
    monkeypatch.setattr(collector, "_retire_each_file", batch)
    refs: list[weakref.ref[_Cyclic]] = []
    task = Task("cycles", _leave_a_cycle, lambda *a: {}, refs, "")
    frozen = gc.get_freeze_count()
    gc.disable()  # so that only the per-file retirement can collect (in the worker too)
    try:
        payloads = run_task(["a.c", "b.c", "c.c"], task, jobs=1)
    finally:
        gc.enable()
    alive = payloads[-1]["output"]  # one worker ran the three files in turn
    assert len(alive) == 2
    if batch:
        assert alive == [False, False]
        assert payloads[-1]["frozen"] > frozen  # the survivors are out of later scans
    else:
        assert alive == [True, True]


def _order_seen(path: str, seen: list[str]) -> Payload:
    """The files this worker ran before `path`, and `path` itself."""
    seen.append(Path(path).name)
    return {"ok": True, "path": Path(path).name, "seen": list(seen)}


def test_the_largest_files_start_first_and_payloads_keep_the_given_order(
    tmp_path: Path,
) -> None:
    sizes = {"small.c": 10, "large.c": 5000, "missing.c": None, "medium.c": 800}
    files = []
    for name, size in sizes.items():
        if size is not None:
            (tmp_path / name).write_text("x" * size)
        files.append(str(tmp_path / name))
    task = Task("order", _order_seen, lambda *a: {}, [], "")
    payloads = run_task(files, task, jobs=1)  # one worker: it runs the files in turn
    assert [p["path"] for p in payloads] == list(sizes)
    last = max(payloads, key=lambda p: len(p["seen"]))  # the file the worker ran last
    assert last["seen"] == ["large.c", "medium.c", "small.c", "missing.c"]


_meanwhile_pids: list[int] = []


def _saw_meanwhile(path: str, options: object) -> Payload:
    """What the worker's copy of this module holds when it runs `path`."""
    return {"ok": True, "meanwhile": list(_meanwhile_pids), "pid": os.getpid()}


def test_the_parents_own_work_runs_once_while_the_workers_run(tmp_path: Path) -> None:
    """`meanwhile` (the plot's imports) runs in this process, once, after the workers were
    forked: none of them inherits what it did."""
    files = [str(tmp_path / f"k{k}.c") for k in range(4)]
    for path in files:
        Path(path).write_text("void f(void) {}\n")
    task = Task("meanwhile", _saw_meanwhile, lambda *a: {}, [], "")
    _meanwhile_pids.clear()
    payloads = run_task(files, task, jobs=2, meanwhile=lambda: _meanwhile_pids.append(os.getpid()))
    assert _meanwhile_pids == [os.getpid()]
    assert all(p["pid"] != os.getpid() and p["meanwhile"] == [] for p in payloads)
