"""curl: HTTP requests, only to URLs the tool's builder allows (`.network(allow=[...])`).

With no allowlist (the default) every URL fails as an unknown host would (status 6) and nothing
is contacted. urlpolicy.py says which URLs an entry admits; a request is sent with the path that
was judged, and every redirect (-L) is judged again. The exchange itself is http_wire.py: it
waits in short slices against the execution's deadline and cancel flag, and reports every
failure as curl's own status and message.
"""
from __future__ import annotations

import base64
import re
from urllib.parse import quote, unquote

from ..fs import FsError, access
from ._options import UsageError, parse
from .urlpolicy import CurlError, parse_url, resolve, run_network
from .registry import Usage, command

MAX_REDIRECTS = 10
_NUMBER = r"\d+(?:\.\d*)?|\.\d+"           # patterns compiled on first use (see urlpolicy)
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_LINE_BREAK = r"[\r\n\0]"
# Headers that frame the request or name its destination: set by curl alone, so a script can
# neither smuggle a second request in a body nor reach another virtual host than the URL's.
_FRAMING = {"host", "content-length", "transfer-encoding"}
_CREDENTIALS = {"authorization", "cookie"}


def _curl(ctx, argv):
    opts, ops = parse("curl", argv, short_flags="sSfLiIGkv", short_values="XHdowmAeu",
                      long_flags={"silent": "s", "show-error": "S", "fail": "f", "location": "L",
                                  "include": "i", "head": "I", "get": "G", "insecure": "k",
                                  "verbose": "v", "compressed": "compressed"},
                      long_values={"request": "X", "header": "H", "data": "d", "data-raw": "data-raw",
                                   "data-binary": "data-binary", "data-urlencode": "data-urlencode",
                                   "output": "o", "write-out": "w", "max-time": "m",
                                   "connect-timeout": "connect-timeout", "user-agent": "A",
                                   "referer": "e", "user": "u", "url": "url", "json": "json"})
    urls = ops + opts.all("url")
    if not urls:
        raise UsageError("curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information", 2)
    quiet = opts.has("s") and not opts.has("S")
    try:
        return _fetch(ctx, opts, urls[0])
    except CurlError as e:
        if not quiet:
            ctx.err(f"curl: ({e.status}) {e.message}\n")
        return e.status


def _fetch(ctx, opts, text: str) -> int:
    from . import http_wire         # (and h11) when a script first fetches, not at import
    clock = http_wire.Clock(ctx.budget, _seconds(opts, "m", "-m"),
                            _seconds(opts, "connect-timeout", "--connect-timeout"))
    method, headers, body = _request(ctx, opts)
    url = parse_url(text)
    if opts.has("G") and body is not None:     # -G: the data is the query (encoded: no CR/LF)
        data = quote(body.decode("utf-8", "surrogateescape"), safe="&=+%/:,;@!*()~-._")
        url = url.with_query(f"{url.query}&{data}" if url.query else f"?{data}")
        body = None
    network = run_network(ctx.network)
    secure = not opts.has("k")
    credentials = _credentials(opts, url)
    heads = []
    for _ in range(MAX_REDIRECTS + 1):
        grant = network.start_request(url, method)        # every hop judged again (6: not admitted)
        if network.dry_run:                 # a plan: the request is listed, never sent
            network.record(method, str(url))
            return 0
        sent = _with_auth(credentials, headers)
        if opts.has("v"):
            _verbose_request(ctx, method, url, sent, body)
        response = _exchange(ctx, clock, network, grant, url, method, sent, body, secure)
        if opts.has("v"):
            ctx.err("".join(f"< {line}\n" for line in response.head.rstrip("\r\n").split("\r\n")) + "<\n")
        heads.append(response.head)
        target = response.location if opts.has("L") and response.status in (301, 302, 303, 307, 308) else None
        if target is None:
            return _deliver(ctx, opts, url, response, heads)
        following = resolve(url, target)
        if response.status == 303 and method != "HEAD" or response.status in (301, 302) and method == "POST":
            method, body = "GET", None
        if following.origin != url.origin:   # as curl: credentials are not sent to another host
            headers = [(k, v) for k, v in headers if k.lower() not in _CREDENTIALS]
            credentials = None
        url = following
    raise CurlError(47, f"Maximum ({MAX_REDIRECTS}) redirects followed")


