"""aiscan: exact symbolic arithmetic intensity of loop kernels, read from source."""

from aiscan import dataclass_code

__all__ = ["__version__"]

__version__ = "0.2.0"

# Before any module defines a dataclass: their methods' compiled code is kept between runs.
dataclass_code.install()
