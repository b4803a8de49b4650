"""What of a host callback's failure reaches a script: one line, without credentials, host
names, addresses or paths (sanitize()).

Imported where a message is first sanitised (a failure path), not with the tool layer: its
patterns take milliseconds to compile.
"""
from __future__ import annotations

import ipaddress
import os
import re

# Every pattern below runs in time linear in the text: a run of characters is matched from its
# start only (a look-behind refuses a start inside it) and possessively (never given back), so
# a failed attempt costs the run once; and the text is capped before any of them runs.
MAX_INPUT = 64 << 10             # characters of a message looked at (its first line is kept)
MAX_MESSAGE = 2000               # characters of a sanitised message; a longer one is cut at a word

_TRACEBACK = "Traceback (most recent call last):"
_LINE_BREAK = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")    # where str.splitlines splits
_SECRET_NAME = re.compile(r"(?i)pass|pwd|token|secret|credential|key|auth|cookie|session|signature"
                          r"|^(?:sig|pw|sid)$")
# URL userinfo: the authority runs to the first / ? # or space; the credentials end at its
# last @ (a password may hold @ and :)
_URL_AUTHORITY = re.compile(r"""(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}+://)([^\s/?#"<>]*+)""")
# NAME= NAME: 'NAME': "NAME": ; the value runs to the end of its field: a closing quote, or
# the separator before the next `NAME=`, or the end of the line
_FIELD = re.compile(r"""(?<![\w.-])(['"]?)([\w.-]{1,64}+)\1\s{0,8}+[:=]\s{0,8}+""")
_NEXT_FIELD = r"""[\s,;&]{0,8}+['"]?[\w.-]{1,64}+['"]?\s{0,8}+[=:]"""
_FIELD_VALUE = re.compile(r"""'(?:[^'\\]|\\.)*+'?|"(?:[^"\\]|\\.)*+"?"""
                          r"""|(?:[^\s,;&]++|[\s,;&](?!""" + _NEXT_FIELD + r"""))*+""")
_BEARER = re.compile(r"(?i)(?<![\w-])(bearer|basic)\s{1,8}+[A-Za-z0-9._~+/=-]{8,}+")
# credentials by their published shapes: prefixes of cloud and SaaS keys, JWTs, AWS key ids,
# Azure client secrets, and long hexadecimal or base64 runs
_TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"sk-[A-Za-z0-9_-]{8,}+"                                  # OpenAI, Anthropic (sk-ant-)
    r"|[srp]k_(?:live|test)_[A-Za-z0-9]{10,}+|whsec_[A-Za-z0-9]{10,}+"      # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+"          # GitHub
    r"|gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|soat|oas)-[A-Za-z0-9_-]{16,}+|gl(?:sa|c)_[A-Za-z0-9_]{20,}+"
    r"|xox[a-z]-[A-Za-z0-9-]{10,}+|xapp-[A-Za-z0-9-]{10,}+"               # Slack
    r"|AIza[A-Za-z0-9_-]{30,}+|GOCSPX-[A-Za-z0-9_-]{20,}+|ya29\.[A-Za-z0-9_-]{20,}+"   # Google
    r"|hf_[A-Za-z0-9]{30,}+|api_org_[A-Za-z0-9]{30,}+"                    # Hugging Face
    r"|npm_[A-Za-z0-9]{30,}+|pypi-[A-Za-z0-9_-]{40,}+"                    # npm, PyPI
    r"|SG\.[A-Za-z0-9_-]{16,}+\.[A-Za-z0-9_-]{16,}+"                      # SendGrid
    r"|do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}"
    r"|ATATT[A-Za-z0-9_=-]{20,}+|hv[sbr]\.[A-Za-z0-9_-]{20,}+|sntrys_[A-Za-z0-9_=+/-]{20,}+"
    r"|NRAK-[A-Z0-9]{20,}+|lin_api_[A-Za-z0-9]{20,}+|ntn_[A-Za-z0-9]{20,}+|PMAK-[A-Za-z0-9-]{20,}+"
    r"|dp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{20,}+"
    r"|(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}+"                    # Azure AD client secret
    r"|eyJ[A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]{2,}+(?:\.[A-Za-z0-9_-]*+)?"  # JWT, signature included
    r")|(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{40,}+={0,2}+|[A-Fa-f0-9]{32,}+)")
