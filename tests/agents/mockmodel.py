# SPDX-License-Identifier: Apache-2.0
"""A scripted model on 127.0.0.1, the part every API dialect shares.

The server answers whatever a dialect module (mock_anthropic, mock_openai,
mock_gemini) makes of a request. A test gives it a script: for each
conversation, found by a marker word in its first user message, the tool
calls to make, one per model turn, then a closing text. Which turn a
request asks for is read from the request itself (how many assistant turns
its history holds), so retries and requests made in parallel (subagents)
get the same answer. Requests without a known marker (titles, summaries,
quota probes) get a short text.

Every request body is kept, and every tool result the agent sent back is
recorded by the id of the call it answers, which is what the tests read:
the text the agent reported to the model.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Call:
    """One tool call the model makes: an id unique in the run, the agent's
    tool name and its arguments (a dict, or a string for freeform tools)."""

    def __init__(self, call_id, name, args):
        self.id = call_id
        self.name = name
        self.args = args

    def __repr__(self):
        return "Call(%r, %r, %r)" % (self.id, self.name, self.args)


class Script:
    def __init__(self):
        self.conversations = {}   # marker -> [Call]

    def add(self, marker, calls):
        self.conversations[marker] = list(calls)

    def find(self, first_user_text):
        for marker, calls in self.conversations.items():
            if marker in first_user_text:
                return marker, calls
        return None, None


class MockModel:
    """dialect: a module with handle(mock, handler, path, body) -> bool."""

    def __init__(self, dialect, script):
        self.dialect = dialect
        self.script = script
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.requests = []        # (method, path, body, seconds since start)
        self.results = {}         # call id -> text the agent sent back
        self.unknown = []         # paths no dialect answered
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if self.headers.get("Content-Encoding") == "gzip":
                    import gzip
                    raw = gzip.decompress(raw)
                elif self.headers.get("Content-Encoding") == "zstd":
                    return None
                try:
                    return json.loads(raw) if raw else {}
                except ValueError:
                    return {"_raw": raw.decode("utf-8", "replace")}

            def _dispatch(self, method):
                body = self._body() if method == "POST" else {}
                with mock.lock:
                    mock.requests.append((method, self.path, body,
                                          round(time.monotonic() - mock.started, 3)))
                if not mock.dialect.handle(mock, self, method, self.path, body):
                    with mock.lock:
                        mock.unknown.append((method, self.path))
                    self.send_json(404, {"error": {"message": "not here: " + self.path}})

            def do_POST(self):
                self._dispatch("POST")

            def do_GET(self):
                self._dispatch("GET")

            def do_CONNECT(self):
                # A client that honours HTTPS_PROXY pointed here: a request
                # meant for another host. Kept, and refused.
                with mock.lock:
                    mock.requests.append(("CONNECT", self.path, {},
                                          round(time.monotonic() - mock.started, 3)))
                    mock.unknown.append(("CONNECT", self.path))
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self):
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def send_json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_sse(self, events):
                """events: (event name or None, JSON object) pairs."""
                out = []
                for name, obj in events:
                    if name:
                        out.append("event: %s\n" % name)
                    out.append("data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj)))
                data = "".join(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def next_call(self, first_user_text, assistant_turns):
        """The call for this turn of the conversation, or None (close it)
        and whether the conversation is a scripted one."""
        marker, calls = self.script.find(first_user_text or "")
        if calls is None:
            return None, False
        if assistant_turns < len(calls):
            return calls[assistant_turns], True
        return None, True

    def record(self, call_id, text):
        with self.lock:
            self.results.setdefault(call_id, text)
