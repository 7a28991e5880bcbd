"""The README's images show what the code computes today: `scripts/readme_images.py`
draws them and records their data; this test recomputes the data (not the pixels)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "readme_images", ROOT / "scripts/readme_images.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_readme_image_is_drawn_by_the_script() -> None:
    script = _script()
    readme = (ROOT / "README.md").read_text()
    shown = {line.split("](")[1].rstrip(")") for line in readme.splitlines() if "![" in line}
    assert shown <= set(script.IMAGES)
    assert "scripts/readme_images.py" in readme


def test_the_images_data_is_current() -> None:
    script = _script()
    stored = json.loads((ROOT / "docs/images/images.json").read_text())
    for image, data in script.current_data().items():
        assert stored[image] == data, f"{image} is stale: run python scripts/readme_images.py"
