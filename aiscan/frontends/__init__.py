"""Frontends: each turns one language's source into the language-neutral IR."""
