"""A small OpenAI-compatible chat server for the LLM tests, served on 127.0.0.1 by the ``server`` fixture
(tests/explain/conftest.py); it records every request in ``FakeChat.requests``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar


class FakeChat(BaseHTTPRequestHandler):
    """Answers like a chat server: explanations name the word of the '10 |' lines, simulations score 'zebra'."""

    requests: ClassVar[list[dict]] = []
    fail_next: ClassVar[int] = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChat.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if FakeChat.fail_next:
            FakeChat.fail_next -= 1
            reply = "I am not sure."
        else:
            reply = self.reply(body["messages"][-1]["content"])
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def reply(self, prompt: str) -> str:
        """The assistant's answer to the last user message (a subclass may answer differently)."""
        if prompt.startswith("Top-activating"):
            tops = [line.split("|", 1)[1].split()[-1] for line in prompt.splitlines() if line.startswith("10 |")]
            return f"Sure.\nExplanation: \"{tops[0]}\"."
        lines = [line for line in prompt.splitlines() if line[:1].isdigit()]
        return "\n".join(f"{line.split('.')[0]}: {10 if 'zebra' in line else 1}" for line in lines)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def serve_fake_chat(handler: type[FakeChat] = FakeChat) -> Iterator[str]:
    """Start ``handler`` (:class:`FakeChat` or a subclass) on a free port of 127.0.0.1 with no recorded requests;
    yield its base URL."""
    FakeChat.requests = []
    FakeChat.fail_next = 0
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
