"""curl under attack: the allowlist cannot be left through dot segments, encodings, redirects,
look-alike hosts, other ports or smuggled requests; a server dripping bytes cannot hold a call
past its deadline; a malformed server, URL or option is curl's own status and message.

Servers are threads of this process on 127.0.0.1 that stop by themselves. Each records what it
received, so a test asserts that a forbidden path was never requested, not only what curl said."""
import http.server
import posixpath
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scripted_kernel import BashTool, CancelToken, ExecutionLimits
from scripted_kernel.commands.urlpolicy import CurlError, allowed, parse_url

TIMEOUT = 3
LIMITS = ExecutionLimits(timeout_seconds=TIMEOUT)
SLACK = 2.5          # seconds past the timeout a busy 2-core machine may need to return


def lenient(path: str) -> str:
    """The path as a lenient server reads it: escapes decoded twice, `\\` as `/`, `..;` as
    `..`, slashes merged, dot segments removed."""
    path = unquote(unquote(path.split("?", 1)[0])).replace("\\", "/")
    return posixpath.normpath("/" + "/".join(s.split(";", 1)[0] for s in path.split("/")).lstrip("/"))


class _Lenient(http.server.BaseHTTPRequestHandler):
    """Serves /admin (the secret) and /api/*; /api/jump?to=X redirects to X."""
    seen: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Lenient.seen.append(lenient(self.path))
        if self.path.startswith("/api/jump?to="):
            self.send_response(302)
            self.send_header("Location", unquote(self.path.split("=", 1)[1]))
            body = b""
        else:
            self.send_response(200)
            body = (b"SECRET" if lenient(self.path) == "/admin" else self.path.encode()) + b"\n"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Lenient)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def api(server):
    _Lenient.seen.clear()
    yield BashTool.builder().network(allow=[f"{server}/api/"]).limits(LIMITS).build()
    assert all(p == "/api" or p.startswith("/api/") for p in _Lenient.seen), _Lenient.seen


ESCAPES = ["/api/../admin", "/api/%2e%2e/admin", "/api/%2E%2E/admin", "/api/.%2e/admin",
           "/api/..%2fadmin", "/api/..%2Fadmin", "/api/x/../../admin", "/api/..;/admin",
           "/api/%252e%252e/admin", "/api/..%5cadmin", "/api/x%2f..%2f..%2fadmin",
           "/api/%2e%2e%2fadmin", "/api/../../../admin", "/API/../admin", "/admin", "/apix",
           "/api%2f../admin"]


@pytest.mark.parametrize("path", ESCAPES)
def test_path_escapes_are_refused_and_never_sent(api, server, path):
    r = api.execute(f"curl -sS '{server}{path}'; echo status=$?")
    assert (r.stdout, r.stderr) == ("status=6\n", "curl: (6) Could not resolve host: 127.0.0.1\n")
    assert _Lenient.seen == []


def test_the_request_carries_the_normalised_path(api, server):
    r = api.execute(f"""for p in /api/x/../items /api/./a/. /api/%41b%7e /api/group%2fname /api '/api/é?q=1'; do
  curl -s "{server}$p"; done""")
    assert r.stdout.splitlines() == ["/api/items", "/api/a/", "/api/Ab~", "/api/group%2Fname", "/api",
                                     "/api/%C3%A9?q=1"]


def test_a_redirect_is_judged_like_the_url(api, server):
    r = api.execute(f"""
curl -sS -L '{server}/api/jump?to=/api/%252e%252e/admin'; echo status=$?
curl -sS -L '{server}/api/jump?to=/api/x/%2e%2e/%2e%2e/admin'; echo status=$?
curl -sS -L '{server}/api/jump?to=http://127.0.0.1:1/api/'; echo status=$?
curl -sS -L '{server}/api/jump?to=/api/x/../ok'; echo status=$?
""")
    assert r.stdout == "status=6\nstatus=6\nstatus=6\n/api/ok\nstatus=0\n"
    assert r.stderr == "curl: (6) Could not resolve host: 127.0.0.1\n" * 3
    assert "/admin" not in _Lenient.seen


