"""The network policy of `.network(...)`: per-origin credentials injected at the boundary (never
visible to the script), methods per entry, private addresses only when an entry names them
(judged after name resolution, on every redirect), and per-execution request and byte budgets."""
import http.server
import json
import socket
import threading
import urllib.parse

import pytest

from scripted_kernel import BashTool, ScriptedTool
from scripted_kernel.commands.urlpolicy import NetworkPolicy

SECRET = "Bearer sk-live-DO-NOT-LEAK-4f1c2a9b7e"


class _Handler(http.server.BaseHTTPRequestHandler):
    seen: list = []          # (method, path, Authorization, X-Api-Key) as received

    def log_message(self, *args):
        pass

    def _reply(self, status, body: bytes, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        _Handler.seen.append((self.command, self.path, self.headers.get("Authorization"),
                              self.headers.get("X-Api-Key")))
        if self.path.startswith("/api/to/"):
            self._reply(302, b"", [("Location", urllib.parse.unquote(self.path[len("/api/to/"):]))])
        elif self.path.startswith("/api/big"):
            self._reply(200, b"x" * 5000)
        elif self.path.startswith("/api/fail"):       # a server error page: curl's message stays curl's
            self._reply(500, b"oops\n")
        else:
            self._reply(200, json.dumps({"path": self.path}).encode() + b"\n")

    do_HEAD = do_GET

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.do_GET()

    do_DELETE = do_POST


@pytest.fixture(scope="module")
def port():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1]
    httpd.shutdown()


@pytest.fixture(autouse=True)
def _clear():
    _Handler.seen.clear()


