"""jq's own command-line loop over libjq's C API (the library inside PyPI `jq`), through ctypes.

PyPI `jq` runs a program on one value at a time and hands results back as Python values. jq's
command line does more, and this module does it as jq's main.c does: the input is one stream
that jq's own parser reads (so `input` and `inputs` take the next values of the same stream,
`input_line_number` counts the lines read, `-s` and `-R` are jq's), results are written by
jq's printer (numbers keep the text they came with, `--indent`, `--tab`, `-S`, `-a`), `halt`
and `halt_error` stop as in jq, and `debug` and `stderr` write to the script's stderr.

The input text reaches jq's reader through an anonymous in-memory file (memfd): the reader
opens inputs by name. Its name never shows: the caller defines `input_filename` as null, and
errors say `<stdin>`, as for jq reading its standard input.

Calls hold the GIL (PyDLL): libjq is not re-entrant, and a compiled program serves one run at
a time (a second concurrent run compiles its own).
"""
from __future__ import annotations

import ctypes
import functools
import json
import os
import threading
from collections import OrderedDict
from typing import Callable, Optional

_P = ctypes.c_void_p
_INVALID, _NULL, _FALSE, _NUMBER, _STRING = 0, 1, 2, 4, 5
_PRINT_PRETTY, _PRINT_ASCII, _PRINT_SORTED, _PRINT_TAB = 1, 2, 8, 64
_PARSE_SEQ = 1


class _Jv(ctypes.Structure):
    """jq's value, passed by value: kind and flags, then a pointer or a double (declared as a
    pointer: the C ABI passes that union in an integer register; numbers are read through
    jv_number_value)."""
    _fields_ = [("kind_flags", ctypes.c_ubyte), ("pad", ctypes.c_ubyte),
                ("offset", ctypes.c_ushort), ("size", ctypes.c_int), ("u", _P)]


_MessageCallback = ctypes.CFUNCTYPE(None, _P, _Jv)


