"""Draw every image the README and docs show, from the commands written here, and record
what each one plots (the kernels' counts, their paths over sizes, the devices' files) in
`docs/images/images.json`, so that a test can tell when an image no longer shows what the
code computes: the images' data is checked, not their pixels.

Usage:
    python scripts/readme_images.py           # redraw the images and rewrite images.json
    python scripts/readme_images.py --check   # exit 1 if images.json is not current
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "images" / "images.json"

# The image, and the `aiscan roofline` arguments that draw it (paths from the repository).
IMAGES: dict[str, tuple[str, ...]] = {
    "docs/images/roofline.png": (
        "fixtures/c/daxpy.c",
        "fixtures/c/dgemm_ijk.c",
        "fixtures/c/bf16_matmul.c",
        "fixtures/c/stencil_cross9.c",
        "--device",
        "h100-sxm",
        "--size",
        "n=4096,N=4096,m=4096",
    ),
    "docs/images/roofline-devices.svg": (
        "fixtures/c/daxpy.c",
        "fixtures/c/dgemm_ijk.c",
        "fixtures/c/stencil_cross9.c",
        "fixtures/c/triad.c",
        "--device",
        "h100-sxm",
        "--device",
        "epyc-9654",
        "--device",
        "l4",
        "--threads",
        "96",
    ),
    "docs/images/hierarchical-roofline.png": (
        "fixtures/c/dgemm_ijk.c",
        "fixtures/c/daxpy.c",
        "fixtures/c/stencil_cross9.c",
        "fixtures/c/time_stencil.c",
        "--device",
        "haswell-e5-2695v3",
        "--size",
        "n=2000,m=2000,T=10",
        "--threads",
        "14",
    ),
}


def _arguments(image: str) -> argparse.Namespace:
    from aiscan.cli import _parser

    argv = ["roofline", *IMAGES[image], "-o", str(ROOT / image)]
    return _parser().parse_args(argv)


def _figure(value: float) -> str:
    return f"{value:.4g}"


def image_data(image: str) -> dict[str, Any]:
    """What `image` plots: every kernel's exact counts and precision, its path over sizes
    per device (4 significant digits), and a digest of each device's file."""
    from aiscan.cli import roofline_inputs

    inputs = roofline_inputs(_arguments(image))
    kernels = []
    for kernel in inputs.kernels:
        paths = {
            device: [[size, _figure(x), _figure(y)] for size, x, y in points]
            for device, points in (kernel.size_paths or {}).items()
        }
        kernels.append(
            {
                "label": kernel.label,
                "flops": str(kernel.flops),
                "bytes": str(kernel.bytes_moved),
                "bytes_write_allocate": str(kernel.bytes_write_allocate),
                "precision": kernel.precision,
                "view": kernel.traffic_view,
                "paths": paths,
            }
        )
    devices = {
        d.key: hashlib.sha256(Path(d.path).read_bytes()).hexdigest()[:16] for d in inputs.devices
    }
    return {"command": ["aiscan", "roofline", *IMAGES[image]], "kernels": kernels,
            "devices": devices, "sizes": inputs.plot_arguments["sizes"]}  # fmt: skip


def current_data() -> dict[str, Any]:
    return {image: image_data(image) for image in IMAGES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare images.json")
    check = parser.parse_args().check
    data = current_data()
    if check:
        stored = json.loads(DATA.read_text())
        stale = [image for image in IMAGES if stored.get(image) != data[image]]
        for image in stale:
            print(f"{image}: stale; run python scripts/readme_images.py", file=sys.stderr)
        sys.exit(1 if stale else 0)
    from aiscan.cli import main as aiscan

    for image in IMAGES:
        aiscan(["roofline", *IMAGES[image], "-o", str(ROOT / image)])
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
