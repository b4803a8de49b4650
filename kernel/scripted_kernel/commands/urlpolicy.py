"""The network allowlist: which URLs curl may fetch, and the exact form in which it sends them.

An allowlist entry `scheme://host[:port][/path]` admits a URL when the scheme, the host and the
port (80 or 443 when not written) are equal and the URL's path lies under the entry's path at a
segment boundary. The path is judged twice, and must pass both times:

- as sent: RFC 3986 normalised (percent-encodings of unreserved characters decoded, other hex
  escapes upper-cased, `.` and `..` segments removed) -- the request carries exactly this path;
- as the most lenient server could read it: every percent-encoding decoded (repeatedly, for
  servers that decode twice), `\\` taken as `/`, `;parameters` dropped from each segment (`..;`
  is `..` to Tomcat), empty segments merged (nginx), then dot segments removed.

So `/api/../admin`, `/api/%2e%2e/admin`, `/api/..%2fadmin` and `/api//../admin` never leave
`/api`, while `/api/projects/group%2Fname` stays allowed and is sent as written.
"""
from __future__ import annotations

import functools
import ipaddress
import re
from typing import Callable
from urllib.parse import unquote_to_bytes

DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_DECODES = 4          # rounds of decoding the lenient reading allows before refusing the path
_BAD_URL = "URL using bad/illegal format or missing URL"
# Patterns as text, compiled on first use by re's cache: every command module is imported with
# the package, and most scripts never run curl.
_SCHEME = r"([A-Za-z][A-Za-z0-9+.-]*)://"
_HOST_NAME = r"[a-z0-9_~-]+(?:\.[a-z0-9_~-]+)*\.?"
_ESCAPE = r"%([0-9A-Fa-f]{2})"
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


class CurlError(Exception):
    """curl's failure: its exit status and message (here: 3 a malformed URL, 1 an unsupported
    protocol)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Url:
    """A URL as curl sends it."""
    __slots__ = ("scheme", "host", "port", "path", "query", "userinfo")

    def __init__(self, scheme: str, host: str, port: int, path: str, query: str = "", userinfo: str = ""):
        self.scheme = scheme
        self.host = host            # lower-case name, dotted IPv4, or IPv6 without brackets
        self.port = port
        self.path = path            # normalised as sent, starting with "/"
        self.query = query          # "" or "?..."
        self.userinfo = userinfo    # "" or "user[:password]", still percent-encoded

    def with_query(self, query: str) -> "Url":
        return Url(self.scheme, self.host, self.port, self.path, query, self.userinfo)

    @property
    def origin(self) -> tuple:
        return self.scheme, self.host, self.port

    @property
    def authority(self) -> str:
        """host[:port] as the Host header and the URL show it (the default port left out)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def target(self) -> str:
        return self.path + self.query

    def __str__(self) -> str:
        return f"{self.scheme}://{self.authority}{self.target}"


def parse_url(text: str) -> Url:
    """A URL as curl reads it (no scheme: http), with its path normalised; CurlError if curl
    would refuse it."""
    if any(c <= " " or c == "\x7f" for c in text):
        raise CurlError(3, _BAD_URL)
    m = re.match(_SCHEME, text)
    if m is None:
        text = "http://" + text
        m = re.match(_SCHEME, text)
        assert m is not None
    scheme = m.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise CurlError(1, f'Protocol "{m.group(1)}" not supported or disabled in libcurl')
    rest = text[m.end():].split("#", 1)[0]
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, rest = rest[:end], rest[end:]
    path, question, query = rest.partition("?")
    userinfo, _, hostport = authority.rpartition("@")
    host, port = _host_and_port(hostport, DEFAULT_PORTS[scheme])
    return Url(scheme, host, port, normalise_path(_encode(path)),
               question + _encode(query), userinfo)


def resolve(base: Url, reference: str) -> Url:
    """The URL a redirect's Location names, relative to `base` (RFC 3986 5.2)."""
    reference = reference.split("#", 1)[0]
    if re.match(_SCHEME, reference):
        return parse_url(reference)
    if reference.startswith("//"):
        return parse_url(f"{base.scheme}:{reference}")
    origin = f"{base.scheme}://{base.authority}"
    if reference.startswith("/"):
        return parse_url(origin + reference)
    if not reference or reference.startswith("?"):
        return parse_url(origin + base.path + (reference or base.query))
    return parse_url(origin + base.path[:base.path.rfind("/") + 1] + reference)


def _host_and_port(hostport: str, default_port: int) -> tuple[str, int]:
    if hostport.startswith("["):
        host, bracket, port = hostport[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            raise CurlError(3, _BAD_URL)
        try:
            host = ipaddress.IPv6Address(host).compressed
        except ValueError:
            raise CurlError(3, _BAD_URL) from None
        port = port[1:]
    else:
        host, _, port = hostport.partition(":")
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise CurlError(3, _BAD_URL) from None
        if not re.fullmatch(_HOST_NAME, host):
            raise CurlError(3, _BAD_URL)
    if not port:
        return host, default_port
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and 0 < int(port) < 65536):
        raise CurlError(3, _BAD_URL)
    return host, int(port)


