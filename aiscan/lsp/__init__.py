"""The aiscan language server (`aiscan lsp`). Only this package imports pygls."""
