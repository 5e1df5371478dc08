"""Local HTTP servers for the scripted model and the relay: loopback only, served from daemon threads."""

from __future__ import annotations

import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def loopback_http(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """An HTTP server on a free port of 127.0.0.1: nothing off this machine can reach it."""
    return ThreadingHTTPServer(("127.0.0.1", 0), handler)


def serve(servers: list[socketserver.BaseServer], name: str) -> list[threading.Thread]:
    """Serve each of `servers` from its own daemon thread, one thread per request too."""
    threads = []
    for server in servers:
        server.daemon_threads = True
        # A short poll interval, so closing a server after every run costs no half second.
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), name=name, daemon=True)
        thread.start()
        threads.append(thread)
    return threads


def shut(servers: list[socketserver.BaseServer], threads: list[threading.Thread]) -> None:
    """Stop serving, release the sockets, and wait (briefly) for the serving threads to end."""
    for server in servers:
        server.shutdown()
        server.server_close()
    for thread in threads:
        thread.join(timeout=5)
