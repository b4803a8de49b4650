"""file: the type of a file by its content, worded as file(1) 5.44 words the common kinds (text
and its encodings and line ends, scripts, JSON, CSV, HTML, XML, compressed data and archives,
images, PDF, SQLite, ELF), with -b, -i / --mime-type / --mime-encoding, -L and -h."""
from __future__ import annotations

import json
import re
import struct
import time
from dataclasses import dataclass
from typing import Optional

from ..fs import FsError, access
from ._options import UsageError, parse
from .registry import Usage, command
from ..base.limits import Budget

READ_LIMIT = 1 << 20          # file(1) looks at the first megabyte (its bytes parameter)
LONG_LINE = 300               # longer lines are reported "with very long lines"


@dataclass
class Kind:
    description: str
    mime: str
    charset: str = "binary"


# ------------------------------------------------------------------ text

# file's text_chars table: T plain text, I ISO-8859 (0xA0-0xFF), X other extended ASCII,
# F never in text
def _char_class(b: int) -> str:
    if b in (7, 8, 9, 10, 11, 12, 13, 27, 0x85) or 0x20 <= b <= 0x7E:
        return "T"
    if b >= 0xA0:
        return "I"
    if b >= 0x80:
        return "X"
    return "F"


CHAR_CLASS = [_char_class(b) for b in range(256)]
_PLAIN = bytes(b for b in range(256) if CHAR_CLASS[b] == "T")
_LATIN = bytes(b for b in range(256) if CHAR_CLASS[b] in "TI")
_EXTENDED = bytes(b for b in range(256) if CHAR_CLASS[b] != "F")


def _only(data: bytes, allowed: bytes) -> bool:
    return not data.translate(None, allowed)


@dataclass
class Encoding:
    label: str          # "ASCII", "Unicode text, UTF-8", "ISO-8859", ...
    charset: str        # for -i
    text: str           # the content decoded


def text_encoding(data: bytes) -> Optional[Encoding]:
    """The encoding file reports for text, or None for binary data."""
    if _only(data, _PLAIN):
        return Encoding("ASCII", "us-ascii", data.decode("latin-1"))
    body, label = data, "Unicode text, UTF-8"
    if data.startswith(b"\xef\xbb\xbf"):
        body, label = data[3:], "Unicode text, UTF-8 (with BOM)"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(ord(c) >= 0x80 or CHAR_CLASS[ord(c)] == "T" for c in text):
        return Encoding(label, "utf-8", text)
    if _only(data, _LATIN):
        return Encoding("ISO-8859", "iso-8859-1", data.decode("latin-1"))
    if _only(data, _EXTENDED):
        return Encoding("Non-ISO extended-ASCII", "unknown-8bit", data.decode("latin-1"))
    return None


def line_notes(data: bytes) -> str:
    """What file adds after the text kind: long lines, line terminators, escapes."""
    crlf = data.count(b"\r\n")
    cr = data.count(b"\r") - crlf
    lf = data.count(b"\n") - crlf
    nel = data.count(b"\x85")
    longest = max((len(line) for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                   .split(b"\n")), default=0)
    notes = ""
    if longest > LONG_LINE:
        notes += f", with very long lines ({longest})"
    if not (crlf or cr or lf or nel):
        notes += ", with no line terminators"
    elif crlf or cr or nel:
        kinds = [name for name, n in (("CRLF", crlf), ("CR", cr), ("LF", lf), ("NEL", nel)) if n]
        notes += ", with " + ", ".join(kinds) + " line terminators"
    if b"\x1b" in data:
        notes += ", with escape sequences"
    if b"\x08" in data:
        notes += ", with overstriking"
    return notes


# Interpreters of #! lines: (label, mime, form), form "text" for "LABEL, ASCII text executable"
SCRIPTS = {
    "sh": ("POSIX shell script", "text/x-shellscript", "text"),
    "bash": ("Bourne-Again shell script", "text/x-shellscript", "text"),
    "zsh": ("Paul Falstad's zsh script", "text/x-shellscript", "text"),
    "python": ("Python script", "text/x-script.python", "text"),
    "ruby": ("Ruby script", "text/x-ruby", "text"),
    "perl": ("Perl script text executable", "text/x-perl", "bare"),
    "node": ("Node.js script executable", "application/javascript", "after"),
}


