"""curl against a local HTTP server: only allowlisted URL prefixes are contacted."""
import http.server
import json
import threading
import urllib.parse

import pytest

from scripted_kernel import BashTool, ScriptedTool


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def log_message(self, *args):
        pass

    def _reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        _Handler.hits.append(self.path)
        if self.path.startswith("/api/items"):
            self._reply(200, json.dumps({"path": self.path, "ua": self.headers["User-Agent"],
                                         "auth": self.headers.get("Authorization")}).encode())
        elif self.path == "/api/moved":
            self._reply(302, b"", [("Location", "/api/items?from=redirect")])
        elif self.path == "/api/out":
            self._reply(302, b"", [("Location", "/private/secret")])
        elif self.path.startswith("/api/to/"):        # /api/to/<code>/<url-encoded target>
            code, target = self.path[len("/api/to/"):].split("/", 1)
            self._reply(int(code), b"", [("Location", urllib.parse.unquote(target))])
        elif self.path == "/api/loop":
            self._reply(302, b"", [("Location", "loop")])
        elif self.path == "/api/headers":
            self._reply(200, json.dumps({k: self.headers.get(k) for k in ("Host", "Authorization", "Accept")})
                        .encode())
        else:
            self._reply(404, b"not found\n")

    def do_POST(self):
        _Handler.hits.append(self.path)
        if self.path.startswith("/api/to/"):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            return self.do_GET()
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length).decode()
        self._reply(201, json.dumps({"got": body, "type": self.headers["Content-Type"]}).encode())


def _serve():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture(scope="module")
def server():
    httpd = _serve()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def other_server():
    httpd = _serve()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_no_allowlist_contacts_nothing(server):
    _Handler.hits.clear()
    r = BashTool().execute(f"curl -s {server}/api/items; echo status=$?; curl {server}/api/items")
    assert r.stdout == "status=6\n" and "Could not resolve host: 127.0.0.1" in r.stderr
    assert _Handler.hits == []


def test_allowed_prefix_get_post_headers_and_write_out(server):
    bash = BashTool.builder().network(allow=[(f"{server}/api/", ["GET", "HEAD", "POST"])]).build()
    r = bash.execute(f"""
curl -s -H 'Authorization: Bearer t' {server}/api/items?a=1 | jq -r '.path, .auth, .ua'
curl -s -X POST -d 'x=1' -d 'y=2' {server}/api/items | jq -r '.got, .type'
echo '{{"k": 1}}' > body.json
curl -s --data-binary @body.json -H 'Content-Type: application/json' {server}/api/items | jq -c .
curl -s -G --data-urlencode 'q=a b&c' {server}/api/items | jq -r .path
curl -s -o out.json -w '%{{http_code}}\\n' {server}/api/items; jq -r .path out.json
curl -s -f {server}/api/missing; echo status=$?
curl -s -w '%{{http_code}}' {server}/api/missing; echo
curl -s {server}/private/x; echo status=$?
""")
    assert r.stdout.splitlines() == [
        "/api/items?a=1", "Bearer t", "curl/8.0",
        "x=1&y=2", "application/x-www-form-urlencoded",
        '{"got":"{\\"k\\": 1}\\n","type":"application/json"}',
        "/api/items?q=a%20b%26c",
        "200", "/api/items",
        "status=22",
        "not found", "404",
        "status=6",
    ]


def test_redirects_follow_only_to_allowed_urls(server):
    bash = BashTool.builder().network(allow=[f"{server}/api/"]).build()
    r = bash.execute(f"curl -s -L {server}/api/moved | jq -r .path; curl -s -L {server}/api/out; echo status=$?; "
                     f"curl -s -o /dev/null -w '%{{http_code}}' {server}/api/moved")
    assert r.stdout == "/api/items?from=redirect\nstatus=6\n302"


def test_scripted_tool_network_and_response_limit(server):
    api = ScriptedTool.builder("api").network(allow=[server + "/"]).build()
    assert api.execute(f"curl -s {server}/api/items | jq -r .path").stdout == "/api/items\n"
    from scripted_kernel import ExecutionLimits
    small = (ScriptedTool.builder("api").network(allow=[server + "/"])
             .limits(ExecutionLimits(max_output_bytes=45)).build())
    r = small.execute(f"curl -sS {server}/api/items > /dev/null")
    assert r.exit_code == 63 and r.stderr == "curl: (63) Maximum file size exceeded\n"


