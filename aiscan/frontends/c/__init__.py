"""The C frontend: preprocess with stub headers, parse with pycparser, lower to the IR."""

from aiscan.frontends.c.frontend import CFrontendOptions, lower_c_source

__all__ = ["CFrontendOptions", "lower_c_source"]
