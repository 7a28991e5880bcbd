"""Bounded time and memory: hostile inputs end as located errors, fast, and cost no other
file its result (issue 35, items 12 and 13).

The command runs as a separate process under an address-space limit of its own, so that
a regression fails here quickly instead of taking the machine's memory."""

from __future__ import annotations

import faulthandler
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aiscan import scan
from aiscan.errors import Diagnostic
from aiscan.scan import Payload, Task, run_task

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DAXPY = FIXTURES / "c" / "daxpy.c"
PROCESS_LIMIT = 1536 * 1024 * 1024

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers need fork (POSIX)")


def aiscan(*argv: str, cwd: Path, stdin: int | None = None) -> tuple[int, str, str]:
    def limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (PROCESS_LIMIT, hard))

    completed = subprocess.run(
        [sys.executable, "-m", "aiscan", *argv],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )
    return completed.returncode, completed.stdout, completed.stderr


def test_a_file_over_the_memory_limit_is_a_located_error_and_the_others_stand(
    tmp_path: Path,
) -> None:
    """libcst's parser aborts the process on a large list literal (2.5 GB for 1 MB); in a
    parallel scan that was a broken pool, and every file's result was lost."""
    (tmp_path / "literal.py").write_text("x = [" + ", ".join(["1"] * 30_000) + "]\n")
    shutil.copy(DAXPY, tmp_path / "daxpy.c")
    shutil.copy(FIXTURES / "python" / "loops.py", tmp_path / "loops.py")
    code, out, err = aiscan(
        "analyze", ".", "--no-cache", "--memory-limit", "150", "-j", "2", cwd=tmp_path
    )
    assert code == 2
    assert err.splitlines() == [
        "literal.py:1:1: error: too large to analyze (memory limit 150 MiB, --memory-limit)"
    ]
    assert "function daxpy" in out and "function " in out.split("loops.py")[1]


def test_memory_the_analysis_can_catch_is_a_located_error_too(tmp_path: Path) -> None:
    """Where Python raises MemoryError, the worker lives on and says so for that file."""
    (tmp_path / "many.c").write_text("int x;\n" * 120_000)
    shutil.copy(DAXPY, tmp_path / "daxpy.c")
    code, out, err = aiscan(
        "analyze", ".", "--no-cache", "--memory-limit", "150", "-j", "1", cwd=tmp_path
    )
    assert code == 2
    assert err.splitlines() == [
        "many.c:1:1: error: too large to analyze (memory limit 150 MiB, --memory-limit)"
    ]
    assert "function daxpy" in out
    # The large file first in a fresh worker (alone, or the largest: taken first): its
    # error is rendered without importing the report's modules under the exhausted limit.
    for flags in ([], ["--format", "json"]):
        code, out, err = aiscan(
            "analyze", "many.c", "--no-cache", "--memory-limit", "150", *flags, cwd=tmp_path
        )
        assert (code, err.splitlines()) == (
            2,
            ["many.c:1:1: error: too large to analyze (memory limit 150 MiB, --memory-limit)"],
        )


def test_a_fifo_in_a_tree_is_refused_without_waiting_on_it(tmp_path: Path) -> None:
    """Hashing it for the cache opened it, and waited for a writer past any --timeout."""
    os.mkfifo(tmp_path / "pipe.c")
    shutil.copy(DAXPY, tmp_path / "daxpy.c")
    for command in ("analyze", "check"):
        code, _, err = aiscan(command, ".", "--timeout", "3", cwd=tmp_path)
        assert code == 2
        assert "pipe.c:1:1: error: not a regular file (a FIFO)" in err


def test_a_character_device_is_refused_as_a_source_stdin_device_file_and_header(
    tmp_path: Path,
) -> None:
    """`/dev/zero` was read until memory ran out (1.9 GB, then MemoryError)."""
    code, _, err = aiscan("analyze", "/dev/zero", cwd=tmp_path)
    assert (code, err) == (2, "/dev/zero:1:1: error: not a regular file (a character device)\n")
    with open("/dev/zero", "rb") as zero:
        code, _, err = aiscan("check", "-", "--stdin-filename", "k.c", cwd=tmp_path, stdin=zero)
    assert code == 2
    assert "k.c:1:1: error: stdin: over the 10 MiB limit for one source file" in err
    code, _, err = aiscan(
        "analyze", str(DAXPY), "--device-file", "/dev/zero", "--device", "x", cwd=tmp_path
    )
    assert code == 2
    assert "/dev/zero: cannot read device file: not a regular file (a character device)" in err


def test_a_cached_dependency_turned_fifo_or_device_is_not_read(tmp_path: Path) -> None:
    """A cache entry's dependencies are hashed to validate it: a FIFO there hung the scan,
    `/dev/zero` was read until memory ran out."""
    (tmp_path / "k.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.c").write_text(
        '#include "k.h"\nvoid f(int n, double *y) { for (int i = 0; i < n; i++) '
        "y[i] = SCALE * y[i]; }\n"
    )
    assert aiscan("analyze", "k.c", cwd=tmp_path)[0] == 0
    (tmp_path / "k.h").unlink()
    os.mkfifo(tmp_path / "k.h")
    code, _, err = aiscan("analyze", "k.c", "--timeout", "3", cwd=tmp_path)
    assert code == 2
    assert "k.c:1:1: error: #include 'k.h' not read: not a regular file (a FIFO)" in err
    (tmp_path / "k.h").unlink()
    (tmp_path / "k.h").write_text("#define SCALE 2.0\n")
    assert aiscan("analyze", "k.c", cwd=tmp_path)[0] == 0
    (tmp_path / "k.h").unlink()
    (tmp_path / "k.h").symlink_to("/dev/zero")  # read whole to hash it: 1.9 GB
    code, _, err = aiscan("analyze", "k.c", cwd=tmp_path)
    assert code == 2
    assert "k.c:1:1: error: #include 'k.h' refused: outside the include paths (-I)" in err


