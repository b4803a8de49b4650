"""iconv: convert text from one character encoding to another, as glibc's iconv does, with the
codecs of Python's standard library (-f -t -c -l -o, the //TRANSLIT and //IGNORE suffixes).

Only character sets exist: the names glibc's iconv knows (its spellings, any case) whose charset a
Python codec implements, checked against glibc 2.36 byte for byte (a few tables differ in rare
characters: Big5, Shift_JIS, some EBCDIC pages, UCS-2 past the BMP). Python's registry also holds
transforms (zlib, bz2, base64, hex, uu, rot13 ...): `-f zlib_codec` inflated a 1 MB bomb to a
2 GB host peak before; none of them is a name here."""
from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Optional

from ..fs import FsError, access
from ._options import UsageError, parse
from .registry import Usage, command

# Python codec -> the glibc names (and aliases) of its character set, as `iconv -l` lists them
CHARSETS = {
    "cp437": "437 CP437 CSPC8CODEPAGE437 IBM437",
    "cp500": "500 CP500 CSIBM500 EBCDIC-CP-BE EBCDIC-CP-CH IBM500",
    "cp850": "850 CP850 CSPC850MULTILINGUAL IBM850",
    "cp852": "852 CP852 CSPCP852 IBM852",
    "cp855": "855 CP855 CSIBM855 IBM855",
    "cp856": "856 CP856 CSIBM856 IBM856",
    "cp857": "857 CP857 CSIBM857 IBM857",
    "cp858": "858 CP858 IBM858",
    "cp860": "860 CP860 CSIBM860 IBM860",
    "cp861": "861 CP861 IBM861",
    "cp862": "862 CP862 CSPC862LATINHEBREW IBM862",
    "cp863": "863 CP863 CSIBM863 IBM863",
    "cp864": "864 CP864 CSIBM864 IBM864",
    "cp865": "865 CP865 CSIBM865 IBM865",
    "cp866": "866 CP866 CSIBM866 IBM866",
    "cp869": "869 CP-GR CP869 CSIBM869 IBM869",
    "cp874": "874 CP874 IBM874 WINDOWS-874",
    "cp1026": "1026 CP1026 CSIBM1026 IBM1026",
    "iso8859-1": ("8859_1 CP819 CSISOLATIN1 IBM819 ISO-8859-1 ISO-IR-100 ISO8859-1 ISO_8859-1 "
                  "ISO_8859-1:1987 L1 LATIN1"),
    "iso8859-2": ("8859_2 CSISOLATIN2 ISO-8859-2 ISO-IR-101 ISO8859-2 ISO_8859-2 ISO_8859-2:1987 "
                  "L2 LATIN2"),
    "iso8859-3": ("8859_3 CSISOLATIN3 ISO-8859-3 ISO-IR-109 ISO8859-3 ISO_8859-3 ISO_8859-3:1988 "
                  "L3 LATIN3"),
    "iso8859-4": ("8859_4 CSISOLATIN4 ISO-8859-4 ISO-IR-110 ISO8859-4 ISO_8859-4 ISO_8859-4:1988 "
                  "L4 LATIN4"),
    "iso8859-5": ("8859_5 CSISOLATINCYRILLIC CYRILLIC ISO-8859-5 ISO-IR-144 ISO8859-5 ISO_8859-5 "
                  "ISO_8859-5:1988"),
    "iso8859-6": ("8859_6 ARABIC ASMO-708 CSISOLATINARABIC ECMA-114 ISO-8859-6 ISO-IR-127 "
                  "ISO8859-6 ISO_8859-6 ISO_8859-6:1987"),
    "iso8859-7": ("8859_7 CSISOLATINGREEK ECMA-118 ELOT_928 GREEK GREEK8 ISO-8859-7 ISO-IR-126 "
                  "ISO8859-7 ISO_8859-7 ISO_8859-7:1987 ISO_8859-7:2003"),
    "iso8859-8": ("8859_8 CSISOLATINHEBREW HEBREW ISO-8859-8 ISO-IR-138 ISO8859-8 ISO_8859-8 "
                  "ISO_8859-8:1988"),
    "iso8859-9": ("8859_9 CSISOLATIN5 ISO-8859-9 ISO-IR-148 ISO8859-9 ISO_8859-9 ISO_8859-9:1989 "
                  "L5 LATIN5"),
    "utf-32-be": ("10646-1:1993 10646-1:1993/UCS4 CSUCS4 ISO-10646 ISO-10646/UCS4 UCS-4 UCS-4BE "
                  "UCS4 UTF-32BE UTF32BE"),
    "ascii": ("ANSI_X3.4-1968 ANSI_X3.4-1986 ASCII CP367 CSASCII IBM367 ISO-IR-6 ISO646-US "
              "ISO_646.IRV:1991 US-ASCII US"),
    "big5hkscs": "BIG5-HKSCS BIG5HKSCS",
    "big5": "BIG5 CN-BIG5",
    "gb2312": "CN-GB EUC-CN EUCCN GB2312",
    "cp037": "CP037 CSIBM037 EBCDIC-CP-CA EBCDIC-CP-NL EBCDIC-CP-US EBCDIC-CP-WT IBM037",
    "cp273": "CP273 CSIBM273 IBM273",
    "cp424": "CP424 CSIBM424 EBCDIC-CP-HE IBM424",
    "cp737": "CP737",
    "cp775": "CP775 CSPC775BALTIC IBM775",
    "cp875": "CP875 IBM875",
    "cp932": "CP932 CSIBM932 IBM932 MS932 MS_KANJI",
    "gbk": "CP936 GBK MS936 WINDOWS-936",
    "cp949": "CP949 UHC",
    "cp950": "CP950",
    "cp1125": "CP1125 RUSCII",
    "cp1140": "CP1140 CSIBM1140 IBM1140",
    "cp1250": "CP1250 MS-EE WINDOWS-1250",
    "cp1251": "CP1251 MS-CYRL WINDOWS-1251",
    "cp1252": "CP1252 MS-ANSI WINDOWS-1252",
    "cp1253": "CP1253 MS-GREEK WINDOWS-1253",
    "cp1254": "CP1254 MS-TURK WINDOWS-1254",
    "cp1255": "CP1255 MS-HEBR WINDOWS-1255",
    "cp1256": "CP1256 MS-ARAB WINDOWS-1256",
    "cp1257": "CP1257 WINDOWS-1257",
    "cp1258": "CP1258 WINDOWS-1258",
    "johab": "CP1361 JOHAB",
    "mac-cyrillic": "CP10007 MAC-CYRILLIC MACCYRILLIC MS-MAC-CYRILLIC",
    "iso2022_jp": "CSISO2022JP ISO-2022-JP ISO2022JP",
    "iso2022_kr": "CSISO2022KR ISO-2022-KR ISO2022KR",
    "iso8859-10": ("CSISOLATIN6 ISO-8859-10 ISO-IR-157 ISO8859-10 ISO_8859-10 ISO_8859-10:1992 "
                   "L6 LATIN6"),
    "koi8-r": "CSKOI8R KOI8-R KOI8R",
    "shift_jis": "CSSHIFTJIS SHIFT-JIS SHIFT_JIS SJIS",
    "euc_jisx0213": "EUC-JISX0213",
    "euc_jp": "EUC-JP EUCJP UJIS",
    "euc_kr": "EUC-KR EUCKR",
    "gb18030": "GB18030",
    "hp-roman8": "HP-ROMAN8 R8 ROMAN8",
    "iso2022_jp_2": "ISO-2022-JP-2",
    "iso2022_jp_3": "ISO-2022-JP-3",
    "iso8859-11": "ISO-8859-11 ISO8859-11",
    "iso8859-13": "ISO-8859-13 ISO8859-13 L7 LATIN7",
    "iso8859-14": ("ISO-8859-14 ISO-CELTIC ISO-IR-199 ISO8859-14 ISO_8859-14 ISO_8859-14:1998 L8 "
                   "LATIN8"),
    "iso8859-15": "ISO-8859-15 ISO8859-15 ISO_8859-15 ISO_8859-15:1998 LATIN9",
    "iso8859-16": "ISO-8859-16 ISO-IR-226 ISO8859-16 ISO_8859-16 ISO_8859-16:2001 L10 LATIN10",
    "utf-16-be": "UCS-2BE UNICODEBIG UTF-16BE UTF16BE",
    "utf-8": "ISO-10646/UTF-8 ISO-10646/UTF8 UTF-8 UTF8",
    "tis-620": "ISO-IR-166 TIS-620 TIS620",
    "koi8-t": "KOI8-T",
    "koi8-u": "KOI8-U KOI8U",
    "mac-latin2": "MAC-CENTRALEUROPE",
    "mac-iceland": "MAC-IS MACIS",
    "mac-roman": "MAC MACINTOSH",
    "ptcp154": "PT154",
    "kz1048": "RK1048 STRK1048-2002",
    "shift_jisx0213": "SHIFTJISX0213 SHIFT_JISX0213",
    "utf-16-le": "ISO-10646/UCS2 UCS-2 UCS-2LE UCS2 UNICODELITTLE UTF-16LE UTF16LE",
    "utf-32-le": "UCS-4LE UTF-32LE UTF32LE WCHAR_T",
    "utf-16": "UNICODE UTF-16 UTF16",
    "utf-7": "UTF-7 UTF7",
    "utf-32": "UTF-32 UTF32",
}
_CODEC_OF = {name: codec for codec, names in CHARSETS.items() for name in names.split()}

