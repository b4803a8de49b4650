"""YAML documents in and out for yq, as Debian's yq (python-yq 3.1) reads and writes them with
PyYAML: the YAML 1.2 core schema when reading (`on` and `yes` stay strings, no timestamps),
merge keys, unknown tags kept as plain values, and with -Y each tag and style kept as an extra
`__yq_tag_...__` / `__yq_style_...__` item beside its value; the YAML 1.1 schema (or 1.2) when
writing, keys in their order, block style, lists indented under their key.

Guards, beside PyYAML's own refusal of recursive nodes:
- nesting: libyaml's composer recurses in C (a deep document overflows the C stack), so the
  document's events are read first and nesting past `MAX_DEPTH` is refused; structures built
  through aliases are measured after construction, without recursion. Recent libyaml (PyYAML
  6.0.4's) refuses nesting past 1000 levels itself, and its scanner reads ahead of the events:
  such a refusal is recognised by the depth at its position, and reported as ours;
- expansion: aliases may make a document's JSON far larger than its text (the billion laughs);
  as python-yq, more than `EXPANSION_FACTOR` times the text is refused before it is built.

A document that cannot be read is a ParseError naming the file, the line and column and the
problem, in one line (python-yq prints PyYAML's exception with its class name).
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import io
import json
import re
from base64 import b64encode
from collections.abc import Hashable
from hashlib import sha224
from typing import Any

import yaml

from ...base.limits import Budget

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:                 # PyYAML without libyaml
    from yaml import SafeLoader as _BaseLoader

MAX_DEPTH = 1000                    # containers inside containers in one document
EXPANSION_FACTOR = 1024             # python-yq's max_expansion_factor
CHECK_EVERY = 4096                  # events between checks of the budget


class DocumentError(Exception):
    """A document yq refuses (a bomb): printed as `yq: Error: ...`, status 1, and jq does not
    run, as python-yq kills it."""


class ParseError(Exception):
    """A document that cannot be read: printed as `yq: Error: ...`, status 1, after jq's
    output for the documents before it."""


def nested_too_deeply(name: str = "") -> DocumentError:
    where = f"{name}: " if name else ""
    return DocumentError(f"{where}the document is nested deeper than {MAX_DEPTH} levels")


def reading_error(name: str, error: BaseException) -> Exception:
    """What stops the reading of `name`: a refusal of nesting (DocumentError), or a ParseError
    in one line: the file, where in it (when known) and the problem, in the library's words but
    without its exception class."""
    if isinstance(error, RecursionError):
        return nested_too_deeply(name)
    if isinstance(error, UnicodeError):            # bytes that were not UTF-8, kept as surrogates
        return ParseError(f"{name}: the document is not valid UTF-8")
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        what = error.problem or error.context or "invalid document"
        if error.problem and error.context:
            what += f" ({error.context})"
        if mark is not None:
            return ParseError(f"{name}: line {mark.line + 1}, column {mark.column + 1}: {what}")
        return ParseError(f"{name}: {what}")
    text = str(error).strip().split("\n")[0] or "invalid document"
    return ParseError(f"{name}: {text}")


# ---- the schemas (python-yq's tables)

_RESOLVERS = {
    "1.1": [
        ("tag:yaml.org,2002:bool", r'''^(?:yes|Yes|YES|no|No|NO
            |true|True|TRUE|false|False|FALSE
            |on|On|ON|off|Off|OFF)$''', 'yYnNtTfFoO'),
        ("tag:yaml.org,2002:float", r'''^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
            |\.[0-9_]+(?:[eE][-+][0-9]+)?
            |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$''', '-+0123456789.'),
        ("tag:yaml.org,2002:int", r'''^(?:[-+]?0b[0-1_]+
            |[-+]?0[0-7_]+
            |[-+]?(?:0|[1-9][0-9_]*)
            |[-+]?0x[0-9a-fA-F_]+
            |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$''', '-+0123456789'),
        ("tag:yaml.org,2002:null", r'''^(?: ~
            |null|Null|NULL
            | )$''', ['~', 'n', 'N', '']),
        ("tag:yaml.org,2002:timestamp", r'''^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
            |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
            (?:[Tt]|[ \t]+)[0-9][0-9]?
            :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
            (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$''', '0123456789'),
        ("tag:yaml.org,2002:value", r'^(?:=)$', '='),
    ],
    "1.2": [
        ("tag:yaml.org,2002:bool", r'^(?:|true|True|TRUE|false|False|FALSE)$', 'tTfF'),
        ("tag:yaml.org,2002:int", r'^(?:|0o[0-7]+|[-+]?(?:[0-9]+)|0x[0-9a-fA-F]+)$', '-+0123456789'),
        ("tag:yaml.org,2002:float", r'^(?:[-+]?(?:\.[0-9]+|[0-9]+(\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?'
                                    r'|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$', '-+0123456789.'),
        ("tag:yaml.org,2002:null", r'^(?:~||null|Null|NULL)$', ['~', 'n', 'N', '']),
    ],
}
_MERGE = ("tag:yaml.org,2002:merge", r'^(?:<<)$', '<')


def _set_grammar(cls, version: str, merge_keys: bool = True) -> None:
    resolvers = list(_RESOLVERS[version]) + ([_MERGE] if merge_keys else [])
    cls.yaml_implicit_resolvers = {}
    for tag, pattern, starts in resolvers:
        regexp = re.compile(pattern, re.X)
        for start in starts:
            cls.yaml_implicit_resolvers.setdefault(start, []).append((tag, regexp))


def hash_key(key) -> str:
    """The name python-yq gives a key's annotations (so that any key fits in a key)."""
    return b64encode(sha224(key.encode() if isinstance(key, str) else key).digest()).decode()


