"""One lint rule per module, named by code and kebab-case name (see `aiscan.lint.registry`)."""
