"""The state of one running shell (variables, functions, options, I/O) and the operations the
compiled closures, the expander and the builtins call on it."""
from __future__ import annotations

import random
import re
from typing import Callable, Optional

from . import arith as arith_mod
from .quoting import quote_for_reuse
from .lexer import decode_ansi_c
from ..base.errors import (bounded, unbound, ArithError, BreakLoop, ContinueLoop, ErrexitSignal, ExitSignal, FatalError,
                     LimitExceeded, ReturnSignal)
from ..fs import NO_FS, absolute
from ..base.limits import wall_clock
from .printer import body_text
from .state import (CAPITALIZE, EXPORT, INTEGER, LOWER, NAMEREF, READONLY, UPPER, IndexedArray, Var)
from .streams import EMPTY_INPUT, InputStream, PipeBuffer, SubstitutionBuffer, discard  # noqa: F401

HOME = "/home/user"
DEFAULT_IFS = " \t\n"
BASH_VERSION = "5.2.15(1)-release"


class TempScope(dict):
    """The variables of `NAME=value command`: visible to the command, gone after it.
    `made_local`: names a `local` inside the command (`v=x eval 'local v'`) turned into
    locals of the running function, as bash does: unset there leaves them declared.
    `of_function`: the bindings of a function call (`v=x f`), which a `local v` in f takes over."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made_local: set = set()
        self.of_function = False

    def copy_scope(self) -> "TempScope":
        new = TempScope(self)
        new.made_local = set(self.made_local)
        new.of_function = self.of_function
        return new


# $BASH_COMMAND is kept as (script text, start, end) and cut from the script only when it is
# read, which few scripts do: a slice for every command compiled cost more
NO_COMMAND = ("", 0, 0)


class DeclarationArg:
    """`name=value` given to declare/local/export/readonly, kept apart from plain strings."""
    __slots__ = ("name", "index", "append", "value", "apply_array")

    def __init__(self, name, index, append, value, apply_array):
        self.name = name
        self.index = index
        self.append = append
        self.value = value
        self.apply_array = apply_array

    def __str__(self):
        return f"{self.name}={self.value or ''}"


def command_text(span: tuple) -> str:
    text, start, end = span
    return text[start:end]


class Function:
    __slots__ = ("name", "body", "node", "script", "text_length")

    def __init__(self, name: str, body: Callable, node, script: str = ""):
        self.name = name
        self.body = body
        self.node = node
        self.script = script    # the text the function was defined in
        self.text_length = -1   # of its body, once measured (session_state)

    @property
    def source(self) -> str:
        """The body's text, for `type` and `declare -f`: found when asked, which few do."""
        return body_text(self.script, self.node.body.pos) if self.script else ""


OPTION_NAMES = {"e": "errexit", "u": "nounset", "x": "xtrace", "f": "noglob", "C": "noclobber",
                "a": "allexport", "v": "verbose", "n": "noexec", "h": "hashall", "B": "braceexpand",
                "T": "functrace", "E": "errtrace"}
# the options `set` changes, which are attributes of the shell (and what `local -` saves)
SET_OPTIONS = ("errexit", "nounset", "xtrace", "pipefail", "noglob", "noclobber", "allexport",
               "verbose", "noexec", "posix", "emacs", "vi", "functrace", "errtrace")
LONG_ONLY_OPTIONS = ("pipefail", "posix", "emacs", "vi", "ignoreeof", "interactive-comments",
                     "monitor", "notify", "nolog", "functrace", "errtrace", "histexpand", "history",
                     "keyword", "onecmd", "physical", "privileged")
SHOPT_DEFAULTS = {"extglob": False, "nullglob": False, "failglob": False, "nocasematch": False,
                  "nocaseglob": False, "dotglob": False, "globstar": False, "lastpipe": False,
                  "expand_aliases": False, "inherit_errexit": False, "patsub_replacement": True,
                  "extquote": True, "sourcepath": True, "xpg_echo": False, "globasciiranges": True,
                  "assoc_expand_once": False, "localvar_inherit": False, "localvar_unset": False,
                  "shift_verbose": False, "checkwinsize": False, "interactive_comments": True,
                  "login_shell": False, "progcomp": True, "promptvars": True, "hostcomplete": False,
                  "autocd": False, "globskipdots": True, "progcomp_alias": False,
                  "noexpand_translation": False, "varredir_close": False,
                  "cmdhist": True, "lithist": False, "compat31": False, "compat32": False,
                  "compat40": False, "compat41": False, "compat42": False, "compat43": False,
                  "compat44": False, "complete_fullquote": True, "direxpand": False,
                  "dirspell": False, "execfail": False, "extdebug": False, "force_fignore": True,
                  "gnu_errfmt": False, "histappend": False, "histreedit": False,
                  "histverify": False, "huponexit": False, "mailwarn": False,
                  "no_empty_cmd_completion": False, "restricted_shell": False, "cdable_vars": False,
                  "cdspell": False, "checkhash": False, "checkjobs": False}


_DEFAULTS_BY_HOME: dict = {}


