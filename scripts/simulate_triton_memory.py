"""Ground truth for the L2 model of Triton launches: each program's loads and stores as
Triton's interpreter makes them, replayed in the order the GPU starts programs through an
LRU model of an L2 in 32-byte sectors.

    TRITON_INTERPRET=1 python scripts/simulate_triton_memory.py           # writes the JSON
    TRITON_INTERPRET=1 python scripts/simulate_triton_memory.py --check   # compares only

Needs `triton` and a CPU `torch` (never aiscan dependencies). The interpreter runs the
grid with axis 0 outermost; the GPU starts programs by linear id, axis 0 fastest (`x + y *
grid_x + z * grid_x * grid_y`), so every masked load, store and atomic is recorded per
program (its masked-in lanes' distinct sectors, one request) and the programs are replayed
in that order, in waves of `resident` programs whose requests interleave one by one (1:
one program at a time, the model's assumption). The L2 is fully associative LRU in
sectors: a read miss fetches its sector, a store allocates it without a fetch (write-back,
no write-allocate read), dirty sectors are written back on eviction and at the end. Not
modelled: the L1, the L2's partitions, associativity and hashing, timing.

The programs' order comes from the kernel's own code as the interpreter runs it (its
`program_id` arithmetic, grouped orderings included), not from aiscan's reading of it.
The L2 is the H100's 50 MiB scaled by 1/256 (204,800 bytes), as in
`simulate_gpu_memory.py`, and the sizes sit on both sides of it. Figures are stored as
`fixtures/triton/<name>.memory.json`; tests/test_triton_memory.py holds aiscan's model to
them without triton.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from count_triton import FIXTURES, _fixture

SECTOR_BYTES = 32
SCALED_L2_BYTES = 52428800 // 256
"""The H100's 50 MiB L2 (fixtures/gpu/h100_measured.toml) scaled by 1/256."""

RUNS: dict[str, tuple[tuple[dict[str, int], int], ...]] = {
    "matmul": (
        ({"M": 128, "N": 128, "K": 128}, 1),
        ({"M": 320, "N": 320, "K": 320}, 1),
        ({"M": 1024, "N": 1024, "K": 64}, 1),
        ({"M": 300, "N": 200, "K": 50}, 1),
        ({"M": 320, "N": 320, "K": 320}, 4),
    ),
    "matmul_grouped": (
        ({"M": 128, "N": 128, "K": 128}, 1),
        ({"M": 1024, "N": 1024, "K": 64}, 1),
        ({"M": 1024, "N": 1024, "K": 64}, 4),
    ),
    "attention": (
        ({"heads": 2, "seq_len": 256}, 1),
        ({"heads": 2, "seq_len": 1024}, 1),
    ),
}
"""(sizes, resident programs) per fixture: matrices that fit in the scaled L2 (128), ones
that do not (A is read again by every column of programs at 320 and at 1024 x 1024 x 64,
where the grouped order keeps a group's rows of A instead), a ragged edge; attention
whose keys and values of one head fit (256: 64 kB) and do not (1024: 256 kB, read again
by every block of queries)."""

_Request = tuple[bool, tuple[int, ...]]