def test_origin_is_scheme_host_and_port(server):
    port = int(server.rsplit(":", 1)[1])
    _Lenient.seen.clear()
    bare = BashTool.builder().network(allow=["http://127.0.0.1", "http://api.example.com"]).limits(LIMITS).build()
    r = bare.execute(f"curl -sS {server}/; echo $?; curl -sS http://api.example.com.attacker.invalid/; echo $?; "
                     f"curl -sS http://api.example.com@127.0.0.1:{port}/; echo $?")
    assert r.stdout == "6\n6\n6\n" and _Lenient.seen == []
    assert r.stderr.splitlines() == ["curl: (6) Could not resolve host: 127.0.0.1",
                                     "curl: (6) Could not resolve host: api.example.com.attacker.invalid",
                                     "curl: (6) Could not resolve host: 127.0.0.1"]
    origin = BashTool.builder().network(allow=[server]).limits(LIMITS).build()
    assert origin.execute(f"curl -s {server}/any/where; curl -s HTTP://127.0.0.1:{port}/x").stdout == "/any/where\n/x\n"


def test_entry_path_matches_at_a_segment_boundary():
    entry = ("http://h/api",)
    assert [allowed(entry, parse_url(u)) for u in
            ("http://h/api", "http://h/api/", "http://h/api/x", "http://h:80/api/x", "http://H/api",
             "http://h/apix", "http://h/ap", "https://h/api", "http://h:81/api", "http://h.x/api")] == \
        [True, True, True, True, True, False, False, False, False, False]
    assert allowed(("https://h/",), parse_url("https://h:443/z")) and not allowed(("https://h/",), parse_url("http://h/z"))
    assert allowed(("http://[::1]:8080/a/",), parse_url("http://[0:0::1]:8080/a/b"))


@pytest.mark.parametrize("entry", ["127.0.0.1", "ftp://h/", "http://h/api?x=1", "http://u:p@h/", "http://h:99999/",
                                   "http://h/%25252525252e", None])
def test_a_malformed_entry_admits_nothing(entry):
    assert not allowed((entry,), parse_url("http://h/api"))
    assert not allowed((entry,), parse_url("http://127.0.0.1/"))


PIECES = ["/", "//", ".", "..", "%2e", "%2E", "%2f", "%2F", "%5c", "\\", ";", "%3b", "%25", "%252e", "%00",
          "api", "admin", "x", "?", "#", "@", ":", "%", "é", "~"]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_no_admitted_url_leaves_the_prefix_for_a_lenient_server(pieces):
    text = "http://h/api/" + "".join(pieces)
    try:
        url = parse_url(text)
    except CurlError:
        return
    if allowed(("http://h/api/",), url):
        assert lenient(url.target) in ("/api",) or lenient(url.target).startswith("/api/"), (text, url.target)
        assert url.host == "h" and url.port == 80