def _interpreter(first_line: str) -> tuple[str, Optional[str]]:
    """(the #! line's command as file names it, the SCRIPTS key or None)."""
    command_line = first_line[2:].strip()
    words = command_line.split()
    if not words:
        return command_line, None
    program = words[0]
    if program.endswith("/env") and len(words) > 1:
        program, command_line = words[1], words[1]
    name = program.rsplit("/", 1)[-1]
    for key in SCRIPTS:
        if name == key or (key == "python" and name.startswith("python")):
            return command_line, key
    return command_line, None


def text_kind(data: bytes, enc: Encoding) -> Kind:
    notes = line_notes(data)
    text = enc.text.lstrip("\ufeff")
    if text.startswith("#!"):
        command_line, key = _interpreter(text.split("\n", 1)[0].rstrip("\r"))
        if key is None:
            return Kind(f"a {command_line} script, {enc.label} text executable{notes}",
                        "text/plain", enc.charset)
        label, mime, form = SCRIPTS[key]
        if form == "bare":
            return Kind(label, mime, enc.charset)
        if form == "after":
            return Kind(f"{label}, {enc.label} text{notes}", mime, enc.charset)
        return Kind(f"{label}, {enc.label} text executable{notes}", mime, enc.charset)
    markup = _markup(text)
    if markup is not None:
        return Kind(f"{markup[0]}, {enc.label} text{notes}", markup[1], enc.charset)
    return Kind(f"{enc.label} text{notes}", "text/plain", enc.charset)


def _markup(text: str) -> Optional[tuple]:
    head = text.lstrip()[:256]
    lower = head.lower()
    if head.startswith("<?xml version=\"1.0\"") or head.startswith("<?xml version='1.0'"):
        return "XML 1.0 document", "text/xml"
    if lower.startswith(("<!doctype html", "<html", "<head", "<body", "<title")):
        return "HTML document", "text/html"
    if text.startswith("#include <") or text.startswith('#include "'):
        return "C source", "text/x-c"
    return None


def json_kind(budget: Budget, text: str, charset: str) -> Optional[Kind]:
    """An object or array, or one per line (NDJSON), as file's JSON test accepts them."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    if _is_json(stripped):
        return Kind("JSON text data", "application/json", charset)
    lines = [line for line in stripped.split("\n") if line.strip()]
    if len(lines) < 2:
        return None
    for number, line in enumerate(lines):
        if line.strip()[0] not in "[{" or not _is_json(line):
            return None
        if number % 1024 == 1023:
            budget.check_clock()
    return Kind("New Line Delimited JSON text data", "application/x-ndjson", charset)


# file's JSON parser gives up past 500 levels of its recursion, where a container costs two and
# the value in it one more ([] nested 251 deep is JSON to it, 252 deep is not)
JSON_LEVELS = 501
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^][{}]+")


def _is_json(text: str) -> bool:
    """Whether file's JSON test accepts `text`: valid JSON (NaN and Infinity refused) within
    its depth. The depth is measured before parsing, so that json's recursion is never deep."""
    if text.count("[") + text.count("{") > JSON_LEVELS // 2 and _nesting(text) > JSON_LEVELS // 2 + 1:
        return False

    def reject(constant):
        raise ValueError(constant)
    try:
        value = json.loads(text, parse_constant=reject)
    except ValueError:
        return False
    return _levels(value) <= JSON_LEVELS


def _nesting(text: str) -> int:
    """The deepest nesting of brackets and braces outside strings."""
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _levels(value) -> int:
    """The levels file's parser goes down to for `value` (see JSON_LEVELS), without recursion."""
    deepest = 1
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:
        container, depth = stack.pop()
        children = list(container.values()) if isinstance(container, dict) else container
        if not children:
            deepest = max(deepest, 2 * depth - 1)
        for child in children:
            if isinstance(child, (list, dict)):
                stack.append((child, depth + 1))
            else:
                deepest = max(deepest, 2 * depth + 1)
    return deepest


def looks_csv(data: bytes) -> bool:
    """file's CSV test: the same number (at least two) of comma-separated fields on more than
    two lines (of the first ten), quoted fields skipped."""
    fields = first = lines = 0
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        i += 1
        if c == 0x22:                       # a quoted field: to its closing quote ("" is one)
            while i < n:
                if data[i] == 0x22:
                    if i + 1 < n and data[i + 1] == 0x22:
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
        elif c == 0x2C:
            fields += 1
        elif c == 0x0A:
            lines += 1
            if lines == 10:
                return first != 0 and first == fields
            if first == 0:
                if fields == 0:
                    return False
                first = fields
            elif first != fields:
                return False
            fields = 0
    return bool(first) and lines > 2


