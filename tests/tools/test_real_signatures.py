"""Signatures and docstrings as third-party service classes write them, registered with
`tool(fn)` as a user would: each must give the right flags, description and choices, and every
value a model writes must reach the function as the direct call would pass it."""
from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

import pydantic
import pytest

from scripted_kernel import BashTool, MemoryFs, ScriptedTool, tool
from scripted_kernel.commands import COMMANDS
from scripted_kernel.shell.builtins import load as load_builtins
from scripted_kernel.tools.catalog import DESCRIPTION_BUDGET


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Address:
    street: str
    city: str
    zip: Optional[str] = None


class Customer(pydantic.BaseModel):
    name: str
    vip: bool = False


class Filter(TypedDict):
    status: str
    limit: int


# ---------------------------------------------------------------- the signatures

def send_message(channel: str, message: str, thread_ts: Optional[str] = None) -> dict:
    """Send a message to a channel.
    Args:
        channel: The channel ID.
        message: The message text.
            It may hold Slack markdown.

            At most 4,000 characters.
        thread_ts: Reply in this thread.
    Returns:
        message: A message describing the result
    """
    return {"channel": channel, "message": message, "thread_ts": thread_ts}


def get_weather(city: str, unit: str = "celsius") -> dict:
    """Current weather for a city.

    Parameters
    ----------
    city : str
        The city name.
    unit : str
        [Enum]: ["celsius", "fahrenheit"]
    """
    return {"city": city, "unit": unit}


def read_file(path: str, encoding: str = "utf-8") -> str:
    """Read a text file.

    :param path: The file's path.
    :type path: str
    :param encoding: The text encoding.
    :returns: the text
    """
    return f"{path}:{encoding}"


def sort_items(order: str = "asc") -> str:
    """Sort the items.

    Args:
        order: The order, one of: asc, desc.
    """
    return order


def update_ticket(ticket_id: str, updates: Dict[str, Optional[Union[str, int]]]) -> dict:
    """Update fields of a ticket.

    Args:
        ticket_id: The ticket.
        updates: Field name to new value (null clears a field).
    """
    return {"id": ticket_id, "updates": updates}


def convert(value: float, unit: Unit = Unit.CELSIUS) -> dict:
    """Convert a temperature."""
    return {"value": value, "unit": unit, "is_member": isinstance(unit, Unit)}


def set_priority(ticket: int, priority: Priority) -> dict:
    """Set a ticket's priority."""
    return {"ticket": ticket, "priority": priority, "is_member": isinstance(priority, Priority)}


def paint(color: Color) -> str:
    """Paint."""
    return f"{type(color).__name__}.{color.name}"


def list_orders(status: Literal["open", "shipped"] = "open", limit: int = 10) -> dict:
    """List orders."""
    return {"status": status, "limit": limit}


def page(cursor: Optional[int] = None) -> dict:
    """A page of results."""
    return {"cursor": cursor}


def lookup(key: Union[int, str]) -> dict:
    """Look up by number or name."""
    return {"key": key, "type": type(key).__name__}


def tag(tags: list[str]) -> list:
    """Tag things."""
    return tags


def fetch_many(ids: List[int]) -> list:
    """Fetch by ids."""
    return ids


def search(query: str, exact: bool = False, include_archived: bool = True) -> dict:
    """Search."""
    return {"query": query, "exact": exact, "include_archived": include_archived}


def ship(address: Address) -> dict:
    """Ship to an address."""
    return {"street": address.street, "city": address.city, "is_dataclass": isinstance(address, Address)}


def register_customer(customer: Customer) -> dict:
    """Register a customer."""
    return {"name": customer.name, "vip": customer.vip, "is_model": isinstance(customer, Customer)}


def query(filter: Filter) -> dict:
    """Query with a filter."""
    return dict(filter)


def move(to: Tuple[int, int]) -> dict:
    """Move to a point."""
    return {"to": list(to), "is_tuple": isinstance(to, tuple)}


def label(names: set[str]) -> list:
    """Label."""
    return sorted(names)