# What glibc's //TRANSLIT writes for characters that Unicode decomposition does not reduce
TRANSLIT = {"€": "EUR", "“": '"', "”": '"', "„": '"', "‟": '"', "«": "<<", "»": ">>",
            "‘": "'", "’": "'", "‚": "'", "‛": "'", "‹": "<", "›": ">", "–": "-", "—": "-",
            "‐": "-", "‑": "-", "−": "-", "…": "...", "ß": "ss", "æ": "ae", "Æ": "AE",
            "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ł": "l", "Ł": "L",
            "þ": "th", "Þ": "TH", "ð": "d", "Ð": "D", "©": "(C)", "®": "(R)", "™": "(TM)",
            "×": "x", "÷": ":", "•": "o", "·": ".", "\u00a0": " ", "£": "GBP", "¥": "JPY",
            "¢": "c", "°": "?", "±": "+/-", "¼": " 1/4", "½": " 1/2", "¾": " 3/4"}


def codec_for(name: str) -> tuple[Optional[str], set[str]]:
    """(Python codec, suffixes) for an iconv charset name like `ascii//TRANSLIT`; the codec is
    None for a name that is no character set here. An empty name is the locale's, UTF-8."""
    base, *parts = name.split("//")
    suffixes = {s.upper() for s in parts if s}
    key = base.strip().upper().rstrip("/")
    return (_CODEC_OF.get(key) if key else "utf-8"), suffixes


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


