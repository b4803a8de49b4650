"""One HTTP/1.1 exchange for curl, under the execution's clock.

Every wait (name lookup, connect, TLS handshake, send, receive) is cut into slices of at most
SLICE seconds. Between slices the execution's cancel flag and deadline are checked (they stop
the script, as for any command), then curl's own -m / --connect-timeout (which end curl with
28). A server dripping one byte at a time therefore holds curl no longer than those allow, and
curl holds no lock while it waits. The response is parsed here rather than by http.client, so
every malformed reply is curl's own status and message and the head is bounded as curl bounds it.
"""
from __future__ import annotations

import errno
import ipaddress
import math
import os
import re
import selectors
import socket
import ssl
import threading
import time

from .urlpolicy import CurlError, Url, is_public

SLICE = 0.1                       # seconds between checks of the cancel flag and the clock
MAX_HEADER_LINE = 100 * 1024      # curl's CURL_MAX_HTTP_HEADER
MAX_HEAD_BYTES = 300 * 1024       # curl's bound on a response's headers together
_READ = 64 * 1024
_HEX = rb"[0-9A-Fa-f]+"                   # patterns compiled on first use (see urlpolicy)
_STATUS_LINE = rb"HTTP/(\S*)[ \t]+(\S*)"
_VERSIONS = (b"1.0", b"1.1", b"2", b"2.0")
_CONNECTING = ("resolve", "connect")


class Clock:
    """The time one curl command may take: the execution's deadline and cancel flag, shortened
    by -m (the whole command) and --connect-timeout (until connected)."""

    def __init__(self, budget, max_time: "float | None", connect_time: "float | None"):
        self.budget = budget
        self.start = time.monotonic()
        self.end = self.start + max_time if max_time else math.inf
        self.connect_end = min(self.end, self.start + connect_time) if connect_time else self.end
        self.url: "Url | None" = None   # the URL being fetched, for the messages
        self.received = 0               # bytes of response bodies

    def slice(self, phase: str) -> float:
        """How long the next wait of `phase` may last. Raises the execution's timeout or cancel,
        or curl's 28 when its own limit for the phase has passed."""
        self.budget.check_stop()
        now = time.monotonic()
        end = self.connect_end if phase in _CONNECTING else self.end
        if now >= end:
            raise CurlError(28, self._timeout_message(phase))
        left = end - now
        if self.budget.deadline is not None:
            left = min(left, self.budget.deadline - now)
        return max(min(left, SLICE), 0.001)

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.start) * 1000)

    def _timeout_message(self, phase: str) -> str:
        if phase == "resolve":
            return f"Resolving timed out after {self.elapsed_ms()} milliseconds"
        if phase == "connect" and self.connect_end < self.end:       # --connect-timeout
            assert self.url is not None     # exchange() sets it before connecting
            return (f"Failed to connect to {self.url.host} port {self.url.port} after "
                    f"{self.elapsed_ms()} ms: Timeout was reached")
        if phase == "connect":
            return f"Connection timed out after {self.elapsed_ms()} milliseconds"
        return f"Operation timed out after {self.elapsed_ms()} milliseconds with {self.received} bytes received"


class Response:
    __slots__ = ("status", "head", "headers", "body")

    def __init__(self, status: int, head: str, headers: list, body: bytes):
        self.status = status
        self.head = head            # the status line and headers as received (for -i)
        self.headers = headers      # (name, value)
        self.body = body

    @property
    def location(self) -> "str | None":
        return _last(self.headers, "location")


def exchange(clock: Clock, url, method: str, headers: list, body: "bytes | None", limit: int,
             verify: bool, grant=None) -> Response:
    """Send one request to `url` (a urlpolicy.Url) and read its response, whose body may have
    at most `limit` bytes (63 beyond). `grant` (urlpolicy.Grant): whether non-public addresses
    may be reached, and the headers the host injects (they replace the script's of the same
    name, and appear nowhere else)."""
    clock.url = url
    sock = _connect(clock, url, grant.private_ok if grant is not None else True)
    try:
        if url.scheme == "https":
            sock = _tls(clock, sock, url, verify)
        wire = _Wire(clock, sock)
        if grant is not None and grant.inject:
            names = {name.lower() for name, _ in grant.inject}
            headers = [h for h in headers if h[0].lower() not in names] + list(grant.inject)
        wire.send(_request_bytes(method, url, headers, body))
        status, head, fields = _read_head(wire)
        wire.start_body()
        return Response(status, head, fields, _read_body(wire, method, status, fields, limit))
    finally:
        sock.close()