# ------------------------------------------------------------------ binary formats

_GZIP_SYSTEMS = ("FAT filesystem (MS-DOS, OS/2, NT)", "Amiga", "VMS", "Unix", "VM/CMS", "Atari",
                 "HPFS filesystem (OS/2, NT)", "MacOS", "Z-System", "CP/M", "TOPS/20",
                 "NTFS filesystem (NT)", "QDOS", "Acorn RISCOS")


def gzip_kind(data: bytes) -> Kind:
    """The header of a gzip member (at least 10 bytes) as file's magic reads it, field by field:
    a name only when there is no extra field before it, nothing taken on trust."""
    method, flags, mtime, xfl, os_id = data[2], data[3], struct.unpack_from("<I", data, 4)[0], data[8], data[9]
    parts = ["gzip compressed data"]
    if method != 8:
        parts.append("reserved method" if method < 8 else "unknown method")
    parts += [word for bit, word in ((1, "ASCII"), (2, "has CRC"), (4, "extra field")) if flags & bit]
    if flags & 0x0C == 0x08:
        end = data.find(b"\0", 10)
        parts.append(f'was "{data[10:end if end >= 0 else len(data)].decode("latin-1")}"')
    parts += [word for bit, word in ((0x10, "has comment"), (0x20, "encrypted")) if flags & bit]
    if mtime:
        parts.append("last modified: " + time.asctime(time.gmtime(mtime)))
    if xfl in (2, 4):
        parts.append("max compression" if xfl == 2 else "max speed")
    if os_id < len(_GZIP_SYSTEMS):
        parts.append(f"from {_GZIP_SYSTEMS[os_id]}")
    parts.append(f"original size modulo 2^32 {struct.unpack_from('<I', data, len(data) - 4)[0]}")
    return Kind(", ".join(parts), "application/gzip")


def zip_kind(data: bytes) -> Kind:
    version, method = struct.unpack_from("<H", data, 4)[0], struct.unpack_from("<H", data, 8)[0]
    name = {0: "store", 8: "deflate", 12: "bzip2", 14: "lzma", 93: "zstd"}.get(method, str(method))
    return Kind(f"Zip archive data, at least v{version // 10}.{version % 10} to extract, "
                f"compression method={name}", "application/zip")


def png_kind(data: bytes) -> Kind:
    width, height, depth, color, _, _, interlace = struct.unpack_from(">IIBBBBB", data, 16)
    colors = {0: "grayscale", 2: "/color RGB", 3: "colormap", 4: "gray+alpha",
              6: "/color RGBA"}.get(color, "")
    bits = f"{depth}-bit{colors}" if colors.startswith("/") else f"{depth}-bit {colors}"
    return Kind(f"PNG image data, {width} x {height}, {bits}, "
                f"{'interlaced' if interlace else 'non-interlaced'}", "image/png")


def jpeg_kind(data: bytes) -> Kind:
    parts = ["JPEG image data"]
    if data[6:11] == b"JFIF\0" and len(data) >= 18:
        major, minor, units = data[11], data[12], data[13]
        x, y = struct.unpack_from(">HH", data, 14)
        length = struct.unpack_from(">H", data, 4)[0]
        parts.append(f"JFIF standard {major}.{minor:02d}")
        parts.append({0: "aspect ratio", 1: "resolution (DPI)", 2: "resolution (DPCM)"}.get(units, ""))
        parts.append(f"density {x}x{y}")
        parts.append(f"segment length {length}")
    frame = _jpeg_frame(data)
    if frame:
        parts.append(frame)
    return Kind(", ".join(p for p in parts if p), "image/jpeg")


def _jpeg_frame(data: bytes) -> str:
    """The start-of-frame segment: its coding, precision, size and components."""
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        length = struct.unpack_from(">H", data, i + 2)[0]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3) and i + 10 <= len(data):
            precision, height, width, components = struct.unpack_from(">BHHB", data, i + 4)
            coding = {0xC0: "baseline", 0xC1: "extended sequential", 0xC2: "progressive",
                      0xC3: "lossless"}[marker]
            return f"{coding}, precision {precision}, {width}x{height}, components {components}"
        i += 2 + length
    return ""


