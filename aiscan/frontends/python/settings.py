"""Configuration objects of model code: `config.n_embd`, `args.dim` are the model's sizes.

Model code passes its sizes in one object (`GPTConfig`, `ModelArgs`) and reads them as
attributes in each `__init__`. A parameter of a PyTorch function that the body only reads
through attributes (`config.n_embd`), or hands on whole to a call (`Block(config)`), is such
an object: each attribute it is read through is the size symbol of that attribute's name, the
same in every class of the file, so `nn.Linear(config.n_embd, 4 * config.n_embd)` is a layer
of sizes `n_embd` and `4*n_embd`. An attribute that is a flag or a rate (`config.bias`,
`config.dropout`) is read as a size too; the layers read it as they read any value.
"""

from __future__ import annotations

import libcst as cst

from aiscan.frontends.python.walk import walk

__all__ = ["SETTINGS_REASON", "settings_parameters"]

SETTINGS_REASON = "is a configuration object: its attributes are sizes named after them"

_ARRAY_ATTRIBUTES = frozenset(
    {"shape", "T", "mT", "H", "mH", "dtype", "ndim", "size", "real", "imag", "device", "data"}
)
"""Attributes only an array has: a name read through one of them is no configuration."""


def settings_parameters(body: cst.CSTNode, candidates: set[str]) -> set[str]:
    """The candidates `body` reads only as `name.attr` (never an array's attribute, never
    a method called) or passes whole as a call's argument, with at least one attribute read."""
    uses = _Uses(candidates)
    walk(body, uses)
    return {n for n in candidates if uses.attributes.get(n) and n not in uses.other}


class _Uses(cst.CSTVisitor):
    def __init__(self, candidates: set[str]) -> None:
        super().__init__()
        self.candidates = candidates
        self.attributes: dict[str, int] = {}
        self.other: set[str] = set()
        self.allowed: set[int] = set()
        """Names (by id) whose use was already classified by their parent."""

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        owner = func.value if isinstance(func, cst.Attribute) else None
        if isinstance(owner, cst.Name) and owner.value in self.candidates:
            self.other.add(owner.value)  # `x.float()`: a method, an array's
            self.allowed.add(id(owner))
        for argument in node.args:
            if isinstance(argument.value, cst.Name) and argument.value.value in self.candidates:
                self.allowed.add(id(argument.value))  # `Block(config)`: handed on whole

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if (
            isinstance(value, cst.Name)
            and value.value in self.candidates
            and all(
                isinstance(t.target, cst.Attribute)
                and isinstance(t.target.value, cst.Name)
                and t.target.value.value == "self"
                for t in node.targets
            )
        ):
            self.allowed.add(id(value))  # `self.config = config` (nanoGPT's GPT): kept whole

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.allowed.add(id(node.keyword))  # `bias=...`: a keyword, not a use

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.allowed.add(id(node.attr))  # `self.config`: an attribute's name, not a use
        if isinstance(node.value, cst.Name) and node.value.value in self.candidates:
            name = node.value.value
            if id(node.value) in self.allowed:
                return
            self.allowed.add(id(node.value))
            if node.attr.value in _ARRAY_ATTRIBUTES:
                self.other.add(name)
            else:
                self.attributes[name] = self.attributes.get(name, 0) + 1

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.candidates and id(node) not in self.allowed:
            self.other.add(node.value)