def test_credentials_headers_and_host_names(server):
    port = server.rsplit(":", 1)[1]
    bash = BashTool.builder().network(allow=[f"http://localhost:{port}/api/", f"{server}/api/"]).build()
    r = bash.execute(f"""
curl -s -u 'ann:s3:cret' {server}/api/headers | jq -c .
curl -s 'http://bob:p%40ss@localhost:{port}/api/headers' | jq -c .
curl -s -H 'Accept:' -H 'Authorization: Bearer t' {server}/api/headers | jq -c .
curl -s -o /dev/null -w '%{{url_effective}}\\n' 'HTTP://127.0.0.1:{port}/api/a/../b/?x=1#frag'
""")
    assert r.stdout.splitlines() == [
        f'{{"Host":"127.0.0.1:{port}","Authorization":"Basic YW5uOnMzOmNyZXQ=","Accept":"*/*"}}',
        f'{{"Host":"localhost:{port}","Authorization":"Basic Ym9iOnBAc3M=","Accept":"*/*"}}',
        f'{{"Host":"127.0.0.1:{port}","Authorization":"Bearer t","Accept":null}}',
        f"http://127.0.0.1:{port}/api/b/?x=1",
    ]


def test_redirect_methods_heads_and_credentials(server, other_server):
    posts = (f"{server}/api/", ["GET", "HEAD", "POST"])
    bash = BashTool.builder().network(allow=[posts, f"{other_server}/api/"]).build()
    to = urllib.parse.quote
    other_headers = to(other_server + "/api/headers", safe="")
    r = bash.execute(f"""
curl -s -L -d x=1 {server}/api/to/302/{to("/api/items?after=302", safe="")} | jq -c .
curl -s -L -d x=1 {server}/api/to/307/{to("/api/items?after=307", safe="")} | jq -c .
curl -s -L -i {server}/api/to/301/{to("/api/missing", safe="")} | tr -d '\\r' | grep -E '^(HTTP|Location|not)'
curl -s -L -H 'Authorization: Bearer t' {server}/api/to/302/{other_headers} | jq -c .Authorization
curl -s -L -u a:b {server}/api/to/302/{to("/api/headers", safe="")} | jq -c .Authorization
curl -sS -L {server}/api/loop; echo status=$?
curl -sS -L {server}/api/to/302/{to("http://[::1", safe="")}; echo status=$?
curl -sS -L {server}/api/to/302/{to("../../items?q=2", safe="")} | jq -r .path
curl -sS -L {server}/api/to/302/{to("//127.0.0.1:1/api/", safe="")}; echo status=$?
""")
    assert r.stdout.splitlines() == [
        '{"path":"/api/items?after=302","ua":"curl/8.0","auth":null}',
        '{"got":"x=1","type":"application/x-www-form-urlencoded"}',
        "HTTP/1.0 301 Moved Permanently", "Location: /api/missing", "HTTP/1.0 404 Not Found", "not found",
        "null",
        '"Basic YTpi"',
        "status=47", "status=3", "/api/items?q=2", "status=6",
    ]
    assert r.stderr == ("curl: (47) Maximum (10) redirects followed\n"
                        "curl: (3) URL using bad/illegal format or missing URL\n"
                        "curl: (6) Could not resolve host: 127.0.0.1\n")


def test_an_interrupt_while_making_the_socket_is_not_masked(monkeypatch):
    """A BaseException from socket.socket() itself (an interrupt) propagates as it is: the
    cleanup used to call close() on the socket that was never made (AttributeError)."""
    import socket

    from scripted_kernel.commands import http_wire
    from scripted_kernel.commands.urlpolicy import parse_url

    class Interrupted:                  # http_wire's socket module, only socket() is interrupted
        def __getattr__(self, name):
            return getattr(socket, name)

        def socket(self, *args):
            raise KeyboardInterrupt
    monkeypatch.setattr(http_wire, "socket", Interrupted())
    with pytest.raises(KeyboardInterrupt):
        http_wire._connect(http_wire.Clock(None, None, None), parse_url("http://127.0.0.1:9/"))


def test_a_plan_sends_no_request_and_lists_each_one(server):
    # a plan runs before a person approves it: before, it sent the POST and the DELETE, with
    # the injected credentials, and listed neither
    api = (ScriptedTool.builder("api")
           .network(allow=[(f"{server}/api/", ["GET", "POST", "DELETE"])],
                    credentials={server: {"Authorization": "Bearer planned-secret"}})
           .build())
    _Handler.hits.clear()
    plan = api.plan(f"""
curl -s -X POST -d '{{"n":1}}' {server}/api/items
curl -s -X DELETE {server}/api/items/7 && echo deleted
curl -s {server}/api/items?page=2
curl -s -X POST {server}/private/x || echo refused $?
""")
    assert _Handler.hits == []
    assert [(c.name, c.kind, c.params) for c in plan] == [
        ("curl", "network", {"method": "POST", "url": f"{server}/api/items"}),
        ("curl", "network", {"method": "DELETE", "url": f"{server}/api/items/7"}),
        ("curl", "network", {"method": "GET", "url": f"{server}/api/items?page=2"}),
    ]
    assert "planned-secret" not in repr(plan)
    # and the same request for real is sent
    api.execute(f"curl -s -X POST -d x {server}/api/items")
    assert _Handler.hits == ["/api/items"]
