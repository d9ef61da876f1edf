"""A small HTTP proxy in front of an S3 server (moto) that adds latency and injects faults,
for the S3 fault tests and the S3 benchmark row.

usage: s3proxy.py <listen-port> <upstream http://host:port>

Behaviour is set at run time with `POST /__proxy` and a JSON body (unset keys keep their value):
  latency_ms       delay added before every forwarded request
  fail_next        the next N requests get 503 SlowDown
  fail_all         every request gets 503 SlowDown
  truncate_next    the next N GET responses with a body are cut at half their Content-Length
  stall_next       the next N GET responses stall for `stall_s` seconds after the headers
  stall_s          seconds of the stall
  deny_puts        PUT requests get 500 InternalError (a failing write)
  deny_put_paths   ... and so do PUTs whose path contains this text ("" = none)
  mutations_left   forward only this many more PUT/POST/DELETE requests, refuse (500) every
                   later one: the server's state is then what a writer killed after that many
                   requests leaves (-1 = no limit; the crash-point tester)
`GET /__proxy` returns the counters: requests, gets, puts, mutations (forwarded), injected.
"""
import http.client
import http.server
import json
import sys
import threading
import time

PORT = int(sys.argv[1])
UPSTREAM = sys.argv[2].split("://", 1)[1]
state = {"latency_ms": 0, "fail_next": 0, "fail_all": False, "truncate_next": 0, "stall_next": 0, "stall_s": 3.0,
         "deny_puts": False, "deny_put_paths": "", "mutations_left": -1}
counters = {"requests": 0, "gets": 0, "puts": 0, "mutations": 0, "injected": 0}
lock = threading.Lock()
local = threading.local()


def upstream():
    conn = getattr(local, "conn", None)
    if conn is None:
        conn = local.conn = http.client.HTTPConnection(UPSTREAM, timeout=60)
    return conn


SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
            b'<Message>Please reduce your request rate.</Message></Error>')
INTERNAL = b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>'


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/xml"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def control(self):
        if self.command == "POST":
            n = int(self.headers.get("Content-Length", "0"))
            with lock:
                state.update(json.loads(self.rfile.read(n) or b"{}"))
                for k in counters:
                    counters[k] = 0
        with lock:
            self.reply(200, json.dumps(counters).encode(), "application/json")

    def forward(self):
        if self.path.startswith("/__proxy"):
            return self.control()
        n = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(n) if n else None
        with lock:
            counters["requests"] += 1
            if self.command in ("GET", "PUT"):
                counters["gets" if self.command == "GET" else "puts"] += 1
            latency = state["latency_ms"] / 1000.0
            fail = state["fail_all"] or state["fail_next"] > 0
            if state["fail_next"] > 0 and not state["fail_all"]:
                state["fail_next"] -= 1
            pattern = state["deny_put_paths"]
            deny = self.command == "PUT" and (state["deny_puts"] or (pattern and pattern in self.path))
            if self.command in ("PUT", "POST", "DELETE") and not fail and not deny:
                if state["mutations_left"] == 0:
                    deny = True
                else:
                    state["mutations_left"] -= 1 if state["mutations_left"] > 0 else 0
                    counters["mutations"] += 1
            if fail or deny:
                counters["injected"] += 1
        if latency:
            time.sleep(latency)
        if fail:
            return self.reply(503, SLOWDOWN)
        if deny:
            return self.reply(500, INTERNAL)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "keep-alive")}
        for attempt in range(2):
            try:
                conn = upstream()
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (http.client.HTTPException, OSError):
                local.conn = None
                if attempt:
                    return self.reply(502, b"upstream unavailable", "text/plain")
        cut = stall = False
        with lock:
            if self.command == "GET" and resp.status in (200, 206) and len(data) > 1:
                if state["truncate_next"] > 0:
                    state["truncate_next"] -= 1
                    cut = True
                    counters["injected"] += 1
                elif state["stall_next"] > 0:
                    state["stall_next"] -= 1
                    stall = True
                    counters["injected"] += 1
            stall_s = state["stall_s"]
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length", "server", "date"):
                self.send_header(k, v)
        # A HEAD response has no body but the Content-Length of the object it describes.
        length = resp.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data))
        self.send_header("Content-Length", length)
        if cut:
            # Promise the whole body, send half, drop the connection.
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.end_headers()
        if stall:
            self.wfile.flush()
            time.sleep(stall_s)
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


Server(("127.0.0.1", PORT), Handler).serve_forever()
