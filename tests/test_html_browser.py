"""The HTML report in headless Chromium (scripts/html_page_check.cjs): the script runs
without errors and fetches nothing, a point's tooltip shows, a device and a memory-level
toggle hide their points, the wheel zooms. CI has no browser: skipped unless
AISCAN_BROWSER_MODULES names a node_modules with puppeteer-core and @sparticuz/chromium
(`npm install --prefix DIR puppeteer-core @sparticuz/chromium`, then DIR/node_modules)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_plot import KERNELS, devices

from aiscan.roofline.html import write_html

ROOT = Path(__file__).resolve().parent.parent
MODULES = os.environ.get("AISCAN_BROWSER_MODULES", "")

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None
    or not (Path(MODULES) / "puppeteer-core").is_dir()
    or not (Path(MODULES) / "@sparticuz" / "chromium").is_dir(),
    reason="no headless Chromium: set AISCAN_BROWSER_MODULES (see the module docstring)",
)


def test_tooltip_toggles_and_zoom_work_in_chromium(tmp_path: Path) -> None:
    page = write_html(tmp_path / "roof.html", KERNELS[:3], devices("h100", "epyc-9654"))
    done = subprocess.run(
        ["node", str(ROOT / "scripts" / "html_page_check.cjs"), str(page), str(tmp_path / "shot")],
        env={**os.environ, "NODE_PATH": MODULES},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["failures"] == [] and found["requests"] == [] and found["errors"] == []
    # the first point on the page: the bf16 dot's path at its largest size
    lines = found["tooltip"].split("\n")
    assert lines[0] == "bf16 dot on h100-sxm (bf16) at N = 65536: AI 0.5 F/B"
    assert lines[1:] == ["1.675 TFLOP/s", "traffic model: compulsory"]
    assert found["toggled"]["device"]["value"] == "h100-sxm"
    assert found["toggled"]["device"]["hidden"] == found["toggled"]["device"]["points"] > 0
    assert found["zoom"]["zoomed"] < found["zoom"]["whole"] == found["zoom"]["restored"]
    assert (tmp_path / "shot.png").stat().st_size > 10_000
