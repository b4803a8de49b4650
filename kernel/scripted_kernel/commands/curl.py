"""curl: HTTP requests, only to URL prefixes the tool's builder allows (`.network(allow=[...])`).

With no allowlist (the default) every URL fails as an unknown host would (status 6) and nothing
is contacted. Redirects (-L) are followed only to allowed URLs; the response is bounded by the
script's output limit and the request by the time left before its deadline.
"""
from __future__ import annotations

from ..fs import FsError, access
from ..shell.limits import time_left
from ._options import UsageError, parse
from .registry import command

MAX_REDIRECTS = 10


class _Refused(Exception):
    pass


def allowed(ctx, url: str) -> bool:
    prefixes = ctx.network
    return any(url.startswith(p) for p in prefixes)


def _redirects(ctx, follow: bool):
    """A handler following a redirect only when -L asked for it and the target is allowed
    (urllib is imported when a script first uses curl: most never do)."""
    import urllib.request

    class Redirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if not follow:
                return None
            if not allowed(ctx, newurl):
                raise _Refused(newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)
    return Redirects()


def _host(url: str) -> str:
    import urllib.parse
    return urllib.parse.urlsplit(url).hostname or url


def _curl(ctx, argv):
    import urllib.error
    import urllib.request
    opts, ops = parse("curl", argv, short_flags="sSfLiIGkv", short_values="XHdowmAeu",
                      long_flags={"silent": "s", "show-error": "S", "fail": "f", "location": "L",
                                  "include": "i", "head": "I", "get": "G", "insecure": "k",
                                  "verbose": "v", "compressed": "compressed"},
                      long_values={"request": "X", "header": "H", "data": "d", "data-raw": "data-raw",
                                   "data-binary": "data-binary", "data-urlencode": "data-urlencode",
                                   "output": "o", "write-out": "w", "max-time": "m",
                                   "user-agent": "A", "url": "url", "json": "json"})
    urls = ops + opts.all("url")
    if not urls:
        raise UsageError("curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information", 2)
    url = urls[0]
    if "://" not in url:
        url = "http://" + url
    quiet = opts.has("s") and not opts.has("S")
    if not allowed(ctx, url):
        if not quiet:
            ctx.err(f"curl: (6) Could not resolve host: {_host(url)}\n")
        return 6
    data = _body(ctx, opts)
    method = opts.get("X")
    headers = {}
    for h in opts.all("H"):
        name, _, value = h.partition(":")
        headers[name.strip()] = value.strip()
    if opts.has("json"):
        data = (data or "") + opts.get("json")
        headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Accept", "application/json")
    if opts.has("A"):
        headers["User-Agent"] = opts.get("A")
    headers.setdefault("User-Agent", "curl/8.0")
    if data is not None and opts.has("G"):
        url += ("&" if "?" in url else "?") + data
        data = None
    if data is not None:
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    request = urllib.request.Request(url, data=data.encode("utf-8", "surrogateescape") if data is not None else None,
                                     headers=headers, method=method or ("HEAD" if opts.has("I") else None))
    opener = urllib.request.build_opener(_redirects(ctx, opts.has("L")))
    timeout = time_left() or 30.0
    if opts.has("m"):
        timeout = min(timeout, float(opts.get("m")))
    limit = ctx.limits.max_output_bytes
    try:
        try:
            response = opener.open(request, timeout=max(timeout, 0.05))
        except urllib.error.HTTPError as e:
            response = e
        body = response.read(limit + 1)
        status = response.status if hasattr(response, "status") else response.code
        reason = getattr(response, "reason", "") or ""
        header_items = list(response.headers.items())
    except _Refused as e:
        if not quiet:
            ctx.err(f"curl: (6) Could not resolve host: {_host(str(e))}\n")
        return 6
    except (urllib.error.URLError, OSError, ValueError) as e:
        if not quiet:
            reason = getattr(e, "reason", e)
            ctx.err(f"curl: (7) Failed to connect to {_host(url)}: {reason}\n"
                   if "timed out" not in str(reason) else "curl: (28) Operation timed out\n")
        return 28 if "timed out" in str(getattr(e, "reason", e)) else 7
    if len(body) > limit:
        if not quiet:
            ctx.err("curl: (63) Maximum file size exceeded\n")
        return 63
    ctx.budget.note(len(body))
    if opts.has("f") and status >= 400:
        if not quiet:
            ctx.err(f"curl: (22) The requested URL returned error: {status}\n")
        return 22
    text = body.decode("utf-8", "surrogateescape")
    if opts.has("i") or opts.has("I"):
        head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in header_items) + "\r\n"
        text = head + ("" if opts.has("I") else text)
    if opts.has("o") and opts.get("o") != "-":
        try:
            access.writer(ctx, opts.get("o"))(text)
        except FsError as e:
            ctx.err(f"curl: (23) Failure writing output to destination: {e.strerror}\n")
            return 23
    else:
        ctx.out(text)
    if opts.has("w"):
        ctx.out(opts.get("w").replace("%{http_code}", str(status)).replace("%{url_effective}", url)
               .replace("\\n", "\n"))
    return 0


def _body(ctx, opts):
    """-d/--data (joined with &), --data-binary @file, --data-urlencode NAME=VALUE."""
    import urllib.parse
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
        pieces.append(f"{name}={urllib.parse.quote(content, safe='')}" if eq else urllib.parse.quote(name, safe=""))
    return "&".join(pieces) if pieces else None


@command("curl", own_help=True)
def run(ctx, argv):
    return _curl(ctx, argv)