class _Api:
    """The libjq functions used here, typed."""

    def __init__(self, path: str):
        lib = ctypes.PyDLL(path)

        def fn(name, result, *args, optional=False):
            f = getattr(lib, name, None) if optional else getattr(lib, name)
            if f is not None:
                f.restype, f.argtypes = result, list(args)
            return f
        jv, i = _Jv, ctypes.c_int
        self.jq_init = fn("jq_init", _P)
        self.jq_teardown = fn("jq_teardown", None, ctypes.POINTER(_P))
        self.jq_compile_args = fn("jq_compile_args", i, _P, ctypes.c_char_p, jv)
        self.jq_set_error_cb = fn("jq_set_error_cb", None, _P, _MessageCallback, _P)
        self.jq_set_debug_cb = fn("jq_set_debug_cb", None, _P, _MessageCallback, _P)
        # jq 1.7.1+; before it, `stderr` wrote to the process's own stderr
        self.jq_set_stderr_cb = fn("jq_set_stderr_cb", None, _P, _MessageCallback, _P, optional=True)
        self.jq_set_input_cb = fn("jq_set_input_cb", None, _P, _P, _P)
        self.jq_start = fn("jq_start", None, _P, jv, i)
        self.jq_next = fn("jq_next", jv, _P)
        self.jq_halted = fn("jq_halted", i, _P)
        self.jq_get_exit_code = fn("jq_get_exit_code", jv, _P)
        self.jq_get_error_message = fn("jq_get_error_message", jv, _P)
        self.util_init = fn("jq_util_input_init", _P, _P, _P)
        self.util_set_parser = fn("jq_util_input_set_parser", None, _P, _P, i)
        self.util_add_input = fn("jq_util_input_add_input", None, _P, ctypes.c_char_p)
        self.util_next_input = fn("jq_util_input_next_input", jv, _P)
        self.util_free = fn("jq_util_input_free", None, ctypes.POINTER(_P))
        self.util_current_line = fn("jq_util_input_get_current_line", jv, _P)
        self.util_callback = ctypes.cast(lib.jq_util_input_next_input_cb, _P)
        self.jv_parser_new = fn("jv_parser_new", _P, i)
        self.jv_parse = fn("jv_parse", jv, ctypes.c_char_p)
        self.jv_null = fn("jv_null", jv)
        self.jv_object = fn("jv_object", jv)
        self.jv_object_set = fn("jv_object_set", jv, jv, jv, jv)
        self.jv_string = fn("jv_string", jv, ctypes.c_char_p)
        self.jv_get_kind = fn("jv_get_kind", i, jv)
        self.jv_copy = fn("jv_copy", jv, jv)
        self.jv_free = fn("jv_free", None, jv)
        self.jv_invalid_has_msg = fn("jv_invalid_has_msg", i, jv)
        self.jv_invalid_get_msg = fn("jv_invalid_get_msg", jv, jv)
        self.jv_dump_string = fn("jv_dump_string", jv, jv, i)
        self.jv_string_value = fn("jv_string_value", _P, jv)
        self.jv_string_length_bytes = fn("jv_string_length_bytes", i, jv)
        self.jv_number_value = fn("jv_number_value", ctypes.c_double, jv)

    def text(self, value: _Jv) -> str:
        """A string value's text (the value is freed)."""
        size = self.jv_string_length_bytes(self.jv_copy(value))
        data = ctypes.string_at(self.jv_string_value(value), size)
        self.jv_free(value)
        return data.decode("utf-8", "surrogateescape")

    def dump(self, value: _Jv, flags: int) -> str:
        """A value as jq prints it (the value is freed)."""
        return self.text(self.jv_dump_string(value, flags))

    def message(self, value: _Jv) -> str:
        """A message as jq writes it: a string's text, anything else as compact JSON (freed)."""
        return self.text(value) if self.jv_get_kind(value) == _STRING else self.dump(value, 0)


@functools.lru_cache(maxsize=1)
def api() -> _Api:
    import jq as libjq
    return _Api(libjq.__file__)


class CompileError(Exception):
    """libjq's compile messages, in the order it gave them."""

    def __init__(self, messages: list):
        super().__init__("\n".join(messages))
        self.messages = messages


class _Messages:
    """Where a program's `debug` and `stderr` write: the run's stderr, set for each run. The
    callbacks hold this, not the program, so that a program and its callbacks form no cycle."""

    def __init__(self, api: _Api):
        self.api = api
        self.write: Optional[Callable[[str], None]] = None

    def debug(self, _data, value: _Jv):
        self._emit('["DEBUG:",' + self.api.dump(value, 0) + "]\n")     # as jq's main.c

    def stderr(self, _data, value: _Jv):
        self._emit(self.api.message(value))

    def _emit(self, text: str):
        if self.write is not None:
            self.write(text)


class _Program:
    """A jq state with one program compiled into it, and the callbacks bound to it."""

    def __init__(self, source: str):
        self.api = a = api()
        self.state = a.jq_init()
        if not self.state:
            raise MemoryError
        self.lock = threading.Lock()
        self.messages = _Messages(a)
        errors: list = []

        def compile_error(_data, message):
            errors.append(a.message(message))
        # kept here: libjq holds only the C pointers
        self._callbacks = (_MessageCallback(compile_error), _MessageCallback(self.messages.debug),
                           _MessageCallback(self.messages.stderr))
        a.jq_set_error_cb(self.state, self._callbacks[0], None)
        a.jq_set_debug_cb(self.state, self._callbacks[1], None)
        if a.jq_set_stderr_cb is not None:
            a.jq_set_stderr_cb(self.state, self._callbacks[2], None)
        if not a.jq_compile_args(self.state, source.encode("utf-8", "surrogateescape"), a.jv_object()):
            self.close()
            raise CompileError(errors)

    def close(self):
        if self.state:
            state = _P(self.state)
            self.state = None
            self.api.jq_teardown(ctypes.byref(state))

    def __del__(self):
        try:
            self.close()
        except Exception:        # at interpreter exit ctypes may be gone: the process frees it
            pass


