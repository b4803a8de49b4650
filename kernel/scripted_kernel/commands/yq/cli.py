"""The command line of yq: jq's language over YAML documents, as Debian's `yq` (python-yq 3.1, a jq wrapper): each
YAML document of the inputs becomes one JSON text, jq runs the filter on them, and its output
is printed as it is (JSON) or, with -y / -Y, written back as YAML. tomlq reads TOML instead.

jq is our own: `commands.jq.command.run_command_line`, given the JSON text as its standard
input and, for YAML output, a writer that collects its output (jq's errors go to stderr, and
its exit status is yq's, as when python-yq runs jq in a child process). So jq's guards, worker
processes and budget apply unchanged.

The command line is python-yq's: argparse's parse_known_args over yq's own options, every
other option passed on to jq (`-r -c -e -n -s -S --tab --arg ...`); a short option combined
with -y, -Y or -i (`-ry`) also selects YAML output or in-place editing.

Not provided: XML (-x, --xml-*), TOML output (-t) and --no-expand-aliases, which need libraries
Debian's yq does not install either; each is refused with a message.
"""
from __future__ import annotations

import errno
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import yaml

from ...base.limits import Budget
from ...fs import FsError, access
from .._options import UsageError
from ..jq.command import run_command_line
from ..registry import usage_text
from .documents import DocumentError, ParseError, decode_documents, json_text, reading, to_json, to_yaml

_USAGE_LINES = """\
usage: yq [-h] [--yaml-output] [--yaml-roundtrip]
          [--yaml-output-grammar-version {1.1,1.2}] [--width WIDTH]
          [--indentless-lists] [--in-place] [--version]
          [jq_filter] [files ...]"""

# yq's own options: name -> (destination, number of values, constant)
_FLAGS = {
    "--yaml-output": ("output", "yaml"), "--yml-output": ("output", "yaml"), "-y": ("output", "yaml"),
    "--yaml-roundtrip": ("output", "annotated_yaml"), "--yml-roundtrip": ("output", "annotated_yaml"),
    "-Y": ("output", "annotated_yaml"), "--xml-output": ("output", "xml"), "-x": ("output", "xml"),
    "--toml-output": ("output", "toml"), "-t": ("output", "toml"),
    "--indentless-lists": ("indentless", True), "--indentless": ("indentless", True),
    "--explicit-start": ("explicit_start", True), "--explicit-end": ("explicit_end", True),
    "--no-expand-aliases": ("no_expand_aliases", True), "--xml-dtd": ("xml_dtd", True),
    "--in-place": ("in_place", True), "-i": ("in_place", True),
    "--version": ("version", True), "-h": ("help", True), "--help": ("help", True),
}
_VALUED = {"--output-format": "output", "--yaml-output-grammar-version": "grammar",
           "--yml-out-ver": "grammar", "--width": "width", "-w": "width",
           "--max-expansion-factor": "max_expansion", "--xml-root": "xml_root",
           "--xml-force-list": "xml_force_list"}
_NAMES = {"output": "--yaml-output/--yml-output/-y", "grammar": "--yaml-output-grammar-version/--yml-out-ver",
          "width": "--width/-w", "max_expansion": "--max-expansion-factor", "in_place": "--in-place/-i",
          "help": "-h/--help", "indentless": "--indentless-lists/--indentless"}
# jq's options that take values, passed on to jq after the others (python-yq's jq_arg_spec)
_JQ_VALUED = {"--indent": 1, "-f": 1, "--from-file": 1, "-L": 1, "--arg": 2, "--argjson": 2,
              "--slurpfile": 2, "--argfile": 2, "--rawfile": 2, "--args": -1, "--jsonargs": -1}


@dataclass
class Parsed:
    program: str = "yq"
    output: str = "json"
    grammar: str = "1.1"
    width: Optional[int] = None
    indentless: bool = False
    explicit_start: bool = False
    explicit_end: bool = False
    in_place: bool = False
    no_expand_aliases: bool = False
    version: bool = False
    help: bool = False
    jq_filter: Optional[str] = None
    files: list = field(default_factory=list)
    jq_args: list = field(default_factory=list)
    jq_valued: dict = field(default_factory=dict)


