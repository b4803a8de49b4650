"""yq in mikefarah v4's dialect: `yq [eval|e|eval-all|ea] [flags] EXPRESSION [FILE...]`, YAML
out by default, `-o`/`-p` formats, `-i` in place, `-n`, `-r`, `-I`, `-P`, `-N`, `-e`.

Which dialect a command line means (`selects_v4`): v4's when
1. its first word that is not an option is one of v4's commands `e`, `eval`, `ea`,
   `eval-all`; or
2. it has an option only v4 has: `-o`/`--output-format`, `-p`/`--input-format`, `-I`,
   `-P`/`--prettyPrint`, `-N`/`--no-doc`, `--inplace`, `--unwrapScalar`, `--expression`
   (alone or among combined short options, as `-oj`, `-o=json`, `-Pi`); or
3. it has `-i` without python-yq's `-y`/`-Y` and its expression edits the document (`=`,
   `|=`, `+=` and the other update operators, `del(...)`), which python-yq refuses.
Every other command line is python-yq's (cli.py), the jq wrapper printing JSON: a bare
`yq .a f.yaml` keeps its meaning, and `--indent`, `-s`, `-e`, `-r`, `-n` are jq's there.

The expression is translated into a jq program (v4_expression.py) that our jq runs over the
documents, each given with its place (file index, document index, file name); the results
come back as JSON and are written in the output format (v4_formats.py). Refusals are one
`yq: ...` line and status 1.

Not kept, as the documents pass through JSON: comments, anchors and aliases (expanded on
reading), flow styles and quoting of the input, custom tags, integer map keys (written as
strings). v4's `+` appending a scalar to a sequence, `null * map`, and the merge flags (`*+`,
`*d`, `*?`, `*n`) are not provided: jq's `+` and `*` refuse those with their own error.
"""
from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Optional

from ...fs import FsError, access
from ..jq.command import run_command_line
from ..registry import usage_text
from .documents import DocumentError, ParseError
from .v4_expression import PRELUDE, TranslationError, tokenize, translate
from .v4_formats import EXTENSIONS, FormatError, format_named, read_documents, write

COMMANDS = {"e": False, "eval": False, "ea": True, "eval-all": True}
MAX_INDENT = 9
VERSION = "yq (https://github.com/mikefarah/yq/) version v4 (scripted_kernel's translation onto jq)"

_V4_LONG = ("--output-format", "--input-format", "--prettyPrint", "--no-doc", "--inplace", "--unwrapScalar",
            "--expression")
_V4_SHORT = set("opIPN")
_EDITS = {"=", "|=", "+=", "-=", "*=", "/=", "%=", "//="}
# python-yq's options that take values (their values are not options)
_VALUED = {"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--argfile": 2, "--indent": 1,
           "-f": 1, "--from-file": 1, "-L": 1, "-w": 1, "--width": 1, "--yaml-output-grammar-version": 1,
           "--yml-out-ver": 1}


class V4Error(Exception):
    """A refusal: printed as `yq: MESSAGE`, status 1."""


def selects_v4(args: list) -> bool:
    """Whether the command line (without the program's name) is mikefarah v4's."""
    in_place = python_yaml = False
    positional: list = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positional.extend(args[i:])
            break
        if word.startswith("--"):
            name = word.partition("=")[0]
            if name in _V4_LONG:
                return True
            in_place = in_place or name == "--in-place"
            python_yaml = python_yaml or name in ("--yaml-output", "--yml-output", "--yaml-roundtrip",
                                                  "--yml-roundtrip")
            i += _VALUED.get(name, 0) if "=" not in word else 0
        elif word.startswith("-") and len(word) > 1 and not _number(word):
            letters = word[1:]
            if letters[0] in _V4_SHORT or (letters[0] not in "wfL" and _V4_SHORT & set(letters)):
                return True
            in_place = in_place or "i" in letters
            python_yaml = python_yaml or "y" in letters or "Y" in letters
            i += _VALUED.get(word, 0)
        else:
            positional.append(word)
    if positional and positional[0] in COMMANDS:
        return True
    return in_place and not python_yaml and bool(positional) and _edits(positional[0])


