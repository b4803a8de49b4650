"""The shell's front door: how everything above the interpreter uses it (the tool layer, the
notebook, snapshots, the kernel). A caller describes the shell it wants with a ShellConfig,
runs a script with run_script, keeps a shell between runs in a ShellSession, reads a script's
outline without running it, and saves and restores a shell's state; it never reaches into a
Shell's attributes. Commands see the shell through shell/context.py instead.

mvdan/sh configures its runner with options at construction (`interp.New(opts...)`) and
just-bash with `new Bash({files, env, customCommands})`; this is the same idea.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from ..base.errors import Cancelled, LimitExceeded, ShellSyntaxError
from ..base.limits import Budget, CancelToken, ExecutionLimits, activate
from . import nodes as A
from .builtins import load as load_builtins
from .dispatch import suggest
from .escapes import text_from_host
from .interpreter import BUILTINS, ShellResult, execute
from .lexer import Source
from .parser import RESERVED, Parser
from .run import OutputSink, Run, ShellSlot
from .session_state import measure
from .state import Var

__all__ = ["KEYWORDS", "Cancelled", "CancelToken", "CommandWords", "ExecutionLimits",
           "LimitExceeded", "OutputSink", "Run", "ShellConfig", "ShellSession", "ShellSyntaxError", "Var",
           "Word", "builtin_names", "outline", "read_status", "run_script", "suggest", "text_from_host"]

KEYWORDS = frozenset(RESERVED)     # words no command can take as its name


def builtin_names() -> frozenset:
    """The shell's builtins (`cd`, `echo`, `read`, ...)."""
    return frozenset(load_builtins())


@dataclass
class ShellConfig:
    """The shell a script runs in, given at construction.

    `commands`: name -> fn(ctx, argv), every command besides the builtins (text commands, file
    commands, tools). `shadowed`: name -> ("builtin", None) or ("command", fn), the shell's own
    that a host command in `commands` took the name of: a call of that name reaches the host's,
    `builtin NAME` and `command NAME` the shell's own. `env`: the environment (exported
    variables). `hostname`, `fs`: the shell's (a shell kept between runs is moved onto `fs`).
    `start_variables`: variables a new shell starts with (name -> Var; a kept shell keeps its
    own). `random_seed`: $RANDOM (and what commands draw from it) from this seed, so that a run
    can be replayed."""
    commands: dict
    env: dict = field(default_factory=dict)
    shadowed: dict = field(default_factory=dict)
    hostname: Optional[str] = None
    fs: Any = None
    start_variables: dict = field(default_factory=dict)
    random_seed: Optional[int] = None


_BUILTIN_TABLES: dict = {}      # frozenset of builtins taken -> the builtin table without them


def _builtins_without(taken: frozenset) -> Optional[dict]:
    if not taken:
        return None
    table = _BUILTIN_TABLES.get(taken)
    if table is None:
        if len(_BUILTIN_TABLES) > 64:
            _BUILTIN_TABLES.clear()
        table = _BUILTIN_TABLES[taken] = {n: f for n, f in load_builtins().items() if n not in taken}
    return table


class ShellSession(ShellSlot):
    """A shell kept between runs (BashTool, ScriptedTool.session(), the notebook's session):
    empty until a run makes the shell, emptied to start afresh."""
    __slots__ = ()

    @property
    def cwd(self) -> Optional[str]:
        return self.shell.cwd if self.shell is not None else None

    def variables(self) -> dict:
        """Its global variables, each a copy (name -> Var); {} for an empty session."""
        return {name: var.copy() for name, var in self.shell.globals.items()} if self.shell is not None else {}

    def state_bytes(self) -> int:
        """What its shell state takes, as max_shell_state_bytes counts it (shell/session_state.py)."""
        return self.shell.state_bytes if self.shell is not None else 0

    def measure(self) -> int:
        return measure(self.shell) if self.shell is not None else 0

    def capture(self, capture) -> Optional[dict]:
        """Its shell's state as a manifest section (shell/state_io.py), texts kept by `capture`."""
        from .state_io import capture_state
        return capture_state(self.shell, capture) if self.shell is not None else None

    def restore(self, spec, blobs: dict, limits: ExecutionLimits, fs, env: Optional[dict] = None):
        """Replace its shell by the one a manifest section records (None: empty)."""
        from .state_io import restore_state
        self.shell = restore_state(spec, blobs, limits, fs, env)

    def copy(self) -> "ShellSession":
        """Another session holding the same shell (a run's view of it)."""
        return ShellSession(self.shell)

    def take(self, other: "ShellSession"):
        """Hold the shell `other` holds (a session restored elsewhere; empty if it is)."""
        self.shell = other.shell

    def move_to(self, fs):
        """Put its shell on the filesystem `fs` (None: leave it where it is)."""
        if self.shell is not None and fs is not None:
            self.shell.fs = fs

    def hostname(self) -> Optional[str]:
        return self.shell.hostname if self.shell is not None else None

    def filesystem(self):
        """The filesystem its shell works on (None for an empty session)."""
        return self.shell.fs if self.shell is not None else None


