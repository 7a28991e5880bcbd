"""The Python frontend: NumPy-style kernels, read with libcst, lowered to the IR."""

from aiscan.frontends.python.frontend import lower_python_source

__all__ = ["lower_python_source"]
