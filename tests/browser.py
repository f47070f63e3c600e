"""A real headless Chromium, driven over the DevTools protocol, for page tests.

`open_page(path)` loads a local file in Debian's Chromium (installed by
`setup.sh --tests`) and returns what a test needs to check: the
result of JavaScript expressions, a PNG screenshot, and every script error
and console error the page logged. No Selenium or Playwright: the DevTools
protocol over a WebSocket (websocket-client, already in the lock) is enough.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from typing import List

import websocket

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As the machine's own browser check starts it: no sandbox (root), no GPU,
# and none of the background connections a closed network refuses.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-port=0", "--window-size=1280,900"]


class Page:
  """One page in a fresh Chromium; use as a context manager."""

  def __init__(self, path: str):
    self.path = os.path.abspath(path)
    self.errors: List[str] = []
    self._profile = tempfile.mkdtemp(prefix="chromium-")
    self._next_id = 0

  def __enter__(self) -> "Page":
    self._proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}",
                                   "about:blank"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = self._port()
    targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json").read())
    page = next(t for t in targets if t["type"] == "page")
    self._ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120)
    for domain in ("Runtime", "Log", "Page"):
      self._call(f"{domain}.enable")
    self._call("Page.navigate", url="file://" + self.path)
    self._wait_for("Page.loadEventFired")
    return self

  def __exit__(self, *exc) -> None:
    self._ws.close()
    self._proc.kill()
    self._proc.wait()
    shutil.rmtree(self._profile, ignore_errors=True)

  def evaluate(self, expression: str):
    """The value of a JavaScript expression in the page."""
    result = self._call("Runtime.evaluate", expression=expression, returnByValue=True)
    if "exceptionDetails" in result:
      raise AssertionError(f"{expression!r} threw {result['exceptionDetails']}")
    return result["result"].get("value")

  def screenshot(self, path: str) -> None:
    """A PNG of the whole page, not only the window."""
    height = self.evaluate("document.documentElement.scrollHeight")
    self._call("Emulation.setDeviceMetricsOverride", width=1280, height=int(height),
               deviceScaleFactor=1, mobile=False)
    data = self._call("Page.captureScreenshot", format="png")["data"]
    with open(path, "wb") as f:
      f.write(base64.b64decode(data))

  def _port(self) -> int:
    marker = os.path.join(self._profile, "DevToolsActivePort")
    deadline = time.monotonic() + 120  # a busy machine starts Chromium slowly
    while time.monotonic() < deadline:
      if os.path.exists(marker):
        with open(marker) as f:
          first = f.readline().strip()
        if first:
          return int(first)
      if self._proc.poll() is not None:
        raise RuntimeError(f"{CHROMIUM} exited with status {self._proc.returncode}")
      time.sleep(0.1)
    raise RuntimeError(f"{CHROMIUM} did not open its DevTools port within 120 s")

  def _call(self, method: str, **params) -> dict:
    self._next_id += 1
    self._ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
    while True:
      message = json.loads(self._ws.recv())
      if message.get("id") == self._next_id:
        if "error" in message:
          raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result", {})
      self._note(message)

  def _wait_for(self, event: str) -> None:
    while True:
      message = json.loads(self._ws.recv())
      self._note(message)
      if message.get("method") == event:
        return

  def _note(self, message: dict) -> None:
    """Keeps every script exception and console or log error."""
    method, params = message.get("method"), message.get("params", {})
    if method == "Runtime.exceptionThrown":
      self.errors.append(str(params["exceptionDetails"]))
    elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
      self.errors.append(str(params.get("args")))
    elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
      self.errors.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