def configure(settings: dict) -> dict:
    """Configure."""
    return settings


def with_kwargs(name: str, *args, **kwargs) -> dict:
    """Varargs are not flags."""
    return {"name": name, "args": list(args), "kwargs": kwargs}


def count_lines(prefix: str, stdin: str = "") -> str:
    """Count input lines."""
    return f"{prefix}{len((stdin or '').splitlines())}"


async def async_fetch(url: str) -> dict:
    """Fetch asynchronously."""
    await asyncio.sleep(0)
    return {"url": url}


class Files:
    """A service class: its methods are registered bound."""

    def __init__(self):
        self.created: list = []

    def mkdir(self, path: str, parents: bool = False) -> dict:
        """Create a directory.

        Args:
            path: Where.
            parents: Create the missing parents too.
        """
        self.created.append(path)
        return {"created": path, "parents": parents}

    @staticmethod
    def version() -> str:
        """The service's version."""
        return "1.0"


def long_doc(x: int) -> int:
    """Do a thing that needs explaining. This tool does a great many things, and this sentence
    goes on for a while to describe them all in detail. Another sentence follows with yet more
    detail about the exact semantics of the operation, the units involved, and what happens to
    the data afterwards. And a third sentence, still longer, about edge cases, retries, rate
    limits, pagination and the format of the returned records, which the prompt cannot hold."""
    return x


def no_doc(a: int, b: int = 2):
    return a + b


def default_object(when: object = object()) -> str:
    """A default with no JSON form."""
    return "ok"


def annotated(n: Annotated[int, "a count"]) -> int:
    """Annotated hint."""
    return n


def status_filter(status: Optional[Literal["open", "closed"]] = None) -> dict:
    """Optional choices."""
    return {"status": status}


def anything(value: Any) -> dict:
    """Any value."""
    return {"value": value}


def epydoc(ticket_id: str) -> str:
    """Close a ticket.

    @param ticket_id: the ticket to close
    @return: nothing useful
    """
    return ticket_id


def google_typed(unit: str, count: int = 1) -> dict:
    """Google style with types.

    Args:
        unit (str): The unit, one of `metric`, `imperial`.
        count (int, optional): How many. Defaults to 1.
    """
    return {"unit": unit, "count": count}


def sphinx_typed(city: str, days: int = 3) -> dict:
    """Forecast.

    :param str city: The city name.
    :param int days: How many days,
        at most 14.
    """
    return {"city": city, "days": days}


def balance() -> Decimal:
    """The balance."""
    return Decimal("12.50")


def ratio() -> Fraction:
    """A ratio."""
    return Fraction(3, 4)


def ids() -> set:
    """Ids."""
    return {3, 1, 2}


def point() -> tuple:
    """A point."""
    return (1, 2)


def nothing() -> None:
    """Does nothing, returns None."""


def address_of() -> Address:
    """An address."""
    return Address("1 Main St", "Springfield")


def customer_of() -> Customer:
    """A customer."""
    return Customer(name="Ada", vip=True)


class Opaque:
    pass


def opaque() -> Opaque:
    """Returns something with no JSON form."""
    return Opaque()


# ---------------------------------------------------------------- expectations

def _props(fn) -> dict:
    return tool(fn, register=False).tool_def.input_schema["properties"]


def _run(fn, script: str, **kw):
    t = ScriptedTool.builder("t").function(tool(fn, register=False, **kw)).build()
    return t.execute(script)


def _out(fn, script: str, **kw):
    r = _run(fn, script, **kw)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_google_without_blank_line_keeps_the_summary_apart():
    d = tool(send_message, register=False).tool_def
    assert d.description == "Send a message to a channel."
    props = d.input_schema["properties"]
    assert props["channel"]["description"] == "The channel ID."
    # the whole description, all its paragraphs; not overwritten by Returns
    assert props["message"]["description"] == \
        "The message text. It may hold Slack markdown.\n\nAt most 4,000 characters."
    assert props["thread_ts"]["type"] == ["string", "null"]
    assert d.input_schema["required"] == ["channel", "message"]