def _exchange(ctx, clock, network, grant, url, method: str, headers: list, body, secure: bool):
    """One request within the output limit and the execution's network byte budget, in a
    client span when the host traces. The grant's injected headers are added by http_wire
    alone: they are in no list, message or span a script can see."""
    limit = ctx.limits.max_output_bytes
    left = network.bytes_left()
    budget_cut = left is not None and left < limit
    if budget_cut:
        limit = left
    try:
        from . import http_wire
        if ctx.observer is None:
            response = http_wire.exchange(clock, url, method, headers, body, limit, secure, grant)
        else:
            response = _traced_exchange(ctx, clock, url, method, headers, body, limit, secure, grant)
    except CurlError as e:
        if e.status == 63 and budget_cut:
            raise CurlError(63, f"this execution's network byte budget is spent ({network.policy.max_bytes} "
                                f"bytes, max_bytes)") from None
        raise
    network.note_received(len(response.body) + len(response.head))
    return response


def _traced_exchange(ctx, clock, url, method, headers, body, limit, secure, grant):
    attributes = {"http.request.method": method, "server.address": url.host, "server.port": url.port,
                  "url.full": str(url), "url.scheme": url.scheme}
    from . import http_wire
    with ctx.observer.span(method, attributes, client=True) as span:
        try:
            response = http_wire.exchange(clock, url, method, headers, body, limit, secure, grant)
        except CurlError as e:
            span.set("scripted.exit_code", e.status)
            span.fail(f"curl_{e.status}", e.message)
            raise
        span.set("http.response.status_code", response.status)
        span.set("http.response.body.size", len(response.body))
        if response.status >= 400:
            span.fail(str(response.status))
        return response


def _verbose_request(ctx, method: str, url, headers: list, body):
    """-v: the request as the script asked for it (headers the host injects are not shown)."""
    lines = [f"> {method} {url.target} HTTP/1.1", f"> Host: {url.authority}"]
    lines += [f"> {name}: {value}" for name, value in headers]
    if body is not None:
        lines.append(f"> Content-Length: {len(body)}")
    ctx.err("\n".join(lines) + "\n>\n")


def _seconds(opts, key: str, name: str) -> "float | None":
    """-m / --connect-timeout: seconds (0: no limit, as curl)."""
    value = opts.get(key)
    if value is None:
        return None
    if not re.fullmatch(_NUMBER, value):
        raise UsageError(f"curl: option {name}: expected a proper numerical parameter\n"
                         f"curl: try 'curl --help' or 'curl --manual' for more information", 2)
    return float(value) or None


def _request(ctx, opts) -> tuple[str, list, "bytes | None"]:
    """The method, the headers (in order; without Host and framing) and the body."""
    data = _body(ctx, opts)
    # lower-case name -> (name as sent, value; None: not sent)
    headers: dict[str, tuple[str, "str | None"]] = {"user-agent": ("User-Agent", "curl/8.0"),
                                                    "accept": ("Accept", "*/*")}
    if opts.has("json"):
        data = (data or "") + opts.get("json")
        headers["content-type"] = ("Content-Type", "application/json")
        headers["accept"] = ("Accept", "application/json")
    elif data is not None:
        headers["content-type"] = ("Content-Type", "application/x-www-form-urlencoded")
    if opts.has("A"):
        headers["user-agent"] = ("User-Agent", opts.get("A"))
    if opts.has("e"):
        headers["referer"] = ("Referer", opts.get("e"))
    for line in opts.all("H"):
        name, value = _header(line)
        headers[name.lower()] = (name, value)
    if any(re.search(_LINE_BREAK, value) for _, value in headers.values() if value):
        raise UsageError("curl: a header cannot contain a line break", 2)
    method = opts.get("X") or ("HEAD" if opts.has("I") else "POST" if data is not None and not opts.has("G") else "GET")
    if not re.fullmatch(_TOKEN, method):
        raise UsageError("curl: option -X: expected an HTTP method name", 2)
    return (method, [h for h in headers.values() if h[1] is not None],
            data.encode("utf-8", "surrogateescape") if data is not None else None)


