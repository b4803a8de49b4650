"""read, mapfile and readarray: the builtins that consume standard input into variables."""
from __future__ import annotations

import re

from .registry import builtin
from ...base.errors import FatalError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _read_raw(stdin, delim: str, nchars, exact: bool, raw: bool):
    """(chars, escaped mask, found delimiter) from stdin."""
    chars: list[str] = []
    mask: list[bool] = []
    found = False
    while True:
        if nchars is not None and len(chars) >= nchars:
            found = True
            break
        c = stdin.read_chars(1)
        if c == "":
            break
        if not exact and c == delim:
            found = True
            break
        if c == "\\" and not raw:
            nxt = stdin.read_chars(1)
            if nxt == "":
                break
            if nxt == "\n" and delim != "":
                continue            # line continuation
            chars.append(nxt)
            mask.append(True)
            continue
        chars.append(c)
        mask.append(False)
    return chars, mask, found


def _read_plain_line(stdin, delim: str, raw: bool):
    """_read_raw's result for a whole line at once, when no backslash needs processing;
    (None, None, None) to leave the line to _read_raw."""
    start = stdin.pos
    line, found = _fast_line(stdin, delim)
    if line is None:
        return [], [], False
    if not raw and "\\" in line:
        stdin.pos = start
        return None, None, None
    return list(line), [False] * len(line), found


def _fast_line(stdin, delim: str):
    """The common case (`read -r line`): a whole line at once."""
    s = stdin.read_until(delim)
    if s is None:
        return None, False
    if s.endswith(delim):
        return s[:-len(delim)], True
    return s, False


def _split_for_read(chars, mask, ifs: str, count: int) -> list[str]:
    """Split into at most `count` fields; the last keeps the rest of the line."""
    ws = set(c for c in ifs if c in " \t\n")
    delims = set(ifs)
    n = len(chars)
    i = 0
    fields: list[str] = []

    def is_ws(k):
        return chars[k] in ws and not mask[k]

    def is_delim(k):
        return chars[k] in delims and not mask[k]

    while i < n and is_ws(i):
        i += 1
    while len(fields) < count - 1 and i < n:
        start = i
        while i < n and not is_delim(i):
            i += 1
        fields.append("".join(chars[start:i]))
        if i < n:           # consume one delimiter: ws* [non-ws] ws*
            while i < n and is_ws(i):
                i += 1
            if i < n and is_delim(i) and not is_ws(i):
                i += 1
                while i < n and is_ws(i):
                    i += 1
    if i < n:
        end = n
        while end > i and is_ws(end - 1):
            end -= 1
        # bash drops a trailing non-blank delimiter (with the blanks before it) from the rest
        # only when it ends the one field left ("a :" -> "a", but "a:b:" and "a::" stay)
        if end > i and is_delim(end - 1) and not is_ws(end - 1):
            field_end = end - 1
            while field_end > i and is_ws(field_end - 1):
                field_end -= 1
            if not any(is_delim(k) for k in range(i, field_end)):
                end = field_end
        rest = "".join(chars[i:end])
        if len(fields) < count:
            fields.append(rest)
    return fields


def input_fd(sh, value: str):
    """The input stream of descriptor `value` (`read -u N`, `mapfile -u N`), or None."""
    if not (value.isascii() and value.isdigit()):
        return None
    stream = sh.extra_fds.get(int(value))
    return stream if hasattr(stream, "read_until") else None


