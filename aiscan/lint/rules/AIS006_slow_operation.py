"""AIS006 slow-operation: division or a math-library call in a loop that runs per element."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from aiscan.algebra import SYMPY, expand
from aiscan.analysis.flops import executions
from aiscan.errors import Severity
from aiscan.ir.nodes import Statement
from aiscan.lint.certainty import grows_with_size
from aiscan.lint.context import LintContext
from aiscan.lint.finding import Finding
from aiscan.lint.rule import Rule

if TYPE_CHECKING:
    import sympy
else:
    sympy = SYMPY


__all__ = ["SlowOperation"]

_LITERAL_DIVISOR = re.compile(r"(?<![/*])/=?(?!/)\s*(\d+\.?\d*(?:[eE][-+]?\d+)?)[fFlL]?\b")


class SlowOperation(Rule):
    """## What it does
    Flags a floating-point division or a math-library call (`sqrt`, `exp`, `log`, `pow`,
    `sin`, `tanh`, `np.exp`, ...) in a statement whose number of executions grows with the
    problem size. The message gives the operations per execution, the executions and the
    share of the nest's FLOPs they are. Division by a power-of-two literal is exempt:
    compilers turn it into an exact multiplication.

    ## Why is this bad?
    A multiply or add retires every cycle per SIMD lane; a double-precision divide or
    square root takes several times longer and is not fully pipelined, and a math call
    such as `exp` costs tens of instructions. In a loop over every element these
    operations, not the memory traffic or the FLOP count, can set the run time. aiscan
    counts a special call as `special-weight` FLOPs (0 by default), so the roofline does
    not show their cost.

    ## Example
    ```c
    for (int i = 0; i < n; i++)
        y[i] = x[i] / h;          // n divisions
    ```
    Use instead: `const double inv_h = 1.0 / h;` before the loop and `x[i] * inv_h`
    inside (one division; the result may differ in the last bit).

    ## Options
    None.

    ## References
    - A. Fog, "Instruction tables", latencies and reciprocal throughputs of DIV and SQRT
      instructions on x86 processors.
    """

    code = "AIS006"
    name = "slow-operation"
    severity = Severity.WARNING

    def check(self, context: LintContext, options: Mapping[str, float]) -> Iterator[Finding]:
        seen: set[int] = set()
        for region, placed in context.looped_statements(explicit=False):
            statement = placed.statement
            divisions = statement.flops.div - _power_of_two_divisors(statement)
            specials = statement.special_calls
            if divisions <= 0 and not specials:
                continue
            runs = executions(placed)
            if not grows_with_size(runs) or statement.span.line in seen:
                continue
            seen.add(statement.span.line)
            parts = []
            if divisions > 0:
                parts.append(f"{divisions} division{'s' if divisions > 1 else ''}")
            if specials:
                parts.append(f"call{'s' if len(specials) > 1 else ''} to {', '.join(specials)}")
            message = f"{' and '.join(parts)} per execution, executed {runs} times"
            if divisions > 0 and region.flops.total != 0:
                total = expand(divisions * runs)
                message += f"; {total} of the nest's {region.flops.total} FLOPs are divisions"
            yield self.finding(
                statement.span,
                message,
                (
                    ("divisions per execution", str(max(divisions, 0))),
                    ("math calls", ", ".join(specials) or "none"),
                    ("executions", str(runs)),
                    ("nest FLOPs", str(region.flops.total)),
                ),
            )


def _power_of_two_divisors(statement: Statement) -> int:
    """Divisions by a literal power of two, which compilers make exact multiplications."""
    count = 0
    for match in _LITERAL_DIVISOR.finditer(statement.text):
        value = float(match.group(1))
        if value > 0 and math.frexp(value)[0] == 0.5:
            count += 1
    return min(count, statement.flops.div)
