"""A local HTTP server that speaks SearxNG's JSON search API, for the web search tests.

`GET /search?q=…&format=json` answers `{"query", "number_of_results", "results": [...]}`
from the canned `results` (each `{url, title, content}`); any other path is served from
`pages` as HTML. Every request is recorded. Loopback only, one server per test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class SearxngDouble:
    results: list[dict[str, Any]] = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)
    status: int = 200
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)
    base_url: str = ""

    def queries(self) -> list[str]:
        return [q["q"][0] for path, q in self.requests if path == "/search" and "q" in q]


@contextmanager
def searxng_server(double: SearxngDouble) -> Iterator[SearxngDouble]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            double.requests.append((parts.path, query))
            if parts.path == "/search":
                if query.get("format") != ["json"]:
                    self._send(403, "text/html", "<p>format not allowed</p>")
                    return
                body = {
                    "query": query.get("q", [""])[0],
                    "number_of_results": len(double.results),
                    "results": double.results,
                    "answers": [],
                    "infoboxes": [],
                    "suggestions": [],
                }
                self._send(double.status, "application/json", json.dumps(body))
                return
            page = double.pages.get(parts.path)
            if page is None:
                self._send(404, "text/html", "<p>not found</p>")
            else:
                self._send(200, "text/html; charset=utf-8", page)

        def _send(self, status: int, kind: str, text: str) -> None:
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    double.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
