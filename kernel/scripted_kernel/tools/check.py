"""A pre-flight check of a script: what a static read finds, before anything runs.

`ScriptedTool.check(script)` parses the script and reports, each as `line L, col C: message`:
bash syntax errors; commands that are neither a builtin, a command, a tool nor a function the
script defines (with the nearest name); for every tool call whose flags are written as
constants, unknown flags, values of the wrong type or outside the choices, and missing
required flags; jq programs that do not compile.

What a static read cannot see: names and flags made at run time (`$cmd`, `"$@"`, `eval`,
`--$key`), the values of variables, which branch runs, files a BashTool script creates and
runs, and what a tool answers. Where a command line holds such a word, the check says nothing
about what that word could be (a missing flag may come from `"$@"`), so a clean check is no
guarantee: the before_tool hook is the guarantee.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Iterator, Optional

from ..shell.api import (KEYWORDS, CancelToken, ExecutionLimits, Run, ShellConfig, ShellSyntaxError, builtin_names,
                         outline, run_script, run_time_word)
from .flags import BOOLEAN_WORDS, FlagError, type_label


@dataclass(frozen=True)
class Diagnostic:
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, col {self.col}: {self.message}"


# commands that run the command named by a later word: how many words to skip, by option
_WRAPPERS = {"command": ("-p", "--"), "timeout": (), "xargs": (), "env": (), "nohup": (), "exec": ()}
_XARGS_WITH_VALUE = {"-n", "-I", "-d", "-P", "-L", "-s", "-E", "-a", "-i"}


def check_script(tool, script: str) -> list[Diagnostic]:
    """Diagnostics for `script` as `tool` would run it, in the order of the text."""
    try:
        read = outline(script, tool.limits.max_parser_depth)
    except ShellSyntaxError as e:
        return [Diagnostic(e.line, e.col, e.message)]
    except RecursionError:
        return [Diagnostic(1, 1, "the script nests too deeply to read")]
    checker = _Checker(tool, read.functions)
    return sorted((d for command in read.commands for d in checker._command(list(command.words))),
                  key=lambda d: (d.line, d.col))


class _Checker:
    def __init__(self, tool, functions: set):
        self.tool = tool
        self.functions = functions
        self.table = tool.commands()
        self.known = set(self.table) | set(builtin_names()) | set(KEYWORDS) | self.functions

    @staticmethod
    def at(word, message: str) -> Diagnostic:
        return Diagnostic(word.line, word.col, message)

    def _command(self, words: list) -> Iterator[Diagnostic]:
        name = words[0].text
        if name is None or "/" in name:
            return
        if name in _WRAPPERS and name not in self.functions:
            inner = _wrapped(name, words)
            if inner is not None:
                yield from self._command(inner)
            return
        if name not in self.known:
            if not self._program_on_path(name):
                hint = difflib.get_close_matches(name, sorted(self.known), n=1, cutoff=0.75)
                yield self.at(words[0], f"unknown command '{name}'" + (f" (did you mean '{hint[0]}'?)" if hint else ""))
            return
        if name in self.functions:
            return
        registered = self.tool.tools.get(name)
        if registered is not None and self.table.get(name) is not None:
            yield from self._flags(name, registered.parser, words)
        elif name == "jq":
            yield from self._jq(words)

    def _program_on_path(self, name: str) -> bool:
        fs = self.tool.filesystem
        if fs is None or not hasattr(fs, "exists"):
            return False
        return any(fs.exists(f"{d}/{name}") for d in ("/usr/local/bin", "/usr/bin", "/bin"))

    def _flags(self, tool: str, parser, words: list) -> Iterator[Diagnostic]:
        """The constant flags of one tool call, checked as the tool would check them."""
        seen: dict = {}
        dynamic = False             # a word we cannot read stands where a flag could
        i = 1
        while i < len(words):
            word, text = words[i], words[i].text
            i += 1
            if text is None:
                dynamic = True
                continue
            if text in ("--help", "--dry-run"):
                continue
            if text == "--" or text.startswith("--json"):
                dynamic = dynamic or text != "--"
                break
            args = [text]
            named = parser.prop_name(text[2:].partition("=")[0].split(".")[0])
            following = words[i].text if i < len(words) else None
            if "=" not in text and text.startswith("--") and i < len(words):
                if parser.takes_value(text):
                    i += 1
                    if following is None:           # a value known at run time: the name alone
                        seen[named] = None
                        yield from self._flag_name(tool, parser, text, word)
                        continue
                    args.append(following)
                elif following is not None and following.lower() in BOOLEAN_WORDS:
                    args.append(following)
                    i += 1
            try:
                params = parser.parse(args).params
                parser.validate(params, partial=True)
            except FlagError as e:
                seen[named] = None              # named, if wrongly: not also missing
                yield self.at(word, f"{tool}: {e}")
                continue
            seen.update(params)
        if not dynamic:
            for name in parser.required:
                if name not in seen:
                    label = type_label(parser.properties.get(name, {}))
                    yield self.at(words[0], f"{tool}: missing required flag --{name} ({label})")

    def _flag_name(self, tool: str, parser, flag: str, word) -> Iterator[Diagnostic]:
        try:
            parser.parse([flag.split("=")[0], "x"])
        except FlagError as e:
            if "unknown flag" in str(e):
                yield self.at(word, f"{tool}: {e}")

    def _jq(self, words: list) -> Iterator[Diagnostic]:
        """A constant jq program compiled, never run: `empty | (PROGRAM)` makes no value."""
        argv = [w.text for w in words]
        program_at = _jq_program_index(argv)
        if program_at is None or argv[program_at] is None:
            return
        names = _jq_names(argv[:program_at])
        if names is None:
            return
        wrapped = "empty | (\n" + argv[program_at] + "\n)"
        binds = " ".join(f"--arg {n} ''" for n in names)
        limits = ExecutionLimits(timeout_seconds=5, max_output_bytes=64 * 1024)
        result = run_script(f'jq -n {binds} "$P"', ShellConfig(self.tool.commands(), env={"P": wrapped}),
                            Run(limits, CancelToken()))
        if result.exit_code == 3:
            lines = argv[program_at].count("\n") + 1
            message = _program_message(result.stderr.strip().split("\n")[0].rstrip(":"), lines)
            yield self.at(words[program_at], message)


def _jq_program_index(argv: list) -> Optional[int]:
    """Where the program is in a jq command line (the first operand), or None."""
    takes_two = {"--arg", "--argjson", "--slurpfile", "--rawfile"}
    takes_one = {"--indent", "-L", "--tab"} - {"--tab"}
    i = 1
    while i < len(argv):
        word = argv[i]
        if word is None:
            return None
        if word in ("-f", "--from-file", "--args", "--jsonargs"):
            return None
        if word in takes_two:
            i += 3
            continue
        if word in takes_one:
            i += 2
            continue
        if word.startswith("-") and word != "-":
            i += 1
            continue
        return i
    return None


def _jq_names(options: list) -> Optional[list]:
    names = []
    for k, word in enumerate(options):
        if word in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            if k + 1 >= len(options) or options[k + 1] is None:
                return None
            names.append(options[k + 1])
    return names


def _program_message(message: str, lines: int) -> str:
    """jq's message about `empty | (\\nPROGRAM\\n)` as it is about PROGRAM: its line
    numbers back to the program's, and the wrapper's closing `)` as the end of the program."""
    at_end = re.search(rf"line {lines + 2}\b", message) is not None
    if at_end:
        message = message.replace("unexpected ')'", "unexpected end of file")
    return re.sub(r"line (\d+)", lambda m: f"line {min(lines, max(1, int(m.group(1)) - 1))}", message)


def _wrapped(name: str, words: list) -> Optional[list]:
    """The words of the command that `command`, `timeout`, `xargs`, `env` ... run."""
    rest = words[1:]
    texts = [w.text or "" for w in rest]      # "" for a word known at run time
    i = 0
    if name == "timeout":
        while i < len(texts) and texts[i].startswith("-"):
            i += 1
        i += 1                                  # the duration
    elif name == "xargs":
        while i < len(texts) and texts[i].startswith("-"):
            i += 2 if texts[i] in _XARGS_WITH_VALUE else 1
        # what xargs reads adds arguments at run time: a word that stands for them
        return None if i >= len(rest) else rest[i:] + [run_time_word()]
    elif name == "env":
        while i < len(texts) and (texts[i].startswith("-") or "=" in texts[i]):
            i += 1
    else:
        while i < len(texts) and texts[i] in _WRAPPERS[name]:
            i += 1
        if name == "command" and i < len(texts) and texts[i].startswith("-"):
            return None                         # command -v NAME and the like run nothing
    if i >= len(rest) or not texts[i]:
        return None
    return rest[i:]