def _default_variables(home: str) -> dict:
    """The variables every shell starts with. The Var objects are shared by all shells (no
    shell owns them: the first change copies one, see Var.owner), so a new shell does not
    build them again."""
    defaults = _DEFAULTS_BY_HOME.get(home)
    if defaults is None:
        exported = ("HOME", "PWD", "SHELL", "USER", "SHLVL", "HOSTNAME")
        values = {"HOME": home, "PWD": home, "IFS": DEFAULT_IFS, "PS4": "+ ", "OPTIND": "1",
                  "BASH_VERSION": BASH_VERSION, "BASH": "/bin/bash", "HOSTNAME": "sandbox",
                  "SHELL": "/bin/bash", "USER": "user", "UID": "1000", "EUID": "1000",
                  "PPID": "4241", "SHLVL": "1", "OSTYPE": "linux-gnu", "HOSTTYPE": "x86_64",
                  "MACHTYPE": "x86_64-pc-linux-gnu", "OPTERR": "1"}
        defaults = {name: Var(value, EXPORT if name in exported else 0) for name, value in values.items()}
        defaults["BASH_VERSINFO"] = Var(IndexedArray(["5", "2", "15", "1", "release",
                                                      "x86_64-pc-linux-gnu"]), READONLY)
        if len(_DEFAULTS_BY_HOME) < 64:          # one per file system home, in practice one or two
            _DEFAULTS_BY_HOME[home] = defaults
    return defaults


