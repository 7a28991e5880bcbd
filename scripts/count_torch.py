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
`torch_modules.measured.toml` (`tests/test_torch_modules.py`), and those of
`torch_llama.py` (a Llama-style block) to `torch_llama.measured.toml`, and the whole
models of `torch_model.py` to `torch_model.measured.toml`, and the losses and head of
`torch_losses.py` to `torch_losses.measured.toml`, and the rotary buffers of
`torch_rotary.py` to `torch_rotary.measured.toml`.
torch is never a dependency of aiscan: `pip install torch` (a CPU wheel) to rerun this.

`--public nanogpt=PATH` and `--public llama2c=PATH` count public model code the same way
(karpathy/nanoGPT's and karpathy/llama2.c's `model.py`, fetched by hand, never committed),
each module at the sizes of `PUBLIC_CASES`; the figures are printed only (docs/python.md
holds the table).

Usage: python scripts/count_torch.py [--write] [--public NAME=PATH ...]
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


PUBLIC_SIZES: dict[str, dict[str, int]] = {
    # nanoGPT's GPTConfig and llama2.c's ModelArgs at small sizes (B, T the input's).
    "nanogpt": {
        "B": 2,
        "T": 32,
        "n_embd": 64,
        "n_head": 4,
        "n_layer": 2,
        "vocab_size": 96,
        "block_size": 64,
    },
    "llama2c": {
        "B": 2,
        "T": 32,
        "dim": 64,
        "n_heads": 4,
        "n_kv_heads": 2,
        "n_layers": 2,
        "vocab_size": 96,
        "hidden_dim": 176,
        "max_seq_len": 64,
    },
}
"""The sizes each public model runs at (`hidden_dim` given: llama2.c rounds it otherwise)."""