class Trace:
    """Each program's requests in the order it makes them, and the grid."""

    def __init__(self) -> None:
        self.programs: dict[tuple[int, int, int], list[_Request]] = {}
        self.grid: tuple[int, int, int] = (1, 1, 1)

    def add(self, builder: Any, addresses: list[int], write: bool) -> None:
        self.grid = tuple(builder.grid_dim)  # type: ignore[assignment]
        sectors = tuple(sorted({a // SECTOR_BYTES for a in addresses}))
        if sectors:
            self.programs.setdefault(tuple(builder.grid_idx), []).append((write, sectors))


_current: list[Trace] = []


def _instrument() -> None:
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder

    def addresses(ptrs: Any, mask: Any) -> list[int]:
        keep = np.broadcast_to(np.asarray(mask.data, dtype=bool), ptrs.data.shape)
        return ptrs.data[keep].tolist()  # type: ignore[no-any-return]

    load, store, atomic = (
        builder.create_masked_load,
        builder.create_masked_store,
        builder.create_atomic_rmw,
    )

    def traced_load(self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        if _current:
            _current[-1].add(self, addresses(ptrs, mask), write=False)
        return load(self, ptrs, mask, other, *rest)

    def traced_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        if _current:
            _current[-1].add(self, addresses(ptrs, mask), write=True)
        return store(self, ptrs, value, mask, *rest)

    def traced_atomic(self: Any, op: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        if _current:
            _current[-1].add(self, addresses(ptrs, mask), write=False)
            _current[-1].add(self, addresses(ptrs, mask), write=True)
        return atomic(self, op, ptrs, value, mask, *rest)

    builder.create_masked_load = traced_load
    builder.create_masked_store = traced_store
    builder.create_atomic_rmw = traced_atomic


def replay(trace: Trace, l2_bytes: int, resident: int) -> dict[str, int]:
    """DRAM and L2 → SM bytes of the trace, programs by linear id in waves of `resident`."""
    gx, gy, _ = trace.grid
    order = sorted(trace.programs, key=lambda p: p[0] + p[1] * gx + p[2] * gx * gy)
    capacity = l2_bytes // SECTOR_BYTES
    held: OrderedDict[int, bool] = OrderedDict()  # sector -> dirty, least recent first
    figures = dict.fromkeys(
        ("dram_read_bytes", "dram_write_bytes", "l2_to_sm_read_bytes", "l2_to_sm_write_bytes"), 0
    )
    for first in range(0, len(order), resident):
        wave = [trace.programs[p] for p in order[first : first + resident]]
        for step in range(max(len(requests) for requests in wave)):
            for requests in wave:
                if step >= len(requests):
                    continue
                write, sectors = requests[step]
                kind = "write" if write else "read"
                figures[f"l2_to_sm_{kind}_bytes"] += SECTOR_BYTES * len(sectors)
                for sector in sectors:
                    if sector in held:
                        held.move_to_end(sector)
                        held[sector] = held[sector] or write
                        continue
                    if not write:
                        figures["dram_read_bytes"] += SECTOR_BYTES
                    held[sector] = write
                    if len(held) > capacity:
                        _, dirty = held.popitem(last=False)
                        figures["dram_write_bytes"] += SECTOR_BYTES * dirty
    figures["dram_write_bytes"] += SECTOR_BYTES * sum(held.values())
    return figures


def _call(name: str, sizes: dict[str, int]) -> Callable[[Any], Any]:
    import torch

    if name == "attention":
        heads, seq = sizes["heads"], sizes["seq_len"]
        q, k, v = (torch.rand(heads, seq, 64, dtype=torch.float16) for _ in range(3))
        return lambda module: module.attention(q, k, v)
    wrapper = {"matmul": "matmul", "matmul_grouped": "grouped_matmul"}[name]
    a = torch.rand(sizes["M"], sizes["K"], dtype=torch.float16)
    b = torch.rand(sizes["K"], sizes["N"], dtype=torch.float16)
    return lambda module: getattr(module, wrapper)(a, b)


def simulate(name: str) -> dict[str, object]:
    module = _fixture(name)
    launches = []
    for sizes, resident in RUNS[name]:
        trace = Trace()
        _current.append(trace)
        try:
            _call(name, sizes)(module)
        finally:
            _current.pop()
        figures = replay(trace, SCALED_L2_BYTES, resident)
        launches.append(
            {
                "sizes": sizes,
                "resident_programs": resident,
                "l2_bytes": SCALED_L2_BYTES,
                **figures,
            }
        )
        print(name, launches[-1], file=sys.stderr)
    return {
        "measured_with": "triton interpreter, each program's masked loads and stores replayed "
        "by linear program id through an LRU L2 in 32-byte sectors",
        "launches": launches,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored files")
    args = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET") != "1":
        print("set TRITON_INTERPRET=1 (the interpreter runs the kernels)", file=sys.stderr)
        return 2
    _instrument()
    status = 0
    for name in RUNS:
        path = FIXTURES / f"{name}.memory.json"
        text = json.dumps(simulate(name), indent=1) + "\n"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                print(f"{path}: differs from the simulation", file=sys.stderr)
                status = 1
        else:
            path.write_text(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
