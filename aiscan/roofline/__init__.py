"""Device rooflines: device data, placement of kernels on a roof, and roofline plots.

Submodules are imported explicitly (`aiscan.roofline.devices`, `.placement`, `.plot`,
`.html`) so that listing devices never pays for sympy or matplotlib.
"""

__all__: list[str] = []