_programs: "OrderedDict[str, _Program]" = OrderedDict()
_programs_lock = threading.Lock()
_CACHE_SIZE = 64


def _checkout(source: str) -> tuple[_Program, bool]:
    """A compiled program for this run, and whether it is the cached one (locked for it)."""
    with _programs_lock:
        program = _programs.get(source)
        if program is not None:
            _programs.move_to_end(source)
            if program.lock.acquire(blocking=False):
                return program, True
            return _Program(source), False         # in use by another run
    program = _Program(source)
    program.lock.acquire()
    with _programs_lock:
        _programs[source] = program
        while len(_programs) > _CACHE_SIZE:
            _programs.popitem(last=False)
    return program, True


class _InputFile:
    """The input text as a file jq's reader opens by name: in memory (memfd) where the system
    has it, else a temporary file removed after the run."""

    def __init__(self, text: str):
        self.data = text.encode("utf-8", "surrogateescape")
        self.fd = -1
        self.temporary: Optional[str] = None     # the temporary file's path, where one was made

    def __enter__(self) -> bytes:
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("jq-input", os.MFD_CLOEXEC)
            view = memoryview(self.data)
            while view:
                view = view[os.write(self.fd, view):]
            path = f"/proc/self/fd/{self.fd}"
            if os.path.exists(path):          # no /proc in some sandboxes
                return path.encode()
            os.close(self.fd)
            self.fd = -1
        import tempfile
        with tempfile.NamedTemporaryFile(prefix="jq-input-", delete=False) as temporary:
            temporary.write(self.data)
        self.temporary = temporary.name
        return os.fsencode(temporary.name)

    def __exit__(self, *exc):
        if self.fd >= 0:
            os.close(self.fd)
        if self.temporary is not None:
            os.unlink(self.temporary)


