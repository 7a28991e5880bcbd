"""Ground truth for the Triton fixtures: run each under Triton's CPU interpreter and count.

    TRITON_INTERPRET=1 python scripts/count_triton.py            # writes the JSON files
    TRITON_INTERPRET=1 python scripts/count_triton.py --check    # compares only

Needs `triton` and a CPU `torch` (never aiscan dependencies). The interpreter's builder is
wrapped from outside the package: every masked load and store adds its masked-in lanes
(elements and bytes, and the distinct addresses of each tensor, read before written or
written), every floating-point `+ - * /` the lanes of its result, every special function
its lanes, every `tl.dot` 2*M*N*K, every `tl.sum` its e - 1 combines per result, every
atomic read-modify-write a load and a store of its masked-in lanes (and, for a
floating-point `atomic_add`, an add per lane, in `flops_add`). Loads and
stores are counted per launch, at each size listed below (ragged ones included), and
stored beside the fixtures as `<fixture>.counts.json`, which tests/test_triton_frontend.py
compares with aiscan's figures without triton installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "triton"

_SPECIALS = ("exp", "exp2", "log", "log2", "sqrt", "precise_sqrt", "rsqrt", "sin", "cos", "erf")


class Tally:
    """What one launch did, as the interpreter executed it."""

    def __init__(self) -> None:
        self.flops: Counter[str] = Counter()
        self.loaded = 0
        self.stored = 0
        self.bytes_loaded = 0
        self.bytes_stored = 0
        self.read_first: set[int] = set()
        self.written: set[int] = set()
        self.read_bytes = 0
        self.write_bytes = 0

    def load(self, addresses: list[int], width: int) -> None:
        self.loaded += len(addresses)
        self.bytes_loaded += len(addresses) * width
        for address in addresses:
            if address not in self.written and address not in self.read_first:
                self.read_first.add(address)
                self.read_bytes += width

    def store(self, addresses: list[int], width: int) -> None:
        self.stored += len(addresses)
        self.bytes_stored += len(addresses) * width
        for address in addresses:
            if address not in self.written:
                self.written.add(address)
                self.write_bytes += width

    def figures(self) -> dict[str, int]:
        return {
            "flops_add": self.flops["add"],
            "flops_sub": self.flops["sub"],
            "flops_mul": self.flops["mul"],
            "flops_div": self.flops["div"],
            "flops_special": self.flops["special"],
            "flops_dot": self.flops["dot"],
            "atomic_lanes": self.flops["atomics"],
            "elements_loaded": self.loaded,
            "elements_stored": self.stored,
            "bytes_loaded": self.bytes_loaded,
            "bytes_stored": self.bytes_stored,
            "compulsory_read_bytes": self.read_bytes,
            "compulsory_write_bytes": self.write_bytes,
        }


_current: list[Tally] = []


@contextmanager
def counting() -> Iterator[Tally]:
    tally = Tally()
    _current.append(tally)
    try:
        yield tally
    finally:
        _current.pop()


def _instrument() -> None:
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder

    def lanes(*handles: Any) -> int:
        return int(np.broadcast(*(np.asarray(h.data) for h in handles)).size)

    def wrap(name: str, kind: str, count: Callable[..., int]) -> None:
        original = getattr(builder, name)

        def counted(self: Any, *args: Any) -> Any:
            if _current:
                _current[-1].flops[kind] += count(*args)
            return original(self, *args)

        setattr(builder, name, counted)

    for name, kind in (("create_fadd", "add"), ("create_fsub", "sub"), ("create_fmul", "mul")):
        wrap(name, kind, lambda lhs, rhs: lanes(lhs, rhs))
    for name in ("create_fdiv", "create_precise_divf", "create_approx_divf"):
        wrap(name, "div", lambda lhs, rhs: lanes(lhs, rhs))
    for special in _SPECIALS:
        if hasattr(builder, f"create_{special}"):
            wrap(f"create_{special}", "special", lambda arg: lanes(arg))

    def dot_flops(a: Any, b: Any, *_: Any) -> int:
        m, k = a.data.shape[-2:]
        return 2 * int(m) * int(k) * int(b.data.shape[-1])

    wrap("create_dot", "dot", dot_flops)

    def masked_addresses(ptrs: Any, mask: Any) -> tuple[list[int], int]:
        """The addresses of the masked-in lanes, and the element width."""
        width = np.dtype(interpreter._get_np_dtype(ptrs.get_element_ty())).itemsize
        keep = np.broadcast_to(np.asarray(mask.data, dtype=bool), ptrs.data.shape)
        return ptrs.data[keep].tolist(), width

    load = builder.create_masked_load

    def counted_load(self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        if _current:
            _current[-1].load(*masked_addresses(ptrs, mask))
        return load(self, ptrs, mask, other, *rest)

    builder.create_masked_load = counted_load

    store = builder.create_masked_store

    def counted_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        if _current:
            _current[-1].store(*masked_addresses(ptrs, mask))
        return store(self, ptrs, value, mask, *rest)

    builder.create_masked_store = counted_store

    atomic = builder.create_atomic_rmw

    def counted_atomic(self: Any, op: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        if _current:
            addresses, width = masked_addresses(ptrs, mask)
            _current[-1].load(addresses, width)
            _current[-1].store(addresses, width)
            _current[-1].flops["atomics"] += len(addresses)
            if "FADD" in str(op):
                _current[-1].flops["add"] += len(addresses)
        return atomic(self, op, ptrs, value, mask, *rest)

    builder.create_atomic_rmw = counted_atomic

    reduce_sum = interpreter.ReduceOps.sum

    def counted_sum(self: Any, input: Any) -> Any:
        result = reduce_sum(self, input)
        if _current:
            size = int(np.asarray(input.handle.data).size)
            _current[-1].flops["add"] += size - int(np.asarray(result.handle.data).size)
        return result

    interpreter.ReduceOps.sum = counted_sum


def _fixture(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"triton_fixture_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from triton.runtime.autotuner import Autotuner

    for value in vars(module).values():
        if isinstance(value, Autotuner):
            # aiscan reports the first config by default: run that one (no benchmarking).
            value.configs = value.configs[:1]
    return module


def _cases() -> dict[str, list[tuple[dict[str, int], Callable[[Any], Any]]]]:
    """Per fixture: (sizes in aiscan's names, a call of the wrapper at those sizes)."""
    import torch

    def vector(n: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"n": n}, lambda m: m.add(torch.rand(n), torch.rand(n))

    def activation(n: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"n": n}, lambda m: m.silu_affine(torch.rand(n), 1.5, 0.25)

    def softmax(rows: int, cols: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        block = 1 << (cols - 1).bit_length()
        return {"n_rows": rows, "n_cols": cols, "BLOCK": block}, lambda m: m.softmax(
            torch.rand(rows, cols)
        )

    def matmul(m_: int, n: int, k: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"M": m_, "N": n, "K": k}, lambda m: m.matmul(
            torch.rand(m_, k, dtype=torch.float16), torch.rand(k, n, dtype=torch.float16)
        )

    def layernorm(rows: int, cols: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"n_rows": rows, "n_cols": cols}, lambda m: m.layernorm(
            torch.rand(rows, cols), torch.rand(cols), torch.rand(cols)
        )

    def transpose(m_: int, n: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"M": m_, "N": n}, lambda m: m.transpose(torch.rand(m_, n))

    def rmsnorm(rows: int, cols: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"n_rows": rows, "n_cols": cols}, lambda m: m.rmsnorm(
            torch.rand(rows, cols, dtype=torch.float16), torch.rand(cols, dtype=torch.float16)
        )

    def grouped(m_: int, n: int, k: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"M": m_, "N": n, "K": k}, lambda m: m.grouped_matmul(
            torch.rand(m_, k, dtype=torch.float16), torch.rand(k, n, dtype=torch.float16)
        )

    def vector_sum(n: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        return {"n": n}, lambda m: m.vector_sum(torch.rand(n))

    def attention(
        heads: int, seq: int, wrapper: str
    ) -> tuple[dict[str, int], Callable[[Any], Any]]:
        def call(m: Any) -> Any:
            q, k, v = (torch.rand(heads, seq, 64, dtype=torch.float16) for _ in range(3))
            return getattr(m, wrapper)(q, k, v)

        return {"heads": heads, "seq_len": seq}, call

    def embedding(n_ids: int, vocab: int, dim: int) -> tuple[dict[str, int], Callable[[Any], Any]]:
        block = 1 << (dim - 1).bit_length()
        sizes = {"n_ids": n_ids, "vocab": vocab, "dim": dim, "BLOCK": block}
        return sizes, lambda m: m.embedding(
            torch.randint(0, vocab, (n_ids,)), torch.rand(vocab, dim)
        )

    return {
        "transpose": [transpose(*s) for s in ((32, 32), (100, 70), (33, 65))],
        "vector_add": [vector(n) for n in (1024, 1000, 3000, 5000)],
        "activation": [activation(n) for n in (512, 700, 2000)],
        "softmax": [softmax(r, c) for r, c in ((3, 100), (4, 128), (2, 300))],
        "matmul": [matmul(*s) for s in ((64, 64, 32), (100, 70, 50), (130, 64, 96))],
        "layernorm": [layernorm(r, c) for r, c in ((2, 256), (3, 300), (2, 700))],
        "rmsnorm": [rmsnorm(r, c) for r, c in ((2, 128), (3, 300), (2, 500))],
        "matmul_grouped": [grouped(*s) for s in ((64, 64, 32), (300, 200, 50), (130, 520, 96))],
        "sum_atomic": [vector_sum(n) for n in (512, 1000, 5000)],
        "attention": [attention(h, s, "attention") for h, s in ((1, 64), (2, 100), (1, 200))],
        "attention_causal": [
            attention(h, s, "causal_attention") for h, s in ((1, 64), (2, 100), (1, 200))
        ],
        "embedding": [embedding(*s) for s in ((8, 50, 64), (5, 30, 100))],
    }


def measure(only: list[str]) -> dict[str, list[dict[str, Any]]]:
    _instrument()
    results: dict[str, list[dict[str, Any]]] = {}
    for name, cases in _cases().items():
        if only and name not in only:
            continue
        module = _fixture(name)
        rows = []
        for sizes, call in cases:
            with counting() as tally:
                call(module)
            rows.append({"sizes": sizes, **tally.figures()})
            print(name, sizes, tally.figures(), file=sys.stderr)
        results[name] = rows
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored files")
    parser.add_argument("fixtures", nargs="*", help="only these fixtures (default: all)")
    args = parser.parse_args()
    if os.environ.get("TRITON_INTERPRET") != "1":
        print(
            "set TRITON_INTERPRET=1 (the interpreter runs the kernels on the CPU)", file=sys.stderr
        )
        return 2
    results = measure(args.fixtures)
    status = 0
    for name, rows in results.items():
        path = FIXTURES / f"{name}.counts.json"
        text = (
            json.dumps({"measured_with": "triton interpreter", "launches": rows}, indent=1) + "\n"
        )
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path}: differs from the interpreter's counts", file=sys.stderr)
                status = 1
        else:
            path.write_text(text)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