def test_a_value_that_looks_like_a_flag_is_a_value():
    assert _out(send_message, "send_message --channel C1 --message --help") == \
        {"channel": "C1", "message": "--help", "thread_ts": None}
    assert _out(send_message, "send_message --channel C1 --message --dry-run")["message"] == "--dry-run"
    r = _run(send_message, "send_message --channel C1 --message hi --help")
    assert r.stdout.startswith("send_message - Send a message") and r.exit_code == 0


def test_numpy_enum_choices():
    props = _props(get_weather)
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"] and props["unit"]["type"] == "string"
    assert _run(get_weather, "get_weather --city Oslo --unit kelvin").exit_code == 2


def test_rest_params():
    props = _props(read_file)
    assert props["path"]["description"] == "The file's path." and props["encoding"]["default"] == "utf-8"
    assert tool(read_file, register=False).tool_def.description == "Read a text file."


def test_one_of_in_prose():
    assert _props(sort_items)["order"]["enum"] == ["asc", "desc"]
    assert _props(google_typed)["unit"]["enum"] == ["metric", "imperial"]


def test_dict_of_optional_unions_by_key_and_by_json():
    props = _props(update_ticket)
    values = props["updates"].pop("additionalProperties")
    # (typing keeps the first of Union[str, int] and Union[int, str] made in the process: the order varies)
    assert sorted(values["type"]) == ["integer", "null", "string"] and set(values) == {"type"}
    assert props["updates"] == {"type": "object", "description": "Field name to new value (null clears a field)."}
    assert _out(update_ticket, "update_ticket --ticket_id T1 --updates.priority 3 --updates.title 'New, title' "
                               "--updates.owner null") == \
        {"id": "T1", "updates": {"priority": 3, "title": "New, title", "owner": None}}
    assert _out(update_ticket, """update_ticket --ticket_id T1 --updates '{"priority": 3}'""")["updates"] == \
        {"priority": 3}
    assert _out(update_ticket, "update_ticket --ticket_id T1 --updates priority=3")["updates"] == {"priority": 3}


def test_enum_parameters_are_choices_and_members():
    assert _props(convert)["unit"] == {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
    assert _out(convert, "convert --value 1.5 --unit fahrenheit") == \
        {"value": 1.5, "unit": "fahrenheit", "is_member": True}
    assert _out(convert, "convert --value 2")["is_member"] is True
    assert _run(convert, "convert --value 1 --unit kelvin").exit_code == 2
    assert _props(set_priority)["priority"] == {"type": "integer", "enum": [1, 3]}
    assert _out(set_priority, "set_priority --ticket 4 --priority 3") == \
        {"ticket": 4, "priority": 3, "is_member": True}
    assert _run(set_priority, "set_priority --ticket 4 --priority 2").exit_code == 2
    assert _run(paint, "paint --color blue").stdout == "Color.BLUE"


if sys.version_info >= (3, 11):
    class Size(enum.StrEnum):
        S = "s"
        L = "l"

    def fit(size: Size) -> str:
        """Fit."""
        return f"{type(size).__name__}:{size.value}"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="StrEnum is Python 3.11+")
def test_str_enum():
    assert _props(fit)["size"] == {"type": "string", "enum": ["s", "l"]}
    assert _run(fit, "fit --size l").stdout == "Size:l"


def test_literal_and_defaults():
    assert _props(list_orders)["status"] == {"type": "string", "enum": ["open", "shipped"], "default": "open"}
    assert _out(list_orders, "list_orders --status shipped --limit 2") == {"status": "shipped", "limit": 2}


def test_optional_takes_null():
    assert _props(page)["cursor"] == {"type": ["integer", "null"]}
    assert _out(page, "page --cursor null") == {"cursor": None}
    assert _out(page, "page --cursor=") == {"cursor": None}
    assert _out(page, "page --cursor 7") == {"cursor": 7}
    assert _run(page, "page --cursor seven").exit_code == 2
    assert _out(status_filter, "status_filter --status null") == {"status": None}
    assert _out(status_filter, "status_filter --status open") == {"status": "open"}


