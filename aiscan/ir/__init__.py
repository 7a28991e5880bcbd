"""The language-neutral IR both frontends produce."""
