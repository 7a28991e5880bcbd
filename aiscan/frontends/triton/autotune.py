"""`@triton.autotune(configs=[triton.Config({...}, num_warps=...), ...], key=[...])`.

Each config is one configuration of every launch of the kernel: its keys are block
constants the launch does not pass (the grid's `meta` reads them too). Which config the
autotuner picks depends on timings no static reading has, so the report takes the first
by default, every one on request (`--triton-config all`), and says which it used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange

from aiscan.frontends.triton.spans import span_of
from aiscan.ir.nodes import Unknown, UnknownKind
from aiscan.span import Span

__all__ = ["CONFIG_CHOICES", "Config", "Configs", "autotune_configs", "selection_note"]

CONFIG_CHOICES = ("first", "all")
"""`--triton-config`: the first config of an autotune list, or every one."""


@dataclass(frozen=True, slots=True)
class Config:
    """One `triton.Config`: its constexpr values, and its position in the list."""

    values: Mapping[str, int]
    options: Mapping[str, int]
    """`num_warps`, `num_stages`, ...: they change no count, the label shows them."""
    number: int
    of: int

    def describe(self) -> str:
        given = [f"{k}={v}" for k, v in (*self.values.items(), *self.options.items())]
        return f"config {self.number} of {self.of}: {', '.join(given)}"


@dataclass(frozen=True, slots=True)
class Configs:
    """A kernel's autotune list as read: its configs, or why it could not be read."""

    configs: tuple[Config, ...]
    span: Span
    problem: str | None = None


def autotune_configs(
    kernel: cst.FunctionDef,
    module: cst.Module,
    positions: Mapping[cst.CSTNode, CodeRange],
    path: str,
) -> Configs | None:
    """The kernel's `@triton.autotune` configs; None without that decorator."""
    for decorator in kernel.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or _name(call.func) not in (
            "triton.autotune",
            "autotune",
        ):
            continue
        span = span_of(path, positions[decorator])
        listed = next((a.value for a in call.args if _keyword(a) in ("configs", None)), None)
        if isinstance(listed, cst.Name):
            listed = _module_value(module, listed.value)
        if not isinstance(listed, cst.List | cst.Tuple):
            return Configs((), span, "the autotune configs are not a list the reader can read")
        read: list[tuple[dict[str, int], dict[str, int]]] = []
        for element in listed.elements:
            found = _config(element.value)
            if found is None:
                return Configs(
                    (), span, "an autotune config is not `triton.Config({...literal...})`"
                )
            read.append(found)
        total = len(read)
        configs = tuple(
            Config(values, options, number + 1, total)
            for number, (values, options) in enumerate(read)
        )
        return Configs(configs, span)
    return None


def selection_note(configs: Configs, chosen: str) -> Unknown:
    """What the report says about the configs it used."""
    if configs.problem is not None:
        return Unknown(
            UnknownKind.ASSUMPTION,
            f"{configs.problem}: block constants it sets are symbols",
            configs.span,
        )
    total = len(configs.configs)
    if chosen == "all" or total == 1:
        what = f"each of the {total} autotune configs is reported as a launch of its own"
    else:
        what = (
            f"autotune config 1 of {total} used (the autotuner picks by timing; "
            "`--triton-config all` reports every one)"
        )
    return Unknown(UnknownKind.ASSUMPTION, what, configs.span)


def _config(node: cst.BaseExpression) -> tuple[dict[str, int], dict[str, int]] | None:
    if not isinstance(node, cst.Call) or _name(node.func) not in ("triton.Config", "Config"):
        return None
    positional = [a.value for a in node.args if a.keyword is None]
    if not positional or not isinstance(positional[0], cst.Dict):
        return None
    values: dict[str, int] = {}
    for entry in positional[0].elements:
        if not isinstance(entry, cst.DictElement):
            return None
        key, value = entry.key, _integer(entry.value)
        if not isinstance(key, cst.SimpleString) or value is None:
            return None
        text = key.evaluated_value
        if not isinstance(text, str):
            return None
        values[text] = value
    options: dict[str, int] = {}
    for arg in node.args:
        name = _keyword(arg)
        if name is not None:
            value = _integer(arg.value)
            if value is not None:
                options[name] = value
    return values, options


def _integer(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    return None


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        owner = _name(node.value)
        return f"{owner}.{node.attr.value}" if owner is not None else None
    return None


def _module_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    """The value a module-level `name = [...]` binds (the last such assignment)."""
    found: cst.BaseExpression | None = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == name
            ):
                found = small.value
    return found
