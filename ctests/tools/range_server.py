"""A plain HTTP server (no S3 API) for a directory, honouring single byte ranges
(`Range: bytes=a-b`, answered 206, or 416 past the end), and HEAD (netcdf-c's byte-range
reader asks for the size). Usage: range_server.py PORT DIR
[LOG]; each GET is logged as `path range bytes`. The refs suite reads reference sets and
their targets from it."""
import http.server
import os
import re
import sys

port, root = int(sys.argv[1]), sys.argv[2]
log = open(sys.argv[3], "a", buffering=1) if len(sys.argv) > 3 else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        path = os.path.join(root, self.path.split("?")[0].lstrip("/"))
        self.send_response(200 if os.path.isfile(path) else 404)
        self.send_header("Content-Length", str(os.path.getsize(path)) if os.path.isfile(path) else "0")
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self):
        path = os.path.join(root, self.path.split("?")[0].lstrip("/"))
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(path)
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start, end = 0, size - 1
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        self.send_response(206 if m else 200)
        if m:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if log:
            log.write(f"{self.path} {self.headers.get('Range', '-')} {len(body)}\n")


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