def _encode(part: str) -> str:
    """Characters beyond ASCII as percent-encoded UTF-8, as curl sends them."""
    if part.isascii():
        return part
    try:
        return "".join(c if c.isascii() else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogateescape"))
                       for c in part)
    except UnicodeEncodeError:
        raise CurlError(3, _BAD_URL) from None


def normalise_path(path: str) -> str:
    """RFC 3986 normalisation: unreserved characters decoded, other escapes upper-cased, dot
    segments removed; an empty path is "/"."""
    if "%" in path:
        path = re.sub(_ESCAPE, _normalise_escape, path)
    return remove_dot_segments(path or "/")


def _normalise_escape(m) -> str:
    byte = int(m.group(1), 16)
    return chr(byte) if byte in _UNRESERVED else m.group(0).upper()


def remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 on an absolute path: `.` dropped, `..` removes the segment before it
    (never above the root); a path ending in a dot segment ends with "/"."""
    segments = path.split("/")[1:]
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    trailing = "/" if segments[-1] in (".", "..") and kept else ""
    return "/" + "/".join(kept) + trailing


def lenient_path(path: str) -> "str | None":
    """The path as the most lenient server could read it (see the module's description), or
    None when it is still percent-encoded after _MAX_DECODES rounds of decoding."""
    raw = path.encode("ascii")
    for _ in range(_MAX_DECODES):
        decoded = unquote_to_bytes(raw)
        if decoded == raw:
            break
        raw = decoded
    else:
        return None
    text = raw.decode("latin-1").replace("\\", "/")
    segments = [segment.split(";", 1)[0] for segment in text.split("/")]
    return remove_dot_segments("/" + "/".join(s for s in segments if s))


class Entry:
    """One allowlist entry: its origin and its path prefix in both readings, without a trailing
    slash ("" for the whole origin)."""
    __slots__ = ("origin", "prefix", "lenient_prefix")

    def __init__(self, origin: tuple, prefix: str, lenient_prefix: str):
        self.origin = origin
        self.prefix = prefix
        self.lenient_prefix = lenient_prefix

    def admits(self, url: Url) -> bool:
        if url.origin != self.origin:
            return False
        lenient = lenient_path(url.path)
        return (lenient is not None and _under(url.path, self.prefix)
                and _under(lenient, self.lenient_prefix))


def _under(path: str, prefix: str) -> bool:
    return not prefix or path == prefix or path.startswith(prefix + "/")


def parse_entry(text: str) -> "Entry | None":
    """An allowlist entry, or None if it is not `scheme://host[:port][/path]` (it then admits
    nothing)."""
    if not isinstance(text, str) or not re.match(_SCHEME, text) or "?" in text or "#" in text:
        return None
    try:
        url = parse_url(text)
    except CurlError:
        return None
    lenient = lenient_path(url.path)
    if url.userinfo or lenient is None:
        return None
    return Entry(url.origin, url.path.rstrip("/"), lenient.rstrip("/"))


@functools.lru_cache(maxsize=64)
def _entries(allow: tuple) -> tuple:
    return tuple(e for e in map(parse_entry, allow) if e is not None)


def allowed(allow, url: Url) -> bool:
    """Whether an entry of the allowlist `allow` admits `url`."""
    return any(entry.admits(url) for entry in _entries(tuple(allow or ())))


# ------------------------------------------------------------------ the whole network policy

DEFAULT_METHODS = frozenset({"GET", "HEAD"})


def _explicit_private(origin: tuple) -> bool:
    """Whether an entry names a non-public host itself: `localhost` (or a name under it) or a
    literal private, loopback or link-local address. Such an entry may reach that address;
    any other entry may reach public addresses only."""
    host = origin[1]
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return not is_public(ipaddress.ip_address(host))
    except ValueError:
        return False


def is_public(address) -> bool:
    """A globally routable unicast address (not private, loopback, link-local, shared,
    reserved, documentation, multicast or unspecified; an IPv4-mapped IPv6 address is judged
    as its IPv4 address)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address.is_global and not address.is_multicast


class Grant:
    """What the policy allows for one URL: whether it may reach a non-public address, and the
    headers the host injects for its origin."""
    __slots__ = ("private_ok", "inject")

    def __init__(self, private_ok: bool, inject: tuple):
        self.private_ok = private_ok
        self.inject = inject        # ((name, value), ...): sent, never shown to the script


class NetworkPolicy:
    """A builder's `.network(allow=[...], credentials={...}, max_requests=N, max_bytes=N)`.

    `allow`: entries `scheme://host[:port][/path]` (GET and HEAD), or `(entry, methods)` /
    `{"url": entry, "methods": [...]}` for an entry that admits more methods. `credentials`:
    `{origin: {header: value}}`, added to every request to that origin at the boundary (the
    script never sees them, and a script's header of the same name is replaced). Requests go
    only to public addresses, checked after name resolution on every request and redirect,
    unless the entry that admits the URL names a private address or `localhost` itself.
    `max_requests` and `max_bytes` (response bytes) bound one execution."""

    def __init__(self, allow=(), credentials: "dict | None" = None, max_requests: "int | None" = None,
                 max_bytes: "int | None" = None):
        self.urls: tuple = ()               # the entries' URLs, as given (for prompts and help)
        entries = []
        for item in allow or ():
            url, methods = _entry_and_methods(item)
            self.urls += (url,)
            entry = parse_entry(url)
            if entry is not None:
                entries.append((entry, methods, _explicit_private(entry.origin)))
        self.entries = tuple(entries)
        self.credentials: dict = {}
        for origin_text, headers in (credentials or {}).items():
            entry = parse_entry(origin_text)
            if entry is None or entry.prefix:
                raise ValueError(f"credentials are per origin (scheme://host[:port]), not {origin_text!r}")
            pairs = tuple((str(k), str(v)) for k, v in dict(headers).items())
            for name, value in pairs:
                if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name) or re.search(r"[\r\n\0]", value):
                    raise ValueError(f"not a header for {origin_text!r}: {name!r}")
            self.credentials[entry.origin] = pairs
        self.max_requests = max_requests
        self.max_bytes = max_bytes

    def __bool__(self) -> bool:
        return bool(self.urls)

    def for_run(self) -> "RunNetwork":
        return RunNetwork(self)

    def grant(self, url: Url, method: str) -> Grant:
        """The grant for a request, or CurlError: 6 (as an unknown host) when no entry admits
        the URL, 3 when the admitting entries do not allow the method."""
        admitting = [(methods, explicit) for entry, methods, explicit in self.entries if entry.admits(url)]
        if not admitting:
            raise CurlError(6, f"Could not resolve host: {url.host}")
        allowed_here = [(methods, explicit) for methods, explicit in admitting if method.upper() in methods]
        if not allowed_here:
            names = ", ".join(sorted(set().union(*(m for m, _ in admitting))))
            raise CurlError(3, f"the network policy does not allow {method} to {url} (allowed: {names})")
        return Grant(any(explicit for _, explicit in allowed_here), self.credentials.get(url.origin, ()))