@settings(max_examples=2000, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_url_or_curls_error(text):
    try:
        url = parse_url(text)
    except CurlError as e:
        assert e.status in (1, 3)
        return
    allowed(("http://h/api/", "https://[::1]:8443/"), url)
    assert str(url).isascii()


SMUGGLING = {
    "header with CRLF": ("-H $'X-A: 1\\r\\n\\r\\nGET /admin HTTP/1.1\\r\\nHost: x'", 2,
                         "curl: a header cannot contain a line break"),
    "user agent with LF": ("-A $'ua\\nGET /admin'", 2, "curl: a header cannot contain a line break"),
    "Host override": ("-H 'Host: admin.internal'", 2,
                      "curl: option -H: Host is set by curl from the URL and the data"),
    "Content-Length override": ("-H 'Content-Length: 0' -d $'GET /admin HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'", 2,
                                "curl: option -H: Content-Length is set by curl from the URL and the data"),
    "chunked override": ("-H 'Transfer-Encoding: chunked' -d 0", 2,
                         "curl: option -H: Transfer-Encoding is set by curl from the URL and the data"),
    "method with a path": ("-X 'GET /admin HTTP/1.1'", 2, "curl: option -X: expected an HTTP method name"),
    "not a header": ("-H 'nothing here'", 2, "curl: option -H: not a header: nothing here"),
}


@pytest.mark.parametrize("case", SMUGGLING)
def test_no_second_request_is_smuggled(api, server, case):
    options, status, message = SMUGGLING[case]
    r = api.execute(f"curl -sS {options} {server}/api/items; echo status=$?")
    assert (r.stdout, r.stderr) == (f"status={status}\n", message + "\n")
    assert _Lenient.seen == []


def test_get_data_is_encoded_into_the_query(api, server):
    r = api.execute(f"curl -s -G -d $'a=1\\r\\n\\r\\nGET /admin HTTP/1.1' {server}/api/items")
    assert r.stdout == "/api/items?a=1%0D%0A%0D%0AGET%20/admin%20HTTP/1.1\n"
    assert _Lenient.seen == ["/api/items"]


# ------------------------------------------------------------------ raw servers

class RawServer:
    """Answers each connection with `reply` (one byte every `drip` seconds if set) and records
    the request lines it received. Its thread ends after `connections` or `lifetime` seconds."""

    def __init__(self, reply: bytes, drip: float = 0.0, connections: int = 1, lifetime: float = 20.0,
                 listen: bool = True):
        self.reply, self.drip, self.requests = reply, drip, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.end = time.monotonic() + lifetime
        threading.Thread(target=self._serve, args=(connections,), daemon=True).start()

    def _serve(self, connections: int):
        with self.sock:
            for _ in range(connections):
                self.sock.settimeout(max(0.01, self.end - time.monotonic()))
                try:
                    conn, _ = self.sock.accept()
                except OSError:
                    return
                with conn:
                    self._answer(conn)

    def _answer(self, conn):
        conn.settimeout(2)
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                data = conn.recv(65536)
                if not data:
                    break
                head += data
            self.requests.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
            if not self.drip:
                conn.sendall(self.reply)
                return
            for i in range(len(self.reply)):
                if time.monotonic() > self.end:
                    return
                conn.sendall(self.reply[i:i + 1])
                time.sleep(self.drip)
        except OSError:           # the client gave up: the point of the drip tests
            pass


def tool_for(url: str, limits=LIMITS) -> BashTool:
    return BashTool.builder().network(allow=[url + "/"]).limits(limits).build()


DRIPS = {
    "body every 0.5 s": (b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + b"x" * 40, 0.5),
    "body every 2.5 s": (b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + b"x" * 40, 2.5),
    "headers every 0.5 s": (b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 40 + b"\r\n\r\n", 0.5),
}


@pytest.mark.parametrize("case", DRIPS)
def test_a_dripping_server_cannot_outlast_the_deadline(case):
    reply, drip = DRIPS[case]
    server = RawServer(reply, drip=drip)
    bash = tool_for(server.url)
    start = time.monotonic()
    r = bash.execute(f"curl -sS {server.url}/; echo after")
    assert time.monotonic() - start < TIMEOUT + SLACK
    assert (r.exit_code, r.error, r.stdout) == (124, "timeout", "")
    assert r.stderr == f"bash: execution timed out after {TIMEOUT} s (timeout_seconds)\n"
    assert bash.execute("echo next").stdout == "next\n"


def test_max_time_ends_curl_with_28_and_the_script_goes_on():
    server = RawServer(DRIPS["body every 0.5 s"][0], drip=0.5)
    start = time.monotonic()
    r = tool_for(server.url).execute(f"curl -sS -m 0.6 {server.url}/; echo status=$?")
    assert time.monotonic() - start < 0.6 + SLACK
    assert r.stdout == "status=28\n"
    assert re.fullmatch(r"curl: \(28\) Operation timed out after \d+ milliseconds with 0 bytes received\n", r.stderr)


def test_connect_timeout_while_the_server_never_accepts():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)                       # a full accept queue: the handshake is never answered
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        url = f"http://127.0.0.1:{port}"
        r = tool_for(url).execute(f"curl -sS --connect-timeout 0.5 {url}/; echo status=$?; "
                                  f"curl -sS -m 0.5 {url}/; echo status=$?")
        assert r.stdout == "status=28\nstatus=28\n"
        first, second = r.stderr.splitlines()
        assert re.fullmatch(rf"curl: \(28\) Failed to connect to 127.0.0.1 port {port} after \d+ ms: "
                            rf"Timeout was reached", first)
        assert re.fullmatch(r"curl: \(28\) Connection timed out after \d+ milliseconds", second)
    finally:
        for s in fillers + [listener]:
            s.close()