class Run:
    """What one jq command line does with its input, written through `out` and `err`."""

    def __init__(self, out: Callable[[str], None], err: Callable[[str], None], opts: dict):
        self.out, self.err, self.opts = out, err, opts
        flags = 0
        if not opts["c"] and opts["indent"] is not None:
            flags = _PRINT_PRETTY | (_PRINT_TAB if opts["indent"] == "\t" else len(opts["indent"]) << 8)
        if opts["S"]:
            flags |= _PRINT_SORTED
        if opts["a"]:
            flags |= _PRINT_ASCII
        self.flags = flags

    def __call__(self, source: str, context: dict, raw: str) -> tuple[Optional[int], int, bool, bool]:
        """Run `source` on each input wrapped as {"v": input, "a": context} (so that values
        such as --arg's are not compiled in, and a program compiles once whatever they are);
        returns (a halt's exit status or None, 5 after an uncaught error or input that does not
        parse or 0, whether a result came, whether the last was false or null)."""
        a, opts = api(), self.opts
        program, cached = _checkout(source)
        program.messages.write = self.err
        self.context = a.jv_parse(json.dumps(context).encode("utf-8", "surrogateescape"))
        util = None
        try:
            with _InputFile(raw) as path:
                util = a.util_init(None, None)
                parser = None if opts["R"] else a.jv_parser_new(_PARSE_SEQ if opts["seq"] else 0)
                a.util_set_parser(util, parser, 1 if opts["s"] else 0)
                a.util_add_input(util, path)
                a.jq_set_input_cb(program.state, a.util_callback, util)
                return self._loop(program, util)
        finally:
            if util is not None:
                a.util_free(ctypes.byref(_P(util)))
            a.jv_free(self.context)
            program.messages.write = None
            if cached:
                program.lock.release()
            else:
                program.close()

    def _loop(self, program: _Program, util) -> tuple[Optional[int], int, bool, bool]:
        a, opts = api(), self.opts
        if opts["n"]:
            return self._process(program, a.jv_null())
        status, produced, last_falsy = 0, False, False
        while True:
            value = a.util_next_input(util)
            if a.jv_get_kind(value) == _INVALID:
                if not a.jv_invalid_has_msg(a.jv_copy(value)):
                    a.jv_free(value)
                    return None, status, produced, last_falsy
                message = a.message(a.jv_invalid_get_msg(value))
                if opts["seq"]:                           # --seq: not fatal
                    self.err(f"jq: ignoring parse error: {message}\n")
                    continue
                self.err(f"jq: parse error: {message}\n")  # jq 1.7+: the values before it stand
                return None, 5, produced, last_falsy
            halted, failed, any_result, falsy = self._process(program, value)
            if any_result:
                produced, last_falsy = True, falsy
            if halted is not None:
                return halted, status, produced, last_falsy
            status = failed or status

    def _process(self, program: _Program, value: _Jv) -> tuple[Optional[int], int, bool, bool]:
        """Run the program on one input: (halt status or None, 5 on an error or 0, any result,
        whether the last was false or null)."""
        a, opts, state = api(), self.opts, program.state
        wrapped = a.jv_object_set(a.jv_object(), a.jv_string(b"v"), value)
        wrapped = a.jv_object_set(wrapped, a.jv_string(b"a"), a.jv_copy(self.context))
        a.jq_start(state, wrapped, 0)
        produced, falsy = False, False
        pieces = []
        while True:
            result = a.jq_next(state)
            kind = a.jv_get_kind(result)
            if kind == _INVALID:
                break
            produced, falsy = True, kind in (_NULL, _FALSE)
            if opts["seq"]:
                pieces.append("\x1e")
            if kind == _STRING and (opts["r"] or opts["j"]):     # raw, but escaped under -a
                pieces.append(a.dump(result, _PRINT_ASCII) if opts["a"] else a.text(result))
            else:
                pieces.append(a.dump(result, self.flags))
            if not opts["j"]:
                pieces.append("\n")
            if len(pieces) > 512:
                self.out("".join(pieces))
                pieces = []
        if pieces:
            self.out("".join(pieces))
        if a.jq_halted(state):
            a.jv_free(result)
            return self._halt(state), 0, produced, falsy
        if not a.jv_invalid_has_msg(a.jv_copy(result)):
            a.jv_free(result)
            return None, 0, produced, falsy
        message = a.jv_invalid_get_msg(result)
        where = f"<stdin>:{self._line(program)}" if not opts["n"] else "<unknown>"
        if a.jv_get_kind(message) == _STRING:
            self.err(f"jq: error (at {where}): {a.text(message)}\n")
        else:
            self.err(f"jq: error (at {where}) (not a string): {a.dump(message, 0)}\n")
        return None, 5, produced, falsy

    def _halt(self, state) -> int:
        """halt / halt_error: the exit status, and the message on stderr as jq writes it."""
        a = api()
        code = a.jq_get_exit_code(state)
        kind = a.jv_get_kind(code)
        status = 0 if kind == _INVALID else int(a.jv_number_value(code)) if kind == _NUMBER else 5
        a.jv_free(code)
        message = a.jq_get_error_message(state)
        kind = a.jv_get_kind(message)
        if kind == _STRING:
            self.err(a.text(message))
        elif kind in (_INVALID, _NULL):
            a.jv_free(message)
        else:
            self.err(a.dump(message, 0) + "\n")
        return status & 0xFF

    def _line(self, program: _Program) -> int:
        a = api()
        line = a.util_current_line(program.state)
        number = int(a.jv_number_value(line)) if a.jv_get_kind(line) == _NUMBER else 0
        a.jv_free(line)
        return number