def gif_kind(data: bytes) -> Kind:
    width, height = struct.unpack_from("<HH", data, 6)
    return Kind(f"GIF image data, version {data[3:6].decode('latin-1')}, {width} x {height}",
                "image/gif")


def pdf_kind(data: bytes) -> Kind:
    version = data[5:8].decode("latin-1")
    return Kind(f"PDF document, version {version}", "application/pdf")


def sqlite_kind(data: bytes) -> Kind:
    if len(data) < 100:
        return Kind("SQLite 3.x database", "application/vnd.sqlite3")
    counter, pages, _, _, cookie, schema = struct.unpack_from(">IIIIII", data, 24)
    encoding = {1: "UTF-8", 2: "UTF-16 little endian", 3: "UTF-16 big endian"}.get(
        struct.unpack_from(">I", data, 56)[0], "")
    written, valid_for = struct.unpack_from(">I", data, 96)[0], struct.unpack_from(">I", data, 92)[0]
    parts = ["SQLite 3.x database", f"last written using SQLite version {written}",
             f"file counter {counter}", f"database pages {pages}", f"cookie 0x{cookie:x}",
             f"schema {schema}"] + ([encoding] if encoding else []) + [f"version-valid-for {valid_for}"]
    return Kind(", ".join(parts), "application/vnd.sqlite3")


ELF_TYPES = {1: ("relocatable", "application/x-object"), 2: ("executable", "application/x-executable"),
             3: ("shared object", "application/x-sharedlib"), 4: ("core file", "application/x-coredump")}
ELF_MACHINES = {3: "Intel 80386", 8: "MIPS", 20: "PowerPC", 21: "64-bit PowerPC or cisco 7500",
                22: "IBM S/390", 40: "ARM", 62: "x86-64", 183: "ARM aarch64", 243: "UCB RISC-V"}
ELF_ABIS = {0: "SYSV", 3: "GNU/Linux", 9: "FreeBSD"}


def elf_kind(data: bytes) -> Kind:
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    e = _ElfHeader(data, wide, order)
    type_name, mime = ELF_TYPES.get(e.type, (f"unknown type {e.type}", "application/octet-stream"))
    segments = e.segments()
    if e.type == 3 and _is_pie(data, e, segments):
        type_name, mime = "pie executable", "application/x-pie-executable"
    parts = [f"ELF {64 if wide else 32}-bit {'LSB' if order == '<' else 'MSB'} {type_name}",
             ELF_MACHINES.get(e.machine, f"*unknown arch 0x{e.machine:x}*"),
             f"version {data[6]} ({ELF_ABIS.get(data[7], 'SYSV')})"]
    if not e.phnum and e.type != 1:
        parts.append("no program header")
    elif e.type != 1:
        kinds = {kind for kind, _, _ in segments}
        parts.append("dynamically linked" if kinds & {2, 3} else "statically linked")
        for kind, offset, size in segments:
            if kind == 3:
                parts.append("interpreter " + data[offset:offset + size].split(b"\0")[0].decode("latin-1"))
    parts += e.notes(segments)
    if not e.shnum:
        parts.append("no section header")
    else:
        parts.append("not stripped" if e.has_symbols() else "stripped")
    return Kind(", ".join(parts), mime)