class Shell:
    """One shell: the top level of a script, or a subshell copied from its parent."""
    random: "random.Random"        # $RANDOM's generator: the shared one (set below) or its own

    def __init__(self, run, commands: dict, builtins: dict, env: Optional[dict] = None,
                 stdin: InputStream = EMPTY_INPUT, compile_script: Optional[Callable] = None,
                 compiler=None, out: Optional[Callable] = None, err: Optional[Callable] = None, fs=None):
        self.run = run                      # the execution's state (shell/run.py): owner of the budget
        self.budget = run.budget            # (kept here too: the command loop reads it on every command)
        self.limits = run.limits
        fs = fs if fs is not None else run.fs
        self.fs = fs if fs is not None else NO_FS
        self.cwd = self.fs.home if self.fs.enabled else HOME
        self.umask = 0o022
        self.hostname = "sandbox"
        self.dirstack: list[str] = []        # pushd's saved directories (below the current one)
        self.commands = commands
        self.builtins = builtins
        # the shell's own builtins and commands whose names a tool took (name -> ("builtin" or
        # "command", fn)): `builtin NAME` and `command NAME` still reach them
        self.shadowed: dict[str, tuple] = {}
        self.compile_script = compile_script     # text -> a compiled script (cached)
        self.compiler = compiler                 # the Compiler: words and assignments met at run time
        self.globals: dict[str, Var] = {}
        self.globals_shared = False         # the dict is a parent's: own_globals() before a change
        self.scopes: list[dict[str, Var]] = []
        self.functions: dict[str, Function] = {}
        self.functions_shared = False   # a subshell's table is its parent's until it changes it
        self.exported_functions: set[str] = set()     # export -f: seen by `bash -c` and scripts
        self.positional: list[str] = []
        self.status = 0
        self.lineno = 0
        self.out = out if out is not None else run.out.write
        self.err = err if err is not None else run.err.write
        self.stdin = stdin
        self.extra_fds: dict[int, Callable] = {}
        self.jobs = None                    # the background jobs it started (shell/jobs.py)
        self.procsub_frame: Optional[list] = None   # open process substitutions (shell/jobs.py)
        self.last_job_pid: Optional[int] = None     # $!
        self.pids = [4300]                  # the next job's $!, one count for all the shells
        self.random_state: Optional[list] = None    # [seed, last value] once RANDOM=N seeded it
        self.errexit = self.nounset = self.xtrace = self.pipefail = False
        self.noclobber = self.allexport = self.noglob = self.noexec = self.verbose = False
        self.posix = False
        self.functrace = self.errtrace = False
        self.trap_depth = 0                 # > 0 while a trap's action runs
        self.xtrace_depth = 0               # command substitutions and evals around: `set -x`'s ++
        self.bash_command = NO_COMMAND      # $BASH_COMMAND: the simple command running or next
        self.return_trap_depth = 0          # the RETURN trap fires for calls at least this deep
        self.emacs = self.vi = False
        # `local -`: (call depth, the options saved, the next outer entry), or None; a tuple
        # chain, so a subshell shares it safely
        self.local_options: Optional[tuple[int, tuple, Optional[tuple]]] = None
        self.shopts = dict(SHOPT_DEFAULTS)
        self.errexit_suppressed = 0
        self.subshell_level = 0
        self.funcnames: list[str] = []
        self.call_lines: list[int] = []     # BASH_LINENO: where each running function was called
        self.last_arg = ""                  # $_
        self.call_depth = 0
        self.loop_depth = 0
        self.cmdsub_status = 0
        self.traps: dict[str, str] = {}
        self.err_trap_held = 0      # > 0: no ERR trap now (inside it, or in a pipeline stage)
        self.script_name = "bash"
        self.pid = 4242
        self.started = wall_clock()
        self.pipestatus = [0]
        self.in_subshell = False
        self.isolate_tools = False          # under `timeout`: sync tools run on a helper thread
        self.var_owner = object()           # the Vars this shell may change in place (Var.owner)
        self.state_bytes = 0                # what it keeps, measured after a call (session_state)
        self._init_variables(env or {})

    def _init_variables(self, env: dict):
        defaults = _default_variables(self.cwd)
        if not env:
            self.globals.update(defaults)
            return
        g = self.globals
        for name, value in env.items():
            g[name] = Var(str(value), EXPORT)
        for name, var in defaults.items():
            if name not in g:
                g[name] = var

    # ------------------------------------------------------------ subshells

    def subshell(self) -> "Shell":
        """A copy for ( ), pipeline stages and command substitution: changes stay inside it."""
        if self.subshell_level >= self.limits.max_subshell_depth:
            raise LimitExceeded("max_subshell_depth",
                                f"subshell nesting deeper than {self.limits.max_subshell_depth} "
                                f"(max_subshell_depth)")
        child = object.__new__(Shell)
        d = child.__dict__
        d.update(self.__dict__)
        # the variables are shared, copied when the child first changes one (Var.owner); the
        # parent runs again only once the child has finished (pipeline stages run one after
        # another), so it keeps changing its own in place
        child.var_owner = object()
        # the dict of globals too is shared, copied when the child first changes one of them
        # (own_globals): $( ) costs the same with 10 variables or 10,000
        child.globals, child.globals_shared = self.globals, True
        child.scopes = ([s.copy_scope() if type(s) is TempScope else dict(s) for s in self.scopes]
                        if self.scopes else [])
        # shared until changed: own_functions() copies the table, and `shopt` replaces the
        # options' dict rather than writing into it
        child.functions, child.functions_shared = self.functions, True
        child.exported_functions = set(self.exported_functions)
        # (the positional parameters are shared: every change replaces the list)
        child.dirstack = list(self.dirstack)
        child.extra_fds = dict(self.extra_fds)
        child.jobs = self.jobs.inherited() if self.jobs is not None else None
        child.procsub_frame = None
        child.funcnames = list(self.funcnames)
        child.call_lines = list(self.call_lines)
        child.traps = {}
        child.subshell_level = self.subshell_level + 1
        child.loop_depth = 0
        child.in_subshell = True
        return child

    def own_globals(self) -> dict:
        """The dict of global variables, to change it (a subshell copies its parent's first)."""
        if self.globals_shared:
            self.globals = dict(self.globals)
            self.globals_shared = False
        return self.globals

    def own_functions(self) -> dict:
        """The function table, to change it (a subshell copies its parent's first)."""
        if self.functions_shared:
            self.functions = dict(self.functions)
            self.functions_shared = False
        return self.functions

    def script_shell(self) -> "Shell":
        """A fresh shell as bash starts one for a script file or `bash -c`: it inherits the
        exported variables, the working directory, the descriptors and the filesystem."""
        child = Shell(self.run, self.commands, self.builtins, self.exported_env(), stdin=self.stdin,
                      compile_script=self.compile_script, compiler=self.compiler, out=self.out,
                      err=self.err, fs=self.fs)
        child.cwd, child.umask, child.extra_fds = self.cwd, self.umask, dict(self.extra_fds)
        child.pids = self.pids
        child.hostname = self.hostname
        child.random = self.random
        child.shadowed = self.shadowed
        return child

    def attach(self, run, stdin: InputStream, commands: dict):
        """A persistent shell's next call: its run, input and commands."""
        self.run, self.budget, self.limits = run, run.budget, run.limits
        self.out, self.err, self.stdin = run.out.write, run.err.write, stdin
        self.commands = commands

    def run_subshell(self, fn: Callable, command: bool = False) -> int:
        """Run fn in this (sub)shell; exit, errexit and fatal errors end only this shell
        (`command`: see run_contained). Its background jobs run at its end (shell/jobs.py)."""
        status = self.run_exit_trap(self.run_contained(fn, command))
        if self.jobs is not None or self.procsub_frame:
            from .jobs import finish_jobs
            finish_jobs(self)
        return status

    def run_contained(self, fn: Callable, command: bool = False) -> int:
        """fn's status; exit, errexit and fatal errors end only fn, as they end a subshell.
        `command`: fn is a simple command that bash forks alone (a pipeline stage), which an
        error that exits the shell (an unbound variable under `set -u`) ends with its own
        status, 127; a subshell ends with 1."""
        try:
            status = fn(self)
        except ExitSignal as e:
            status = e.status
        except ErrexitSignal as e:
            status = e.status
        except FatalError as e:
            self.error(e.message)
            status = 1 if e.exits and not command else e.status
        except (BreakLoop, ContinueLoop):
            status = 0
        except ReturnSignal as e:
            status = e.status
        return status

    def run_exit_trap(self, status: int) -> int:
        action = self.traps.pop("EXIT", None)
        if action:
            self.status = status
            self.trap_depth += 1
            try:
                self.eval_string(action)
            except ExitSignal as e:
                status = e.status
            finally:
                self.trap_depth -= 1
        return status

    def command_substitution(self, body: Callable) -> str:
        child = self.subshell()
        buf = SubstitutionBuffer(self.budget)
        child.out = buf.write
        child.xtrace_depth += 1
        if not self.shopts["inherit_errexit"]:
            child.errexit = False
        child.status = self.status
        status = child.run_subshell(body)
        self.cmdsub_status = status
        self.status = status
        text = buf.text()
        if "\0" in text:           # bash strings cannot hold NUL bytes: bash drops them
            text = text.replace("\0", "")
        if len(text) > 4096:
            if len(text) > self.limits.max_string_length:
                raise LimitExceeded("max_string_length", "command substitution output exceeds "
                                    f"{self.limits.max_string_length} characters (max_string_length)")
            self.budget.note(len(text))
        return text.rstrip("\n")

    def file_substitution(self, name: str) -> str:
        """`$(< file)`: the file's contents without trailing newlines."""
        from ..fs import FsError, access
        try:
            text = access.read_text(self, name)
            self.cmdsub_status = 0
        except FsError as e:
            self.error(f"{name}: {access.redirect_message(e)}")
            self.cmdsub_status = 1
            return ""
        return text.replace("\0", "").rstrip("\n")

    # ------------------------------------------------------------ messages

    def path(self, name: str) -> str:
        """A path operand made absolute against the working directory."""
        return absolute(self.cwd, name)

    def error(self, message: str):
        """A diagnostic as bash prints it for a script: `bash: line N: message` (a script run
        by path or `bash FILE` names its path: `s.sh: line N: message`)."""
        self.err(bounded(f"{self.script_name}: line {self.lineno}: {message}") + "\n")

    # ------------------------------------------------------------ variables

    def lookup(self, name: str) -> Optional[Var]:
        if self.scopes:
            for scope in reversed(self.scopes):
                var = scope.get(name)
                if var is not None:
                    break
            else:
                var = self.globals.get(name)
        else:
            var = self.globals.get(name)
        if var is None:
            dyn = DYNAMIC_VARS.get(name)
            return dyn(self) if dyn is not None else None
        if var.attrs & NAMEREF and var.value:
            return self._follow_nameref(var)
        return var

    def subscript(self, text: str) -> str:
        """A subscript that arrives as text at run time (`unset 'a[$k]'`, `printf -v 'a["k"]'`,
        `${!ref}`, namerefs): expanded as a word, as bash does."""
        fn = _SUBSCRIPTS.get(text)
        if fn is None:
            fn = self.compiler.word_text(text)
            if len(_SUBSCRIPTS) > 1024:
                _SUBSCRIPTS.clear()
            _SUBSCRIPTS[text] = fn
        return fn(self)

    def _follow_nameref(self, var: Var) -> Optional[Var]:
        for _ in range(8):
            target = var.value
            if type(target) is not str or not _NAMEREF_TARGET.match(target):
                return var            # not a variable name: bash uses the value as it is
            if "[" in target:
                base, _, key = target.partition("[")
                if key in ("@]", "*]"):        # a[@]: the elements joined, as "$ref" reads
                    whole = self.lookup_raw(base)
                    return Var(" ".join(whole.values())) if whole is not None else None
                value = self.get_element(base, self.subscript(key[:-1]))
                return Var(value) if value is not None else None
            nxt = self.lookup_raw(target)
            if nxt is None:
                return None
            if not nxt.attrs & NAMEREF or not nxt.value:
                return nxt
            var = nxt
        return None

    def lookup_raw(self, name: str) -> Optional[Var]:
        return self._holder(name)[1]

    def lookup_own(self, name: str) -> Optional[Var]:
        """lookup_raw for a change in place: a Var this shell does not own (shared with the
        shell it was copied from) is copied into this shell's scope first."""
        scope, var = self._holder(name)
        if var is None or var.owner is self.var_owner:
            return var
        return self.adopt(scope, name, var)

    def _holder(self, name: str) -> tuple:
        """(the scope holding `name`, its Var): the innermost scope, else the globals."""
        for scope in reversed(self.scopes):
            var = scope.get(name)
            if var is not None:
                return scope, var
        return self.globals, self.globals.get(name)

    def adopt(self, scope: dict, name: str, var: Var) -> Var:
        """A copy of `var` (shared with another shell) that this shell owns, put in `scope`."""
        if scope is self.globals:
            scope = self.own_globals()
        var = scope[name] = var.copy(self.var_owner)
        return var

    def resolve_name(self, name: str) -> str:
        """The variable an assignment to `name` writes: namerefs followed."""
        start = name
        for _ in range(8):
            var = self.lookup_raw(name)
            if var is None or not var.attrs & NAMEREF or not var.value:
                return name
            name = var.value
        raise FatalError(f"{start}: circular name reference")

    def get_value(self, name: str) -> Optional[str]:
        var = self.lookup(name)
        if var is None:
            return None
        v = var.value
        if type(v) is str:
            return v
        return var.scalar()

    @property
    def ifs(self) -> str:
        var = self.lookup("IFS")
        if var is None:
            return DEFAULT_IFS
        v = var.value
        return v if type(v) is str else (var.scalar() or "")

    def all_var_names(self) -> list[str]:
        names = set(self.globals)
        for scope in self.scopes:
            names.update(scope)
        return [n for n in names if (var := self.lookup(n)) is not None and var.value is not None]

    def exported_env(self) -> dict[str, str]:
        env = {}
        for scope in [self.globals] + self.scopes:
            for name, var in scope.items():
                if var.attrs & EXPORT and type(var.value) is str:
                    env[name] = var.value
                elif name in env and not var.attrs & EXPORT:
                    del env[name]
        return env

    def get_element(self, name: str, key: str) -> Optional[str]:
        var = self.lookup(name)
        if var is None:
            return None
        v = var.value
        if type(v) is dict:
            return v.get(key)
        if not key:
            raise FatalError(f"{name}[]: bad array subscript")
        index = self.arith_eval(key)
        if type(v) is IndexedArray:
            return v.get(index)
        if v is None:
            return None
        return v if index == 0 or index == -1 else None

    def resolve_reference(self, target: str, quoted: bool):
        """${!x}: the value of the variable named by x's value (which may be `a[1]` or `@`)."""
        if target in ("@", "*"):
            return list(self.positional) if not (quoted and target == "*") else \
                self.ifs[:1].join(self.positional)
        if (target.isascii() and target.isdigit()):
            k = int(target)
            return self.script_name if k == 0 else (self.positional[k - 1] if k <= len(self.positional) else None)
        if target in ("#", "?"):
            return str(len(self.positional)) if target == "#" else str(self.status)
        if target.endswith("]") and "[" in target:
            name, _, key = target[:-1].partition("[")
            if key in ("@", "*"):
                var = self.lookup(name)
                vals = var.values() if var is not None else []
                return self.ifs[:1].join(vals) if (key == "*" and quoted) else vals
            if not _valid_name(name):
                raise FatalError(f"{target}: invalid variable name")
            return self.get_element(name, self.subscript(key))
        if not _valid_name(target):
            raise FatalError(f"{target}: invalid indirect expansion" if target else
                             "invalid indirect expansion")
        return self.get_value(target)

    def check_string(self, value: str):
        """A large value about to be stored: its length, and the memory it adds up to."""
        if len(value) > self.limits.max_string_length:
            raise LimitExceeded("max_string_length",
                                f"string longer than {self.limits.max_string_length} characters "
                                f"(max_string_length)")
        self.budget.note(len(value))

    def _writable(self, name: str) -> Var:
        """The variable `name=value` changes, owned by this shell (copied if shared)."""
        var = None
        if self.scopes:
            for scope in reversed(self.scopes):
                var = scope.get(name)
                if var is not None:
                    break
        if var is None:
            scope = self.globals
            var = scope.get(name)
            if var is None:
                var = Var(None, EXPORT if self.allexport else 0, self.var_owner)
                self.own_globals()[name] = var
                return var
        if var.attrs & NAMEREF and type(var.value) is str and _NAMEREF_TARGET.match(var.value):
            if "[" in var.value:
                raise _ElementTarget(var.value)
            target = self.resolve_name(name)
            if target != name:
                return self._writable(target)
        if var.attrs & READONLY:
            raise FatalError(f"{name}: readonly variable")
        # (the scope search above is lookup's, written out: this runs for every assignment)
        return var if var.owner is self.var_owner else self.adopt(scope, name, var)

    def set_var(self, name: str, value: str, append: bool = False):
        """name=value (or name+=value) with the variable's attributes applied."""
        try:
            var = self._writable(name)
        except _ElementTarget as ref:
            base, _, key = ref.target.partition("[")
            self.set_element(base, self.subscript(key[:-1]), value, append)
            return
        if self.allexport:
            var.attrs |= EXPORT
        attrs = var.attrs
        if attrs:
            value = self._apply_attrs(var, value, append)
        elif append:
            old = var.value
            if type(old) is str:
                value = old + value
            elif old is not None:
                self._set_element_of(var, name, "0", value, True)
                return
        if len(value) > 4096:
            self.check_string(value)
        v = var.value
        if v is None or type(v) is str:
            var.value = value
        else:
            self._set_element_of(var, name, "0", value, False)

    def _apply_attrs(self, var: Var, value: str, append: bool) -> str:
        attrs = var.attrs
        old = var.scalar() if append else None
        if attrs & INTEGER:
            n = self.arith_eval(value) if value.strip() else 0
            if append:
                n = arith_mod.wrap(self.arith_eval(old or "0") + n)
            value = str(n)
        elif append:
            value = (old or "") + value
        if attrs & LOWER:
            value = value.lower()
        elif attrs & UPPER:
            value = value.upper()
        elif attrs & CAPITALIZE:
            value = value[:1].upper() + value[1:].lower()
        return value

    def set_element(self, name: str, key: str, value: str, append: bool = False):
        try:
            var = self._writable(name)
        except _ElementTarget as ref:
            raise _not_a_container(ref) from None
        self._set_element_of(var, name, key, value, append)

    def _container(self, name: str) -> Var:
        """The variable an element or array assignment writes: a nameref to an element
        (`typeset -n r='a[0]'`) cannot be one, as in bash."""
        try:
            return self._writable(name)
        except _ElementTarget as ref:
            raise _not_a_container(ref) from None

    def _set_element_of(self, var: Var, name: str, key: str, value: str, append: bool):
        v = var.value
        if v is None or type(v) is str:
            arr = IndexedArray()
            if type(v) is str:
                arr.set(0, v)
            var.value = v = arr
        if var.attrs & (INTEGER | LOWER | UPPER | CAPITALIZE):
            old = self.get_element_of(var, key)
            tmp = Var(old, var.attrs)
            value = self._apply_attrs(tmp, value, append)
            append = False
        if type(v) is dict:
            if append:
                value = v.get(key, "") + value
            v[key] = value
            return
        if not key:
            raise FatalError(f"{name}[]: bad array subscript")
        # bash exits on a bad subscript of an assignment
        index = self.arith_eval(key, exits=True) if key.strip() else 0
        if index < 0:
            real = index + v.top
            if real < 0:
                raise FatalError(f"{name}[{index}]: bad array subscript")
            index = real
        if append:
            value = (v.d.get(index) or "") + value
        if index not in v.d and len(v.d) >= self.limits.max_array_length:
            raise LimitExceeded("max_array_length",
                                f"array {name} longer than {self.limits.max_array_length} elements "
                                f"(max_array_length)")
        if len(value) > 4096:
            self.check_string(value)
        v.set(index, value)

    def get_element_of(self, var: Var, key: str) -> Optional[str]:
        v = var.value
        if type(v) is dict:
            return v.get(key)
        if type(v) is IndexedArray:
            return v.get(self.arith_eval(key) if key else 0)
        return v

    def set_array(self, name: str, items: list, assoc_pairs: Optional[list] = None, append: bool = False):
        """name=(items...) or name+=(...): items are (key or None, value, append) triples."""
        var = self._container(name)
        existing = var.value
        if type(existing) is dict or (existing is None and assoc_pairs is not None):
            target = existing if (append and type(existing) is dict) else {}
            # in name=(...) a [key]+=value appends to the value before the assignment
            before = existing if type(existing) is dict else {}
            var.value = target
            if items and items[0][0] is None:     # (k1 v1 k2 v2 ...): alternating keys and values
                flat = [v for _, v, _ in items]
                for k in range(0, len(flat), 2):
                    target[flat[k]] = flat[k + 1] if k + 1 < len(flat) else ""
                return
            for key, value, elem_append in items:
                if key is None:
                    continue           # bash ignores a value without [key]= here
                target[key] = ((target if append else before).get(key, "") + value) if elem_append else value
            return
        if append and type(existing) is IndexedArray:
            arr = existing
        else:
            arr = IndexedArray()
            if append and type(existing) is str:
                arr.set(0, existing)
        var.value = arr
        next_index = arr.top              # a value without [key]= goes after the previous one
        for key, value, elem_append in items:
            if key is None:
                if len(arr.d) >= self.limits.max_array_length:
                    raise LimitExceeded("max_array_length",
                                        f"array {name} longer than {self.limits.max_array_length} "
                                        f"elements (max_array_length)")
                if var.attrs & (INTEGER | LOWER | UPPER):
                    value = self._apply_attrs(Var(None, var.attrs), value, False)
                arr.set(next_index, value)
                next_index += 1
            else:
                index = self.arith_eval(key) if key.strip() else 0
                if index < 0:
                    index += arr.top
                self._set_element_of(var, name, str(index), value, elem_append)
                next_index = index + 1

    def unset_var(self, name: str) -> bool:
        current = len(self.scopes) - 1
        for k in range(current, -1, -1):
            scope = self.scopes[k]
            var = scope.get(name)
            if var is not None:
                if var.attrs & READONLY:
                    raise FatalError(f"{name}: cannot unset: readonly variable")
                if var.attrs & NAMEREF and var.value:
                    return self.unset_var(var.value)
                if (type(scope) is TempScope and name not in scope.made_local) or k != current:
                    # a temporary binding, or a local of a calling function: removing it
                    # reveals the variable beneath, as in bash
                    del scope[name]
                    return True
                # a local of the running function stays local, with no value
                scope[name] = Var(None, var.attrs & ~(INTEGER | LOWER | UPPER), self.var_owner)
                return True
        var = self.globals.get(name)
        if var is not None:
            if var.attrs & READONLY:
                raise FatalError(f"{name}: cannot unset: readonly variable")
            if var.attrs & NAMEREF and var.value:
                return self.unset_var(var.value)
            del self.own_globals()[name]
        return True

    def local_scope(self) -> dict:
        """The running function's scope (temporary bindings of `NAME=v cmd` are not it), or
        at the top level the globals, owned: callers change it."""
        for scope in reversed(self.scopes):
            if type(scope) is not TempScope:
                return scope
        return self.own_globals()

    def assign_from_expansion(self, p, value: str):
        """${x:=value} (and ${!x:=value}, which assigns the variable x names)"""
        if p.indirect:
            if p.index is not None and p.index.literal() in ("@", "*"):
                var = self.lookup(p.name)
                target = self.ifs[:1].join(var.values()) if var is not None else ""
            else:
                target = self.get_value(p.name) or ""
            if not _valid_name(target):
                raise FatalError(f"{target}: invalid variable name")
            self.set_var(target, value)
            return
        if p.name in ("@", "*", "#", "?", "-", "$", "!") or (p.name.isascii() and p.name.isdigit()):
            raise FatalError(f"${p.name}: cannot assign in this way")
        if p.index is not None:
            self.set_element(p.name, _expand_index(self, p.index), value)
        else:
            self.set_var(p.name, value)

    # ------------------------------------------------------------ arithmetic

    def arith_eval(self, text: str, exits: bool = False) -> int:
        """`text` evaluated; an error abandons the command (`exits`: the whole shell)."""
        try:
            # a subscript or a value is most often a plain decimal or a variable's name: both
            # taken as the parsed expression would take them, without its closures
            if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) < 19:
                return int(text)                    # (arith_get's test of a value)
            if text.isidentifier() and text.isascii():
                return self.arith_get(text, None)
            return arith_mod.compile_arith(text)(self)
        except ArithError as e:
            raise FatalError(e.render(), exits=exits) from None
        except RecursionError:
            raise FatalError(f"{text}: expression recursion level exceeded", exits=exits) from None

    def arith_get(self, name: str, index) -> int:
        if index is None:
            # (a global without attributes is lookup's answer: this runs for every operand)
            var = None if self.scopes else self.globals.get(name)
            if var is None or var.attrs:
                var = self.lookup(name)
            if var is None:
                if self.nounset:
                    raise unbound(name)
                return 0
            v = var.value
            if type(v) is not str:
                v = var.scalar()
                if v is None:
                    if self.nounset:
                        raise unbound(name)
                    return 0
        else:
            var = self.lookup(name)
            if var is None:
                return 0
            val = var.value
            if type(val) is dict:
                v = val.get(str(index))
            elif type(val) is IndexedArray:
                v = val.get(index)
            else:
                v = val if index == 0 else None
            if v is None:
                return 0
        # A plain decimal is the common case; anything else (010 is octal, 0x1f, 2#101, -3,
        # an expression, Python-only forms like 1_000, 19 digits and more, which wrap) is
        # evaluated as bash does. (arith_eval makes the same test: written out in both, as a
        # call here cost 3 % of an array loop)
        if v.isdigit() and v.isascii() and (v[0] != "0" or len(v) == 1) and len(v) < 19:
            return int(v)
        v = v.strip()
        if not v:
            return 0
        self.call_depth += 1
        try:
            if self.call_depth > 1024:
                raise ArithError(v, "expression recursion level exceeded", v)
            return arith_mod.compile_arith(v)(self)
        finally:
            self.call_depth -= 1

    def is_assoc(self, name: str) -> bool:
        var = self.lookup(name)
        return var is not None and type(var.value) is dict

    def arith_key(self, name: str, subscript: str):
        """The element an arithmetic `name[subscript]` denotes: a string key for an
        associative array (quotes removed, no evaluation), else the evaluated index."""
        if self.is_assoc(name):
            return subscript.strip().replace("'", "").replace('"', "")
        return arith_mod.compile_arith(subscript)(self)

    def arith_set(self, name: str, index, value: int):
        text = str(value)
        if index is None:
            self.set_var(name, text)
        else:
            self.set_element(name, str(index), text)

    # ------------------------------------------------------------ misc

    def tilde(self, user: str) -> str:
        if user == "":
            home = self.get_value("HOME")
            return HOME if home is None else home
        if user == "+":
            return self.get_value("PWD") or HOME
        if user == "-":
            return self.get_value("OLDPWD") or "~-"
        if user == getattr(self.fs, "user", "user"):
            return getattr(self.fs, "home", HOME) if self.fs.enabled else HOME
        if user == "root":
            return "/root"
        return "~" + user

    def option_letters(self) -> str:
        """$- in bash's order (hashall and braceexpand are always on; -c: a command string)."""
        return "".join(letter for letter, name in _DOLLAR_DASH if name is None or getattr(self, name)) + "c"

    def transform(self, value: str, letter: str, p) -> str:
        if letter == "Q":
            return quote_for_reuse(value)
        if letter == "E":
            return decode_ansi_c(value)
        if letter == "P":
            return value
        if letter == "U":
            return value.upper()
        if letter == "u":
            return value[:1].upper() + value[1:]
        if letter == "L":
            return value.lower()
        name = p.name
        if p.indirect:                     # ${!r@a}: the variable r names (a[0] -> a)
            if p.index is not None and p.index.literal() in ("@", "*"):   # ${!r[@]@a}: r's values name it
                var = self.lookup(p.name)
                reference = " ".join(var.values()) if var is not None else ""
            else:
                reference = self.get_value(p.name) or ""
            name = reference.split("[", 1)[0]
        if letter == "a":
            var = self.lookup(name)
            return attribute_letters(var) if var is not None else ""
        if letter == "A":
            return f"{name}={quote_for_reuse(value)}"
        if letter in "Kk":
            return quote_for_reuse(value)
        return value

    def eval_string(self, text: str, name: str = "eval") -> int:
        assert self.compile_script is not None   # (every shell that runs scripts is given one)
        fn = self.compile_script(text)
        return fn(self)

    def _run_trap(self, name: str, status: int):
        """A DEBUG or RETURN trap: its commands keep the script's $LINENO and $BASH_COMMAND
        (trap_depth), and $? is the same after it."""
        self.trap_depth += 1
        try:
            self.eval_string(self.traps[name])
        finally:
            self.trap_depth -= 1
            self.status = status

    def _run_return_trap(self, status: int):
        """The RETURN trap as a function ends (still inside it); then its caller's turn."""
        self.return_trap_depth = self.call_depth - 1
        self._run_trap("RETURN", status)

    def run_debug_trap(self):
        """The DEBUG trap before a command (in functions only under `set -T`), not within itself."""
        if not self.funcnames or self.functrace:
            self._run_trap("DEBUG", self.status)

    def save_local_options(self):
        """`local -`: the options as they are now come back when the running function
        returns, however it ends (a limit or an error too)."""
        if self.local_options is None or self.local_options[0] != self.call_depth:
            saved = tuple(getattr(self, name) for name in SET_OPTIONS)
            self.local_options = (self.call_depth, saved, self.local_options)

    def restore_local_options(self):
        assert self.local_options is not None   # (callers check there is an entry)
        _, saved, self.local_options = self.local_options
        for name, value in zip(SET_OPTIONS, saved):
            setattr(self, name, value)

    def run_function(self, func: Function, argv: list) -> int:
        if self.call_depth >= self.limits.max_function_depth:
            raise LimitExceeded("max_function_depth",
                                f"{func.name}: maximum function nesting level exceeded "
                                f"({self.limits.max_function_depth}, max_function_depth)")
        saved_positional = self.positional
        self.positional = argv[1:]
        self.funcnames.append(func.name)
        self.call_lines.append(self.lineno)
        self.scopes.append({})
        self.call_depth += 1
        saved_loop = self.loop_depth
        self.loop_depth = 0
        try:
            try:
                status = func.body(self)
            except ReturnSignal as r:
                status = r.status
            if "RETURN" in self.traps and (self.return_trap_depth >= self.call_depth or self.functrace):
                self._run_return_trap(status)
            return status
        finally:
            if self.local_options is not None and self.local_options[0] == self.call_depth:
                self.restore_local_options()
            self.call_depth -= 1
            self.loop_depth = saved_loop
            self.scopes.pop()
            self.funcnames.pop()
            self.call_lines.pop()
            self.positional = saved_positional


