"""The language: a logic-only bash interpreter (lexer → parser → AST → closures → output).
Everything above it uses its front door, api.py (commands, the command context: context.py)."""
from .native import compiled_dir_in_use

# Before anything imports the lexer: the compiled one, if it was built from these sources.
COMPILED_FRONT_END = compiled_dir_in_use(__path__) is not None

__all__ = ["COMPILED_FRONT_END"]