def run_script(script: str, config: ShellConfig, run: Run, stdin: str = "",
               session: Optional[ShellSlot] = None) -> ShellResult:
    """Run `script` in the shell `config` describes: a new one, or the one `session` keeps
    (made if it is empty). The run's budget, output and filesystem are `run`'s."""
    new_shell = session is None or not session
    taken = frozenset(name for name, (kind, _) in config.shadowed.items() if kind == "builtin")

    shadowed = {name: (kind, fn if fn is not None else BUILTINS[name]) for name, (kind, fn) in config.shadowed.items()}

    def configure(sh):
        sh.shadowed = shadowed
        if config.hostname is not None:
            sh.hostname = config.hostname
        if config.fs is not None and sh.fs is not config.fs:     # a shell made before: keep it on these files
            sh.fs = config.fs
        if config.random_seed is not None:
            sh.random = random.Random(config.random_seed)
        if new_shell:
            for name, var in config.start_variables.items():
                sh.globals[name] = var.copy()
    return execute(script, commands=config.commands, env=config.env, stdin=stdin, session=session,
                   shell_setup=configure, builtins=_builtins_without(taken), run=run)


# ---------------------------------------------------------------- reading a script without running it

@dataclass(frozen=True)
class Word:
    """A word of a command as written: its text when it expands to that text whatever the
    variables hold (None when it depends on the run), and where it starts."""
    text: Optional[str]
    line: int
    col: int


@dataclass(frozen=True)
class CommandWords:
    """A simple command's words, as written."""
    words: tuple


@dataclass
class Outline:
    """What a static read of a script finds: the functions it defines and every simple
    command (in `$( )`, functions and compound commands too), in the order of the text."""
    functions: set
    commands: list


_RUN_TIME_WORD = Word(None, 0, 0)


def outline(script: str, max_depth: int) -> Outline:
    """The outline of `script` (ShellSyntaxError for a script that does not parse)."""
    source = Source(script)
    tree = Parser(script, max_depth=max_depth, source=source).parse_program()
    functions, commands = set(), []
    for node in _walk(tree):
        if type(node) is A.FunctionDef:
            functions.add(node.name)
        elif type(node) is A.SimpleCommand and node.words:
            commands.append(CommandWords(tuple(Word(_constant_text(w), *source.line_col(w.pos)) for w in node.words)))
    return Outline(functions, commands)


def run_time_word() -> Word:
    """A word that stands for words known only at run time (what `xargs` adds)."""
    return _RUN_TIME_WORD


def read_status(text: str, max_depth: int, seconds: float) -> str:
    """How a front-end should treat `text` typed so far: "incomplete" where bash would read
    on (an open quote, block or here-document), "invalid" for a syntax error, "complete"
    otherwise, or when reading it takes more than `seconds`."""
    parser = Parser(text, max_depth=max_depth)
    previous = activate(Budget(ExecutionLimits(timeout_seconds=seconds), CancelToken()))   # the parser's clock
    try:
        parser.parse_program()
    except ShellSyntaxError as e:
        return "incomplete" if e.eof else "invalid"
    except Cancelled:
        return "complete"
    finally:
        activate(previous)
    return "incomplete" if parser.lex.heredoc_at_eof else "complete"


def _constant_text(word) -> Optional[str]:
    """The text of a word that expands to itself whatever the variables hold, or None."""
    if type(word) is not A.Word:
        return None
    text = []
    for part in word.parts:
        kind = type(part)
        if kind is A.Lit or kind is A.SingleQuoted:
            text.append(part.text)
        elif kind is A.DoubleQuoted and all(type(p) is A.Lit for p in part.parts):
            text.extend(p.text for p in part.parts)
        else:
            return None
    joined = "".join(text)
    return None if any(c in joined for c in "*?[") and any(type(p) is A.Lit for p in word.parts) else joined


def _walk(node) -> Iterator:
    """Every node of the syntax tree, depth first, in the order of the text."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (list, tuple)):
            stack.extend(reversed(current))
            continue
        if not isinstance(current, A.NodeBase):
            continue
        yield current
        children = [getattr(current, f) for f in current.FIELDS if f != "pos"]
        stack.extend(reversed([c for c in children if isinstance(c, (list, tuple, A.NodeBase))]))
