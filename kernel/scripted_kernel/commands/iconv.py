"""iconv: convert text from one character encoding to another, as glibc's iconv does, with the
codecs of Python's standard library (-f -t -c -l -o, the //TRANSLIT and //IGNORE suffixes)."""
from __future__ import annotations

import codecs
import unicodedata
from typing import Optional
from encodings.aliases import aliases

from ..fs import FsError, access
from ._options import UsageError, parse
from .registry import Usage, command

# glibc's names that Python spells otherwise
GLIBC_NAMES = {"ANSI_X3.4-1968": "ascii", "US-ASCII": "ascii", "ASCII": "ascii",
               "ISO_8859-1": "latin-1", "ISO8859-1": "latin-1", "LATIN1": "latin-1",
               "ISO-10646/UCS2": "utf-16-be", "UCS-2": "utf-16-le", "UCS-2LE": "utf-16-le",
               "UCS-2BE": "utf-16-be", "UCS-4": "utf-32-be", "UCS-4LE": "utf-32-le",
               "UCS-4BE": "utf-32-be", "WCHAR_T": "utf-32-le", "UTF8": "utf-8", "MS-ANSI": "cp1252"}

# What glibc's //TRANSLIT writes for characters that Unicode decomposition does not reduce
TRANSLIT = {"€": "EUR", "“": '"', "”": '"', "„": '"', "‟": '"', "«": "<<", "»": ">>",
            "‘": "'", "’": "'", "‚": "'", "‛": "'", "‹": "<", "›": ">", "–": "-", "—": "-",
            "‐": "-", "‑": "-", "−": "-", "…": "...", "ß": "ss", "æ": "ae", "Æ": "AE",
            "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ł": "l", "Ł": "L",
            "þ": "th", "Þ": "TH", "ð": "d", "Ð": "D", "©": "(C)", "®": "(R)", "™": "(TM)",
            "×": "x", "÷": ":", "•": "o", "·": ".", "\u00a0": " ", "£": "GBP", "¥": "JPY",
            "¢": "c", "°": "?", "±": "+/-", "¼": " 1/4", "½": " 1/2", "¾": " 3/4"}


def codec_for(name: str) -> tuple[Optional[str], set[str]]:
    """(Python codec name, suffixes) for an iconv charset name like `ASCII//TRANSLIT`; the codec
    is None when the standard library has none of that name."""
    base, *parts = name.split("//")
    suffixes = {s.upper() for s in parts if s}
    base = base.strip() or "UTF-8"
    candidate = GLIBC_NAMES.get(base.upper(), base)
    try:
        return codecs.lookup(candidate).name, suffixes
    except (LookupError, UnicodeEncodeError):       # (a name with a byte no charset has)
        return None, suffixes


def transliterate(char: str, encoding: str) -> str:
    """glibc's //TRANSLIT: a look-alike the target can encode, else `?`."""
    for candidate in (TRANSLIT.get(char), _without_marks(char)):
        if candidate:
            try:
                candidate.encode(encoding)
                return candidate
            except UnicodeEncodeError:
                continue
    return "?"


def _without_marks(char: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))


class ConversionError(Exception):
    def __init__(self, message: str, converted: bytes):
        super().__init__(message)
        self.message = message
        self.converted = converted


def convert(data: bytes, source: str, target: str, omit: bool, translit: bool, ignore: bool) -> bytes:
    """`data` re-encoded; raises ConversionError (with what was converted before the failure)
    worded as glibc words it: an invalid or incomplete input sequence, or a character the
    target cannot represent (glibc calls it an illegal input sequence too)."""
    decoder = codecs.getincrementaldecoder(source)()
    try:
        text = decoder.decode(data, final=True)
    except UnicodeDecodeError as e:
        converted = data[:e.start].decode(source, "ignore").encode(target, "ignore")
        if e.reason.startswith("unexpected end"):
            raise ConversionError("incomplete character or shift sequence at end of buffer",
                                  converted) from None
        raise ConversionError(f"illegal input sequence at position {e.start}", converted) from None
    encoder = codecs.getincrementalencoder(target)()   # one byte-order mark, at the start
    out, skipped, at = [], False, 0
    while at < len(text):
        try:
            out.append(encoder.encode(text[at:]))
            break
        except UnicodeEncodeError as e:
            bad = at + e.start
            out.append(encoder.encode(text[at:bad]))
            at = bad + 1
        if translit:
            out.append(encoder.encode(transliterate(text[bad], target)))
        elif omit or ignore:
            skipped = True
        else:
            position = len(text[:bad].encode(source))
            raise ConversionError(f"illegal input sequence at position {position}", b"".join(out))
    result = b"".join(out)
    if skipped and ignore and not omit:
        # glibc reports the characters //IGNORE dropped once, at the end of its buffer
        raise ConversionError(f"illegal input sequence at position {len(data)}", result)
    return result


def charset_list() -> str:
    names = {name.upper().replace("_", "-") for name in set(aliases) | set(aliases.values())}
    names |= set(GLIBC_NAMES)
    return "".join(f"{name}//\n" for name in sorted(names))


@command("iconv", usage=Usage("[OPTION...] [FILE...]",
                              "Convert encoding of given files from one encoding to another.",
                              ("-f, --from-code=NAME  encoding of original text",
                               "-t, --to-code=NAME    encoding for output",
                               "-l, --list            list all known coded character sets",
                               "-c                    omit invalid characters from output",
                               "-o, --output=FILE     output file",
                               "-s, --silent          suppress warnings")))
def run(ctx, argv):
    try:
        opts, names = parse("iconv", argv, short_flags="cls", short_values="fto",
                            long_flags={"list": "l", "silent": "s", "verbose": "verbose"},
                            long_values={"from-code": "f", "to-code": "t", "output": "o"})
    except UsageError as e:          # glibc's argp words the hint otherwise, and exits 64
        problem = e.message.split("\n")[0]
        raise UsageError(f"{problem}\nTry `iconv --help' or `iconv --usage' for more "
                         "information.", 64) from None
    if opts.has("l"):
        ctx.out(charset_list())
        return 0
    source, _ = codec_for(opts.get("f", "UTF-8"))
    target, suffixes = codec_for(opts.get("t", "UTF-8"))
    if source is None or target is None:
        raise UsageError("iconv: failed to start conversion processing: No such file or directory")
    pieces, status = [], 0
    for name in names or ["-"]:
        try:
            text = ctx.stdin.read_all() if name == "-" else access.read_text(ctx, name)
        except FsError as e:
            ctx.err(f"iconv: cannot open input file `{name}': {e.strerror}\n")
            status = 1
            continue
        try:
            pieces.append(convert(text.encode("utf-8", "surrogateescape"), source, target,
                                  opts.has("c"), "TRANSLIT" in suffixes, "IGNORE" in suffixes))
        except ConversionError as e:
            pieces.append(e.converted)
            _write(ctx, opts.get("o"), b"".join(pieces))
            ctx.err(f"iconv: {e.message}\n")
            return 1
    _write(ctx, opts.get("o"), b"".join(pieces))
    return status


def _write(ctx, output, data: bytes):
    if output is None:
        ctx.write_bytes(data)
        return
    try:
        access.writer(ctx, output)(data.decode("utf-8", "surrogateescape"))
    except FsError as e:
        raise UsageError(f"iconv: cannot open output file: {e.strerror}") from None
