"""How long `aiscan roofline` takes to draw, by the number of kernels (a script, not a test).

Analyzes every C and Python fixture once, as `aiscan roofline fixtures/c fixtures/python
--device h100` does, then times the plot alone (`render_roofline` to a PNG) on the first
5, 19, 35, 100 and all of those kernels, so that the figures show how drawing grows with
the number of kernels, apart from the analysis that precedes it. With `--whole`, also the
whole process on every fixture (analysis included), as a user runs it.

A plot that runs past `--limit` seconds is stopped and printed as `> LIMIT s`.

Usage: python scripts/benchmark_plot.py [--repeat 1] [--limit 120] [--whole] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ("fixtures/c", "fixtures/python")
COUNTS = (5, 19, 35, 100)


def fixture_kernels(device: str) -> tuple[list[Any], list[Any], float]:
    """The `KernelSpec`s of every fixture and the devices, as `aiscan roofline` builds them,
    and the seconds that took."""
    from aiscan.cli import _config, _parser, _pipeline_options, _placement_options
    from aiscan.discovery import discover
    from aiscan.pipeline import analyze_path
    from aiscan.roofline.kernels import module_kernels
    from aiscan.roofline.plot import DEFAULT_SIZE_RANGE

    start = time.perf_counter()
    arguments = _parser().parse_args(["roofline", *FIXTURES, "--device", device, "-o", "x.png"])
    config = _config(arguments)
    options = _pipeline_options(arguments, config)
    placement = _placement_options(arguments, config)
    assert placement is not None
    results = [analyze_path(path, options) for path in discover(arguments.files)]
    analyses = [r.analysis for r in results if r.analysis is not None]
    kernels = module_kernels(analyses, placement, DEFAULT_SIZE_RANGE)
    return kernels, list(placement.devices), time.perf_counter() - start


def _on_alarm(_signal: int, _frame: Any) -> None:
    raise TimeoutError


def plot_seconds(
    kernels: list[Any], devices: list[Any], path: Path, limit: int
) -> tuple[float, float] | None:
    """Wall and CPU seconds of one `render_roofline` (CPU time is the figure to compare on
    a loaded machine), or None past `limit` seconds of wall time."""
    from aiscan.roofline.plot import render_roofline

    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(limit)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        render_roofline(kernels, devices, path)
    except TimeoutError:
        return None
    finally:
        signal.alarm(0)
    return time.perf_counter() - start, time.process_time() - cpu


def whole_process_seconds(device: str, path: Path) -> tuple[float, float, str]:
    """`aiscan roofline` on every fixture in a fresh process: its wall and CPU seconds and
    its summary line."""
    command = [sys.executable, "-m", "aiscan", "roofline", *FIXTURES, "--device", device]
    start = time.perf_counter()
    child = subprocess.Popen(
        [*command, "-o", str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    output = child.stdout.read().decode() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    summary = next((line for line in output.splitlines() if line.startswith("wrote")), "")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, summary or f"exit {os.waitstatus_to_exitcode(status)}"


def main() -> None:
    sys.path.insert(0, str(ROOT))  # this checkout's aiscan, installed or not
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="h100")
    parser.add_argument("--repeat", type=int, default=1, help="plots per count (best is shown)")
    parser.add_argument("--limit", type=int, default=120, help="seconds before a plot is stopped")
    parser.add_argument("--whole", action="store_true", help="also time the whole process")
    parser.add_argument("--keep", type=Path, help="write the PNGs here (to look at them)")
    arguments = parser.parse_args()
    kernels, devices, analysis = fixture_kernels(arguments.device)
    print(f"{len(kernels)} kernels from {', '.join(FIXTURES)}; analysis {analysis:.1f} s wall")
    plot_seconds(kernels[:1], devices, Path(tempfile.gettempdir()) / "warm.png", arguments.limit)
    with tempfile.TemporaryDirectory() as scratch:
        folder = arguments.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for count in (*[c for c in COUNTS if c < len(kernels)], len(kernels)):
            path = folder / f"roofline-{count}.png"
            samples = [
                plot_seconds(kernels[:count], devices, path, arguments.limit)
                for _ in range(arguments.repeat)
            ]
            timed = [s for s in samples if s is not None]
            if not timed:
                print(f"  plot of {count:3d} kernels: > {arguments.limit} s wall")
                continue
            wall, cpu = min(timed)
            print(
                f"  plot of {count:3d} kernels: {wall:6.2f} s wall, {cpu:6.2f} s CPU"
                f"  ({1000 * cpu / count:.0f} ms CPU per kernel)"
            )
        if arguments.whole:
            wall, cpu, summary = whole_process_seconds(arguments.device, folder / "whole.png")
            print(f"  whole process, every fixture: {wall:.1f} s wall, {cpu:.1f} s CPU ({summary})")


if __name__ == "__main__":
    main()