@pytest.fixture
def api_test_resolves_to_loopback(monkeypatch):
    """`api.test` (a name, not an address) resolves to 127.0.0.1, as a rebinding DNS would."""
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host == "api.test":
            host = "127.0.0.1"
        return real(host, port, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", fake)


# ---------------------------------------------------------------- credentials

def test_injected_credentials_reach_the_server_and_nothing_the_script_sees(port):
    origin = f"http://127.0.0.1:{port}"
    bash = (BashTool.builder()
            .network(allow=[f"{origin}/api/"], credentials={origin: {"Authorization": SECRET, "X-Api-Key": "k-123456"}})
            .build())
    r = bash.execute(f"""
curl -s {origin}/api/items | jq -r .path
curl -v -s {origin}/api/items -o out.json
curl -s -H 'Authorization: Bearer mine' -i {origin}/api/items
curl -sS -f {origin}/api/fail; echo status=$?
curl -sS {origin}/private/x; echo status=$?
env; set; declare -p
cat out.json
""")
    assert r.stdout.startswith("/api/items\n")
    seen = [s for s in _Handler.seen if s[1].startswith("/api/")]
    assert seen and all(auth == SECRET and key == "k-123456" for _, _, auth, key in seen)   # replaced "mine" too
    assert "> GET /api/items HTTP/1.1" in r.stderr and "< HTTP/1.0 200 OK" in r.stderr
    for text in (r.stdout, r.stderr):
        assert "DO-NOT-LEAK" not in text and "k-123456" not in text
    assert ("/private/x", None) not in [(s[1], s[2]) for s in _Handler.seen]      # not allowed: not contacted


def test_credentials_are_per_origin_and_dropped_on_a_redirect_elsewhere(port):
    origin, other = f"http://127.0.0.1:{port}", f"http://localhost:{port}"
    bash = BashTool.builder().network(allow=[f"{origin}/api/", f"{other}/api/"],
                                      credentials={origin: {"Authorization": SECRET}}).build()
    target = urllib.parse.quote(f"{other}/api/landed", safe="")
    r = bash.execute(f"curl -s {other}/api/direct; curl -s -L {origin}/api/to/{target}")
    assert r.exit_code == 0
    by_path = {path: auth for _, path, auth, _ in _Handler.seen}
    assert by_path["/api/direct"] is None and by_path["/api/landed"] is None
    assert by_path[f"/api/to/{target}"] == SECRET


def test_credentials_must_name_an_origin():
    with pytest.raises(ValueError, match="per origin"):
        NetworkPolicy(["https://api.example.com/v1/"], {"https://api.example.com/v1/": {"Authorization": "x"}})
    with pytest.raises(ValueError, match="not a header"):
        NetworkPolicy([], {"https://api.example.com": {"Bad Name": "x"}})


# ---------------------------------------------------------------- methods

def test_get_and_head_by_default_and_entries_that_name_more(port):
    origin = f"http://127.0.0.1:{port}"
    bash = BashTool.builder().network(allow=[f"{origin}/api/", (f"{origin}/api/write/", ["POST"]),
                                             {"url": f"{origin}/api/admin/", "methods": ["delete"]}]).build()
    r = bash.execute(f"""
curl -s -I {origin}/api/items | head -1 | tr -d '\\r'
curl -sS -d x=1 {origin}/api/items; echo status=$?
curl -s -d x=1 {origin}/api/write/x | jq -r .path
curl -s -X DELETE {origin}/api/admin/1 | jq -r .path
curl -sS -X PUT {origin}/api/write/x; echo status=$?
""")
    assert r.stdout.splitlines() == ["HTTP/1.0 200 OK", "status=3", "/api/write/x", "/api/admin/1", "status=3"]
    assert (f"curl: (3) the network policy does not allow POST to {origin}/api/items (allowed: GET, HEAD)"
            in r.stderr)
    assert [(m, p) for m, p, _, _ in _Handler.seen] == [("HEAD", "/api/items"), ("POST", "/api/write/x"),
                                                        ("DELETE", "/api/admin/1")]


# ---------------------------------------------------------------- private addresses

def test_loopback_refused_after_resolution_unless_named(port, api_test_resolves_to_loopback):
    named = BashTool.builder().network(allow=[f"http://127.0.0.1:{port}/api/"]).build()
    assert named.execute(f"curl -s http://127.0.0.1:{port}/api/ok | jq -r .path").stdout == "/api/ok\n"
    by_name = BashTool.builder().network(allow=[f"http://api.test:{port}/api/"]).build()
    r = by_name.execute(f"curl -sS http://api.test:{port}/api/ok; echo status=$?")
    assert r.stdout == "status=7\n"
    assert "refuses private, loopback and link-local addresses" in r.stderr
    assert _Handler.seen == [("GET", "/api/ok", None, None)]        # the refused one never arrived
    local = BashTool.builder().network(allow=[f"http://localhost:{port}/api/"]).build()
    assert local.execute(f"curl -s http://localhost:{port}/api/ok | jq -r .path").stdout == "/api/ok\n"


def test_a_redirect_to_a_name_that_resolves_privately_is_refused(port, api_test_resolves_to_loopback):
    bash = BashTool.builder().network(allow=[f"http://127.0.0.1:{port}/api/", f"http://api.test:{port}/api/"]).build()
    target = urllib.parse.quote(f"http://api.test:{port}/api/inner", safe="")
    r = bash.execute(f"curl -sS -L http://127.0.0.1:{port}/api/to/{target}; echo status=$?")
    assert r.stdout == "status=7\n" and "private" in r.stderr
    assert [p for _, p, _, _ in _Handler.seen] == [f"/api/to/{target}"]


def test_public_addresses_judged_as_such():
    from ipaddress import ip_address
    from scripted_kernel.commands.urlpolicy import is_public
    assert is_public(ip_address("93.184.216.34")) and is_public(ip_address("2606:4700::1"))
    for private in ("127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
                    "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "224.0.0.1"):
        assert not is_public(ip_address(private)), private


# ---------------------------------------------------------------- budgets

def test_request_and_byte_budgets_per_execution(port):
    origin = f"http://127.0.0.1:{port}"
    api = ScriptedTool.builder("api").network(allow=[f"{origin}/api/"], max_requests=2).build()
    r = api.execute(f"for i in 1 2 3; do curl -sS {origin}/api/$i >/dev/null; echo status=$?; done")
    assert r.stdout.split() == ["status=0", "status=0", "status=7"]
    assert "network request budget is spent (2 requests, max_requests)" in r.stderr
    assert api.execute(f"curl -s {origin}/api/again | jq -r .path").stdout == "/api/again\n"   # a new execution
    redirects = urllib.parse.quote(f"{origin}/api/after", safe="")
    r = api.execute(f"curl -sS -L {origin}/api/to/{redirects} >/dev/null; echo $?; curl -sS {origin}/api/x; echo $?")
    assert r.stdout == "0\n7\n"                       # a redirect's hop counts as a request

    small = ScriptedTool.builder("api").network(allow=[f"{origin}/api/"], max_bytes=8000).build()
    r = small.execute(f"curl -sS {origin}/api/big | wc -c; curl -sS {origin}/api/big | wc -c; echo $?")
    assert r.stdout.split() == ["5000", "0", "0"]
    assert "network byte budget is spent (8000 bytes, max_bytes)" in r.stderr


def test_the_prompt_and_help_show_the_entries(port):
    bash = BashTool.builder().network(allow=[(f"http://127.0.0.1:{port}/api/", ["POST"])]).build()
    assert f"http://127.0.0.1:{port}/api/" in bash.system_prompt()
    assert f"http://127.0.0.1:{port}/api/" in bash.help()
