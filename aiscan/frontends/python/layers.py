"""What a module's `__init__` built, as the readers of its other methods see it.

`torch.nn` layers, user submodules and lists of them (`modules.py`), and Flax's lists of
submodules (`flax_modules.py`): records the scope holds by attribute name (`self.fc1`), kept
apart from the readers that build and call them so that the scope can name them without
importing a reader.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from aiscan.ir.nodes import ElementType

__all__ = ["ConvGeometry", "Layer", "ModuleList", "Submodule"]


@dataclass(frozen=True, slots=True)
class ConvGeometry:
    """A convolution's settings, one stride and padding per spatial axis (`nn.Conv2d`'s
    `stride=2` is `(2, 2)`), and its groups."""

    stride: tuple[sympy.Expr, ...]
    padding: tuple[sympy.Expr, ...]
    groups: sympy.Expr


@dataclass(frozen=True, slots=True)
class Layer:
    """What a constructor built: its kind, its parameters' extents, and their dtype."""

    kind: str
    sizes: tuple[sympy.Expr, ...]
    bias: bool
    element: ElementType
    option: str = ""
    """`GELU(approximate="tanh")`'s form, `Softmax(dim=...)`'s axis (as written)."""
    parts: tuple[Layer, ...] = ()
    """`nn.Sequential(a, b, c)`: its layers, applied in order."""
    geometry: ConvGeometry | None = None
    """`nn.Conv1d`/`nn.Conv2d`: stride, padding and groups (`sizes` are `C_in`, `C_out`
    and the kernel's extents)."""


@dataclass(frozen=True, slots=True)
class Submodule:
    """`self.attn = CausalSelfAttention(config)`: a module of this file, built with sizes.

    Its `forward` is summarized once (`summaries.py`), in the sizes its `__init__`'s
    parameters name; `sizes` pairs each such size with the value this constructor call
    gives it (`ndim` of `LayerNorm(ndim)` with `n_embd`), for each call to instantiate it."""

    class_name: str
    sizes: tuple[tuple[sympy.Expr, sympy.Expr], ...]
    method: str = "forward"
    """The method a call runs: `forward` for `self.attn(x)` and `self.attn.forward(x)`; a
    module's own helper method for `self._norm(x)` (`own_methods`)."""


@dataclass(frozen=True, slots=True)
class ModuleList:
    """`count` instances of one submodule, each with parameters of its own: PyTorch's
    `nn.ModuleList([Block(config) for _ in range(config.n_layer)])`, or an empty one filled
    by `self.layers.append(Block(i, args))` in a `for` over `range(n_layers)`; Flax's
    `[Block(config) for _ in range(config.n_layer)]`. `for block in self.h:` runs each in
    turn: a loop of `count` passes calling the submodule's summary (framework-neutral: any
    list whose element is a class of the file). An empty list not yet filled has neither."""

    element: Submodule | None
    count: sympy.Expr | None
