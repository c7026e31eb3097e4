"""Small OpenAI-compatible chat servers for the LLM tests, served on 127.0.0.1 by the ``server`` fixture
(tests/explain/conftest.py) or :func:`serve_fake_chat`; they record every request in ``FakeChat.requests``.

:class:`FakeChat` answers like a chat server; :class:`RedirectingChat` redirects every request, :class:`StatusChat`
answers a scripted list of HTTP errors first and :class:`TricklingChat` sends its reply one byte at a time: the
hostile servers of the client's security and retry tests.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar


class FakeChat(BaseHTTPRequestHandler):
    """Answers like a chat server: explanations name the word of the '10 |' lines, simulations score 'zebra'."""

    requests: ClassVar[list[dict]] = []
    fail_next: ClassVar[int] = 0

    def record(self) -> dict:
        """Record the request (method, path, port of the server, Authorization header, JSON body if any)."""
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        request = {"method": self.command, "path": self.path, "port": self.server.server_address[1], "body": body,
                   "auth": self.headers.get("Authorization")}
        FakeChat.requests.append(request)
        return request

    def do_POST(self) -> None:
        body = self.record()["body"]
        if FakeChat.fail_next:
            FakeChat.fail_next -= 1
            reply = "I am not sure."
        else:
            reply = self.reply(body["messages"][-1]["content"])
        self.send_json(200, {"choices": [{"message": {"role": "assistant", "content": reply}}]})

    def do_GET(self) -> None:
        self.record()
        self.send_json(405, {"error": "use POST"})

    def send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply(self, prompt: str) -> str:
        """The assistant's answer to the last user message (a subclass may answer differently)."""
        if prompt.startswith("Top-activating"):
            tops = [line.split("|", 1)[1].split()[-1] for line in prompt.splitlines() if line.startswith("10 |")]
            return f"Sure.\nExplanation: \"{tops[0]}\"."
        lines = [line for line in prompt.splitlines() if line[:1].isdigit()]
        return "\n".join(f"{line.split('.')[0]}: {10 if 'zebra' in line else 1}" for line in lines)

    def log_message(self, *args) -> None:
        pass


class RedirectingChat(FakeChat):
    """Answers every request with ``status`` and ``Location: location`` (set both before use); a request to a
    path under ``/final`` is answered as :class:`FakeChat` does (the target of a same-origin redirect)."""

    status: ClassVar[int] = 307
    location: ClassVar[str] = ""

    def do_POST(self) -> None:
        if self.path.startswith("/final"):
            super().do_POST()
            return
        self.record()
        self.send_json(RedirectingChat.status, {}, {"Location": RedirectingChat.location})


class StatusChat(FakeChat):
    """Answers the scripted ``(status, headers)`` of ``script`` one per request, then as :class:`FakeChat`.
    A header value ``"date+<s>"`` becomes an HTTP date ``s`` seconds after the reply's own ``Date`` header."""

    script: ClassVar[list[tuple[int, dict[str, str]]]] = []

    def do_POST(self) -> None:
        if not StatusChat.script:
            super().do_POST()
            return
        self.record()
        status, headers = StatusChat.script.pop(0)
        now = int(time.time())
        dated = {name: email.utils.formatdate(now + float(value[5:]), usegmt=True) if value.startswith("date+")
                 else value for name, value in headers.items()}
        data = json.dumps({"error": f"status {status}"}).encode()
        self.send_response_only(status)
        self.send_header("Date", email.utils.formatdate(now, usegmt=True))
        for name, value in dated.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class TricklingChat(FakeChat):
    """Promises a 200-byte reply and sends it one byte every 20 ms (4 s in all): no single read ever waits long."""

    def do_POST(self) -> None:
        self.record()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "200")
        self.end_headers()
        try:
            for _ in range(200):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.02)
        except OSError:
            pass


@contextmanager
def serve_fake_chat(handler: type[FakeChat] = FakeChat, *, reset: bool = True) -> Iterator[str]:
    """Start ``handler`` (:class:`FakeChat` or a subclass) on a free port of 127.0.0.1 (with no recorded requests
    unless ``reset=False``, for a second server); yield its base URL."""
    if reset:
        FakeChat.requests = []
        FakeChat.fail_next = 0
        StatusChat.script = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