def _entry_and_methods(item) -> tuple:
    if isinstance(item, str):
        return item, DEFAULT_METHODS
    if isinstance(item, dict):
        url, methods = item.get("url"), item.get("methods", DEFAULT_METHODS)
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        url, methods = item
    else:
        raise ValueError(f"a network entry is a URL, (URL, methods) or {{'url': ..., 'methods': [...]}}: {item!r}")
    if not isinstance(url, str) or isinstance(methods, str):
        raise ValueError(f"a network entry is a URL, (URL, methods) or {{'url': ..., 'methods': [...]}}: {item!r}")
    return url, frozenset(str(m).upper() for m in methods)


class RunNetwork:
    """The policy as one execution uses it: with its own request and byte counts."""
    __slots__ = ("policy", "requests", "received")
    dry_run = False             # DryRunNetwork: requests are judged and listed, never sent
    record: Callable[[str, str], None]

    def __init__(self, policy: NetworkPolicy):
        self.policy = policy
        self.requests = 0
        self.received = 0

    def __bool__(self) -> bool:
        return bool(self.policy)

    def start_request(self, url: Url, method: str) -> Grant:
        """Judge one request (each redirect is one) and count it."""
        grant = self.policy.grant(url, method)
        limit = self.policy.max_requests
        if limit is not None and self.requests >= limit:
            raise CurlError(7, f"Failed to connect to {url.host} port {url.port}: this execution's "
                               f"network request budget is spent ({limit} requests, max_requests)")
        self.requests += 1
        return grant

    def bytes_left(self) -> "int | None":
        limit = self.policy.max_bytes
        return None if limit is None else max(0, limit - self.received)

    def note_received(self, size: int):
        self.received += size


class DryRunNetwork(RunNetwork):
    """The policy as a plan uses it (ScriptedTool.plan): every request is judged as it would
    be, then handed to `record(method, url)` instead of being sent, so a plan contacts nothing
    and sends no credential, and lists what the run would request."""
    __slots__ = ("record",)
    dry_run = True

    def __init__(self, policy: NetworkPolicy, record: Callable[[str, str], None]):
        super().__init__(policy)
        self.record = record


def run_network(network) -> RunNetwork:
    """A command context's `network` as a RunNetwork (a bare tuple of entries: GET and HEAD)."""
    if isinstance(network, RunNetwork):
        return network
    return NetworkPolicy(tuple(network or ())).for_run()
