"""Loops whose counter is multiplied, divided or shifted by a constant between constant
bounds are unrolled, each pass counted with its counter's value (frontends/c/geometric_loops)."""

from __future__ import annotations

import sympy

from aiscan.analysis.kernel import RegionAnalysis, analyze_module
from aiscan.frontends.c.geometric_loops import passes
from aiscan.pipeline import PipelineOptions, lower_source

_SOURCE = """
void shuffle(int n, float *a, float *out) {
  for (int i = 0; i < n; i++) {
    float v = a[i];
    for (int off = 16; off > 0; off /= 2)
      v += v * 0.5f;
    out[i] = v;
  }
}
void tree(float *s) {
  for (int k = 128; k > 0; k >>= 1)
    for (int t = 0; t < k; t++)
      s[t] += s[t + k];
}
void growing(float *s) {
  for (int k = 1; k < 100; k = k * 3)
    s[k] = 0.0f;
}
"""


def _regions() -> dict[str, RegionAnalysis]:
    analysis = analyze_module(lower_source(_SOURCE, "g.c", PipelineOptions()))
    return {f.function.name: f.regions[0] for f in analysis.functions}


def test_passes() -> None:
    assert passes(16, ">", 0, "/", 2) == [16, 8, 4, 2, 1]
    assert passes(128, ">", 0, ">>", 1) == [128, 64, 32, 16, 8, 4, 2, 1]
    assert passes(1, "<", 100, "*", 3) == [1, 3, 9, 27, 81]
    assert passes(0, "<", 100, "*", 2) is None  # stalls at 0: not unrolled


def test_geometric_loops_are_counted_exactly() -> None:
    regions = _regions()
    shuffle, tree, growing = regions["shuffle"], regions["tree"], regions["growing"]
    assert sympy.expand(sympy.sympify(str(shuffle.flops.total)) - 10 * sympy.Symbol("n")) == 0
    assert not shuffle.unknowns
    # 128 + 64 + ... + 1 adds; s[0..255] read, s[0..127] written.
    assert tree.flops.total == 255
    assert tree.traffic["compulsory"].read_bytes == 1024
    assert tree.traffic["compulsory"].write_bytes == 512
    assert not tree.unknowns
    assert growing.traffic["compulsory"].write_bytes == 20