def _header(line: str) -> tuple[str, "str | None"]:
    """-H 'Name: value' (as curl: 'Name:' removes a header curl would send, 'Name;' sends it
    empty)."""
    name, colon, rest = line.partition(":")
    value: "str | None" = rest
    if colon:
        value = rest.strip() or None
    elif line.rstrip().endswith(";"):
        name, value = line.rstrip()[:-1], ""
    else:
        name = ""                              # neither form: not a header
    name = name.strip()
    if not re.fullmatch(_TOKEN, name):
        raise UsageError(f"curl: option -H: not a header: {line}", 2)
    if name.lower() in _FRAMING:
        raise UsageError(f"curl: option -H: {name} is set by curl from the URL and the data", 2)
    return name, value


def _credentials(opts, url) -> "str | None":
    """-u user:password, or the URL's user:password."""
    credentials = opts.get("u") or (unquote(url.userinfo) if url.userinfo else None)
    if credentials is not None and ":" not in credentials:
        credentials += ":"
    return credentials


def _with_auth(credentials, headers: list) -> list:
    """The headers with the credentials as Basic authorization (replacing a -H one)."""
    if credentials is None:
        return headers
    token = base64.b64encode(credentials.encode("utf-8", "surrogateescape")).decode("ascii")
    return [("Authorization", f"Basic {token}")] + [h for h in headers if h[0].lower() != "authorization"]


def _deliver(ctx, opts, url, response, heads: list) -> int:
    """The body (and with -i / -I the heads) to the output or -o's file; -f; -w."""
    ctx.budget.note(len(response.body))
    if opts.has("f") and response.status >= 400:
        raise CurlError(22, f"The requested URL returned error: {response.status}")
    text = response.body.decode("utf-8", "surrogateescape")
    if opts.has("I"):
        text = "".join(heads)
    elif opts.has("i"):
        text = "".join(heads) + text
    if opts.has("o") and opts.get("o") != "-":
        try:
            access.writer(ctx, opts.get("o"))(text)
        except FsError as e:
            raise CurlError(23, f"Failure writing output to destination: {e.strerror}") from None
    else:
        ctx.out(text)
    if opts.has("w"):
        ctx.out(opts.get("w").replace("%{http_code}", str(response.status))
               .replace("%{url_effective}", str(url)).replace("\\n", "\n"))
    return 0


def _body(ctx, opts):
    """-d/--data (joined with &), --data-binary @file, --data-urlencode NAME=VALUE."""
    pieces = []
    for key in ("d", "data-raw", "data-binary"):
        for value in opts.all(key):
            if value.startswith("@") and key != "data-raw":
                try:
                    value = access.read_text(ctx, value[1:])
                except FsError as e:
                    raise UsageError(f"curl: Failed to open {value[1:]}: {e.strerror}", 26) from None
                if key == "d":
                    value = value.replace("\n", "").replace("\r", "")
            pieces.append(value)
    for value in opts.all("data-urlencode"):
        name, eq, content = value.partition("=")
        pieces.append(f"{name}={quote(content, safe='')}" if eq else quote(name, safe=""))
    return "&".join(pieces) if pieces else None


@command("curl", usage=Usage("[options...] <url>", "Transfer a URL (only URLs the tool's network allowlist admits).", (
    "-d, --data <data>          HTTP POST data", "-f, --fail                 fail fast with no output on HTTP errors",
    "-H, --header <header>      pass a custom header", "-i, --include              include the response headers",
    "-L, --location             follow redirects", "-m, --max-time <seconds>   maximum time allowed for the transfer",
    "-o, --output <file>        write to a file instead of stdout", "-s, --silent               silent mode",
    "-X, --request <method>     the request method", "-w, --write-out <format>   what to print after the transfer")))
def run(ctx, argv):
    return _curl(ctx, argv)
