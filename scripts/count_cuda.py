"""Ground truth for the CUDA fixtures: run each kernel's C++ twin and store its counts.

    python scripts/count_cuda.py            # compiles with g++, writes the JSON files
    python scripts/count_cuda.py --check    # compares with the stored files only

Each fixture `fixtures/cuda/<name>.cu` has a twin `fixtures/cuda/twins/<name>.cpp` that
runs the same launch on the CPU, its grid as loops over blocks and threads (the phases
between `__syncthreads()` in turn over a block's threads), and checks its own result.
`twins/count.hpp` counts: every floating-point `+ - * /` by the operators of the number
type it computes with, every global load and store, each element's first touch (read
first: a compulsory read; written: a compulsory write), and every shared-memory access.
The counts at the sizes below are stored as `<name>.counts.json`, which
tests/test_cuda_frontend.py compares with aiscan's figures without a compiler.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sized
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"
TWINS = FIXTURES / "twins"

SIZES: dict[str, tuple[int, ...]] = {
    "vector_add": (1000, 1024, 3000),
    "saxpy_grid_stride": (1000, 5000, 300000),
    "stencil5": (3, 50, 100),
    "sgemm_naive": (16, 50, 70),
    "sgemm_tiled": (32, 64, 96),
    "transpose_naive": (32, 50, 100),
    "transpose_tiled": (32, 64, 96),
    "dot_atomic": (1000, 4096, 200000),
    "block_reduce": (1000, 4096, 100000),
    "float4_axpy": (1000, 1024, 3000),
    "half2_fma": (1000, 1024, 3000),
    "bf16_scale": (1000, 4096, 300000),
    "device_helpers": (100, 128, 300),
}
"""Sizes `n` per fixture: ragged ones where the launch rounds the grid up, multiples of
32 where the kernel requires them, and a grid-stride loop longer than its grid."""


def counts(name: str, build: Path) -> dict[str, object]:
    binary = build / name
    subprocess.run(
        ["g++", "-std=c++17", "-O1", "-o", str(binary), str(TWINS / f"{name}.cpp")],
        check=True,
    )
    launches = []
    for n in SIZES[name]:
        done = subprocess.run([str(binary), str(n)], check=True, capture_output=True, text=True)
        launches.append(json.loads(done.stdout))
    return {"measured_with": "C++ twin (fixtures/cuda/twins, g++)", "launches": launches}


def store_or_check(
    description: str,
    runs: Mapping[str, Sized],
    produce: Callable[[str, Path], dict[str, object]],
    suffix: str,
    what: str,
    unit: str,
) -> int:
    """Build and run each fixture's twin with `produce`, and write `<name><suffix>` beside
    the fixture, or with `--check` compare with it; 1 when any stored figure differs.
    `count_cuda.py` and `simulate_gpu_memory.py` share it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    arguments = parser.parse_args()
    differ = []
    with tempfile.TemporaryDirectory() as build:
        for name in runs:
            found = produce(name, Path(build))
            target = FIXTURES / f"{name}{suffix}"
            text = json.dumps(found, indent=1) + "\n"
            if arguments.check:
                if not target.is_file() or target.read_text() != text:
                    differ.append(name)
            else:
                target.write_text(text)
                shown = target.relative_to(FIXTURES.parent.parent)
                print(f"{shown}: {len(runs[name])} {unit}")
    if differ:
        print(f"{what} differ from the stored ones: {', '.join(differ)}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    description = __doc__.splitlines()[0]
    return store_or_check(description, SIZES, counts, ".counts.json", "counts", "sizes")


if __name__ == "__main__":
    sys.exit(main())