class _ElfHeader:
    def __init__(self, data: bytes, wide: bool, order: str):
        self.data, self.wide, self.order = data, wide, order
        self.type, self.machine = struct.unpack_from(order + "HH", data, 16)
        if wide:
            self.phoff, self.shoff = struct.unpack_from(order + "QQ", data, 32)
            self.phentsize, self.phnum, self.shentsize, self.shnum = struct.unpack_from(order + "HHHH", data, 54)
        else:
            self.phoff, self.shoff = struct.unpack_from(order + "II", data, 28)
            self.phentsize, self.phnum, self.shentsize, self.shnum = struct.unpack_from(order + "HHHH", data, 42)

    def segments(self) -> list:
        """(p_type, offset, size in the file) of each program header inside the data."""
        found = []
        for k in range(min(self.phnum, 512)):
            at = self.phoff + k * self.phentsize
            try:
                if self.wide:
                    kind, _, offset, _, _, size = struct.unpack_from(self.order + "IIQQQQ", self.data, at)
                else:
                    kind, offset, _, _, size = struct.unpack_from(self.order + "IIIII", self.data, at)
            except struct.error:
                break
            found.append((kind, offset, size))
        return found

    def sections(self) -> list:
        """(sh_type, offset, size) of each section header inside the data."""
        found = []
        for k in range(min(self.shnum, 4096)):
            at = self.shoff + k * self.shentsize + 4
            try:
                if self.wide:
                    kind, _, _, offset, size = struct.unpack_from(self.order + "IQQQQ", self.data, at)
                else:
                    kind, _, _, offset, size = struct.unpack_from(self.order + "IIIII", self.data, at)
            except struct.error:
                break
            found.append((kind, offset, size))
        return found

    def notes(self, segments: list) -> list:
        """BuildID and the GNU ABI tag from the PT_NOTE segments (the SHT_NOTE sections of an
        object file, which has no segments)."""
        found = []
        regions = ([(o, n) for kind, o, n in segments if kind == 4] if self.type != 1
                   else [(o, n) for kind, o, n in self.sections() if kind == 7])
        for offset, size in regions:
            at, end = offset, offset + size
            while at + 12 <= min(end, len(self.data)):
                namesz, descsz, note_type = struct.unpack_from(self.order + "III", self.data, at)
                name = self.data[at + 12:at + 12 + namesz].rstrip(b"\0")
                desc_at = at + 12 + (namesz + 3) // 4 * 4
                desc = self.data[desc_at:desc_at + descsz]
                at = desc_at + (descsz + 3) // 4 * 4
                if name != b"GNU":
                    continue
                if note_type == 3:
                    label = {20: "sha1", 16: "md5/uuid"}.get(len(desc), "xxHash")
                    found.append(f"BuildID[{label}]={desc.hex()}")
                elif note_type == 1 and len(desc) >= 16:
                    os_id, major, minor, sub = struct.unpack_from(self.order + "IIII", desc)
                    if os_id == 0:
                        found.append(f"for GNU/Linux {major}.{minor}.{sub}")
        return _note_order(found)

    def has_symbols(self) -> bool:
        return any(kind == 2 for kind, _, _ in self.sections())        # SHT_SYMTAB


def _note_order(found: list) -> list:
    """file prints the BuildID before the ABI tag."""
    return sorted(found, key=lambda n: not n.startswith("BuildID"))


def _is_pie(data: bytes, e: _ElfHeader, segments: list) -> bool:
    """DF_1_PIE in the dynamic section's DT_FLAGS_1."""
    fmt, step = (e.order + "qQ", 16) if e.wide else (e.order + "iI", 8)
    for kind, offset, size in segments:
        if kind != 2:
            continue
        for at in range(offset, min(offset + size, len(data) - step + 1), step):
            tag, value = struct.unpack_from(fmt, data, at)
            if tag == 0:
                break
            if tag == 0x6FFFFFFB and value & 0x08000000:
                return True
    return False


def _tar(data: bytes) -> Optional[Kind]:
    if len(data) >= 512 and data[257:263] == b"ustar\0":
        return Kind("POSIX tar archive", "application/x-tar")
    if len(data) >= 512 and data[257:265] == b"ustar  \0":
        return Kind("POSIX tar archive (GNU)", "application/x-tar")
    return None


def binary_kind(data: bytes) -> Optional[Kind]:
    if data.startswith(b"\x1f\x8b") and len(data) >= 10:
        return gzip_kind(data)
    if data.startswith(b"BZh") and len(data) >= 4 and 0x31 <= data[3] <= 0x39:
        return Kind(f"bzip2 compressed data, block size = {data[3] - 0x30}00k", "application/x-bzip2")
    if data.startswith(b"\xfd7zXZ\0") and len(data) >= 8:
        check = {0: "no check", 1: "CRC32", 4: "CRC64", 10: "SHA-256"}.get(data[7] & 0x0F, "unknown")
        return Kind(f"XZ compressed data, checksum {check}", "application/x-xz")
    if data.startswith(b"PK\x03\x04") and len(data) >= 10:
        return zip_kind(data)
    if data.startswith(b"PK\x05\x06"):
        return Kind("Zip archive data (empty)", "application/zip")
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 29:
        return png_kind(data)
    if data.startswith(b"\xff\xd8\xff"):
        return jpeg_kind(data)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return gif_kind(data)
    if data.startswith(b"%PDF-"):
        return pdf_kind(data)
    if data.startswith(b"SQLite format 3\0"):
        return sqlite_kind(data)
    if data.startswith(b"\x7fELF") and len(data) >= 52:
        try:
            return elf_kind(data)
        except struct.error:
            return Kind("ELF", "application/octet-stream")
    return _tar(data)


