"""The formats of mikefarah yq v4's `-p` (input) and `-o` (output) that are provided here:
yaml, json, props, csv and tsv (and toml as input). Documents are read into JSON text with
the guards of documents.py (nesting, alias expansion, size); results are written as v4 writes
them: YAML in block style with sequences indented under their key, strings quoted in double
quotes only where they must be, multi-line strings as literal blocks, a scalar alone
unwrapped (as `-r`).
"""
from __future__ import annotations

import csv
import functools
import io
import json
import sys

import yaml

from ...base.limits import Budget
from .documents import DocumentError, ParseError, dumper_class, json_text, reading, to_json

FORMATS = {"yaml": "yaml", "y": "yaml", "yml": "yaml", "json": "json", "j": "json", "props": "props",
           "p": "props", "properties": "props", "csv": "csv", "c": "csv", "tsv": "tsv", "t": "tsv",
           "toml": "toml"}
KNOWN_ELSEWHERE = {"xml", "x", "lua", "l", "shell", "s", "sh", "base64", "uri", "hcl", "h", "kyaml",
                   "ky", "ini", "i"}
INPUTS = ("yaml", "json", "props", "csv", "tsv", "toml")
OUTPUTS = ("yaml", "json", "props", "csv", "tsv")
EXTENSIONS = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".csv": "csv", ".tsv": "tsv",
              ".properties": "props", ".toml": "toml", ".xml": "xml"}


class FormatError(Exception):
    """A format that cannot be used, or a value a format cannot write: one `yq:` line."""


def format_named(name: str, direction: str) -> str:
    """The format a `-p`/`-o` value names; raises FormatError."""
    form = FORMATS.get(name.lower())
    allowed = INPUTS if direction == "input" else OUTPUTS
    if form is not None and form in allowed:
        return form
    if form or name.lower() in KNOWN_ELSEWHERE:
        raise FormatError(f"the {name} {direction} format is not supported here "
                          f"(use one of {', '.join(allowed)})")
    raise FormatError(f"unknown {direction} format '{name}' (use one of {', '.join(allowed)})")


# ---- reading: each document as one line of JSON text

def read_documents(text: str, name: str, form: str, budget: Budget):
    """The JSON text of each document of `text` in format `form`. Raises DocumentError or
    ParseError."""
    if form == "yaml":
        yield from to_json(text, name, False, budget)
    elif form == "json":
        yield from _json_documents(text, name, budget)
    elif form == "toml":
        yield _toml_document(text, name, budget)
    elif form == "props":
        yield json_text(_properties(text), budget)
    else:
        yield json_text(_table(text, name, "\t" if form == "tsv" else ",", budget), budget)


def _toml_document(text: str, name: str, budget: Budget) -> str:
    if sys.version_info >= (3, 11):
        import tomllib
        with reading(name):
            return json_text(tomllib.loads(text), budget)
    raise DocumentError("TOML input needs Python 3.11")


def _json_documents(text: str, name: str, budget: Budget):
    decoder = json.JSONDecoder()
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at >= len(text):
            return
        with reading(name):
            try:
                value, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError as e:
                raise ParseError(f"{name}: line {e.lineno}, column {e.colno}: {e.msg}") from None
            yield json_text(value, budget)


def _properties(text: str) -> dict:
    """A properties file as nested maps (a numeric key makes a sequence), values as strings."""
    root: dict = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key, value = (line[:cut].strip(), line[cut + 1:].strip()) if cut >= 0 else (line, "")
        _set_path(root, key.split("."), value)
    return root


def _set_path(node, parts: list, value: str) -> None:
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        child_default = value if last else ([] if parts[n + 1].isdigit() else {})
        if isinstance(node, list) and part.isdigit():
            index = int(part)
            while len(node) <= index:
                node.append(None)
            if last or node[index] is None:
                node[index] = child_default
            node = node[index]
        elif isinstance(node, dict):
            if last or part not in node or not isinstance(node[part], (dict, list)):
                node[part] = child_default
            node = node[part]
        else:
            return


