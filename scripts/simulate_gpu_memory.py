"""Ground truth for the GPU memory model: the CUDA fixtures' twins, built to trace their
global accesses, replayed through an LRU model of an L2 in 32-byte sectors.

    python scripts/simulate_gpu_memory.py            # compiles with g++, writes the JSON files
    python scripts/simulate_gpu_memory.py --check    # compares with the stored files only

Each twin (`fixtures/cuda/twins/<name>.cpp`) compiled with `-DAISCAN_MEMORY` groups its
global accesses into warp requests (32 consecutive threads, the i-th access of each in one
phase between `__syncthreads()`) and prints, per launch: the L2 → SM bytes (each request's
distinct sectors) and the DRAM bytes of a fully associative LRU L2 of `l2_bytes`, blocks
in launch order in waves of `resident_blocks`, write-back, no fetch on a store
(`twins/memory.hpp` states the limits). The figures are stored as `<name>.memory.json`;
tests/test_gpu_memory.py holds aiscan's model to them without a compiler.

A full-size H100 run (n = 4096 SGEMM, 137 billion accesses) is out of reach, so the L2 is
scaled: 50 MiB / 256 = 204,800 bytes, with n / 16, keeps each matrix's size against the
L2 (n = 128 and 256 here are n = 2048 and 4096 there: 48 MB in a 50 MB L2, and 3.8 times
over it). Resident blocks: 1 (the model's assumption) and, for the SGEMMs, 4 (the H100's
132 SMs × 8 blocks of 256 threads, scaled the same way).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from count_cuda import store_or_check

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"
TWINS = FIXTURES / "twins"
SCALED_L2_BYTES = 52428800 // 256
"""The H100's 50 MiB L2 (measured.json's `l2_bytes`) scaled by 1/256."""

RUNS: dict[str, tuple[tuple[int, int], ...]] = {
    "vector_add": ((1024, 1), (3000, 1)),
    "saxpy_grid_stride": ((5000, 1), (300000, 1)),
    "stencil5": ((64, 1), (96, 1), (100, 1)),
    "sgemm_naive": ((64, 1), (128, 1), (256, 1), (128, 4), (256, 4)),
    "sgemm_tiled": ((32, 1), (64, 1), (128, 1), (256, 1), (128, 4), (256, 4)),
    "transpose_naive": ((32, 1), (64, 1), (100, 1)),
    "transpose_tiled": ((32, 1), (64, 1), (96, 1)),
    "dot_atomic": ((1000, 1), (4096, 1)),
    "block_reduce": ((4096, 1), (100000, 1)),
    "float4_axpy": ((1024, 1), (3000, 1)),
    "half2_fma": ((1024, 1),),
    "bf16_scale": ((4096, 1), (300000, 1)),
    "device_helpers": ((128, 1), (300, 1)),
}
"""(n, resident blocks) per fixture: sizes whose rows are whole sectors, a few that are
not (n = 100 floats: rows 400 bytes apart, not 32-byte aligned), and the SGEMMs on both
sides of the scaled L2."""


def simulate(name: str, build: Path) -> dict[str, object]:
    binary = build / name
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O2",
            "-DAISCAN_MEMORY",
            "-o",
            str(binary),
            str(TWINS / f"{name}.cpp"),
        ],
        check=True,
    )
    launches = []
    for n, resident in RUNS[name]:
        environment = {
            **os.environ,
            "AISCAN_L2_BYTES": str(SCALED_L2_BYTES),
            "AISCAN_RESIDENT": str(resident),
        }
        done = subprocess.run(
            [str(binary), str(n)], check=True, capture_output=True, text=True, env=environment
        )
        launches.append(json.loads(done.stdout))
    return {
        "measured_with": "C++ twin, memory build (fixtures/cuda/twins/memory.hpp): LRU L2 in "
        "32-byte sectors, blocks in launch order",
        "launches": launches,
    }


def main() -> int:
    description = __doc__.splitlines()[0]
    return store_or_check(description, RUNS, simulate, ".memory.json", "simulated figures", "runs")


if __name__ == "__main__":
    sys.exit(main())
