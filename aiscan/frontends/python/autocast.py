"""`torch.autocast` regions: which dtype PyTorch runs each operation in there.

Inside `with torch.autocast("cuda", dtype=torch.bfloat16):` (or `torch.cuda.amp.autocast()`,
`torch.cpu.amp.autocast()`, `torch.amp.autocast(...)`), PyTorch's dispatcher casts the
floating-point inputs of listed operations before running them, per
`aten/src/ATen/autocast_mode.cpp` (the "Autocast Op Reference" of the `torch.amp` docs):

- `lower_precision_fp` (CUDA and CPU): `matmul`/`@`, `mm`, `bmm`, `baddbmm`, `linear`,
  `einsum` (CUDA's list; on the CPU it runs through `bmm`, which is listed), the
  convolutions, `scaled_dot_product_attention`: each float32 (or other lower-precision)
  input is cast to the region's dtype, a kernel of its own (float64 inputs are not cast);
- `fp32` (CUDA): `layer_norm`, `group_norm`, the losses, `exp`, `log`, `rsqrt`, `pow`,
  `logsumexp`, ...: float16/bfloat16 inputs are cast to float32 first;
- `fp32_set_opt_dtype` (CUDA): `softmax`, `log_softmax`, `sum`, `prod`, `cumsum`: the op
  itself is asked for a float32 result (`dtype=torch.float32`), reading its input as it is.

Every other operation runs in its inputs' dtype, by the usual promotion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import libcst as cst

from aiscan.frontends.python import dtypes
from aiscan.frontends.python.names import SourceNames
from aiscan.ir.nodes import ElementType

__all__ = ["Autocast", "autocast_region"]

_CALLS = {
    "torch.autocast": None,
    "torch.amp.autocast": None,
    "torch.amp.autocast_mode.autocast": None,
    "torch.cuda.amp.autocast": "cuda",
    "torch.cuda.amp.autocast_mode.autocast": "cuda",
    "torch.cpu.amp.autocast": "cpu",
    "torch.cpu.amp.autocast_mode.autocast": "cpu",
}
"""The context managers, and the device the name fixes (None: `device_type` says)."""
_DEFAULT_DTYPES = {"cuda": dtypes.FLOAT16, "cpu": dtypes.BFLOAT16}
"""`torch.get_autocast_dtype(device)` when no `dtype=` is given."""


@dataclass(frozen=True, slots=True)
class Autocast:
    """An autocast region: the lower-precision dtype and the device whose lists apply."""

    element: ElementType
    device: str
    text: str
    """The `with` item as written, for notes."""

    @property
    def fp32_ops(self) -> bool:
        """The `fp32` and `fp32_set_opt_dtype` lists (softmax, layer_norm, ...) are CUDA's;
        on the CPU those operations run in their inputs' dtype."""
        return self.device == "cuda"


def autocast_region(
    call: cst.BaseExpression, names: SourceNames
) -> Autocast | str | Literal[False] | None:
    """What the `with` item `call` makes of the region: an `Autocast`; False where it
    turns autocast off (`enabled=False`); a reason where it is an autocast aiscan cannot
    read (a dtype or device not written out); None where it is no autocast at all."""
    if not isinstance(call, cst.Call):
        return None
    canonical = names.canonical(call.func)
    if canonical not in _CALLS:
        return None
    text = names.text(call)
    fixed = _CALLS[canonical]
    positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    # `torch.autocast(device_type, dtype, enabled, cache_enabled)`;
    # `torch.cuda.amp.autocast(enabled, dtype, cache_enabled)`.
    order = ("enabled", "dtype") if fixed else ("device_type", "dtype", "enabled")
    given = dict(zip(order, positional, strict=False)) | keywords
    enabled = given.get("enabled")
    if enabled is not None:
        if not isinstance(enabled, cst.Name) or enabled.value not in ("True", "False"):
            return f"`{text}`: `enabled` is not a literal"
        if enabled.value == "False":
            return False
    device = fixed
    if device is None:
        node = given.get("device_type")
        if not isinstance(node, cst.SimpleString):
            return f"`{text}`: the device type is not a string literal"
        device = node.raw_value
    if device not in _DEFAULT_DTYPES:
        return f"`{text}`: autocast on `{device}` (its operation lists are not modeled)"
    element = _DEFAULT_DTYPES[device]
    dtype = given.get("dtype")
    if dtype is not None and not (isinstance(dtype, cst.Name) and dtype.value == "None"):
        qualified = names.canonical(dtype)
        found = dtypes.dtype_qualified(qualified) if qualified is not None else None
        if found is None or found not in (dtypes.FLOAT16, dtypes.BFLOAT16):
            return f"`{text}`: the dtype is not torch.float16 or torch.bfloat16"
        element = found
    return Autocast(element, device, text)