def _number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def _edits(expression: str) -> bool:
    try:
        tokens = tokenize(expression)
    except TranslationError:
        return False
    return any((t.kind == "op" and t.text in _EDITS) or (t.kind == "ident" and t.text == "del")
               for t in tokens)


# ---- the command line

@dataclass
class Options:
    eval_all: bool = False
    command: Optional[str] = None
    output: Optional[str] = None
    input: Optional[str] = None
    indent: int = 2
    in_place: bool = False
    null_input: bool = False
    unwrap: Optional[bool] = None
    no_doc: bool = False
    exit_status: bool = False
    expression: Optional[str] = None
    expression_file: Optional[str] = None
    help: bool = False
    version: bool = False
    positional: list = field(default_factory=list)


# flags taking no value, and the option each sets (None: accepted, nothing to do here)
_BOOL_SHORT: dict[str, Optional[str]] = {"i": "in_place", "n": "null_input", "N": "no_doc", "P": None,
                                         "e": "exit_status", "C": None, "M": None, "v": None, "h": "help",
                                         "V": "version"}
_VALUE_SHORT = {"o": "output", "p": "input", "I": "indent"}
_BOOL_LONG: dict[str, Optional[str]] = {"--inplace": "in_place", "--null-input": "null_input", "--no-doc": "no_doc",
              "--prettyPrint": None, "--exit-status": "exit_status", "--colors": None, "--no-colors": None,
              "--verbose": None, "--help": "help", "--version": "version"}
_VALUE_LONG = {"--output-format": "output", "--input-format": "input", "--indent": "indent",
               "--expression": "expression", "--from-file": "expression_file"}


def parse(args: list) -> Options:
    """v4's flags (pflag's rules: combined short flags, `-o json`, `-o=json`, `-ojson`)."""
    options = Options()
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            options.positional.extend(args[i:])
            break
        if word.startswith("--"):
            i = _long(options, word, args, i)
        elif word.startswith("-") and word != "-":
            i = _shorts(options, word, args, i)
        elif not options.positional and not options.command and word in COMMANDS:
            options.eval_all, options.command = COMMANDS[word], word
        else:
            options.positional.append(word)
    return options


def _long(options: Options, word: str, args: list, i: int) -> int:
    name, eq, value = word.partition("=")
    if name == "--unwrapScalar":
        options.unwrap = _boolean(name, value) if eq else True
        return i
    if name in _BOOL_LONG:
        if eq:
            raise V4Error(f"flag {name} takes no value here")
        destination = _BOOL_LONG[name]
        if destination:
            setattr(options, destination, True)
        return i
    if name in _VALUE_LONG:
        if not eq:
            if i >= len(args):
                raise V4Error(f"flag needs an argument: {name}")
            value, i = args[i], i + 1
        _set_value(options, _VALUE_LONG[name], name, value)
        return i
    raise V4Error(f"unknown flag: {name}")


def _shorts(options: Options, word: str, args: list, i: int) -> int:
    letters = word[1:]
    while letters:
        letter, letters = letters[0], letters[1:]
        if letter == "r":
            if letters.startswith("="):
                options.unwrap, letters = _boolean("-r", letters[1:]), ""
            else:
                options.unwrap = True
        elif letter in _BOOL_SHORT:
            destination = _BOOL_SHORT[letter]
            if destination:
                setattr(options, destination, True)
        elif letter in _VALUE_SHORT:
            value = letters[1:] if letters.startswith("=") else letters
            if not value:
                if i >= len(args):
                    raise V4Error(f"flag needs an argument: '{letter}' in -{letter}")
                value, i = args[i], i + 1
            _set_value(options, _VALUE_SHORT[letter], f"-{letter}", value)
            return i
        elif letter in "yY":
            raise V4Error(f"-{letter} is python-yq's; it cannot be combined with v4's command line "
                          "(use -o yaml)")
        else:
            raise V4Error(f"unknown shorthand flag: '{letter}' in {word}")
    return i