def content_kind(budget: Budget, whole: bytes) -> Kind:
    """The kind of a file's content. ELF is read where its headers point, as file(1) does with
    the file itself; everything else from the first megabyte."""
    data = whole[:READ_LIMIT]
    if not data:
        return Kind("empty", "inode/x-empty")
    if len(data) == 1:
        return Kind("very short file (no magic)", "application/octet-stream")
    found = binary_kind(whole if whole.startswith(b"\x7fELF") else data)
    enc = text_encoding(data)
    if found is not None:
        found.charset = enc.charset if enc is not None else "binary"   # as file -i reports it
        return found
    if enc is None:
        return Kind("data", "application/octet-stream")
    found = json_kind(budget, enc.text, enc.charset)
    if found is not None:
        return found
    if enc.charset in ("us-ascii", "utf-8") and looks_csv(data):
        return Kind("CSV text", "text/csv", enc.charset)
    return text_kind(data, enc)


# ------------------------------------------------------------------ the command

def describe(ctx, name: str, follow: bool) -> Kind:
    if name == "-":
        return content_kind(ctx.budget, ctx.read_stdin_bytes())
    try:
        st = ctx.fs.stat(ctx.path(name), follow=follow) if not name.startswith("/dev/") else None
    except FsError as e:
        return Kind(f"cannot open `{name}' ({e.strerror})", "", "")
    if st is not None and st.is_link:
        try:
            ctx.fs.stat(ctx.path(name))
            return Kind(f"symbolic link to {st.target}", "inode/symlink")
        except FsError:
            return Kind(f"broken symbolic link to {st.target}", "inode/symlink", "")
    if st is not None and st.is_dir:
        return Kind("directory", "inode/directory")
    try:
        data = access.read_text(ctx, name).encode("utf-8", "surrogateescape")
    except FsError as e:
        return Kind(f"cannot open `{name}' ({e.strerror})", "", "")
    return content_kind(ctx.budget, data)


SYNOPSIS = """\
Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]
            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]
            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]
            <file> ...
       file -C [-m <magicfiles>]
       file [--help]"""


def _render(kind: Kind, mode: str) -> str:
    if mode == "text" or not kind.mime:
        return kind.description
    if mode == "type":
        return kind.mime
    if mode == "encoding":
        return kind.charset
    return f"{kind.mime}; charset={kind.charset}" if kind.charset else kind.mime


@command("file", usage=Usage("[-bLhiN] [--mime-type] [--mime-encoding] [-F separator] FILE...",
                             "Determine type of FILEs.",
                             ("-b, --brief           do not prepend filenames to output lines",
                              "-i, --mime            output MIME type strings",
                              "    --mime-type       output the MIME type",
                              "    --mime-encoding   output the MIME encoding",
                              "-L, --dereference     follow symlinks",
                              "-h, --no-dereference  don't follow symlinks (default)",
                              "-N, --no-pad          do not pad output",
                              "-F, --separator=STRING  use string as separator instead of `:'")),
         needs_files=True)
def run(ctx, argv):
    opts, names = parse("file", argv, short_flags="bihLNkz0", short_values="F",
                        long_flags={"brief": "b", "mime": "i", "mime-type": "mime-type",
                                    "mime-encoding": "mime-encoding", "dereference": "L",
                                    "no-dereference": "h", "no-pad": "N", "keep-going": "k"},
                        long_values={"separator": "F"})
    if not names:
        raise UsageError(SYNOPSIS)
    mode = "text"
    for flag in opts.flags:
        mode = {"i": "mime", "mime-type": "type", "mime-encoding": "encoding"}.get(flag, mode)
    follow = opts.has("L") and [f for f in opts.flags if f in "Lh"][-1] == "L"
    separator = opts.get("F", ":")
    width = max(len(n if n != "-" else "/dev/stdin") for n in names) + len(separator)
    for name in names:
        shown = "/dev/stdin" if name == "-" else name
        result = _render(describe(ctx, name, follow), mode)
        if opts.has("b"):
            ctx.out(result + "\n")
        elif opts.has("N"):
            ctx.out(f"{shown}{separator} {result}\n")
        else:
            ctx.out(f"{(shown + separator):<{width}} {result}\n")
    return 0
