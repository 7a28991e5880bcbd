"""aiscan: exact symbolic arithmetic intensity of loop kernels, read from source."""

__all__ = ["__version__"]

__version__ = "0.2.0"
