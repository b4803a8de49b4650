"""One HTTP/1.1 exchange for curl, under the execution's clock.

Every wait (name lookup, connect, TLS handshake, send, receive) is cut into slices of at most
SLICE seconds. Between slices the execution's cancel flag and deadline are checked (they stop
the script, as for any command), then curl's own -m / --connect-timeout (which end curl with
28). A server dripping one byte at a time therefore holds curl no longer than those allow, and
curl holds no lock while it waits. The messages are framed and parsed by h11 (the sans-IO
HTTP/1.1 parser under httpcore and uvicorn), which refuses what RFC 9112 says to refuse
(conflicting Content-Length headers among them); when it refuses a reply, `_diagnose` names
the fault as curl does, with curl's status and message.
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

import h11

from .urlpolicy import CurlError, Url, is_public

SLICE = 0.1                       # seconds between checks of the cancel flag and the clock
MAX_HEADER_LINE = 100 * 1024      # curl's CURL_MAX_HTTP_HEADER
MAX_HEAD_BYTES = 300 * 1024       # curl's bound on a response's headers together
_READ = 64 * 1024
_STATUS_LINE = rb"HTTP/(\S*)[ \t]+(\S*)"           # patterns compiled on first use (see urlpolicy)
_LONG_CHUNK_SIZE = rb"(?:^|\n)[0-9A-Fa-f]{17,}[;\s]"
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
        if grant is not None and grant.inject:
            names = {name.lower() for name, _ in grant.inject}
            headers = [h for h in headers if h[0].lower() not in names] + list(grant.inject)
        wire = _Wire(clock, sock)
        wire.send(_request(method, url, headers, body), body)
        try:
            status, head, fields = _read_head(wire)
            return Response(status, head, fields, _read_body(wire, fields, limit))
        except h11.RemoteProtocolError:
            raise _diagnose(wire, fields if wire.in_body else None) from None
    finally:
        sock.close()


def _request(method: str, url, headers: list, body: "bytes | None") -> h11.Request:
    fields = [(b"Host", url.authority.encode("ascii"))]
    fields += [(name.encode("ascii"), value.encode("utf-8", "surrogateescape")) for name, value in headers]
    if body is not None:
        fields.append((b"Content-Length", str(len(body)).encode("ascii")))
    return h11.Request(method=method.encode("ascii"), target=url.target.encode("ascii", "surrogateescape"),
                       headers=fields)


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
    """A connected socket and h11's state of the exchange on it; every wait in slices of the
    clock. What arrives before the body (and the last stretch of the body) is kept, for
    `_diagnose` to name a fault h11 refuses as curl names it."""

    def __init__(self, clock: Clock, sock):
        self.clock = clock
        self.sock = sock
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.seen = bytearray()         # the head's bytes; in the body, its last _READ * 2
        self.in_body = False            # counting the bytes received into clock.received
        self.ended = False              # the server closed its side
        self.body_received = 0          # bytes of the body h11 has handed over

    def start_body(self):
        self.in_body = True

    def send(self, request: h11.Request, body: "bytes | None"):
        data = self.h11.send(request) or b""
        if body:
            data += self.h11.send(h11.Data(data=body)) or b""
        self._send_bytes(data + (self.h11.send(h11.EndOfMessage()) or b""))

    def _send_bytes(self, data: bytes):
        view = memoryview(data)
        while view:
            self.sock.settimeout(self.clock.slice("transfer"))
            try:
                view = view[self.sock.send(view):]
            except socket.timeout:
                continue
            except OSError as e:
                raise CurlError(55, f"Send failure: {_reason(e, 'Broken pipe')}") from None

    def next_event(self):
        """h11's next event, receiving as it needs (RemoteProtocolError for a reply it refuses)."""
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.h11.receive_data(self._receive())

    def _receive(self) -> bytes:
        while True:
            self.sock.settimeout(self.clock.slice("transfer"))
            try:
                data = self.sock.recv(_READ)
            except socket.timeout:
                continue
            except OSError as e:
                raise CurlError(56, f"Recv failure: {_reason(e, 'Connection reset by peer')}") from None
            self.ended = not data
            if self.in_body:
                self.clock.received += len(data)
                self.seen = self.seen[-_READ:] + data
            else:
                self.seen += data
            return data