def _request_bytes(method: str, url, headers: list, body: "bytes | None") -> bytes:
    lines = [f"{method} {url.target} HTTP/1.1", f"Host: {url.authority}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + (body or b"")


# ------------------------------------------------------------------ connecting

def _resolve(clock: Clock, host: str, port: int) -> list:
    """The addresses of `host`. A name is looked up on a helper thread (getaddrinfo cannot be
    interrupted), which is abandoned when the clock runs out."""
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass
    result: list = []
    done = threading.Event()

    def look_up():
        try:
            result.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError):
            pass
        finally:
            done.set()
    threading.Thread(target=look_up, name="curl-resolve", daemon=True).start()
    while not done.wait(clock.slice("resolve")):
        pass
    if not result:
        raise CurlError(6, f"Could not resolve host: {host}")
    return result[0]


def _connect(clock: Clock, url, private_ok: bool = True) -> socket.socket:
    """A socket connected to one of the host's addresses; only public ones unless
    `private_ok` (the allowlist names the private host itself)."""
    found = _resolve(clock, url.host, url.port)
    if not private_ok:
        found = [a for a in found if is_public(ipaddress.ip_address(a[4][0].split("%", 1)[0]))]
        if not found:
            raise CurlError(7, f"Failed to connect to {url.host} port {url.port}: the network policy refuses "
                               f"private, loopback and link-local addresses (name the address in the allowlist "
                               f"to allow it)")
    for family, kind, proto, _, address in found:
        sock = None
        try:
            sock = socket.socket(family, kind, proto)
            _connect_socket(clock, sock, address)
            return sock
        except OSError:                 # refused, unreachable, out of descriptors: the next address
            if sock is not None:
                sock.close()
        except BaseException:           # the budget's timeout or cancel; an interrupt
            if sock is not None:        # (socket.socket() itself may be what was interrupted)
                sock.close()
            raise
    raise CurlError(7, f"Failed to connect to {url.host} port {url.port} after {clock.elapsed_ms()} ms: "
                       f"Couldn't connect to server")


def _connect_socket(clock: Clock, sock: socket.socket, address):
    sock.setblocking(False)
    error = sock.connect_ex(address)
    if error in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
        with selectors.DefaultSelector() as selector:
            selector.register(sock, selectors.EVENT_WRITE)
            while not selector.select(clock.slice("connect")):
                pass
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if error:
        raise OSError(error, os.strerror(error))