def _custom_tag(node) -> bool:
    return bool(node.tag) and node.tag.startswith("!") and not node.tag.startswith("!!") and len(node.tag) > 1


def _style_of(node):
    if isinstance(node, yaml.ScalarNode):
        return node.style or None
    if node.flow_style is True:
        return "flow"
    return None


# ---- reading

@functools.lru_cache(maxsize=2)
def loader_class(annotations: bool):
    """A loader reading as python-yq's get_loader (with -Y: the annotations)."""

    def construct_sequence(loader, node):
        values = [loader.construct_object(child) for child in node.value]
        if annotations:
            for i, child in enumerate(node.value):
                if _custom_tag(child):
                    values.append(f"__yq_tag_{i}_{child.tag}__")
                style = _style_of(child)
                if style:
                    values.append(f"__yq_style_{i}_{style}__")
        return values

    def construct_mapping(loader, node):
        loader.flatten_mapping(node)
        pairs = []
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                        "found unhashable key", key_node.start_mark)
            pairs.append((key, loader.construct_object(value_node)))
            if not (annotations and isinstance(key, (str, bytes))):
                continue
            if _custom_tag(value_node):
                pairs.append((f"__yq_tag_{hash_key(key)}__", value_node.tag))
            style = _style_of(value_node)
            if style:
                pairs.append((f"__yq_style_{hash_key(key)}__", style))
        return dict(pairs)

    def construct_unknown(loader, tag_suffix, node):
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return construct_sequence(loader, node)
        return construct_mapping(loader, node)

    class Loader(_BaseLoader):
        pass

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_sequence)
    Loader.add_multi_constructor("", construct_unknown)
    Loader.yaml_constructors = {tag: f for tag, f in Loader.yaml_constructors.items()
                                if tag not in ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set")}
    _set_grammar(Loader, "1.2")
    return Loader


class NamedText(io.StringIO):
    """Text with the name PyYAML shows in its errors (`in "<stdin>", line 1`)."""

    def __init__(self, text: str, name: str):
        super().__init__(text)
        self.name = name


_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _events(budget: Budget, parser):
    """Each event of `parser` with the nesting depth after it, the budget checked as they go."""
    depth = n = 0
    while parser.check_event():
        event = parser.get_event()
        if isinstance(event, _OPENS):
            depth += 1
        elif isinstance(event, _CLOSES):
            depth -= 1
        yield event, depth
        n += 1
        if not n % CHECK_EVERY:
            budget.check_clock()


def _scan(budget: Budget, text: str, name: str, loader) -> bool:
    """Read the events of every document first (libyaml's parser is iterative): refuse
    nesting past MAX_DEPTH; True if aliases occur. A syntax error is left to the loading,
    which reports it where it is, after the documents before it."""
    depth, aliases = 0, False
    read_to = 0                       # where the last event ended
    parser = loader(NamedText(text, name))
    try:
        for event, depth in _events(budget, parser):
            if depth > MAX_DEPTH:
                raise nested_too_deeply(name)
            aliases = aliases or isinstance(event, yaml.AliasEvent)
            read_to = event.end_mark.index
    except yaml.MarkedYAMLError as e:
        if _refused_nesting(budget, text, name, loader, depth, read_to, e):
            raise nested_too_deeply(name) from None
    except yaml.YAMLError:
        pass
    finally:
        parser.dispose()
    return aliases


def _refused_nesting(budget: Budget, text: str, name: str, loader, depth: int, read_to: int, error) -> bool:
    """Whether libyaml's `error` is its own refusal of nesting (1000 levels, PyYAML 6.0.4 on),
    told by the depth at the error's position, not by the library's wording. libyaml scans
    ahead of the events it hands out, so the levels opened between the last event and the
    error are counted by reading the text before the error again; that is done only when the
    characters in between could open enough of them (each level needs one of `[{-?:` or a
    line), so an ordinary syntax error costs nothing more. libyaml refuses a flow collection
    at the bracket that would open level MAX_DEPTH + 1, a block collection where level
    MAX_DEPTH would begin."""
    mark = error.problem_mark
    if mark is None:
        return False
    between = text[read_to:mark.index + 1]
    could_open = sum(between.count(c) for c in "[{-?:\n")
    needed = MAX_DEPTH if text[mark.index:mark.index + 1] in ("[", "{") else MAX_DEPTH - 1
    if depth + could_open < needed:
        return False
    deepest = 0
    parser = loader(NamedText(text[:mark.index], name))
    try:
        for _, depth in _events(budget, parser):
            deepest = max(deepest, depth)
    except yaml.YAMLError:
        pass
    finally:
        parser.dispose()
    return deepest >= needed


def _measure(budget: Budget, value) -> tuple[int, int]:
    """(nesting depth, a lower bound of the JSON text's length) of a constructed document,
    each object shared through aliases counted as often as it appears, without recursion.
    Cycles are left to the JSON encoder, which refuses them."""
    known: dict = {}
    stack = [(value, False)]
    on_path: set = set()
    while stack:
        obj, done = stack.pop()
        key = id(obj)
        if not isinstance(obj, (list, dict)):
            continue
        if done:
            on_path.discard(key)
            children = obj.values() if isinstance(obj, dict) else obj
            depth, size = 0, 2
            for child in children:
                if isinstance(child, (list, dict)):
                    d, s = known.get(id(child), (0, 2))
                else:
                    d, s = 0, _scalar_size(child)
                depth = max(depth, d)
                size += s + 1
            if isinstance(obj, dict):
                size += sum(_scalar_size(k) + 1 for k in obj)
            known[key] = (depth + 1, size)
            if depth + 1 > MAX_DEPTH:
                raise DocumentError(f"the document is nested deeper than {MAX_DEPTH} levels")
            continue
        if key in known or key in on_path:
            continue
        on_path.add(key)
        stack.append((obj, True))
        children = obj.values() if isinstance(obj, dict) else obj
        stack.extend((child, False) for child in children if isinstance(child, (list, dict)))
        if len(known) % CHECK_EVERY == CHECK_EVERY - 1:
            budget.check_clock()
    return known.get(id(value), (0, _scalar_size(value)))


def _scalar_size(value) -> int:
    if isinstance(value, str):
        return len(value) + 2
    return 4


class _Encoder(json.JSONEncoder):
    """python-yq's JSONDateTimeEncoder: dates and times as ISO 8601 text."""

    def default(self, o):
        if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
            return o.isoformat()
        return super().default(o)


def to_json(text: str, name: str, annotations: bool, budget: Budget):
    """Each YAML document of `text` as one line of JSON text, as they are read, each at most
    max_string_length long. Raises DocumentError (refused) or ParseError."""
    max_length = budget.string_limit()
    loader_type = loader_class(annotations)
    with reading(name):
        aliases = _scan(budget, text, name, loader_type)
    loader = loader_type(NamedText(text, name))
    try:
        last = 0
        while True:
            with reading(name):
                if not loader.check_node():
                    return
                node = loader.get_node()
                document = loader.construct_document(node)
                end = node.end_mark.index
                allowed = max(end - last, 1) * EXPANSION_FACTOR
                if aliases:                   # sized before it is built
                    _check_size(_measure(budget, document)[1], allowed, max_length)
                encoded = json.dumps(document, cls=_Encoder)
                _check_size(len(encoded), allowed, max_length)
            last = end
            yield encoded + "\n"
            budget.check_clock()
    finally:
        loader.dispose()


@contextlib.contextmanager
def reading(name: str):
    """Turns what the parser, the constructors and the JSON encoder raise on a document into
    the reading error of `name`."""
    try:
        yield
    except (yaml.YAMLError, ValueError, TypeError, ArithmeticError, RecursionError) as e:
        raise reading_error(name, e) from None


def _check_size(size: int, allowed: int, max_length: int) -> None:
    if size > allowed:
        raise DocumentError("detected unsafe YAML entity expansion")
    if size > max_length:
        raise DocumentError(f"a document's JSON is longer than {max_length} characters "
                            "(max_string_length)")


def json_text(document, budget: Budget) -> str:
    """One document as a line of JSON text (dates and times as ISO 8601); refused past
    MAX_DEPTH levels, as YAML documents are, and past max_string_length."""
    _measure(budget, document)
    encoded = json.dumps(document, cls=_Encoder)
    _check_size(len(encoded), budget.string_limit(), budget.string_limit())
    return encoded + "\n"


# ---- writing

_VALUE_ANNOTATION = re.compile(r"^__yq_(?P<type>tag|style)_(?P<key>.+)__$")
_ITEM_ANNOTATION = re.compile(r"^__yq_(?P<type>tag|style)_(?P<key>\d+)_(?P<value>.+)__$")


@functools.lru_cache(maxsize=8)
def dumper_class(annotations: bool, indentless: bool, grammar: str):
    """A dumper writing as python-yq's get_dumper."""

    def represent_dict(dumper, data):
        pairs: list[tuple] = []
        styles: dict[str, Any] = {}
        tags: dict[str, Any] = {}
        for k, v in data.items():
            if annotations and isinstance(k, str):
                if k == "__yq_alias__":
                    continue
                found = _VALUE_ANNOTATION.match(k)
                if found:
                    (styles if found.group("type") == "style" else tags)[found.group("key")] = v
                    continue
            pairs.append((k, v))
        mapping = dumper.represent_mapping("tag:yaml.org,2002:map", pairs)
        if annotations:
            for key_node, value_node in mapping.value:
                hashed = hash_key(key_node.value)
                _annotate(value_node, styles.get(hashed), tags.get(hashed))
        return mapping

    def represent_list(dumper, data):
        items: list = []
        styles: dict[str, str] = {}
        tags: dict[str, str] = {}
        for v in data:
            if annotations and isinstance(v, str):
                found = _ITEM_ANNOTATION.match(v)
                if found:
                    target = styles if found.group("type") == "style" else tags
                    target[found.group("key")] = found.group("value")
                    continue
            items.append(v)
        sequence = dumper.represent_list(items)
        if annotations:
            for i, node in enumerate(sequence.value):
                _annotate(node, styles.get(str(i)), tags.get(str(i)))
        return sequence

    class IndentlessDumper(yaml.SafeDumper):
        pass

    class IndentingDumper(yaml.SafeDumper):
        def increase_indent(self, flow=False, indentless=False):
            return super().increase_indent(flow, False)

        def ignore_aliases(self, data):
            return True

    Dumper = IndentlessDumper if indentless else IndentingDumper
    Dumper.add_representer(dict, represent_dict)
    Dumper.add_representer(list, represent_list)
    _set_grammar(Dumper, grammar)
    return Dumper


def _annotate(node, style, tag) -> None:
    if style is not None:
        if isinstance(node, yaml.ScalarNode):
            node.style = style
        elif style == "flow":
            node.flow_style = True
    if tag is not None:
        node.tag = tag


def decode_documents(output: str):
    """The JSON texts jq wrote, one after the other (python-yq's decode_docs)."""
    decoder = json.JSONDecoder()
    while output:
        document, pos = decoder.raw_decode(output)
        output = output[pos + 1:]
        yield document


def to_yaml(documents, annotations: bool, indentless: bool, grammar: str, width, explicit_start: bool,
            explicit_end: bool) -> str:
    out = io.StringIO()
    yaml.dump_all(documents, stream=out, Dumper=dumper_class(annotations, indentless, grammar),
                  width=width, allow_unicode=True, default_flow_style=False,
                  explicit_start=explicit_start, explicit_end=explicit_end)
    return out.getvalue()
