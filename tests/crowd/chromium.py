"""Drive headless Chromium through the DevTools protocol with the standard library only.

A minimal WebSocket client (RFC 6455: masked client text frames, unmasked server frames, continuation
frames, ping/pong) on loopback, enough to send CDP commands and read their replies. Used by the study-page
test to tick inputs, press "Download answers" and collect the downloaded file.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

INSTALL_HINT = "apt-get update && apt-get install -y chromium"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
)


#: Every picture of a page (viewer figures or crowd checkboxes) as its input id and grey pixels (red channel).
READ_PICTURES = """(function () {
  return Array.from(document.querySelectorAll('[data-input]')).filter(function (node) {
    return (node.tagName === 'FIGURE' ? node : node.parentElement).querySelector('img') !== null;
  }).map(function (node) {
    const image = (node.tagName === 'FIGURE' ? node : node.parentElement).querySelector('img');
    const canvas = document.createElement('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const grey = [];
    for (let k = 0; k < data.length; k += 4) { grey.push(data[k]); }
    return {input: Number(node.dataset.input), height: canvas.height, width: canvas.width, grey: grey};
  });
})()"""


def chromium_path() -> str | None:
    """Path of Debian's ``chromium`` binary, or None."""
    return shutil.which("chromium")


class WebSocket:
    """Blocking client WebSocket over a TCP connection (text messages only)."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlparse(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the WebSocket handshake")
            response += chunk
        status = response.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise ConnectionError(f"WebSocket handshake refused: {status.decode(errors='replace')}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("DevTools closed the WebSocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._send_frame(0x1, text.encode())

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            opcode, size = first & 0x0F, second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if second & 0x80 else None
            payload = self._read(size)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                message += payload
                if first & 0x80:
                    return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """A headless Chromium process and a CDP session on one page (use as a context manager)."""

    def __init__(self, binary: str, timeout: float = 60.0, extra_flags: tuple[str, ...] = ()) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []  # CDP events received while waiting for replies
        self.profile = tempfile.mkdtemp(prefix="crowd-chromium-")
        self.process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, *extra_flags, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("headless Chromium did not start (no DevToolsActivePort)")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.socket = WebSocket(f"ws://127.0.0.1:{port}{path}", timeout)
        self.next_id = 0
        self.session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True) -> dict[str, Any]:
        """Send one CDP command (to the attached page unless ``session=False``) and return its result."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.receive())
            if "method" in reply and "id" not in reply:
                self.events.append(reply)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"CDP {method} failed: {reply['error']}")
                return reply["result"]

    def open(self, url: str) -> None:
        """Open ``url`` in a new page and attach to it."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)
        self.session = attached["sessionId"]
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete' && document.getElementById('download') !== null")

    def evaluate(self, expression: str) -> Any:
        """Evaluate a JavaScript expression in the page and return its (JSON) value."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(f"Boolean({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"page condition never held: {condition}")
            time.sleep(0.05)

    def allow_downloads(self, directory: Path) -> None:
        self.call(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(directory), "eventsEnabled": True},
            session=False,
        )

    def wait_for_file(self, path: Path) -> Path:
        """Wait until a download has been written completely to ``path``."""
        deadline = time.monotonic() + self.timeout
        while not path.exists() or any(path.parent.glob("*.crdownload")):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no download appeared at {path}")
            time.sleep(0.05)
        return path

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
