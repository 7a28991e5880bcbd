"""The fork server's warm-up: it must reach placement, or children start with nothing done."""

from __future__ import annotations

import pytest

from aiscan.lint.settings import LintSettings
from aiscan.lsp import warmup
from aiscan.lsp.document import ServerSettings
from aiscan.lsp.view import view_document
from aiscan.options import PipelineOptions
from aiscan.roofline.devices import load_devices


@pytest.mark.parametrize("path", sorted(warmup.KERNELS))
def test_each_warm_up_kernel_is_analyzed_and_placed(path: str) -> None:
    catalog = load_devices(())
    devices = (catalog.get("epyc-9654"), catalog.get("h100-sxm"))
    settings = ServerSettings(PipelineOptions(), LintSettings(), devices)
    view = view_document(warmup.KERNELS[path], path, settings, 60.0)
    assert view.errors == ()
    (nest,) = view.nests
    assert "- FLOPs: `" in nest.hover
    roofline = nest.hover.split("**Roofline**")[1]
    assert "epyc-9654" in roofline and "h100-sxm" in roofline
    assert "no placement" not in roofline and "cannot place" not in roofline
    assert "cache model" in roofline  # the CPU's layer conditions ran
