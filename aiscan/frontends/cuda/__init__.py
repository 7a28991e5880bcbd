"""The CUDA frontend: `.cu` kernels lowered to C in place, read by the C frontend, and
each launch turned into a loop nest over its grid (docs/cuda.md)."""

from aiscan.frontends.cuda.frontend import lower_cuda_source
from aiscan.frontends.cuda.launches import LaunchError, launch_from_spec

__all__ = ["LaunchError", "launch_from_spec", "lower_cuda_source"]
