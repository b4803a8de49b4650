"""The language: a logic-only bash interpreter (lexer → parser → AST → closures → output)."""
from .errors import ShellSyntaxError
from .interpreter import ExecResult, execute
from .limits import CancelToken, ExecutionLimits
from .parser import parse

__all__ = ["CancelToken", "ExecResult", "ExecutionLimits", "ShellSyntaxError", "execute", "parse"]
