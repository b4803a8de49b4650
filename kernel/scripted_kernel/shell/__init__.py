"""The language: a logic-only bash interpreter (lexer → parser → AST → closures → output)."""
from .native import compiled_dir_in_use

# Before anything imports the lexer: the compiled one, if it was built from these sources.
COMPILED_FRONT_END = compiled_dir_in_use(__path__) is not None

from ..base.errors import ShellSyntaxError  # noqa: E402
from .interpreter import ExecResult, execute  # noqa: E402
from ..base.limits import CancelToken, ExecutionLimits  # noqa: E402
from .parser import parse  # noqa: E402

__all__ = ["COMPILED_FRONT_END", "CancelToken", "ExecResult", "ExecutionLimits", "ShellSyntaxError",
           "execute", "parse"]
