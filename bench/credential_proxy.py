"""The credential proxy's two halves, run inside sidecar containers: ``forward`` and ``inject``.

Why two processes in two containers: the agent must reach its model provider without
ever holding the credential or a route out. The **forwarder** runs with network
``none``; the agent's container joins its namespace and sees only its loopback, where
the forwarder listens and pipes each TCP connection, byte for byte, to a Unix socket
in a volume it shares with the **injector**. The injector has egress, but nothing of
the agent's: it reads one HTTP/1.1 request at a time from that socket, drops whatever
``x-api-key`` / ``authorization`` the agent sent (a placeholder), adds the real
credential, and forwards to the one configured provider only: scheme, host and port are
fixed, the request's path is appended to the provider's base path, and absolute-URI or
CONNECT requests are refused. Responses stream back as they arrive (SSE is never
buffered).

The credential reaches the injector in its environment (``BENCH_PROXY_CREDENTIAL``) and
is removed from it on start. The injector logs one JSON line per request (method, path
without query, status, bytes): never a header or a body, so the log is safe to record.

It runs from the harness wheel on PYTHONPATH, so it uses the standard library only::

    python3 -m bench.credential_proxy inject --socket S --upstream URL --auth x-api-key|bearer [--ca-bundle PEM]
    python3 -m bench.credential_proxy forward --socket S --port PORT
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import socketserver
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from .model_endpoint import serve_until_stopped

READY = "BENCH-PROXY-READY"
CREDENTIAL_ENV = "BENCH_PROXY_CREDENTIAL"
AUTH_KINDS = ("x-api-key", "bearer")
DROPPED = {"x-api-key", "authorization", "host", "content-length", "expect",
           "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
           "te", "trailer", "transfer-encoding", "upgrade"}
HOP_BY_HOP = DROPPED - {"x-api-key", "authorization"}
UPSTREAM_TIMEOUT_S = 600
CHUNK = 65536


class ProxyError(ValueError):
    """A configuration the proxy refuses to start with; the message names the value."""


@dataclass(frozen=True)
class Upstream:
    """The one provider the injector may reach."""

    scheme: str
    host: str
    port: int
    base_path: str

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.base_path}"


def parse_upstream(url: str) -> Upstream:
    """The provider's base URL, refused unless it is plain http(s)://host[:port][/path]."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProxyError(f"provider URL {url!r} is not http(s)://host[:port][/path]")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ProxyError(f"provider URL {url!r} may not carry credentials, a query or a fragment")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ProxyError(f"provider URL {url!r} has a bad port") from None
    return Upstream(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


def target(upstream: Upstream, request_target: str) -> str | None:
    """The upstream path for a request target, or None when it must be refused.

    Only origin-form targets (``/path?query``) are forwarded; an absolute URI
    (``http://elsewhere/``), an authority (CONNECT) or ``*`` would name another host.
    """
    if not request_target.startswith("/") or request_target.startswith("//"):
        return None
    return upstream.base_path + request_target


def outgoing_headers(incoming: list[tuple[str, str]], auth: str, credential: str) -> list[tuple[str, str]]:
    """The agent's headers minus its auth and hop-by-hop ones, plus the real credential."""
    kept = [(name, value) for name, value in incoming if name.lower() not in DROPPED]
    header = ("x-api-key", credential) if auth == "x-api-key" else ("authorization", f"Bearer {credential}")
    return [*kept, header]


# --- the injector ----------------------------------------------------------------------


class Injector(BaseHTTPRequestHandler):
    """One agent connection (keep-alive): each request is forwarded upstream and its answer relayed."""

    protocol_version = "HTTP/1.1"
    upstream: Upstream
    auth: str
    credential: str
    context: ssl.SSLContext | None = None
    lock = threading.Lock()

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default access log: it would print request lines to stderr unfiltered."""

    def do_CONNECT(self) -> None:
        self._refuse(405, "CONNECT is not forwarded")

    def _forward(self) -> None:
        started = time.monotonic()
        path = target(self.upstream, self.path)
        if path is None:
            self._refuse(400, "only origin-form request targets (/path) are forwarded")
            return
        body = self._body()
        try:
            connection = self._connect()
            connection.putrequest(self.command, path, skip_accept_encoding=True)
            for name, value in outgoing_headers(list(self.headers.items()), self.auth, self.credential):
                connection.putheader(name, value)
            if body or self.command in ("POST", "PUT", "PATCH"):
                connection.putheader("content-length", str(len(body)))
            connection.endheaders(body or None)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            self._refuse(502, f"provider unreachable: {type(exc).__name__}", started)
            return
        try:
            sent = self._relay(response)
        except (OSError, http.client.HTTPException) as exc:  # either side hung up mid-answer
            self.close_connection = True
            self._log(status=response.status, aborted=type(exc).__name__, started=started)
            return
        finally:
            connection.close()
        self._log(status=response.status, bytes=sent, started=started)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

    def _connect(self) -> http.client.HTTPConnection:
        if self.upstream.scheme == "https":
            return http.client.HTTPSConnection(self.upstream.host, self.upstream.port, timeout=UPSTREAM_TIMEOUT_S,
                                               context=self.context)
        return http.client.HTTPConnection(self.upstream.host, self.upstream.port, timeout=UPSTREAM_TIMEOUT_S)

    def _body(self) -> bytes:
        """The request body, whole: by content-length, or de-chunked."""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _relay(self, response: http.client.HTTPResponse) -> int:
        """Status, end-to-end headers and the body as it arrives; returns the body's byte count."""
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        length = response.getheader("content-length")
        bodiless = self.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
        chunked = length is None and not bodiless and self.request_version == "HTTP/1.1"
        if length is not None:
            self.send_header("content-length", length)
        elif chunked:
            self.send_header("transfer-encoding", "chunked")
        elif not bodiless:  # an HTTP/1.0 client: the end of the body is the end of the connection
            self.close_connection = True
        self.end_headers()
        sent = 0
        while not bodiless and (data := response.read1(CHUNK)):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            self.wfile.flush()
            sent += len(data)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        return sent

    def _refuse(self, status: int, why: str, started: float | None = None) -> None:
        payload = json.dumps({"type": "error", "error": {"type": "bench_proxy_error", "message": why}}).encode()
        self.send_response_only(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")  # an unread body may follow; never parse it as a request
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True
        self._log(status=status, bytes=len(payload), started=started, refused=why)

    def _log(self, started: float | None, **entry: object) -> None:
        path = self.path.split("?")[0] if self.path.startswith("/") else "(not a path)"
        line = {"t": round(time.time(), 3), "method": self.command, "path": path, **entry}
        if started is not None:
            line["ms"] = round((time.monotonic() - started) * 1000)
        with self.lock:
            print(json.dumps(line), flush=True)


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The system's trust store, plus the run's extra bundle (an intercepting proxy's CA) if any."""
    context = ssl.create_default_context()
    if os.path.isfile("/etc/ssl/certs/ca-certificates.crt"):
        context.load_verify_locations(cafile="/etc/ssl/certs/ca-certificates.crt")
    if ca_bundle:
        context.load_verify_locations(cafile=ca_bundle)
    return context


def inject(socket_path: str, upstream: Upstream, auth: str, credential: str,
           ca_bundle: str | None = None) -> UnixHTTPServer:
    """A started injector (daemon thread) listening on ``socket_path``; for tests and main."""
    if auth not in AUTH_KINDS:
        raise ProxyError(f"--auth {auth!r}: expected one of {', '.join(AUTH_KINDS)}")
    context = tls_context(ca_bundle) if upstream.scheme == "https" else None
    handler = type("ConfiguredInjector", (Injector,), {"upstream": upstream, "auth": auth,
                                                        "credential": credential, "context": context})
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    server = UnixHTTPServer(socket_path, handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# --- the forwarder ---------------------------------------------------------------------


class Pipe(socketserver.BaseRequestHandler):
    """One agent TCP connection, spliced to a fresh connection on the injector's socket."""

    socket_path: str

    def handle(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as inner:
            try:
                inner.connect(self.socket_path)
            except OSError as exc:
                print(json.dumps({"t": round(time.time(), 3), "forward_error": type(exc).__name__}), flush=True)
                return
            back = threading.Thread(target=_copy, args=(inner, self.request), daemon=True)
            back.start()
            _copy(self.request, inner)
            back.join()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    """Bytes one way until EOF, then half-close the other side so it sees the end too."""
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class TCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def forward(port: int, socket_path: str, host: str = "127.0.0.1") -> TCPServer:
    """A started forwarder (daemon thread) from ``host:port`` to the injector's socket."""
    handler = type("ConfiguredPipe", (Pipe,), {"socket_path": socket_path})
    server = TCPServer((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.credential_proxy", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="role", required=True)
    forwarder = sub.add_parser("forward", help="loopback TCP to the injector's Unix socket")
    forwarder.add_argument("--socket", required=True)
    forwarder.add_argument("--port", type=int, required=True)
    injector = sub.add_parser("inject", help="the injector's Unix socket to the provider, with the credential")
    injector.add_argument("--socket", required=True)
    injector.add_argument("--upstream", required=True)
    injector.add_argument("--auth", required=True, choices=AUTH_KINDS)
    injector.add_argument("--ca-bundle")
    args = parser.parse_args(argv)
    try:
        if args.role == "forward":
            server = forward(args.port, args.socket)
            print(f"{READY} forward port={server.server_address[1]}", flush=True)
        else:
            credential = os.environ.pop(CREDENTIAL_ENV, "")
            if not credential:
                raise ProxyError(f"{CREDENTIAL_ENV} is not set: the injector has no credential to inject")
            upstream = parse_upstream(args.upstream)
            inject(args.socket, upstream, args.auth, credential, args.ca_bundle)
            print(f"{READY} inject upstream={upstream}", flush=True)
    except (ProxyError, OSError, ssl.SSLError) as exc:
        print(f"credential proxy: {exc}", file=sys.stderr, flush=True)
        return 2
    return serve_until_stopped()


if __name__ == "__main__":
    sys.exit(main())