def _table(text: str, name: str, delimiter: str, budget: Budget) -> list:
    """CSV or TSV: the first row names the columns; each row a map, each cell read as YAML
    (v4's auto-parsing), with the same guards as a document."""
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    if not rows:
        return []
    header, entries = rows[0], []
    for row in rows[1:]:
        if not row:
            continue
        entries.append({column: _cell(cell, name, budget) for column, cell in zip(header, row)})
    return entries


def _cell(text: str, name: str, budget: Budget):
    try:
        documents = list(to_json(text, name, False, budget))
    except ParseError:
        return text
    if len(documents) != 1:
        return text
    return json.loads(documents[0])


# ---- writing

def write(value, form: str, indent: int, unwrap: bool) -> str:
    """One result in the output format `form`; raises FormatError."""
    if form == "json":
        if unwrap and isinstance(value, str):
            return value + "\n"
        if indent == 0:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
        return json.dumps(value, ensure_ascii=False, indent=indent) + "\n"
    if form in ("props", "csv", "tsv") and not isinstance(value, (dict, list)):
        return _scalar(value) + "\n"
    if form == "props":
        return "".join(f"{path} = {_property(leaf, unwrap)}\n" for path, leaf in _leaves(value, ""))
    if form in ("csv", "tsv"):
        return _write_table(value, form)
    if not isinstance(value, (dict, list)):
        return _scalar(value) + "\n"
    out = io.StringIO()
    yaml.dump(value, stream=out, Dumper=_dumper(), indent=indent or 2, allow_unicode=True,
              default_flow_style=False, sort_keys=False, width=sys.maxsize)
    return out.getvalue()


def _scalar(value) -> str:
    """A scalar as v4 unwraps it: a string as it is, others as in JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _property(value, unwrap: bool) -> str:
    """A property's value; with --unwrapScalar=false a string with blanks in double quotes."""
    if not unwrap and isinstance(value, str) and any(c.isspace() for c in value):
        return json.dumps(value, ensure_ascii=False)
    return _scalar(value)


def _leaves(value, prefix: str):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{prefix}.{i}" if prefix else str(i))
    elif prefix:
        yield prefix, value if value is not None else ""


def _write_table(value, form: str) -> str:
    if not isinstance(value, list):
        raise FormatError(f"{form} encoding only works for arrays, got: {_kind(value)}")
    out = io.StringIO()
    table = csv.writer(out, delimiter="\t" if form == "tsv" else ",", lineterminator="\n",
                       quoting=csv.QUOTE_MINIMAL)
    if value and not isinstance(value[0], (dict, list)):
        table.writerow([_cell_text(cell) for cell in value])          # one row
    elif value and isinstance(value[0], dict):
        header = list(value[0])
        table.writerow(header)
        for row in value:
            if not isinstance(row, dict):
                raise FormatError(f"{form} encoding needs a list of maps or of lists, got: {_kind(row)}")
            table.writerow([_cell_text(row.get(column)) for column in header])
    else:
        for row in value:
            if not isinstance(row, list):
                raise FormatError(f"{form} encoding needs a list of maps or of lists, got: {_kind(row)}")
            table.writerow([_cell_text(cell) for cell in row])
    return out.getvalue()


def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise FormatError("csv and tsv cells must be scalars")
    return _scalar(value)


def _kind(value) -> str:
    return "!!map" if isinstance(value, dict) else "!!seq" if isinstance(value, list) else "!!scalar"


def _represent_str(dumper, data: str):
    style = "|" if "\n" in data.strip("\n") else None          # v4 writes text as a literal block
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


@functools.lru_cache(maxsize=1)
def _dumper():
    base = dumper_class(False, False, "1.2")

    class V4Dumper(base):           # type: ignore[misc, valid-type]
        def choose_scalar_style(self):
            """Double quotes where PyYAML would choose single ones (as go-yaml writes)."""
            style = super().choose_scalar_style()
            return "\"" if style == "'" else style

    V4Dumper.add_representer(str, _represent_str)
    return V4Dumper
