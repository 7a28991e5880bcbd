"""Triton frontend: `@triton.jit` kernels and their launches to the language-neutral IR."""

from aiscan.frontends.triton.frontend import (
    TritonKernels,
    has_triton_kernels,
    lower_triton_kernels,
    merged,
)

__all__ = ["TritonKernels", "has_triton_kernels", "lower_triton_kernels", "merged"]