_SUBSCRIPTS: dict = {}
_NAMEREF_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?\Z", re.S)


class _ElementTarget(Exception):
    """A nameref names an array element: the assignment goes to that element."""

    def __init__(self, target: str):
        self.target = target


def _not_a_container(ref: _ElementTarget) -> FatalError:
    return FatalError(f"`{ref.target}': not a valid identifier")


def _valid_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and \
        all(c.isalnum() or c == "_" for c in name)


def _expand_index(sh: Shell, index_word) -> str:
    return sh.compiler.words.string(index_word)(sh)


def attribute_letters(var: Var) -> str:
    letters = ""
    if var.is_array:
        letters += "a"
    if var.is_assoc:
        letters += "A"
    if var.attrs & INTEGER:
        letters += "i"
    if var.attrs & LOWER:
        letters += "l"
    if var.attrs & NAMEREF:
        letters += "n"
    if var.attrs & READONLY:
        letters += "r"
    if var.attrs & UPPER:
        letters += "u"
    if var.attrs & EXPORT:
        letters += "x"
    return letters


def _funcname(sh: Shell) -> Optional[Var]:
    if not sh.funcnames:
        return None
    return Var(IndexedArray(list(reversed(sh.funcnames))))


def _bash_lineno(sh: Shell) -> Optional[Var]:
    return Var(IndexedArray([str(n) for n in reversed(sh.call_lines)]))


