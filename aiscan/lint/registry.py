"""Every lint rule, by code; selectors (`AIS0`, `ALL`, `memory-bound`) resolve against it."""

from __future__ import annotations

from aiscan.errors import UsageError
from aiscan.lint.rule import Rule
from aiscan.lint.rules.AIS001_memory_bound import MemoryBound
from aiscan.lint.rules.AIS002_unfused_nests import UnfusedNests
from aiscan.lint.rules.AIS003_numpy_temporaries import NumpyTemporaries
from aiscan.lint.rules.AIS004_strided_access import StridedAccess
from aiscan.lint.rules.AIS005_invariant_load import InvariantLoad
from aiscan.lint.rules.AIS006_slow_operation import SlowOperation
from aiscan.lint.rules.AIS007_weak_fp64 import WeakFp64
from aiscan.lint.rules.AIS008_analysis_gap import AnalysisGap
from aiscan.lint.rules.AIS009_broken_layer_condition import BrokenLayerCondition
from aiscan.lint.rules.AIS010_uncoalesced_access import UncoalescedAccess
from aiscan.lint.rules.AIS011_shared_bank_conflict import SharedBankConflict
from aiscan.lint.rules.AIS012_atomic_contention import AtomicContention
from aiscan.lint.rules.AIS013_wasted_lanes import WastedLanes
from aiscan.lint.rules.AIS014_l2_tile_spill import L2TileSpill
from aiscan.lint.rules.AIS015_grid_too_small import GridTooSmall
from aiscan.lint.rules.AIS100_unused_suppression import UnusedSuppression

__all__ = ["RULES", "UNUSED_SUPPRESSION", "get_rule", "matches", "validate_selectors"]

RULES: tuple[type[Rule], ...] = (
    MemoryBound,
    UnfusedNests,
    NumpyTemporaries,
    StridedAccess,
    InvariantLoad,
    SlowOperation,
    WeakFp64,
    AnalysisGap,
    BrokenLayerCondition,
    UncoalescedAccess,
    SharedBankConflict,
    AtomicContention,
    WastedLanes,
    L2TileSpill,
    GridTooSmall,
    UnusedSuppression,
)
UNUSED_SUPPRESSION = UnusedSuppression.code


def get_rule(code_or_name: str) -> type[Rule]:
    wanted = code_or_name.strip()
    for rule in RULES:
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    known = ", ".join(f"{r.code} ({r.name})" for r in RULES)
    raise UsageError(f"unknown rule {code_or_name!r}; known: {known}")


def matches(selector: str, rule: type[Rule]) -> bool:
    """`ALL`, a code prefix (`AIS0`, `AIS004`) or a rule name (`strided-access`)."""
    selector = selector.strip()
    return (
        selector.upper() == "ALL"
        or rule.code.startswith(selector.upper())
        or selector.lower() == rule.name
    )


def validate_selectors(selectors: tuple[str, ...], where: str) -> None:
    for selector in selectors:
        if not any(matches(selector, rule) for rule in RULES):
            raise UsageError(f"{where}: {selector!r} selects no rule (see `aiscan rule --all`)")
