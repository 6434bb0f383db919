"""Opens an acccheck HTML report in headless Chromium and hovers the first row's cells with a real
mouse (the DevTools protocol's Input.dispatchMouseEvent), column by column, the way a user reading
the report would; prints one JSON object: per column its field and every tooltip shown (text, HTML,
element count), and whether any script planted in the data ran (document.title / window.__pwned).

Usage: report_hover.py REPORT.html   (standard library only: a minimal WebSocket client)
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


class DevTools:
    def __init__(self, ws_url):
        host_port, path = ws_url[len("ws://"):].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += self.sock.recv(4096)
        if b" 101 " not in reply.split(b"\r\n")[0]:
            raise RuntimeError("DevTools refused the WebSocket: " + reply.split(b"\r\n")[0].decode())
        self.buffer = reply.split(b"\r\n\r\n", 1)[1]
        self.next_id = 0

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _frame(self):
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return bool(b0 & 0x80), b0 & 0x0F, self._read(n)

    def call(self, method, **params):
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536
                                else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(payload)))
        message = b""
        while True:
            fin, opcode, data = self._frame()
            if opcode == 8:
                raise RuntimeError("DevTools closed the connection")
            if opcode not in (0, 1):
                continue  # ping, pong, binary: not replies
            message += data
            if not fin:
                continue  # a fragmented message: its continuation frames follow
            reply, message = json.loads(message), b""
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return r.get("result", {}).get("value")


def main():
    report = os.path.abspath(sys.argv[1])
    profile = tempfile.mkdtemp(prefix="acccheck-chromium-")
    browser = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                "--disable-component-update", "--window-size=1400,1000", "--remote-debugging-port=0",
                                "--user-data-dir=" + profile, "file://" + report],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            time.sleep(0.1)
        port = open(port_file).read().split("\n")[0]
        pages = []
        for _ in range(100):
            pages = [t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list")) if t["type"] == "page"]
            if pages:
                break
            time.sleep(0.1)
        tools = DevTools(pages[0]["webSocketDebuggerUrl"])
        for _ in range(300):
            if tools.evaluate("document.body && document.body.dataset.state") == "ready":
                break
            time.sleep(0.1)
        state = tools.evaluate("document.body.dataset.state")
        cells = tools.evaluate("""JSON.stringify([...document.querySelector('.tabulator-row').querySelectorAll('.tabulator-cell')]
            .filter(c => c.offsetWidth > 0).map(c => { const r = c.getBoundingClientRect();
              return [c.getAttribute('tabulator-field'), r.x + r.width / 2, r.y + r.height / 2]; }))""")
        columns = []
        for field, x, y in json.loads(cells or "[]"):
            tools.call("Input.dispatchMouseEvent", type="mouseMoved", x=0, y=0)
            time.sleep(0.2)
            tools.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
            time.sleep(1.0)  # Tabulator's tooltip delay is 300 ms
            tips = tools.evaluate("""JSON.stringify([...document.querySelectorAll('.tabulator-tooltip')].map(t =>
                ({text: t.textContent, html: t.innerHTML, elements: t.querySelectorAll('*').length})))""")
            columns.append({"field": field, "tooltips": json.loads(tips or "[]")})
        ran = tools.evaluate("JSON.stringify({title: document.title, pwned: window.__pwned === true})")
        print(json.dumps({"state": state, "columns": columns, "script": json.loads(ran or "{}")}))
    finally:
        browser.kill()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