_DOLLAR_DASH = (("a", "allexport"), ("e", "errexit"), ("f", "noglob"), ("h", None), ("n", "noexec"),
                ("u", "nounset"), ("v", "verbose"), ("x", "xtrace"), ("B", None), ("C", "noclobber"),
                ("E", "errtrace"), ("T", "functrace"))

# One generator for $RANDOM in every shell: seeding one per shell read 2.5 KB from os.urandom
# for every script, used or not.
_RANDOM = random.Random()
# A shell draws $RANDOM from `sh.random`: the shared generator, unless the shell was given one of
# its own (a snapshot does, so that a restored shell draws the same numbers as the original).
Shell.random = _RANDOM



def seed_random(sh: Shell, value: str):
    """`RANDOM=N`: seed $RANDOM as bash does (RANDOM is an integer variable: the value is
    arithmetic), so that the numbers that follow are bash's for that seed. Subshells draw
    from the same sequence."""
    seed = int(value) if value.isascii() and value.isdigit() else sh.arith_eval(value or "0")
    sh.random_state = [seed & 0xFFFFFFFF, 0]


def next_random(sh: Shell) -> int:
    """The next $RANDOM: bash 5.2's generator (Park and Miller's minimal standard, its two
    halves folded) once seeded, else the process's own generator."""
    state = sh.random_state
    if state is None:
        return sh.random.randrange(32768)
    while True:
        last = state[0] or 123459876
        h, low = divmod(last, 127773)
        t = 16807 * low - 2836 * h
        state[0] = t + 0x7FFFFFFF if t < 0 else t
        value = ((state[0] >> 16) ^ (state[0] & 65535)) & 32767
        if value != state[1]:
            state[1] = value
            return value


