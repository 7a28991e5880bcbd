"""Which rules run where, with which thresholds, and which fail the run: from the
configuration and the flags."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from aiscan.errors import Severity, UsageError
from aiscan.lint.registry import RULES, get_rule, matches, validate_selectors
from aiscan.lint.rule import Rule

__all__ = ["LintSettings"]


@dataclass(frozen=True)
class LintSettings:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(glob, selectors): globs match paths relative to `root`, or file names."""
    thresholds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Rule code or name -> option -> value."""
    root: Path = field(default_factory=Path.cwd)
    fail_on: tuple[str, ...] = ()
    """Selectors of rules whose notes fail the run too: their findings become warnings."""

    def __post_init__(self) -> None:
        validate_selectors(self.select, "select")
        validate_selectors(self.ignore, "ignore")
        validate_selectors(self.fail_on, "fail-on")
        for pattern, selectors in self.per_file_ignores:
            validate_selectors(selectors, f"per-file-ignores {pattern!r}")
        for key, values in self.thresholds.items():
            rule = get_rule(key)
            unknown = sorted(set(values) - set(rule.options))
            if unknown:
                known = ", ".join(rule.options) or "none"
                raise UsageError(
                    f"thresholds.{key}: unknown option(s) {', '.join(unknown)} (known: {known})"
                )

    def enabled(self) -> tuple[type[Rule], ...]:
        return tuple(
            rule
            for rule in RULES
            if any(matches(s, rule) for s in self.select)
            and not any(matches(s, rule) for s in self.ignore)
        )

    def enabled_for(self, path: str) -> tuple[type[Rule], ...]:
        ignored = self._file_ignores(path)
        return tuple(r for r in self.enabled() if not any(matches(s, r) for s in ignored))

    def severity_of(self, rule: type[Rule]) -> Severity:
        """The rule's default severity, but a note of a rule `fail-on` selects is a warning:
        it fails the run, and every output (text, JSON, SARIF `level`) says so."""
        if rule.severity is Severity.NOTE and any(matches(s, rule) for s in self.fail_on):
            return Severity.WARNING
        return rule.severity

    def options_for(self, rule: type[Rule]) -> dict[str, float]:
        values = dict(rule.options)
        for key, overrides in self.thresholds.items():
            if get_rule(key) is rule:
                values.update({name: float(value) for name, value in overrides.items()})
        return values

    def _file_ignores(self, path: str) -> list[str]:
        absolute = Path(path).resolve()
        try:
            relative = absolute.relative_to(self.root.resolve()).as_posix()
        except ValueError:
            relative = PurePath(path).as_posix()
        ignored: list[str] = []
        for pattern, selectors in self.per_file_ignores:
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(absolute.name, pattern):
                ignored += selectors
        return ignored
