"""`pip install .` (not editable) must carry everything the package reads at run time."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{result.stdout}\n{result.stderr}")
    (path,) = out.glob("aiscan-*.whl")
    return path


def test_wheel_carries_data_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "aiscan/report/schema/report.schema.json" in names
    assert "aiscan/report/schema/lint.schema.json" in names
    assert "aiscan/frontends/c/include/math.h" in names
    assert "aiscan/_data/rules/devices/h100-sxm.toml" in names


def test_installed_package_finds_its_data(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    script = (
        "import aiscan.resources as r, sys\n"
        "assert str(r.rules_dir()).startswith(sys.argv[1]), r.rules_dir()\n"
        "assert (r.rules_dir() / 'devices' / 'h100-sxm.toml').is_file()\n"
        "from aiscan.cli import main\n"
        "sys.exit(main(['analyze', sys.argv[2], '--format', 'json']))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [sys.executable, "-c", script, str(target), str(ROOT / "fixtures" / "c" / "daxpy.c")],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert '"expr": "1/12"' in result.stdout
