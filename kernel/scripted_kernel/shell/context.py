"""The contract between the interpreter and the commands it runs.

A command (everything under `commands/`, and every registered tool) is `run(ctx, argv) -> status`
and sees the script only through a `CommandContext`: its standard streams, the working
directory and filesystem, the exported variables (read-only), the execution's budget and
network policy, and a way to run another program of the same script (`xargs`, `find -exec`,
`env CMD`). It never sees the `Shell`: a command cannot change variables, options, functions
or the working directory, just as a program bash forks cannot.

argv is passed beside the context, as to a C program's main(), so a command that re-enters
itself with other arguments need not copy the context.
"""
from __future__ import annotations

import random
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

from ..fs import absolute
from .jobs import ProcessInput, ProcessOutput
from .streams import InputStream
from .variables import next_random

if TYPE_CHECKING:
    from ..base.limits import Budget, ExecutionLimits
    from .runtime import Shell

Writer = Callable[[str], None]


class Descriptor(NamedTuple):
    """An open descriptor as /dev/fd/N shows it."""
    readable: bool
    pipe: bool              # standard input, output and error (pipes to the caller), <( ) and >( )
    size: int               # characters of a file opened for reading with exec N< (else 0)


class CommandContext:
    """What one running command may use. Made by the dispatcher for each command it runs.

    The streams and the budget are the shell's at the command's start; what a command reads
    rarely (the filesystem, the working directory, the network allowlist...) is read from the
    shell when asked: a context is made for every command, most of which use none of it."""
    __slots__ = ("stdin", "out", "err", "budget", "_shell", "_run_program")

    def __init__(self, sh: "Shell", run_program: Callable):
        self.stdin: "InputStream" = sh.stdin
        self.out: Writer = sh.out
        self.err: Writer = sh.err
        self.budget: "Budget" = sh.budget
        self._shell = sh
        self._run_program = run_program           # dispatch.run_program (which imports this module)

    # read from the shell when asked (attrgetter: a getter in C, no Python call)
    fs = property(attrgetter("_shell.fs"))
    cwd = property(attrgetter("_shell.cwd"))
    umask = property(attrgetter("_shell.umask"))
    hostname = property(attrgetter("_shell.hostname"))
    execution = property(attrgetter("_shell.run"), doc="The execution's state (shell/run.py).")
    network = property(attrgetter("_shell.run.network"), doc="The allowlist curl may fetch.")
    extra_fds = property(attrgetter("_shell.extra_fds"), doc="The descriptors opened with exec N> (/dev/fd/N).")
    isolate_tools = property(attrgetter("_shell.isolate_tools"),
                             doc="Under `timeout`: a callback runs on its own thread.")
    observer = property(attrgetter("_shell.run.observer"),
                        doc="Tracing (tools/telemetry.py Observer; None when off): "
                            "`with ctx.observer.span(name, attrs)`.")

    @property
    def limits(self) -> "ExecutionLimits":
        return self.budget.limits

    @property
    def lineno(self) -> int:
        """The script line the command is on ($LINENO), for messages that point at it."""
        return self._shell.lineno

    @property
    def random(self) -> "random.Random":
        """The generator behind $RANDOM: the shell's (shared by every shell of the process
        unless a snapshot gave it its own), or, once `RANDOM=N` seeded bash's generator, one
        seeded from it. Commands that draw random numbers (shuf, dd if=/dev/urandom) seed their
        own generator from it, so that seeding it makes them reproducible, as $RANDOM is."""
        sh = self._shell
        if sh.random_state is not None:
            return random.Random(next_random(sh) << 15 | next_random(sh))
        return sh.random

    def descriptor(self, fd: int) -> Optional[Descriptor]:
        """What descriptor `fd` is (/dev/fd/N), or None when it is not open."""
        if fd <= 2:
            return Descriptor(fd == 0, True, 0)
        stream = self.extra_fds.get(fd)
        if stream is None:
            return None
        readable = isinstance(stream, InputStream)
        pipe = isinstance(stream, (ProcessInput, ProcessOutput))
        size = len(stream.data.encode("utf-8", "surrogateescape")) if readable and not pipe else 0
        return Descriptor(readable, pipe, size)

    def path(self, name: str) -> str:
        """A path operand made absolute against the working directory."""
        return absolute(self.cwd, name)

    def read_stdin_bytes(self) -> bytes:
        """All of standard input as bytes. Streams carry text: bytes that are not UTF-8 travel
        as lone surrogates (`surrogateescape`), so binary data passes through pipes intact."""
        return self.stdin.read_all().encode("utf-8", "surrogateescape")

    def write_bytes(self, data: bytes) -> None:
        """Write bytes to standard output (see read_stdin_bytes)."""
        self.out(data.decode("utf-8", "surrogateescape"))

    def env(self) -> dict[str, str]:
        """The exported variables, as a program's environment (a copy)."""
        return self._shell.exported_env()

    def getenv(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """One variable of the environment (exported), or `default`."""
        return self.env().get(name, default)

    def is_command(self, name: str) -> bool:
        """Whether `name` is one of the programs the engine provides itself: a registered command
        or tool (what `which` shows as installed in /usr/bin)."""
        return name in self._shell.commands

    def program_locations(self, name: str, every: bool = False) -> list[str]:
        """Where `name` is as a program on $PATH, as `which` (and `type -a`) print it: the
        first (with `every`, each) executable file of the filesystem, the engine's commands
        counting as installed in /usr/bin and /bin (shell/builtins/files.py)."""
        from .builtins.files import ALSO_PROGRAMS, program_locations
        return program_locations(self, name, every, self.getenv("PATH", "") or "",
                                 lambda n: self.is_command(n) or n in ALSO_PROGRAMS)

    def run(self, argv: list[str], stdin: Optional[str] = None,
            env: Optional[dict[str, str]] = None) -> Optional[int]:
        """Run argv[0] as a program of this script (a command, a tool, a builtin that is also a
        program, a script file on $PATH; never a shell function), with this command's output
        streams; `stdin` None passes this command's own standard input on, and `env` replaces
        the environment. None when there is no such program (the caller words the error)."""
        return self._run_program(self._shell, argv, stdin, env, self.stdin)