def _reason(e: OSError, default: str) -> str:
    return getattr(e, "reason", None) or e.strerror or default


def _too_big() -> CurlError:
    return CurlError(63, "Maximum file size exceeded")


def _head_too_big() -> CurlError:
    return CurlError(56, f"Too large response headers (more than {MAX_HEADER_LINE} bytes in a line "
                         f"or {MAX_HEAD_BYTES} in all)")


def _read_head(wire: _Wire) -> tuple[int, str, list]:
    """The final response's status, head text (as -i shows it) and headers (interim 1xx heads
    are skipped)."""
    while True:
        event = wire.next_event()
        if isinstance(event, h11.InformationalResponse):
            continue
        if not isinstance(event, h11.Response):
            raise CurlError(52, "Empty reply from server")
        if event.http_version not in (b"1.0", b"1.1"):
            raise CurlError(1, f"Unsupported HTTP version ({event.http_version.decode('ascii', 'replace')}) "
                               f"in response")
        fields = [(name.decode("ascii", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
                  for name, value in event.headers.raw_items()]
        if any(len(name) + len(value) + 2 > MAX_HEADER_LINE for name, value in fields):
            raise _head_too_big()
        head = f"HTTP/{event.http_version.decode()} {event.status_code} " \
               f"{event.reason.decode('utf-8', 'surrogateescape')}\r\n" + \
               "".join(f"{name}: {value}\r\n" for name, value in fields) + "\r\n"
        wire.clock.received += max(0, len(wire.seen) - len(head.encode("utf-8", "surrogateescape")))
        wire.start_body()
        return event.status_code, head, fields


def _read_body(wire: _Wire, fields: list, limit: int) -> bytes:
    length = _last(fields, "content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise _too_big()
    body = bytearray()
    while True:
        event = wire.next_event()
        if isinstance(event, h11.Data):
            if len(body) + len(event.data) > limit:
                raise _too_big()
            body += event.data
            wire.body_received = len(body)
        elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
            return bytes(body)


def _last(fields: list, name: str) -> "str | None":
    values = [value for key, value in fields if key.lower() == name]
    return values[-1] if values else None


def _diagnose(wire: _Wire, fields: "list | None") -> CurlError:
    """The curl error for a reply h11 refused: `fields` are the head's when it was read (the
    fault is in the body), else None (the fault is in the head)."""
    if fields is not None:
        if "chunked" not in (_last(fields, "transfer-encoding") or "").lower():
            length = _last(fields, "content-length") or "0"
            missing = int(length) - wire.body_received if length.isdigit() else 0
            return CurlError(18, f"transfer closed with {max(missing, 1)} bytes remaining to read")
        if re.search(_LONG_CHUNK_SIZE, bytes(wire.seen)):
            return CurlError(56, "Too long hexadecimal number in chunked-encoding")
        if wire.ended:
            return CurlError(18, "transfer closed with outstanding read data remaining")
        return CurlError(56, "Illegal or missing hexadecimal sequence in chunked-encoding")
    head = bytes(wire.seen)
    if not head:
        return CurlError(52, "Empty reply from server")
    if not head.startswith(b"HTTP/"):
        return CurlError(1, "Received HTTP/0.9 when not allowed")
    if len(head) >= MAX_HEAD_BYTES:
        return _head_too_big()
    status_line, _, rest = head.partition(b"\n")
    m = re.match(_STATUS_LINE, status_line)
    version, code = m.groups() if m else (b"", b"")
    if version not in (b"1.0", b"1.1"):
        shown = f" ({version.decode()})" if re.fullmatch(rb"\d\.\d", version) else ""
        return CurlError(1, f"Unsupported HTTP version{shown} in response")
    if not (len(code) == 3 and code.isdigit() and code[:1] != b"0"):
        return CurlError(1, "Unsupported response code in HTTP response")
    lines = rest.split(b"\r\n\r\n", 1)[0].split(b"\n")
    if any(line.strip() and b":" not in line and line[:1] not in b" \t" for line in lines):
        return CurlError(8, "Header without colon")
    if any(line.lower().startswith(b"content-length") for line in lines):
        return CurlError(8, "Invalid Content-Length: value")     # malformed, or conflicting (RFC 9112)
    if wire.ended:
        return CurlError(52, "Empty reply from server")
    return CurlError(8, "Weird server reply")