def test_unions_try_numbers_before_text():
    assert _props(lookup)["key"] == {"type": ["integer", "string"]}
    assert _out(lookup, "lookup --key 7") == {"key": 7, "type": "int"}
    assert _out(lookup, "lookup --key ticket_001") == {"key": "ticket_001", "type": "str"}
    assert _out(lookup, """lookup --json '{"key": "7"}'""") == {"key": "7", "type": "str"}


def test_schema_type_lists_accept_every_listed_type():
    t = ScriptedTool.builder("t").tool(
        __import__("scripted_kernel").ToolDef("f", "d", {"type": "object", "properties": {
            "v": {"type": ["integer", "string"]}}}), lambda a: a.params).build()
    assert json.loads(t.execute("f --v 12").stdout) == {"v": 12}
    assert json.loads(t.execute("f --v abc").stdout) == {"v": "abc"}


def test_arrays_by_repetition_or_json_never_split_text():
    assert _out(tag, "tag --tags 'Hello, world' --tags b") == ["Hello, world", "b"]
    assert _out(tag, """tag --tags '["x, y", "z"]'""") == ["x, y", "z"]
    assert _out(tag, "tag --tags one") == ["one"]
    assert _out(fetch_many, "fetch_many --ids 1,2,3") == [1, 2, 3]
    assert _out(fetch_many, "fetch_many --ids 1 --ids 2") == [1, 2]
    assert _run(fetch_many, "fetch_many --ids '[1, \"x\"]'").exit_code == 2


@pytest.mark.parametrize("flags,expected", [
    ("--exact", (True, True)),
    ("--exact true", (True, True)),
    ("--exact yes", (True, True)),
    ("--exact 1", (True, True)),
    ("--exact false", (False, True)),
    ("--exact no", (False, True)),
    ("--exact 0", (False, True)),
    ("--exact=false", (False, True)),
    ("--no-exact", (False, True)),
    ("--no-include_archived", (False, False)),
    ("--no-include-archived", (False, False)),
    ("--include_archived false --exact", (True, False)),
])
def test_booleans_as_models_write_them(flags, expected):
    got = _out(search, f"search --query q {flags}")
    assert (got["exact"], got["include_archived"]) == expected


def test_models_dataclasses_typeddicts_tuples_sets():
    assert _props(ship)["address"]["required"] == ["street", "city"]
    assert _out(ship, "ship --address.street '1 Main' --address.city Oslo") == \
        {"street": "1 Main", "city": "Oslo", "is_dataclass": True}
    assert _out(register_customer, """register_customer --customer '{"name": "Ada", "vip": true}'""") == \
        {"name": "Ada", "vip": True, "is_model": True}
    assert _props(query)["filter"]["properties"] == {"status": {"type": "string"}, "limit": {"type": "integer"}}
    assert _out(query, "query --filter.status open --filter.limit 5") == {"status": "open", "limit": 5}
    assert _out(move, "move --to '[3, 4]'") == {"to": [3, 4], "is_tuple": True}
    assert _run(move, "move --to '[3]'").exit_code == 2
    assert _props(label)["names"]["uniqueItems"] is True
    assert _out(label, "label --names b --names a") == ["a", "b"]
    assert _out(configure, "configure --settings.theme dark --settings.size 3") == {"theme": "dark", "size": "3"}


def test_varargs_and_stdin_are_not_flags():
    assert list(_props(with_kwargs)) == ["name"]
    assert list(_props(count_lines)) == ["prefix"]
    assert _run(count_lines, "printf 'a\\nb\\n' | count_lines --prefix n=").stdout == "n=2"


def test_async_and_bound_and_static_methods():
    assert _out(async_fetch, "async_fetch --url https://x") == {"url": "https://x"}
    files = Files()
    t = ScriptedTool.builder("fs").function(tool(files.mkdir, register=False, shadow=False)) \
        .function(tool(Files.version, register=False)).build()
    assert list(tool(files.mkdir, register=False).tool_def.input_schema["properties"]) == ["path", "parents"]
    r = t.execute("mkdir --path /a --parents true; version")
    assert r.stdout == '{"created": "/a", "parents": true}\n1.0' and files.created == ["/a"]


