"""Count what PyTorch really does for the PyTorch fixtures (ground truth; a script, not a test).

Each function of `fixtures/python/frameworks_torch.py` (our own code) runs on CPU tensors
of the sizes below, under two modes of PyTorch itself:

* `torch.utils.flop_counter.FlopCounterMode`: the FLOPs of the contractions it knows
  (`mm`, `bmm`, `addmm`, attention), by the `2*m*k*n` convention, which aiscan quotes as
  each contraction's convention figure;
* a `TorchDispatchMode` that logs every ATen operator with the bytes of its tensor inputs
  and outputs: the eager traffic, each kernel reading its operands and writing its result.
  An operator whose every output shares storage with an input (a view: `transpose`,
  `view`, `expand`) moves nothing and is left out, as aiscan treats views.

The figures go to `fixtures/python/frameworks_torch.measured.toml`, which the tests
compare aiscan against (`tests/test_framework_operators.py`), so CI needs no torch. The
modules of `fixtures/python/torch_modules.py` (a GPT block) run the same way, each built
from a configuration object with the sizes below, in evaluation mode; their figures go to
`torch_modules.measured.toml` (`tests/test_torch_modules.py`).
torch is never a dependency of aiscan: `pip install torch` (a CPU wheel) to rerun this.

Usage: python scripts/count_torch.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "python" / "frameworks_torch.py"
MEASURED = FIXTURE.with_suffix(".measured.toml")

CASES: dict[str, tuple[dict[str, int], tuple[tuple[str, ...], ...]]] = {
    # function: (sizes by aiscan's names, each argument's shape in those names)
    "mlp": (
        {"x_d0": 64, "w1_d0": 128, "w2_d0": 512, "w2_d1": 128},
        (("x_d0", "w1_d0"), ("w1_d0", "w2_d0"), ("w2_d0",), ("w2_d0", "w2_d1")),
    ),
    "attention": (
        {"b": 2, "h": 4, "n": 64, "d": 32, "v_d2": 64, "v_d3": 32},
        (("b", "h", "n", "d"), ("b", "h", "v_d2", "d"), ("b", "h", "v_d2", "v_d3")),
    ),
    "layernorm": ({"n": 64, "d": 256}, (("n", "d"), ("d",), ("d",))),
    "fused_attention": (
        {"b": 2, "h": 4, "n": 64, "d": 32, "v_d3": 32},
        (("b", "h", "n", "d"), ("b", "h", "n", "d"), ("b", "h", "n", "v_d3")),
    ),
    "fused_layernorm": ({"n": 64, "d": 256}, (("n", "d"), ("d",), ("d",))),
}


MODULES = ROOT / "fixtures" / "python" / "torch_modules.py"
MODULES_MEASURED = MODULES.with_suffix(".measured.toml")

MODULE_CASES: dict[str, tuple[dict[str, int], tuple[str, ...]]] = {
    # module: (its configuration's sizes by attribute, the input's shape in aiscan's names)
    "Attention": ({"n_embd": 64, "n_head": 4, "B": 2, "T": 32}, ("B", "T", "n_embd")),
    "Block": ({"n_embd": 64, "n_head": 4, "x_d0": 2, "x_d1": 32}, ("x_d0", "x_d1", "n_embd")),
}


def _functions() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(FIXTURE.read_text(), str(FIXTURE), "exec"), namespace)  # our own fixture
    return namespace


def _bytes(value: Any) -> int:
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_bytes(v) for v in value)
    return 0


def _tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def measure(name: str) -> dict[str, Any]:
    import torch

    sizes, shapes = CASES[name]
    torch.manual_seed(0)
    arguments = [torch.randn(*(sizes[s] for s in shape)) for shape in shapes]
    return _counted(_functions()[name], arguments, sizes)


def measure_module(name: str) -> dict[str, Any]:
    """One module of `torch_modules.py` in evaluation mode, built from a configuration
    object holding the case's sizes, on one input."""
    import torch

    sizes, shape = MODULE_CASES[name]
    namespace: dict[str, Any] = {}
    exec(compile(MODULES.read_text(), str(MODULES), "exec"), namespace)  # our own fixture
    config = type("Config", (), {**sizes, "bias": True})()
    torch.manual_seed(0)
    module = namespace[name](config).eval()
    return _counted(module, [torch.randn(*(sizes[s] for s in shape))], sizes)


def _counted(function: Any, arguments: list[Any], sizes: dict[str, int]) -> dict[str, Any]:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import FlopCounterMode

    log: list[tuple[str, int]] = []

    class Traffic(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            out = func(*args, **(kwargs or {}))
            inputs = _tensors(list(args) + list((kwargs or {}).values()))
            storages = {t.untyped_storage().data_ptr() for t in inputs}
            outputs = _tensors(out)
            if outputs and all(t.untyped_storage().data_ptr() in storages for t in outputs):
                return out  # a view: moves nothing
            log.append((str(func.overloadpacket.__name__), _bytes(inputs) + _bytes(outputs)))
            return out

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter, Traffic():
        function(*arguments)
    return {
        "sizes": sizes,
        "flop_counter": int(counter.get_total_flops()),
        "eager_bytes": sum(b for _, b in log),
        "ops": [f"{op} {b}" for op, b in log],
    }


def _toml(results: dict[str, dict[str, Any]], version: str) -> str:
    lines = [
        "# Measured by scripts/count_torch.py (torch " + version + ", CPU, float32): the",
        "# FLOPs of FlopCounterMode (contractions, 2*m*k*n) and the eager bytes of every",
        "# ATen operator (tensor inputs + outputs; views left out). Regenerate with",
        "# `python scripts/count_torch.py --write`; never edit by hand.",
        "",
    ]
    for name, result in results.items():
        lines.append(f"[functions.{name}]")
        sizes = ", ".join(f"{k} = {v}" for k, v in result["sizes"].items())
        lines.append(f"sizes = {{ {sizes} }}")
        lines.append(f"flop_counter = {result['flop_counter']}")
        lines.append(f"eager_bytes = {result['eager_bytes']}")
        ops = ", ".join(f'"{op}"' for op in result["ops"])
        lines.append(f"ops = [{ops}]")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {MEASURED.name}")
    options = parser.parse_args(argv)
    import torch

    results = {name: measure(name) for name in CASES}
    text = _toml(results, torch.__version__)
    modules = _toml({name: measure_module(name) for name in MODULE_CASES}, torch.__version__)
    if options.write:
        MEASURED.write_text(text)
        MODULES_MEASURED.write_text(modules)
    sys.stdout.write(text + modules)
    return 0


if __name__ == "__main__":
    sys.exit(main())