_IP_CANDIDATE = re.compile(r"(?i)(?<![\w:.])(?:(?:\d{1,3}+\.){3}\d{1,3}+(?![\w.])"
                           r"|[0-9a-f]{0,4}+(?::[0-9a-f]{0,4}+){2,7}(?![\w:]))")
_DOTTED_NAME = re.compile(r"(?i)(?<![a-z0-9.-])[a-z0-9-]++(?:\.[a-z0-9-]++)++(?::\d{1,5}+)?")
_INTERNAL_SUFFIX = re.compile(r"(?i)\.(?:internal|local|localdomain|lan|corp|intranet|private|svc|"
                              r"home\.arpa)(?::\d+)?$")
_PATH = re.compile(r"(?:[A-Za-z]:\\|(?<![\w<])/)(?:[\w.@+-]++[/\\])++[\w.@+-]*+")
_SECRET_ENV_NAME = re.compile(r"(?i)pass|pwd|token|secret|credential|key|auth|cookie|session|dsn")


def sanitize(message: str) -> str:
    """One line of host code's error, safe to show a script: without credentials (URL
    userinfo, secret `key=value` fields, bearer tokens, keys of known formats, values of the
    host's secret environment variables), IP addresses, internal host names, host paths or
    traceback; at most MAX_MESSAGE characters. Linear in the message's length."""
    text = _message_line(message[:MAX_INPUT])
    text = _redact_environment(text[:2 * MAX_MESSAGE])
    return _redact(_cut(text, MAX_MESSAGE))


def _message_line(text: str) -> str:
    """The line of a message that says what failed: its first, or a bare traceback's last
    (the exception)."""
    text = text.strip()
    at = text.find(_TRACEBACK)
    if at > 0 and text[:at].strip():
        text = text[:at].strip()
    elif at == 0:
        lines = [ln for ln in text.splitlines()[1:] if ln.strip() and not ln.startswith((" ", "\t"))]
        text = lines[-1] if lines else "failed"
    end = _LINE_BREAK.search(text)
    return (text[:end.start()] if end else text) or "failed"


def _cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, cut before a partial last word (half a secret is still
    a secret, and would not match its pattern)."""
    if len(text) <= limit:
        return text
    kept = text[:limit]
    if not text[limit].isspace():
        space = max(kept.rfind(" "), kept.rfind("\t"))
        kept = kept[:space] if space > 0 else ""
    return (kept.rstrip() + " ...").lstrip()


def _redact_environment(text: str) -> str:
    """Each value of the host's environment whose name looks secret, wherever it occurs."""
    values = {value for name, value in os.environ.items()
              if len(value) >= 6 and _SECRET_ENV_NAME.search(name)}
    for value in sorted(values, key=len, reverse=True):
        if value in text:
            text = text.replace(value, "<redacted>")
    return text


def _redact(text: str) -> str:
    text = _URL_AUTHORITY.sub(_redact_userinfo, text)
    text = _BEARER.sub(r"\1 <redacted>", text)
    text = _redact_fields(text)
    text = _TOKEN_SHAPES.sub("<redacted>", text)
    text = _DOTTED_NAME.sub(_redact_internal_host, text)
    text = _IP_CANDIDATE.sub(_redact_address, text)
    return _PATH.sub("<path>", text)


def _redact_userinfo(match) -> str:
    at = match[2].rfind("@")
    return match[0] if at < 0 else f"{match[1]}<redacted>@{match[2][at + 1:]}"


def _redact_fields(text: str) -> str:
    """The value of each field whose name looks secret (`password=...`, `"api_key": "..."`)."""
    parts: list[str] = []
    kept = 0                            # text[:kept] is settled
    for field in _FIELD.finditer(text):
        if field.start() < kept or not _SECRET_NAME.search(field[2]):
            continue
        value = _FIELD_VALUE.match(text, field.end())
        assert value is not None            # it matches the empty string too
        if value.end() == field.end():
            continue
        quote = value[0][0] if value[0][0] in "'\"" else ""
        parts += (text[kept:field.end()], quote, "<redacted>", quote)
        kept = value.end()
    return "".join(parts) + text[kept:] if parts else text


def _redact_internal_host(match) -> str:
    return "<host>" if _INTERNAL_SUFFIX.search(match[0]) else match[0]


def _redact_address(match) -> str:
    try:
        ipaddress.ip_address(match[0])
    except ValueError:
        return match[0]                  # a time of day, a version number
    return "<ip>"