def _transliterated(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler of //TRANSLIT: each character the target lacks, by a look-alike."""
    assert isinstance(error, UnicodeEncodeError)
    chars = error.object[error.start:error.end]
    return "".join(transliterate(c, error.encoding) for c in chars), error.end


_TRANSLIT_ERRORS = "scripted-iconv-translit"
codecs.register_error(_TRANSLIT_ERRORS, _transliterated)


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
    # one pass with the codec's own error handling (re-encoding the rest after each character
    # the target lacks was quadratic); a first strict pass finds where glibc stops, or whether
    # //IGNORE dropped something
    try:
        return codecs.getincrementalencoder(target)().encode(text, final=True)
    except UnicodeEncodeError as e:
        bad, converted = e.start, codecs.getincrementalencoder(target)().encode(text[:e.start], final=False)
    if translit:
        return codecs.getincrementalencoder(target)(_TRANSLIT_ERRORS).encode(text, final=True)
    if not (omit or ignore):
        position = len(text[:bad].encode(source))
        raise ConversionError(f"illegal input sequence at position {position}", converted)
    result = codecs.getincrementalencoder(target)("ignore").encode(text, final=True)
    if ignore and not omit:
        # glibc reports the characters //IGNORE dropped once, at the end of its buffer
        raise ConversionError(f"illegal input sequence at position {len(data)}", result)
    return result


def charset_list() -> str:
    """`iconv -l`: the names in glibc's order (strverscmp on NAME//; a name holding a slash has
    one more)."""
    listed = [name + ("/" if "/" in name else "//") for name in _CODEC_OF]
    return "".join(f"{name}\n" for name in sorted(listed, key=_version_order))


def _version_order(name: str) -> list[tuple[int, int]]:
    return [(0x30, int(run)) if run.isdigit() else (ord(run), 0) for run in re.findall(r"\d+|\D", name)]


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