def _boolean(name: str, value: str) -> bool:
    if value.lower() in ("true", "t", "1"):
        return True
    if value.lower() in ("false", "f", "0"):
        return False
    raise V4Error(f"invalid argument \"{value}\" for \"{name}\" flag: not a boolean")


def _set_value(options: Options, destination: str, name: str, value: str) -> None:
    if destination == "indent":
        if not re.fullmatch(r"-?\d+", value):
            raise V4Error(f"invalid argument \"{value}\" for \"{name}\" flag: not an integer")
        if len(value) > 18:
            raise V4Error(f"invalid argument \"{value}\" for \"{name}\" flag: value out of range")
        number = int(value)
        if not 0 <= number <= MAX_INDENT:
            raise V4Error(f"indent must be from 0 to {MAX_INDENT}, not {number}")
        options.indent = number
    else:
        setattr(options, destination, value)


# ---- running

def main(ctx, argv: list) -> int:
    try:
        return _run(ctx, parse(argv[1:]))
    except (V4Error, TranslationError, FormatError, DocumentError, ParseError) as e:
        ctx.err(f"yq: {_message(e)}\n")
        return 1


def _message(error: Exception) -> str:
    text = str(error)
    if isinstance(error, (DocumentError, ParseError)):
        return f"Error: {text}"
    return text


def _run(ctx, options: Options) -> int:
    if options.help or options.version:
        ctx.out(VERSION + "\n" if options.version else usage_text("yq"))
        return 0
    expression, files = _expression_and_files(ctx, options)
    input_format, output_format = _formats(options, files)
    program, once = translate(expression, ctx.env(), options.eval_all)
    if options.in_place:
        return _in_place(ctx, options, program, once, files, input_format, output_format)
    inputs = _inputs(ctx, options, files, input_format)
    status, text = _evaluate(ctx, options, program, once, inputs, output_format)
    ctx.out(text)
    return status


def _expression_and_files(ctx, options: Options) -> tuple[str, list]:
    positional = list(options.positional)
    if options.expression_file is not None:
        expression = _read(ctx, options.expression_file)
    elif options.expression is not None:
        expression = options.expression
    elif positional and not options.null_input and _is_file(ctx, positional[0]):
        expression = "."                     # `yq file.yaml`: v4 prints the file
    elif positional:
        expression = positional.pop(0)
    else:
        expression = "."
    if options.null_input and positional:
        raise V4Error("cannot pass files in when using null-input flag")
    if options.in_place and (not positional or positional[0] == "-"):
        raise V4Error("write in place flag only applicable when giving an expression and at least one file")
    return expression, positional


def _is_file(ctx, name: str) -> bool:
    try:
        return ctx.fs.stat(ctx.path(name)).kind == "-"
    except (FsError, ValueError, TypeError):
        return False


def _formats(options: Options, files: list) -> tuple[str, str]:
    """v4's choice: `-p`, else the first file's extension (yaml when unknown); `-o`, else the
    input format when that came from the extension, else yaml."""
    detected = EXTENSIONS.get(posixpath.splitext(files[0])[1].lower(), "yaml") if files else "yaml"
    if options.input is not None and options.input not in ("auto", "a"):
        input_format = format_named(options.input, "input")
        default_output = "yaml"
    else:
        input_format = format_named(detected, "input")
        default_output = input_format if input_format in ("json", "props", "csv", "tsv") else "yaml"
    if options.output is not None and options.output not in ("auto", "a"):
        return input_format, format_named(options.output, "output")
    return input_format, default_output


