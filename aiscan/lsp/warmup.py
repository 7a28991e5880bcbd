"""An analysis child's first-use costs, paid while it waits for its first document.

A child's first document paid what no later one pays: importing its frontend (libcst
alone is about half a second), pycparser's first parser, libcst's validation patterns
and the counting's first sympy calls. Paid in the fork server, they
stood before the first child's fork, so on the path of the document an editor opens as it
starts the server (fe86fb8, reverted). Here they are paid by an idle child, one short step
at a time (`STEPS`), and the child looks for a request between steps: a document that
comes waits for one step at most, and once one has come the child warms up no more (a
step would stand before the next edit's analysis). The results are thrown away.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

from aiscan.lint.settings import LintSettings
from aiscan.lsp.document import ServerSettings
from aiscan.lsp.view import view_document
from aiscan.options import PipelineOptions

__all__ = ["KERNELS", "STEPS"]

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
"""A strided loop (a floor in its trip count) and a triangle: counts that reach sympy's
lazily imported parts."""


def _view(path: str) -> Callable[[], None]:
    def step() -> None:
        settings = ServerSettings(PipelineOptions(), LintSettings(), ())
        view_document(KERNELS[path], path, settings, 30.0)  # any failure: a diagnostic

    return step


def _settle() -> None:
    """The warm-up's garbage collected, and what survives (the modules it imported, the
    caches it filled) out of every later collection's scan: a full collection of the
    child's 180,000 objects took about 90 ms of each edit's analysis."""
    gc.collect()
    gc.freeze()


STEPS: tuple[Callable[[], None], ...] = (_view("warm-up.c"), _view("warm_up.py"), _settle)
"""Each frontend's first parse and counts, C first (the shorter), then the collector
settled. Not the placements: on the fixtures they did not bring the first hover sooner,
and a step stands before a document that comes during it."""