def _public_modules(name: str, path: Path) -> dict[str, tuple[Any, list[Any]]]:
    """Each module of a public model file, built in evaluation mode, with its inputs."""
    import torch

    sizes = PUBLIC_SIZES[name]
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"public_{name}", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # dataclasses look their module up
    spec.loader.exec_module(loaded)  # ground truth only: torch runs the public code
    namespace = vars(loaded)
    torch.manual_seed(0)
    b, t = sizes["B"], sizes["T"]
    if name == "nanogpt":
        config = namespace["GPTConfig"](
            block_size=sizes["block_size"],
            vocab_size=sizes["vocab_size"],
            n_layer=sizes["n_layer"],
            n_head=sizes["n_head"],
            n_embd=sizes["n_embd"],
            dropout=0.0,
            bias=True,
        )
        x = torch.randn(b, t, sizes["n_embd"])
        idx = torch.randint(0, sizes["vocab_size"], (b, t))
        return {
            "LayerNorm": (namespace["LayerNorm"](sizes["n_embd"], True), [x]),
            "CausalSelfAttention": (namespace["CausalSelfAttention"](config), [x]),
            "MLP": (namespace["MLP"](config), [x]),
            "Block": (namespace["Block"](config), [x]),
            "GPT": (namespace["GPT"](config), [idx]),
            "GPT (targets)": (namespace["GPT"](config), [idx, idx]),
        }
    args = namespace["ModelArgs"](
        dim=sizes["dim"],
        n_layers=sizes["n_layers"],
        n_heads=sizes["n_heads"],
        n_kv_heads=sizes["n_kv_heads"],
        vocab_size=sizes["vocab_size"],
        hidden_dim=sizes["hidden_dim"],
        max_seq_len=sizes["max_seq_len"],
        dropout=0.0,
    )
    x = torch.randn(b, t, sizes["dim"])
    cos, sin = namespace["precompute_freqs_cis"](sizes["dim"] // sizes["n_heads"], t)
    tokens = torch.randint(0, sizes["vocab_size"], (b, t))
    feed = namespace["FeedForward"](sizes["dim"], sizes["hidden_dim"], 256, 0.0)
    return {
        "RMSNorm": (namespace["RMSNorm"](sizes["dim"], 1e-5), [x]),
        "Attention": (namespace["Attention"](args), [x, cos, sin]),
        "FeedForward": (feed, [x]),
        "TransformerBlock": (namespace["TransformerBlock"](0, args), [x, cos, sin]),
        "Transformer": (namespace["Transformer"](args), [tokens]),
        "Transformer (targets)": (namespace["Transformer"](args), [tokens, tokens]),
    }


def measure_public(name: str, path: Path) -> dict[str, dict[str, Any]]:
    """FlopCounterMode and the eager bytes of each module of a public model file."""
    results = {}
    for module_name, (module, inputs) in _public_modules(name, path).items():
        results[module_name] = _counted(module.eval(), inputs, PUBLIC_SIZES[name])
    return results


LLAMA = ROOT / "fixtures" / "python" / "torch_llama.py"
LLAMA_MEASURED = LLAMA.with_suffix(".measured.toml")
LLAMA_SIZES = {"width": 64, "heads": 4, "kv_heads": 2, "ffn": 176, "b": 2, "t": 32}
"""`torch_llama.py`'s settings and input (b, t, width); cos and sin (t, width/heads/2)."""


def measure_llama() -> dict[str, dict[str, Any]]:
    """Each module of `torch_llama.py` in evaluation mode, on random inputs."""
    import torch

    namespace: dict[str, Any] = {"__name__": "torch_llama"}
    sys.modules["torch_llama"] = type(sys)("torch_llama")  # dataclasses look it up
    namespace = vars(sys.modules["torch_llama"])
    exec(compile(LLAMA.read_text(), str(LLAMA), "exec"), namespace)  # our own fixture
    sizes = LLAMA_SIZES
    settings = namespace["Settings"](
        sizes["width"], sizes["heads"], sizes["kv_heads"], sizes["ffn"]
    )
    torch.manual_seed(0)
    b, t, width = sizes["b"], sizes["t"], sizes["width"]
    x = torch.randn(b, t, width)
    half = width // sizes["heads"] // 2
    cos, sin = torch.randn(t, half), torch.randn(t, half)
    cases = {
        "Norm": (namespace["Norm"](width), [x]),
        "Attend": (namespace["Attend"](settings), [x, cos, sin]),
        "Gated": (namespace["Gated"](width, sizes["ffn"]), [x]),
        "Layer": (namespace["Layer"](settings), [x, cos, sin]),
    }
    return {name: _counted(m.eval(), inputs, sizes) for name, (m, inputs) in cases.items()}


MODEL = ROOT / "fixtures" / "python" / "torch_model.py"
MODEL_MEASURED = MODEL.with_suffix(".measured.toml")
MODEL_SIZES = {"width": 64, "vocab": 96, "depth": 2, "b": 2, "t": 32}


def measure_models() -> dict[str, dict[str, Any]]:
    """Each model of `torch_model.py` in evaluation mode on (b, t) random token ids."""
    import torch

    namespace: dict[str, Any] = {}
    exec(compile(MODEL.read_text(), str(MODEL), "exec"), namespace)  # our own fixture
    config = type("Config", (), dict(MODEL_SIZES))()
    results = {}
    for name in ("Model", "Appended"):
        torch.manual_seed(0)
        tokens = torch.randint(0, MODEL_SIZES["vocab"], (MODEL_SIZES["b"], MODEL_SIZES["t"]))
        model = namespace[name](config).eval()
        results[name] = _counted(model, [tokens], MODEL_SIZES)
    return results


LOSSES = ROOT / "fixtures" / "python" / "torch_losses.py"
LOSSES_MEASURED = LOSSES.with_suffix(".measured.toml")
LOSSES_SIZES = {"rows": 64, "classes": 96, "b": 2, "t": 32, "d": 64, "v": 96}
"""`torch_losses.py`'s inputs: scores (rows, classes), x (b, t, d), w (d, v); the head
`Head(d, v)` on x, with labels (b, t) or without."""


def measure_losses() -> dict[str, dict[str, Any]]:
    """Each function of `torch_losses.py`, and its `Head` with and without labels."""
    import torch

    namespace: dict[str, Any] = {}
    exec(compile(LOSSES.read_text(), str(LOSSES), "exec"), namespace)  # our own fixture
    sizes = LOSSES_SIZES
    torch.manual_seed(0)
    rows, classes, b, t, d, v = (sizes[k] for k in ("rows", "classes", "b", "t", "d", "v"))
    scores = torch.randn(rows, classes)
    labels = torch.randint(0, classes, (rows,))
    logp = torch.log_softmax(scores, -1)
    x, w = torch.randn(b, t, d), torch.randn(d, v)
    head = namespace["Head"](d, v).eval()
    head_sizes = {"x_d0": b, "x_d1": t, "width": d, "vocab": v}
    cases = {
        "loss": (namespace["loss"], [scores, labels], sizes),
        "picked": (namespace["picked"], [logp, labels], sizes),
        "last": (namespace["last"], [x, w], sizes),
        "Head": (head, [x], {**head_sizes, "p_L34": 0}),
        "Head_labels": (head, [x, torch.randint(0, v, (b, t))], {**head_sizes, "p_L34": 1}),
    }
    return {name: _counted(f, inputs, at) for name, (f, inputs, at) in cases.items()}


LAYERS = ROOT / "fixtures" / "python" / "torch_layers.py"
LAYERS_MEASURED = LAYERS.with_suffix(".measured.toml")
LAYERS_SIZES = {"n": 2, "c": 8, "length": 33, "co": 16, "k": 3, "h": 10, "wd": 9}
"""`torch_layers.py`'s inputs: x (n, c, length) or (n, c, h, wd); conv1's w (co, c, k) and
b (co,), conv2's w (co, c/2, k, k); the modules' sizes at channels = c, width = co (and
hidden = 4 * co), `Feed`'s x (n, length, co)."""


def measure_layers() -> dict[str, dict[str, Any]]:
    """Each function and module of `torch_layers.py`."""
    import torch

    namespace: dict[str, Any] = {}
    exec(compile(LAYERS.read_text(), str(LAYERS), "exec"), namespace)  # our own fixture
    sizes = LAYERS_SIZES
    torch.manual_seed(0)
    n, c, length, co, k, h, wd = (sizes[key] for key in LAYERS_SIZES)
    image = torch.randn(n, c, h, wd)
    one = {"n": n, "c": c, "length": length, "co": co, "ci": c, "k": k}
    two = {"n": n, "c": c, "h": h, "wd": wd, "co": co, "ci": c // 2, "kh": k, "kw": k}
    cases = {
        "conv1": (
            namespace["conv1"],
            [torch.randn(n, c, length), torch.randn(co, c, k), torch.randn(co)],
            one,
        ),
        "conv2": (namespace["conv2"], [image, torch.randn(co, c // 2, k, k)], two),
        "Stem": (
            namespace["Stem"](c, co).eval(),
            [image],
            {"n": n, "c": c, "h": h, "w": wd, "channels": c, "width": co},
        ),
        "Mix": (
            namespace["Mix"](co).eval(),
            [torch.randn(n, co, length)],
            {"n": n, "c": co, "length": length, "width": co},
        ),
        "Feed": (
            namespace["Feed"](co, 4 * co).eval(),
            [torch.randn(n, length, co)],
            {"b": n, "t": length, "d": co, "width": co, "hidden": 4 * co},
        ),
        "grouped": (namespace["grouped"], [image, torch.randn(c), torch.randn(c)], two),
        "Groups": (
            namespace["Groups"](co).eval(),
            [torch.randn(n, co, length)],
            {"n": n, "c": co, "length": length, "width": co},
        ),
    }
    return {name: _counted(f, inputs, at) for name, (f, inputs, at) in cases.items()}


ROTARY = ROOT / "fixtures" / "python" / "torch_rotary.py"
ROTARY_MEASURED = ROTARY.with_suffix(".measured.toml")
ROTARY_SIZES = {"width": 64, "heads": 4, "longest": 64, "b": 2, "t": 32, "d": 64}
"""`torch_rotary.py`'s settings and input x (b, t, d = width)."""


def measure_rotary() -> dict[str, dict[str, Any]]:
    """`Rotate` of `torch_rotary.py` in evaluation mode: its buffers' first `t` rows."""
    import torch

    namespace: dict[str, Any] = {"__name__": "torch_rotary"}
    sys.modules["torch_rotary"] = type(sys)("torch_rotary")  # dataclasses look it up
    namespace = vars(sys.modules["torch_rotary"])
    exec(compile(ROTARY.read_text(), str(ROTARY), "exec"), namespace)  # our own fixture
    sizes = ROTARY_SIZES
    settings = namespace["Settings"](sizes["width"], sizes["heads"], sizes["longest"])
    torch.manual_seed(0)
    x = torch.randn(sizes["b"], sizes["t"], sizes["d"])
    return {"Rotate": _counted(namespace["Rotate"](settings).eval(), [x], sizes)}


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
    parser.add_argument(
        "--public",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help=f"count a public model file ({', '.join(PUBLIC_SIZES)}) and print its figures",
    )
    options = parser.parse_args(argv)
    import torch

    if options.public:
        for given in options.public:
            name, _, path = given.partition("=")
            for module, result in measure_public(name, Path(path)).items():
                sys.stdout.write(
                    f"{name} {module}: flop_counter {result['flop_counter']}, "
                    f"eager_bytes {result['eager_bytes']}\n  {result['ops']}\n"
                )
        return 0

    results = {name: measure(name) for name in CASES}
    text = _toml(results, torch.__version__)
    modules = _toml({name: measure_module(name) for name in MODULE_CASES}, torch.__version__)
    llama = _toml(measure_llama(), torch.__version__)
    models = _toml(measure_models(), torch.__version__)
    losses = _toml(measure_losses(), torch.__version__)
    rotary = _toml(measure_rotary(), torch.__version__)
    layers = _toml(measure_layers(), torch.__version__)
    if options.write:
        MEASURED.write_text(text)
        MODULES_MEASURED.write_text(modules)
        LLAMA_MEASURED.write_text(llama)
        MODEL_MEASURED.write_text(models)
        LOSSES_MEASURED.write_text(losses)
        ROTARY_MEASURED.write_text(rotary)
        LAYERS_MEASURED.write_text(layers)
    sys.stdout.write(text + modules + llama + models + losses + rotary + layers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