def test_a_huge_sparse_header_is_refused_unread(tmp_path: Path) -> None:
    """A 2 GB sparse header was read whole (2.1 GB)."""
    with open(tmp_path / "big.h", "wb") as header:
        header.truncate(2 * 1024**3)
    (tmp_path / "k.c").write_text('#include "big.h"\nint x;\n')
    code, _, err = aiscan("analyze", "k.c", "--no-cache", cwd=tmp_path)
    assert code == 2
    assert (
        "k.c:1:1: error: #include 'big.h' not read: file is 2147.5 MB, over the 10 MiB "
        "limit for one source file"
    ) in err


def test_a_huge_shift_in_an_if_is_wrapped_not_computed(tmp_path: Path) -> None:
    """pcpp computed `1 << 16000000000` as a Python integer (2.1 GB) before wrapping it to
    64 bits: the shift is 0, as the wrapped result and GCC's preprocessor say."""
    (tmp_path / "k.c").write_text(
        "#if (1 << 16000000000) || (3u << 64) || (-1 << 70)\n#error shifted\n#endif\n"
        "#if (1 << 3) == 8 && (1u << 63) != 0\n"
        "void f(int n, double *y) { for (int i = 0; i < n; i++) y[i] = 2.0 * y[i]; }\n"
        "#endif\n"
    )
    code, out, err = aiscan("analyze", "k.c", "--no-cache", "--memory-limit", "400", cwd=tmp_path)
    assert (code, err) == (0, "")
    assert "FLOPs       n   [mul n]" in out


def _flaky(path: str, marker: Path) -> Payload:
    """Kills its worker the first time it sees `once` (as a worker grown by earlier files
    might die) and every time it sees `always`."""
    seen = marker / Path(path).name
    if path == "always" or (path == "once" and not seen.exists()):
        seen.touch()
        faulthandler.disable()  # pytest's, which would print the abort's traceback
        os.abort()
    return {"ok": True, "output": path, "pid": os.getpid()}


def _failed(path: str, diagnostic: Diagnostic, options: object) -> Payload:
    return {"ok": False, "output": path, "errors": [diagnostic.format()]}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_dead_workers_file_is_retried_alone_and_no_other_result_is_lost(
    tmp_path: Path, jobs: int
) -> None:
    task = Task("flaky", _flaky, _failed, tmp_path, "")
    files = ["a", "once", "always", "b", "c"]
    payloads = run_task(files, task, jobs=jobs, memory_limit_mib=None)
    assert [p["output"] for p in payloads] == files
    assert [p["ok"] for p in payloads] == [True, True, False, True, True]
    (error,) = payloads[2]["errors"]
    assert "always:1:1" in error and "analysis crashed: its worker process died of SIGABRT" in error
    assert payloads[1]["pid"] != payloads[0]["pid"]  # a fresh worker for the retry


def _talk(path: str, options: object) -> Payload:
    """Write to standard error, then die on `dies` (a native crash's own report)."""
    print(f"worker note on {path}", file=sys.stderr)
    if path == "dies":
        faulthandler.disable()
        os.abort()
    return {"ok": True, "output": path}


def test_a_workers_standard_error_is_passed_on_less_a_fatal_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What a worker writes reaches this process's stderr, except what the file that
    killed it wrote: that file's error says it in one line."""
    task = Task("talk", _talk, _failed, None, "")
    payloads = run_task(["a", "dies", "b"], task, jobs=1, memory_limit_mib=None)
    assert [p["ok"] for p in payloads] == [True, False, True]
    lines = capsys.readouterr().err.splitlines()
    assert sorted(lines) == ["worker note on a", "worker note on b"]


def _deaf(path: str, options: object) -> Payload:
    """Native code that holds the worker past its own timer (here: the timer's signal
    blocked)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(30)
    return {"ok": True, "output": path}


def test_a_worker_held_past_the_time_limit_is_killed(tmp_path: Path) -> None:
    task = Task("deaf", _deaf, _failed, None, "")
    started = time.monotonic()
    (payload,) = run_task(["held.c"], task, jobs=1, timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert payload["ok"] is False
    assert "held.c:1:1: error: analysis timed out after 0.5 s (--timeout)" in payload["errors"][0]


@pytest.mark.parametrize(("files", "retired"), [(["a"], 0), (["a", "b"], 2)])
def test_a_one_file_run_does_not_collect_its_garbage(
    monkeypatch: pytest.MonkeyPatch, files: list[str], retired: int
) -> None:
    """Each file's garbage is collected for the files after it; a run of one file ends
    with it, so the collection (5 ms of a one-kernel run's CPU) is skipped."""
    calls: list[None] = []
    monkeypatch.setattr(scan, "can_fork", lambda: False)
    monkeypatch.setattr(scan, "retire_file_garbage", lambda: calls.append(None))
    task = Task("echo", _flaky, _failed, Path("unused"), "")
    payloads = run_task(files, task, jobs=1, memory_limit_mib=None)
    assert ([p["output"] for p in payloads], len(calls)) == (files, retired)