@builtin("read")
def read(sh, argv):
    stdin_fd = None
    raw = False
    array = None
    delim = "\n"
    nchars = None
    exact = False
    names = []
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        j = 1
        while j < len(a):
            c = a[j]
            if c in "rse":
                raw = raw or c == "r"
                j += 1
                continue
            if c in "adnNptui":
                value = a[j + 1:]
                if not value:
                    i += 1
                    if i >= len(args):
                        sh.error(f"read: -{c}: option requires an argument")
                        return 2
                    value = args[i]
                if c == "a":
                    array = value
                elif c == "d":
                    delim = value[:1]
                elif c in "nN":
                    try:
                        nchars = int(value)
                        if nchars < 0:
                            raise ValueError
                    except ValueError:
                        sh.error(f"read: {value}: invalid number")
                        return 1
                    exact = c == "N"
                elif c == "p":
                    pass                 # prompts go to a terminal; there is none
                elif c == "u" and value not in ("0",):
                    source = input_fd(sh, value)
                    if source is None:
                        sh.error(f"read: {value}: invalid file descriptor specification")
                        return 1
                    stdin_fd = source
                break
            sh.error(f"read: -{c}: invalid option")
            sh.err("read: usage: read [-ers] [-a array] [-d delim] [-i text] [-n nchars] "
                   "[-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]\n")
            return 2
        i += 1
    names = args[i:]
    for name in names + ([array] if array else []):
        if not _NAME.match(name):
            sh.error(f"read: `{name}': not a valid identifier")
            return 1
    stdin = sh.stdin if stdin_fd is None else stdin_fd
    if raw and nchars is None and len(names) <= 1 and array is None:
        line, found = _fast_line(stdin, delim if delim else "\0")
        if line is None:
            _assign(sh, names[0] if names else "REPLY", "")
            return 1
        if names:
            ifs = sh.ifs
            ws = "".join(c for c in ifs if c in " \t\n")
            line = line.strip(ws) if ws else line
            if ifs and not ws or (set(ifs) - set(ws)):
                line = _split_for_read(list(line), [False] * len(line), ifs, 1)[0] if line else ""
        _assign(sh, names[0] if names else "REPLY", line)
        return 0 if found else 1
    chars, mask, found = (_read_plain_line(stdin, delim if delim else "\0", raw) if nchars is None
                          else (None, None, None))
    if chars is None:
        chars, mask, found = _read_raw(stdin, delim if delim else "\0", nchars, exact, raw)
    if not chars and not found:
        if array:
            sh.set_array(array, [])
        for name in names or ["REPLY"]:
            _assign(sh, name, "")
        return 1
    if array is not None:
        fields = _split_for_read(chars, mask, sh.ifs, 1 << 30) if chars else []
        sh.set_array(array, [(None, f, False) for f in fields])
        return 0 if found else 1
    if not names:
        _assign(sh, "REPLY", "".join(chars))
        return 0 if found else 1
    if exact:
        _assign(sh, names[0], "".join(chars))
        for name in names[1:]:
            _assign(sh, name, "")
        return 0 if found else 1
    fields = _split_for_read(chars, mask, sh.ifs, len(names))
    for k, name in enumerate(names):
        _assign(sh, name, fields[k] if k < len(fields) else "")
    return 0 if found else 1


def _assign(sh, name: str, value: str):
    try:
        sh.set_var(name, value)
    except FatalError as e:
        sh.error(f"read: {e.message}" if "readonly" not in e.message else e.message)
        raise


@builtin("mapfile", "readarray")
def mapfile(sh, argv):
    delim = "\n"
    strip = False
    count = 0
    origin = None
    stdin_fd = None
    skip = 0
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-") or a == "-":
            break
        if a == "--":
            i += 1
            break
        c = a[1]
        if c == "t":
            strip = True
            i += 1
            continue
        if c in "dnOsucC":
            value = a[2:]
            if not value:
                i += 1
                if i >= len(args):
                    sh.error(f"{argv[0]}: -{c}: option requires an argument")
                    return 2
                value = args[i]
            try:
                if c == "d":
                    delim = value[:1] or "\0"
                elif c == "n":
                    count = int(value)
                elif c == "O":
                    origin = int(value)
                elif c == "s":
                    skip = int(value)
                elif c == "u" and value != "0":
                    stdin_fd = input_fd(sh, value)
                    if stdin_fd is None:
                        sh.error(f"{argv[0]}: {value}: invalid file descriptor specification")
                        return 1
            except ValueError:
                sh.error(f"{argv[0]}: {value}: invalid number")
                return 1
            i += 1
            continue
        sh.error(f"{argv[0]}: -{c}: invalid option")
        return 2
    name = args[i] if i < len(args) else "MAPFILE"
    if not _NAME.match(name):
        sh.error(f"{argv[0]}: `{name}': not a valid identifier")
        return 1
    lines: list[str] = []
    stdin = sh.stdin if stdin_fd is None else stdin_fd
    while count == 0 or len(lines) < count + skip:
        line = stdin.read_until(delim)
        if line is None:
            break
        lines.append(line)
    lines = lines[skip:]
    if strip:
        lines = [ln[:-1] if ln.endswith(delim) else ln for ln in lines]
    lines = [ln.replace("\0", "") for ln in lines]      # bash strings cannot hold NUL
    if origin is None:
        sh.set_array(name, [(None, ln, False) for ln in lines])
    else:
        var = sh.lookup(name)
        if var is None or var.value is None:
            sh.set_array(name, [])
        for k, ln in enumerate(lines):
            sh.set_element(name, str(origin + k), ln)
    return 0