def test_a_long_description_is_cut_in_the_prompt_and_whole_in_help():
    t = ScriptedTool.builder("t").function(tool(long_doc, register=False)).build()
    line = next(x for x in t.system_prompt().splitlines() if x.startswith("- `long_doc`"))
    shown = line[len("- `long_doc`: "):]
    assert len(shown) <= DESCRIPTION_BUDGET and shown.endswith(".") and shown.startswith("Do a thing")
    full = t.execute("help long_doc").stdout
    assert "which the prompt cannot hold." in full


def test_no_docstring_no_json_default_annotated_any():
    d = tool(no_doc, register=False).tool_def
    assert d.description == "" and d.input_schema["required"] == ["a"]
    assert "default" not in _props(default_object)["when"]
    assert _props(annotated)["n"] == {"type": "integer"}
    assert _props(anything)["value"] == {}
    assert _out(anything, "anything --value '{\"a\": 1}'") == {"value": '{"a": 1}'}


def test_epydoc_and_typed_styles():
    assert _props(epydoc)["ticket_id"]["description"] == "the ticket to close"
    assert _props(google_typed)["count"]["description"] == "How many. Defaults to 1."
    assert _props(sphinx_typed)["days"]["description"] == "How many days, at most 14."
    assert _props(sphinx_typed)["city"]["description"] == "The city name."


@pytest.mark.parametrize("fn,stdout", [
    (balance, "12.5\n"),
    (ratio, "0.75\n"),
    (ids, "[1, 2, 3]\n"),
    (point, "[1, 2]\n"),
    (nothing, "null\n"),
    (address_of, '{"street": "1 Main St", "city": "Springfield", "zip": null}\n'),
    (customer_of, '{"name": "Ada", "vip": true}\n'),
])
def test_results_print_as_json(fn, stdout):
    r = _run(fn, fn.__name__)
    assert (r.stdout, r.exit_code) == (stdout, 0)


def test_results_a_script_computes_with():
    assert _run(balance, "balance | jq '. + 1'").stdout == "13.5\n"
    assert _run(nothing, "nothing", print_none=False).stdout == ""


def test_a_result_with_no_json_form_is_refused_for_the_author():
    r = _run(opaque, "opaque; echo $?")
    assert r.stdout == "1\n"
    assert r.stderr == ("opaque: cannot print the result: a value of type Opaque has no JSON form; return a "
                        "str, a number, a bool, None, a list, a dict, a dataclass or a pydantic model\n")


# ---------------------------------------------------------------- names

_KEYWORDS = {"function", "select", "time", "coproc"}
_NAMES = sorted(n for n in set(load_builtins()) | set(COMMANDS) | {"help", "discover"}
                if n.replace("_", "a").replace("-", "a").replace(".", "a").isalnum() and n[0].isalpha()
                and n not in _KEYWORDS)


def _echo_tool(name: str):
    def call(text: str = "") -> dict:
        """Echo."""
        return {"tool": name, "text": text}
    call.__name__ = name
    return call


@pytest.mark.parametrize("name", _NAMES)
def test_every_builtin_and_command_name_can_be_a_tool(name):
    fn = _echo_tool(name)
    with pytest.raises(ValueError, match="shadow=True"):
        ScriptedTool.builder("t").filesystem(MemoryFs()).function(tool(fn, register=False)).build()
    t = ScriptedTool.builder("t").filesystem(MemoryFs()).function(tool(fn, register=False, shadow=True)).build()
    r = t.execute(f"{name} --text hi")
    assert (r.stdout, r.exit_code) == (json.dumps({"tool": name, "text": "hi"}) + "\n", 0), r.stderr
    assert name not in t.system_prompt().split("Text commands read stdin:")[1].split("and more")[0].split()