def test_cancel_stops_a_waiting_curl():
    server = RawServer(DRIPS["body every 2.5 s"][0], drip=2.5)
    bash = tool_for(server.url, ExecutionLimits(timeout_seconds=60))
    cancel = CancelToken()
    threading.Timer(0.5, cancel.cancel).start()
    start = time.monotonic()
    r = bash.execute(f"curl -s {server.url}/", cancel=cancel)
    assert time.monotonic() - start < 0.5 + SLACK
    assert r.error == "cancelled"


class HangingLookup:
    """socket.getaddrinfo whose lookups of names never answer until released (a DNS server that
    does not reply). curl looks a name up on a helper thread and waits for it on the script's."""

    def __init__(self, real):
        self.real, self.started, self.release = real, threading.Event(), threading.Event()

    def __call__(self, host, port, *args, flags=0, **kwargs):
        if flags & socket.AI_NUMERICHOST:
            return self.real(host, port, *args, flags=flags, **kwargs)
        self.started.set()
        self.release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "no answer")


@pytest.mark.parametrize("stop", ["cancel", "deadline"])
def test_a_cancel_or_the_deadline_reaches_curl_waiting_on_its_lookup(monkeypatch, stop):
    """Ordered by the lookup, not a sleep: the cancel comes once the helper thread is looking the
    name up. Were the wait blind to the budget, the lookup would fail after 30 s (curl's 6)."""
    lookup = HangingLookup(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    cancel = CancelToken()
    if stop == "cancel":
        threading.Thread(target=lambda: lookup.started.wait(60) and cancel.cancel(), daemon=True).start()
    limits = ExecutionLimits(timeout_seconds=60 if stop == "cancel" else 1)
    try:
        r = tool_for("http://slow-dns.test", limits).execute("curl -sS http://slow-dns.test/; echo after",
                                                             cancel=cancel)
    finally:
        lookup.release.set()
    assert lookup.started.is_set()
    expected = (130, "cancelled") if stop == "cancel" else (124, "timeout")
    assert (r.exit_code, r.error, r.stdout) == (*expected, "")
    assert "resolve" not in r.stderr, r.stderr


def test_another_caller_of_the_same_tool_waits_at_most_the_deadline():
    """Ordered by the server, not a sleep: the next call starts once the slow one's request has
    arrived (it holds the shell), and waits with a deadline of its own far off, so that it gets
    the shell only because the slow call ended at its deadline."""
    server = RawServer(DRIPS["body every 2.5 s"][0], drip=2.5)
    bash = tool_for(server.url)
    results = {}
    start = time.monotonic()
    slow = threading.Thread(target=lambda: results.setdefault("slow", bash.execute(f"curl -s {server.url}/")))
    slow.start()
    limit = time.monotonic() + 60
    while not server.requests:
        assert time.monotonic() < limit, "the slow call never reached the server"
        time.sleep(0.01)
    bash.limits = ExecutionLimits(timeout_seconds=60)       # the slow call keeps its own TIMEOUT
    results["next"] = bash.execute("echo next")
    slow.join(TIMEOUT + SLACK)
    assert time.monotonic() - start < TIMEOUT + SLACK
    assert results["next"].stdout == "next\n" and results["slow"].exit_code == 124


MALFORMED = {
    "no reply": (b"", 52, "Empty reply from server"),
    "HTTP/0.9": (b"hello\r\n\r\n", 1, "Received HTTP/0.9 when not allowed"),
    "bad version": (b"HTTP/1.2 200 OK\r\n\r\n", 1, "Unsupported HTTP version (1.2) in response"),
    "bad status code": (b"HTTP/1.1 2000 OK\r\n\r\n", 1, "Unsupported response code in HTTP response"),
    "header without colon": (b"HTTP/1.1 200 OK\r\nnocolon\r\nContent-Length: 2\r\n\r\nok", 8, "Header without colon"),
    "bad Content-Length": (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nok", 8, "Invalid Content-Length: value"),
    "short body": (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 18,
                   "transfer closed with 7 bytes remaining to read"),
    "bad chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 56,
                  "Illegal or missing hexadecimal sequence in chunked-encoding"),
    "huge chunk size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 20 + b"\r\nok\r\n", 56,
                        "Too long hexadecimal number in chunked-encoding"),
    "short chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 18,
                    "transfer closed with outstanding read data remaining"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_reply_is_curls_own_error(case):
    reply, status, message = MALFORMED[case]
    server = RawServer(reply)
    bash = tool_for(server.url)
    r = bash.execute(f"curl -sS {server.url}/x; echo status=$?")
    assert (r.stdout, r.stderr, r.error) == (f"status={status}\n", f"curl: ({status}) {message}\n", None)
    assert server.requests == ["GET /x HTTP/1.1"]
    assert bash.execute("echo next").stdout == "next\n"


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nokk",
])
def test_conflicting_content_lengths_are_refused(reply):
    # RFC 9112 6.3: the framing is invalid, the response is not used (curl 7.88 took the last
    # value, so a smuggled length decided what the script read)
    server = RawServer(reply)
    r = tool_for(server.url).execute(f"curl -sS {server.url}/x; echo status=$?")
    assert (r.stdout, r.stderr) == ("status=8\n", "curl: (8) Invalid Content-Length: value\n")


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl on this machine")
@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_replies_match_real_curl(case):
    reply = MALFORMED[case][0]
    server = RawServer(reply, connections=2)
    ours = tool_for(server.url).execute(f"curl -sS {server.url}/x")
    theirs = subprocess.run(["curl", "-sS", server.url + "/x"], capture_output=True, timeout=10)
    assert (ours.exit_code, ours.stderr) == (theirs.returncode, theirs.stderr.decode())


