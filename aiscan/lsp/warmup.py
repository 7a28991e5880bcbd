"""Imported by the language server's fork server only: first-use costs paid before a child
forks, not inside the first hover of every child.

A child's first document paid for what no later one pays: importing its frontend (libcst
alone is about half a second), pycparser's first parser, and sympy's solvers and limits,
which sympy imports at their first call. Importing this module imports both frontends and
runs one small C and one small Python kernel through the document path the server uses,
placed on a CPU (the cache model) and a GPU; every child forked afterwards starts with all
of that done. The results are thrown away.
"""

from __future__ import annotations

import contextlib

import aiscan.frontends.c
import aiscan.frontends.python  # noqa: F401  (libcst and the Python frontend)
from aiscan.lint.settings import LintSettings
from aiscan.lsp.document import ServerSettings
from aiscan.lsp.view import view_document
from aiscan.options import PipelineOptions
from aiscan.roofline.devices import load_devices

__all__ = ["KERNELS", "warm_up"]

KERNELS = {
    "warm-up.c": (
        "void warm_up(int n, int m, const double *restrict a, double *restrict b)\n"
        "{\n"
        "    for (int i = 1; i < n - 1; i += 2)\n"
        "        for (int j = 0; j < m; j++)\n"
        "            b[i * m + j] = a[i * m + j] / 2.0 + a[(i - 1) * m + j];\n"
        "}\n"
    ),
    "warm_up.py": (
        "import numpy as np\n"
        "\n"
        "\n"
        "def warm_up(x: np.ndarray, y: np.ndarray):\n"
        "    for i in range(1, x.shape[0] - 1, 3):\n"
        "        for j in range(i):\n"
        "            y[i] += x[i] * x[j]\n"
    ),
}
"""A strided loop (a floor in its trip count), a triangle and a ratio of polynomials: the
shapes that reach sympy's lazily imported parts."""


def warm_up() -> None:
    """Each kernel through `view_document` (which turns any failure into a diagnostic)."""
    catalog = load_devices(())
    settings = ServerSettings(
        PipelineOptions(), LintSettings(), (catalog.get("epyc-9654"), catalog.get("h100-sxm"))
    )
    for path, text in KERNELS.items():
        view_document(text, path, settings, 30.0)


# The fork server skips a preloaded module whose import raises ImportError and dies of any
# other exception: a failed warm-up costs the head start, never the server.
with contextlib.suppress(Exception):
    warm_up()