DYNAMIC_VARS: dict[str, Callable[[Shell], Optional[Var]]] = {
    "RANDOM": lambda sh: Var(str(next_random(sh))),
    "LINENO": lambda sh: Var(str(sh.lineno)),
    "BASH_COMMAND": lambda sh: Var(command_text(sh.bash_command)),
    "SECONDS": lambda sh: Var(str(int(wall_clock() - sh.started))),
    "EPOCHSECONDS": lambda sh: Var(str(int(wall_clock()))),
    "EPOCHREALTIME": lambda sh: Var(f"{wall_clock():.6f}"),
    "BASHPID": lambda sh: Var(str(sh.pid + sh.subshell_level)),
    "BASH_SUBSHELL": lambda sh: Var(str(sh.subshell_level)),
    "FUNCNAME": _funcname,
    "BASH_LINENO": _bash_lineno,
    "_": lambda sh: Var(sh.last_arg),
    "PIPESTATUS": lambda sh: Var(IndexedArray([str(s) for s in sh.pipestatus])),
    "SHELLOPTS": lambda sh: Var(":".join(n for n in ("braceexpand", "errexit", "hashall",
                                                       "interactive-comments", "nounset", "pipefail",
                                                       "xtrace")
                                         if n in ("braceexpand", "hashall", "interactive-comments")
                                         or getattr(sh, n, False))),
}