def test_many_and_long_headers_are_read_as_curl_reads_them():
    many = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"Content-Length: 2\r\n\r\nok"
    long = b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70_000 + b"\r\nContent-Length: 2\r\n\r\nok"
    folded = b"HTTP/1.1 200 OK\r\nX-F: a\r\n  b\r\nContent-Length: 2\r\n\r\nok"
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    for reply in (many, long, folded, interim):
        server = RawServer(reply)
        assert tool_for(server.url).execute(f"curl -sS {server.url}/").stdout == "ok"


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\nX-Huge: " + b"a" * 200_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 110_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"c" * 90) for i in range(4000)) + b"\r\n",
    b"".join(b"HTTP/1.1 100 Continue\r\nX: " + b"d" * 1000 + b"\r\n\r\n" for _ in range(400)),
], ids=["one huge header", "one long header", "many headers", "endless interim responses"])
def test_response_headers_are_bounded(reply):
    server = RawServer(reply)
    r = tool_for(server.url).execute(f"curl -sS {server.url}/; echo status=$?")
    assert r.stdout == "status=56\n"
    assert r.stderr.startswith("curl: (56) Too large response headers")


def test_body_beyond_the_output_limit():
    server = RawServer(b"HTTP/1.1 200 OK\r\n\r\n" + b"z" * 5000)
    small = ExecutionLimits(timeout_seconds=TIMEOUT, max_output_bytes=1000)
    r = tool_for(server.url, small).execute(f"curl -sS {server.url}/ > /dev/null; echo status=$?")
    assert (r.stdout, r.stderr) == ("status=63\n", "curl: (63) Maximum file size exceeded\n")