def _read(ctx, name: str) -> str:
    try:
        return access.read_text(ctx, name)
    except FsError as e:
        raise V4Error(f"Error: open {name}: {_lower(e.strerror)}") from None


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def _inputs(ctx, options: Options, files: list, form: str) -> list[str]:
    """One line of JSON text for each document: `{"f": file index, "i": document index,
    "n": file name, "d": the document}`."""
    if options.null_input:
        return ['{"f":0,"i":0,"n":null,"d":null}\n']
    lines: list[str] = []
    names = files or ["-"]
    for f, name in enumerate(names):
        text = ctx.stdin.read_all() if name == "-" else _read(ctx, name)
        shown = "<stdin>" if name == "-" else name
        filename = json.dumps("" if name == "-" else name)
        for i, document in enumerate(read_documents(text, shown, form, ctx.budget)):
            lines.append(f'{{"f":{f},"i":{i},"n":{filename},"d":{document.rstrip()}}}\n')
    return lines


def _evaluate(ctx, options: Options, program: str, once: bool, inputs: list, output_format: str) -> tuple[int, str]:
    """Run the translated program over the documents; (status, the output text)."""
    if options.eval_all:
        each = ("($__all[0] // {}) as $__yq | $__yq.d" if once else "$__all[] as $__yq | $__yq.d")
        tagged = "[0, 0, .]" if once else "[$__yq.f, $__yq.i, .]"
        jq_program = f"{PRELUDE}[inputs] as $__all | {each} | ({program}\n) | {tagged}"
        argv = ["jq", "-n", "-c", jq_program]
    else:
        jq_program = f"{PRELUDE}. as $__yq | $__yq.d | ({program}\n) | [$__yq.f, $__yq.i, .]"
        argv = ["jq", "-c", jq_program]
    collected: list[str] = []
    errors = _Errors(ctx)
    status = run_command_line(errors, argv, stdin_text="".join(inputs), out=collected.append)
    errors.report()
    results = [json.loads(line) for line in "".join(collected).splitlines() if line]
    text = _written(results, options, output_format)
    if status == 0 and options.exit_status and (not results or results[-1][2] in (None, False)):
        status = 1
    return (1 if status else 0), text


def _written(results: list, options: Options, output_format: str) -> str:
    unwrap = options.unwrap if options.unwrap is not None else output_format != "json"
    parts: list[str] = []
    previous = None
    for _, i, value in results:
        # v4 separates results whose document index differs (not their file's)
        if output_format == "yaml" and previous is not None and i != previous and not options.no_doc:
            parts.append("---\n")
        previous = i
        parts.append(write(value, output_format, options.indent, unwrap))
    return "".join(parts)


def _in_place(ctx, options: Options, program: str, once: bool, files: list, input_format: str,
              output_format: str) -> int:
    """-i: the first file's documents through the expression and back into it (as v4: with
    eval-all the other files are read too, and every result is written to the first)."""
    inputs = _inputs(ctx, options, files if options.eval_all else files[:1], input_format)
    status, text = _evaluate(ctx, options, program, once, inputs, output_format)
    if status:                               # a failed expression leaves the file as it was
        return status
    try:
        access.writer(ctx, files[0])(text)
    except FsError as e:
        raise V4Error(f"Error: {files[0]}: {e.strerror}") from None
    return status


class _Errors:
    """The command's context for jq, with jq's error lines kept back and reported as yq's:
    one line each (`yq: Error: ...`), a compile error in its first line only."""

    def __init__(self, ctx):
        self._ctx = ctx
        self._lines: list[str] = []

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def err(self, text: str) -> None:
        self._lines.append(text)

    def report(self) -> None:
        for line in "".join(self._lines).splitlines():
            if re.fullmatch(r"jq: \d+ compile errors?", line) or not line.startswith("jq: "):
                continue                     # the count, and the program's text under a compile error
            message = re.sub(r"^jq: error(?: \(at [^)]*\))?: ", "", line)
            self._ctx.err(f"yq: Error: {message}\n")