@pytest.mark.parametrize("name,script,stdout", [
    ("echo", "command echo plain; builtin echo also", "plain\nalso\n"),
    ("printf", "command printf '%s\\n' x", "x\n"),
    ("pwd", "command pwd", "/home/user\n"),
    ("cd", "command cd /tmp && command pwd", "/tmp\n"),
    ("true", "command true && echo yes", "yes\n"),
    ("grep", "echo abc | command grep b", "abc\n"),
    ("sort", "printf 'b\\na\\n' | command sort", "a\nb\n"),
    ("wc", "echo abc | command wc -c", "4\n"),
    ("cat", "echo text | command cat", "text\n"),
    ("help", "command help get_x", "get_x - Get x.\nUsage: get_x\n"),
])
def test_command_and_builtin_reach_the_shells_own(name, script, stdout):
    def get_x() -> str:
        """Get x."""
        return "x"
    t = (ScriptedTool.builder("t").filesystem(MemoryFs())
         .function(tool(_echo_tool(name), register=False, shadow=True)).function(tool(get_x, register=False))
         .build())
    assert t.execute(f"{name} --text t").stdout == json.dumps({"tool": name, "text": "t"}) + "\n"
    r = t.execute(script)
    assert (r.stdout, r.exit_code) == (stdout, 0), r.stderr


def test_file_command_names_are_free_in_logic_mode_only():
    logic = ScriptedTool.builder("t").function(tool(_echo_tool("ls"), register=False)).build()
    assert logic.execute("ls --text a").stdout == '{"tool": "ls", "text": "a"}\n'
    with pytest.raises(ValueError, match="taken by the command 'ls'"):
        ScriptedTool.builder("t").filesystem(MemoryFs()).function(tool(_echo_tool("ls"), register=False)).build()


def test_keywords_are_never_tool_names():
    with pytest.raises(ValueError, match="shell keyword"):
        ScriptedTool.builder("t").function(tool(_echo_tool("if"), register=False, shadow=True)).build()


def test_a_shadowing_tool_is_what_every_route_reaches():
    t = ScriptedTool.builder("t").function(tool(_echo_tool("echo"), register=False, shadow=True)).build()
    r = t.execute("x=$(echo --text a); echo --text b | cat; printf 'z\\n' | xargs echo --text; "
                  "timeout 5 echo --text c; eval 'echo --text d'; (echo --text e); echo --text f &")
    assert [json.loads(line)["text"] for line in r.stdout.splitlines()] == ["b", "z", "c", "d", "e", "f"]


def test_bash_tool_builtins_shadow_with_the_flag_only():
    with pytest.raises(ValueError, match="taken by the shell builtin 'pwd'; pass shadow=True"):
        BashTool.builder().builtin("pwd", lambda args, stdin: "mine\n").build()
    b = BashTool.builder().builtin("pwd", lambda args, stdin: "mine\n", shadow=True) \
        .builtin("ls", lambda args, stdin: "listing\n", shadow=True).build()
    r = b.execute("pwd; command pwd; builtin pwd; ls; command ls /")
    assert r.stdout.splitlines()[:5] == ["mine", "/home/user", "/home/user", "listing", "dev"]
    prompt = b.system_prompt()
    assert "pwd (not the shell's pwd: `command pwd` runs that)" in prompt
    assert " ls " not in prompt.split("File commands:")[1].split(";")[0] + " "


def test_a_flag_error_is_one_bounded_line_whatever_the_flag_holds():
    def probe(n: int) -> int:
        """Echo n."""
        return n
    t = ScriptedTool.builder("x").function(probe).build()
    newline = t.execute("probe --$'x\\ny' 1")
    assert newline.exit_code == 2
    assert newline.stderr.count("\n") == 1 and "'--x\\ny'" in newline.stderr
    huge = t.execute("probe --" + "a" * 100_000 + " 1")
    assert huge.exit_code == 2 and huge.stderr.count("\n") == 1
    assert len(huge.stderr) < 10_000 and huge.stderr.rstrip().endswith("(known flags: --n)")