def _argparse_error(message: str) -> UsageError:
    return UsageError(f"{_USAGE_LINES}\nyq: error: {message}", 2)


def _is_option(word: str) -> bool:
    """argparse's test: a word starting with '-' (not '-' itself, nor a negative number)."""
    if not word.startswith("-") or word == "-":
        return False
    return not _looks_negative(word)


def _looks_negative(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def parse_arguments(argv: list, program: str = "yq") -> Parsed:
    """argparse's parse_known_args as python-yq sets it up, then python-yq's own pass."""
    parsed = Parsed(program=program)
    try:
        _parse_into(parsed, argv)
    except UsageError as e:
        if program != "yq":
            e.message = (e.message.replace("usage: yq", f"usage: {program}")
                         .replace("\nyq: error:", f"\n{program}: error:"))
        raise
    return parsed


def _parse_into(parsed: Parsed, argv: list) -> None:
    extras: list = []
    positional_chunks: list = []       # runs of positionals between options
    chunk: list = []
    i, args = 0, argv[1:]
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            chunk.extend(args[i:])
            break
        if not _is_option(word):
            chunk.append(word)
            continue
        positional_chunks.append(chunk)
        chunk = []
        i = _option(parsed, word, args, i, extras)
    positional_chunks.append(chunk)
    _assign_positionals(parsed, positional_chunks, extras)
    _post_process(parsed, extras)


def _option(parsed: Parsed, word: str, args: list, i: int, extras: list) -> int:
    """One optional word (and the values it takes); returns the next index."""
    name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
    if name in _JQ_VALUED:
        count = _JQ_VALUED[name]
        values = args[i:] if count < 0 else args[i:i + count]
        if count > 0 and len(values) < count:
            raise _argparse_error(f"argument {name}: expected {count} argument{'s' if count > 1 else ''}")
        parsed.jq_valued.setdefault(name, []).append(values)
        return len(args) if count < 0 else i + count
    if name in _VALUED or (not word.startswith("--") and word[:2] in _VALUED and len(word) > 2):
        if name not in _VALUED:                   # -w5
            name, value, eq = word[:2], word[2:], "="
        if not eq:
            if i >= len(args) or _is_option(args[i]):
                raise _argparse_error(f"argument {_NAMES.get(_VALUED[name], name)}: expected one argument")
            value, i = args[i], i + 1
        _set_value(parsed, _VALUED[name], value)
        return i
    if name in _FLAGS:
        if eq:
            raise _argparse_error(f"argument {_NAMES.get(_FLAGS[name][0], name)}: ignored explicit argument '{value}'")
        _set_flag(parsed, name)
        return i
    if not word.startswith("--") and word[:2] in _FLAGS:
        _combined_flags(parsed, word)            # -iy: each letter a flag of yq's
        return i
    extras.append(word)                          # an option of jq's
    return i


def _combined_flags(parsed: Parsed, word: str) -> None:
    flag, rest = word[:2], word[2:]
    while True:
        _set_flag(parsed, flag)
        if not rest:
            return
        following = "-" + rest[0]
        if following not in _FLAGS:
            raise _argparse_error(f"argument {_NAMES.get(_FLAGS[flag][0], flag)}: ignored explicit argument '{rest}'")
        flag, rest = following, rest[1:]


def _set_flag(parsed: Parsed, name: str) -> None:
    destination, constant = _FLAGS[name]
    setattr(parsed, destination, constant)


def _set_value(parsed: Parsed, destination: str, value: str) -> None:
    if destination == "grammar":
        if value not in ("1.1", "1.2"):
            raise _argparse_error(f"argument {_NAMES['grammar']}: invalid choice: '{value}' "
                                  "(choose from '1.1', '1.2')")
        parsed.grammar = value
    elif destination in ("width", "max_expansion"):
        try:
            number = int(value)
        except ValueError:
            raise _argparse_error(f"argument {_NAMES[destination]}: invalid int value: '{value}'") from None
        if destination == "width":
            parsed.width = number
    elif destination == "output":
        parsed.output = value
    elif destination in ("xml_root", "xml_force_list"):
        parsed.output = parsed.output       # XML is refused when output is XML


def _assign_positionals(parsed: Parsed, chunks: list, extras: list) -> None:
    """argparse matches `jq_filter` (?) and `files` (*) against the first run of positionals
    that is not empty (or the last run); the positionals after it are left over for jq."""
    taken = False
    for n, chunk in enumerate(chunks):
        if taken:
            extras.extend(chunk)
        elif chunk or n == len(chunks) - 1:
            if chunk:
                parsed.jq_filter = chunk[0]
                parsed.files = chunk[1:]
            taken = True


def _post_process(parsed: Parsed, extras: list) -> None:
    """python-yq's cli(): letters of yq's own options found in jq's short options, the valued
    jq options after the rest, the filter last (or after --args), -n as an empty first input."""
    null_input = False
    jq_args = []
    for arg in extras:
        if arg.startswith("-") and not arg.startswith("--"):
            null_input = null_input or "n" in arg
            parsed.in_place = parsed.in_place or "i" in arg
            if "y" in arg:
                parsed.output = "yaml"
            elif "Y" in arg:
                parsed.output = "annotated_yaml"
            elif "x" in arg:
                parsed.output = "xml"
            arg = arg.replace("i", "").replace("x", "").replace("y", "").replace("Y", "")
        if parsed.output != "json":
            arg = arg.replace("C", "")
            if arg == "-":
                continue
        jq_args.append(arg)
    for option in _JQ_VALUED:
        for values in parsed.jq_valued.get(option, []):
            jq_args.append(option)
            jq_args.extend(values)
    if parsed.jq_filter is not None:
        if "--from-file" in jq_args or "-f" in jq_args:
            parsed.files.insert(0, parsed.jq_filter)
        else:
            at = len(jq_args)
            for marker in ("--args", "--jsonargs"):
                if marker in jq_args:
                    at = jq_args.index(marker) + 1
                    break
            jq_args.insert(at, parsed.jq_filter)
            if null_input:
                parsed.files.insert(0, "/dev/null")
    parsed.jq_args = jq_args


# ---- running

def _open_errors(ctx, parsed: Parsed) -> list[tuple[str, Optional[str]]]:
    """argparse.FileType opens every file first: (name, text) of each (standard input's text
    None: read later), or a usage error."""
    inputs: list[tuple[str, Optional[str]]] = []
    for name in parsed.files:
        if name == "-":
            inputs.append(("<stdin>", None))
            continue
        try:
            inputs.append((name, access.read_text(ctx, name)))
        except FsError as e:
            code = _ERRNO.get(e.strerror, errno.EIO)
            error = _argparse_error(f"argument files: can't open '{name}': [Errno {code}] "
                                    f"{e.strerror}: '{name}'")
            error.message = _renamed(error.message, parsed.program)
            raise error from None
    return inputs


_ERRNO = {os.strerror(code): code for code in errno.errorcode}


def main(ctx, argv, program: str, reader) -> int:
    """yq's command line (tomlq's with `reader` reading TOML instead of YAML)."""
    parsed = parse_arguments(argv, program)
    if parsed.help or parsed.version:
        ctx.out(f"{program} (scripted_kernel)\n" if parsed.version else usage_text(program))
        return 0
    refused = _refused(parsed)
    if refused:
        ctx.err(f"{program}: Error: {refused}\n")
        return 1
    inputs = _open_errors(ctx, parsed) or [("<stdin>", None)]
    if not parsed.in_place:
        return transcode(ctx, parsed, inputs, ctx.out, reader)
    if parsed.output not in ("yaml", "annotated_yaml"):
        ctx.err(f"{program}: -i/--in-place can only be used with -y/-Y\n")
        return 1
    if len(inputs) == 1 and inputs[0][0] == "<stdin>":
        ctx.err(f"{program}: -i/--in-place can only be used with filename arguments, not on standard input\n")
        return 1
    return _in_place(ctx, parsed, inputs, reader)


def _refused(parsed: Parsed) -> Optional[str]:
    if parsed.output == "xml":
        return "XML output (-x) is not available"
    if parsed.output == "toml":
        return "TOML output (-t) is not available"
    if parsed.output not in ("json", "yaml", "annotated_yaml"):
        return f"unknown output format {parsed.output}"
    if parsed.no_expand_aliases:
        return "--no-expand-aliases is not available"
    return None


def _renamed(message: str, program: str) -> str:
    if program == "yq":
        return message
    return message.replace("usage: yq", f"usage: {program}").replace("\nyq: error:", f"\n{program}: error:")


def _in_place(ctx, parsed: Parsed, inputs: list, reader) -> int:
    """-i: each file's documents through jq and back into the file (written only if jq wrote
    something, as python-yq opens the file on its first write)."""
    status = 0
    for name, text in inputs:
        collected: list = []
        status = transcode(ctx, parsed, [(name, text)], collected.append, reader)
        if collected:
            try:
                access.writer(ctx, name)("".join(collected))
            except FsError as e:
                ctx.err(f"{parsed.program}: Error: {name}: {e.strerror}\n")
                return 1
    return status


def transcode(ctx, parsed: Parsed, inputs: list, write, reader=None) -> int:
    """Documents of `inputs` to JSON, through jq, out as JSON or YAML; returns the status."""
    annotations = parsed.output == "annotated_yaml"
    json_parts, failure = _read_documents(ctx, inputs, annotations, reader)
    if isinstance(failure, DocumentError):   # a refusal: python-yq kills jq
        return _fail(ctx, f"{parsed.program}: Error: {failure}")
    argv = ["jq"] + parsed.jq_args
    if parsed.output == "json":
        status = run_command_line(ctx, argv, stdin_text="".join(json_parts), out=write)
        return _fail(ctx, f"{parsed.program}: Error: {failure}") if failure else status
    if failure:
        return _fail(ctx, f"{parsed.program}: Error: {failure}")
    collected: list = []
    status = run_command_line(ctx, argv, stdin_text="".join(json_parts), out=collected.append)
    try:
        text = to_yaml(decode_documents("".join(collected)), annotations, parsed.indentless,
                       parsed.grammar, parsed.width, parsed.explicit_start, parsed.explicit_end)
    except (ValueError, yaml.YAMLError, TypeError, RecursionError) as e:
        return _fail(ctx, f"{parsed.program}: Error: {_unwritable(e)}")
    write(text)
    return status


def _unwritable(error: BaseException) -> str:
    """Why jq's output could not be written as YAML (python-yq names the exception's class)."""
    if isinstance(error, json.JSONDecodeError):
        return (f"jq's output is not JSON: {error.msg} (line {error.lineno}, column {error.colno}); "
                "-y and -Y need JSON, not raw output")
    if isinstance(error, RecursionError):
        return "jq's output is nested too deeply to be written as YAML"
    return f"jq's output cannot be written as YAML: {error}"


def _read_documents(ctx, inputs: list, annotations: bool, reader):
    """JSON text of each document, and what stopped the reading: a DocumentError (a refusal)
    or a ParseError."""
    parts: list = []
    read = reader or _yaml_documents
    for name, text in inputs:
        if text is None:
            text = ctx.stdin.read_all()
        try:
            for part in read(text, name, annotations, ctx.budget):
                parts.append(part)
        except (DocumentError, ParseError) as e:
            return parts, e
    return parts, None


def _yaml_documents(text: str, name: str, annotations: bool, budget: Budget):
    return to_json(text, name, annotations, budget)


def _fail(ctx, message: str) -> int:
    ctx.err(message + "\n")
    return 1


def toml_documents(text: str, name: str, annotations: bool, budget: Budget):
    """tomlq: a TOML file is one document (read with the standard library's tomllib)."""
    if sys.version_info >= (3, 11):         # tomlq is registered only where tomllib exists
        import tomllib
        with reading(name):
            text.encode("utf-8")             # fails on bytes that were not UTF-8 (surrogates)
            document = tomllib.loads(text)
        yield json_text(document, budget)