def _tls(clock: Clock, sock: socket.socket, url, verify: bool) -> ssl.SSLSocket:
    context = ssl.create_default_context()
    if not verify:                                  # -k
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    tls = sock
    try:
        tls = context.wrap_socket(sock, server_hostname=url.host, do_handshake_on_connect=False)
        while True:
            tls.settimeout(clock.slice("connect"))
            try:
                tls.do_handshake()
                return tls
            except (socket.timeout, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                continue
    except ssl.SSLCertVerificationError as e:
        tls.close()
        raise CurlError(60, f"SSL certificate problem: {e.verify_message}") from None
    except OSError as e:
        tls.close()
        reason = getattr(e, "reason", None) or "SSL_ERROR_SYSCALL"
        raise CurlError(35, f"OpenSSL SSL_connect: {reason} in connection to {url.host}:{url.port}") from None
    except BaseException:
        tls.close()
        raise


# ------------------------------------------------------------------ the exchange

class _Wire:
    """A connected socket read through a buffer, every wait in slices of the clock."""

    def __init__(self, clock: Clock, sock):
        self.clock = clock
        self.sock = sock
        self.buffer = bytearray()
        self.in_body = False            # counting the bytes received into clock.received

    def start_body(self):
        self.in_body = True
        self.clock.received += len(self.buffer)

    def send(self, data: bytes):
        view = memoryview(data)
        while view:
            self.sock.settimeout(self.clock.slice("transfer"))
            try:
                view = view[self.sock.send(view):]
            except socket.timeout:
                continue
            except OSError as e:
                raise CurlError(55, f"Send failure: {_reason(e, 'Broken pipe')}") from None

    def _fill(self) -> bool:
        """Receive more into the buffer; False at the end of the stream."""
        while True:
            self.sock.settimeout(self.clock.slice("transfer"))
            try:
                data = self.sock.recv(_READ)
            except socket.timeout:
                continue
            except OSError as e:
                raise CurlError(56, f"Recv failure: {_reason(e, 'Connection reset by peer')}") from None
            if self.in_body:
                self.clock.received += len(data)
            self.buffer += data
            return bool(data)

    def readline(self, limit: int, too_long: CurlError) -> bytes:
        """The next line with its b"\\n" (without one at the end of the stream; b"" after it),
        at most `limit` bytes long (`too_long` beyond)."""
        searched = 0
        while True:
            end = self.buffer.find(b"\n", searched, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self.buffer) >= limit:
                raise too_long
            searched = len(self.buffer)
            if not self._fill():
                return self._take(len(self.buffer))

    def read(self, size: int) -> bytes:
        """`size` bytes, fewer only at the end of the stream."""
        while len(self.buffer) < size and self._fill():
            pass
        return self._take(min(size, len(self.buffer)))

    def read_to_end(self, limit: int) -> bytes:
        while len(self.buffer) <= limit and self._fill():
            pass
        if len(self.buffer) > limit:
            raise _too_big()
        return self._take(len(self.buffer))

    def _take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def _reason(e: OSError, default: str) -> str:
    return getattr(e, "reason", None) or e.strerror or default


def _too_big() -> CurlError:
    return CurlError(63, "Maximum file size exceeded")


def _head_too_big() -> CurlError:
    return CurlError(56, f"Too large response headers (more than {MAX_HEADER_LINE} bytes in a line "
                         f"or {MAX_HEAD_BYTES} in all)")


def _read_head(wire: _Wire) -> tuple[int, str, list]:
    """The final response's status, head text and headers (interim 1xx heads are skipped)."""
    size = 0
    while True:
        line = wire.readline(MAX_HEADER_LINE, _head_too_big())
        if not line:
            raise CurlError(52, "Empty reply from server")
        status = _status(line)
        lines = [line]
        fields: list[tuple[str, str]] = []
        while line.rstrip(b"\r\n"):
            size += len(line)
            line = wire.readline(MAX_HEADER_LINE, _head_too_big())
            if size + len(line) > MAX_HEAD_BYTES:
                raise _head_too_big()
            lines.append(line)
            if line.rstrip(b"\r\n"):
                _add_field(fields, line)
        if not 100 <= status < 200 or status == 101:
            return status, b"".join(lines).decode("utf-8", "surrogateescape"), fields


def _status(line: bytes) -> int:
    if not line.startswith(b"HTTP/"):
        raise CurlError(1, "Received HTTP/0.9 when not allowed")
    m = re.match(_STATUS_LINE, line)
    version, code = m.groups() if m else (b"", b"")
    if version not in _VERSIONS:
        shown = f" ({version.decode()})" if re.fullmatch(rb"\d\.\d", version) else ""
        raise CurlError(1, f"Unsupported HTTP version{shown} in response")
    if not (len(code) == 3 and code.isdigit() and code[:1] != b"0"):
        raise CurlError(1, "Unsupported response code in HTTP response")
    return int(code)


def _add_field(fields: list, line: bytes):
    text = line.rstrip(b"\r\n").decode("utf-8", "surrogateescape")
    if text[0] in " \t" and fields:             # an obsolete folded continuation line
        name, value = fields[-1]
        fields[-1] = (name, f"{value} {text.strip()}")
        return
    name, colon, value = text.partition(":")
    if not colon:
        raise CurlError(8, "Header without colon")
    fields.append((name.strip(), value.strip()))


def _last(fields: list, name: str) -> "str | None":
    values = [value for key, value in fields if key.lower() == name]
    return values[-1] if values else None


def _read_body(wire: _Wire, method: str, status: int, fields: list, limit: int) -> bytes:
    if method == "HEAD" or status in (101, 204, 304):
        return b""
    if "chunked" in (_last(fields, "transfer-encoding") or "").lower():
        return _read_chunked(wire, limit)
    length = _last(fields, "content-length")
    if length is None:
        return wire.read_to_end(limit)
    if not (length.isascii() and length.isdigit()):
        raise CurlError(8, "Invalid Content-Length: value")
    size = int(length)
    if size > limit:
        raise _too_big()
    body = wire.read(size)
    if len(body) < size:
        raise CurlError(18, f"transfer closed with {size - len(body)} bytes remaining to read")
    return body


def _read_chunked(wire: _Wire, limit: int) -> bytes:
    body = bytearray()
    bad = CurlError(56, "Illegal or missing hexadecimal sequence in chunked-encoding")
    truncated = CurlError(18, "transfer closed with outstanding read data remaining")
    while True:
        line = wire.readline(MAX_HEADER_LINE, bad)
        if not line:
            raise truncated
        digits = line.split(b";", 1)[0].strip()
        if not re.fullmatch(_HEX, digits):
            raise bad
        if len(digits) > 16:
            raise CurlError(56, "Too long hexadecimal number in chunked-encoding")
        size = int(digits, 16)
        if size == 0:
            _skip_trailers(wire)
            return bytes(body)
        if len(body) + size > limit:
            raise _too_big()
        chunk = wire.read(size)
        end = wire.readline(2, bad)
        if len(chunk) < size or not end:
            raise truncated
        if end.rstrip(b"\r\n"):
            raise bad
        body += chunk


def _skip_trailers(wire: _Wire):
    size = 0
    while True:
        line = wire.readline(MAX_HEADER_LINE, _head_too_big())
        size += len(line)
        if size > MAX_HEAD_BYTES:
            raise _head_too_big()
        if not line.rstrip(b"\r\n"):
            return
