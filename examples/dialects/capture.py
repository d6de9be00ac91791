"""A tiny logging reverse proxy: every request it receives is appended to a
JSON-lines file (path, the headers that matter, the body) and forwarded to
the upstream; the upstream's answer (a stream included, buffered) goes back
unchanged. Used by check_anthropic.sh to capture what the reference
`history` proxy sends to an Anthropic fallback.

Usage: capture.py LISTEN_PORT UPSTREAM_BASE_URL OUT.jsonl
"""

import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KEPT_HEADERS = ("content-type", "anthropic-version", "anthropic-beta")


def main() -> None:
    port, upstream, out_path = int(sys.argv[1]), sys.argv[2].rstrip("/"), sys.argv[3]
    lock = threading.Lock()
    out = open(out_path, "a", encoding="utf-8")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"__unparsable__": raw.decode("utf-8", "replace")}
            headers = {k: v for k, v in self.headers.items() if k.lower() in KEPT_HEADERS}
            with lock:
                out.write(json.dumps({"path": self.path, "headers": headers, "body": body}) + "\n")
                out.flush()
            forward = urllib.request.Request(upstream + self.path, data=raw, method="POST")
            for name, value in self.headers.items():
                if name.lower() not in ("host", "content-length", "connection"):
                    forward.add_header(name, value)
            try:
                with urllib.request.urlopen(forward, timeout=60) as r:
                    status, rheaders, payload = r.status, r.headers, r.read()
            except urllib.error.HTTPError as e:
                status, rheaders, payload = e.code, e.headers, e.read()
            except OSError as e:  # upstream gone or timed out
                status, rheaders, payload = 502, {}, str(e).encode()
            self.send_response(status)
            self.send_header("content-type", rheaders.get("content-type", "application/json"))
            if "retry-after" in rheaders:
                self.send_header("retry-after", rheaders["retry-after"])
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