BAD_INPUT = {
    "CR/LF in the URL": ("$'http://127.0.0.1/a\\r\\nX-Injected: 1'", 3,
                         "curl: (3) URL using bad/illegal format or missing URL"),
    "space in the URL": ("'http://127.0.0.1/a b'", 3, "curl: (3) URL using bad/illegal format or missing URL"),
    "port out of range": ("http://127.0.0.1:99999/", 3, "curl: (3) URL using bad/illegal format or missing URL"),
    "bad IPv6": ("'http://[::1/'", 3, "curl: (3) URL using bad/illegal format or missing URL"),
    "other protocol": ("file:///etc/passwd", 1, 'curl: (1) Protocol "file" not supported or disabled in libcurl'),
    "-m abc": ("-m abc http://127.0.0.1/", 2, "curl: option -m: expected a proper numerical parameter\n"
               "curl: try 'curl --help' or 'curl --manual' for more information"),
    "--connect-timeout -1": ("--connect-timeout -1 http://127.0.0.1/", 2,
                             "curl: option --connect-timeout: expected a proper numerical parameter\n"
                             "curl: try 'curl --help' or 'curl --manual' for more information"),
}


@pytest.mark.parametrize("case", BAD_INPUT)
def test_bad_urls_and_options(case):
    args, status, message = BAD_INPUT[case]
    bash = BashTool.builder().network(allow=["http://127.0.0.1/"]).limits(LIMITS).build()
    r = bash.execute(f"curl -sS {args}; echo status=$?")
    assert (r.stdout, r.stderr) == (f"status={status}\n", message + "\n")


def test_connection_refused_is_7():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # bound, never listening: refused
        url = f"http://127.0.0.1:{port}"
        r = tool_for(url).execute(f"curl -sS {url}/; echo status=$?")
    assert r.stdout == "status=7\n"
    assert re.fullmatch(rf"curl: \(7\) Failed to connect to 127.0.0.1 port {port} after \d+ ms: "
                        rf"Couldn't connect to server\n", r.stderr)


# ------------------------------------------------------------------ TLS

@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", folder / "key.pem",
                    "-out", folder / "cert.pem"], check=True, capture_output=True, timeout=30)
    return folder / "cert.pem", folder / "key.pem"


def test_https_verifies_the_certificate_unless_k(certificate):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Lenient)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"https://127.0.0.1:{httpd.server_address[1]}"
    try:
        r = tool_for(url).execute(f"curl -sS {url}/api/x; echo status=$?; curl -sSk {url}/api/../api/y")
    finally:
        httpd.shutdown()
    assert r.stdout == "status=60\n/api/y\n"
    assert r.stderr == "curl: (60) SSL certificate problem: self-signed certificate\n"


def test_a_tls_handshake_never_answered_is_under_the_clock():
    with socket.socket() as listener:          # connections complete in the kernel, never accepted
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"https://127.0.0.1:{listener.getsockname()[1]}"
        bash = tool_for(url)
        r = bash.execute(f"curl -sS -m 0.5 {url}/; echo status=$?")
        assert r.stdout == "status=28\n"
        assert re.fullmatch(r"curl: \(28\) Connection timed out after \d+ milliseconds\n", r.stderr)
        start = time.monotonic()
        r = bash.execute(f"curl -sS {url}/")
        assert time.monotonic() - start < TIMEOUT + SLACK and r.error == "timeout"


def test_redirect_references_resolve_as_rfc_3986_says():
    from scripted_kernel.commands.urlpolicy import resolve
    base = parse_url("http://h:8080/api/a/b?x=1")
    refs = ("c", "../c", "../../../../c", "/c", "?y=2", "", "#f", "//other/c", "https://h/c#frag", "c/%2e%2e/../d")
    assert [str(resolve(base, ref)) for ref in refs] == \
        ["http://h:8080/api/a/c", "http://h:8080/api/c", "http://h:8080/c", "http://h:8080/c",
         "http://h:8080/api/a/b?y=2", "http://h:8080/api/a/b?x=1", "http://h:8080/api/a/b?x=1",
         "http://other/c", "https://h/c", "http://h:8080/api/d"]


def test_tls_to_a_plain_server_is_35(server):
    url = server.replace("http://", "https://")
    bash = BashTool.builder().network(allow=[url + "/", server + "/"]).limits(LIMITS).build()
    r = bash.execute(f"curl -sS {url}/api/x; echo status=$?; curl -s {server}/api/y")
    assert r.stdout == "status=35\n/api/y\n"
    assert re.fullmatch(rf"curl: \(35\) OpenSSL SSL_connect: \S+ in connection to 127.0.0.1:{url.rsplit(':', 1)[1]}\n",
                        r.stderr)
