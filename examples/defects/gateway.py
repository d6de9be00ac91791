#!/usr/bin/env python3
"""A small, well-behaved OpenAI-compatible failover gateway (stdlib only).

It exists to test continuity-bench's `semantics` catalogue from outside the
project: this file is the good behaviour, and each `defect_*.py` next to it
subclasses it and breaks exactly ONE thing. A defective gateway must then
fail the case(s) about its defect and no other.

Behaviour (the decision tree the catalogue follows):

* `POST /v1/chat/completions` goes to the primary upstream with the client's
  model; on a transient error it goes to the fallback upstream with the
  fallback's own model id, `max_tokens` supplied (1024 when the client sent
  none) and `enable_thinking: false`.
* Transient: 5xx, 404, 408, 429, a connection error, a timeout, a body cut
  off, a stream cut, stalled or ended without a finish. Permanent (passed
  through as is, no failover): every other 4xx. A 400
  `context_length_exceeded` goes once to a larger-context model on the
  fallback upstream (`continuity-sim-long`).
* Same-route retry: at most one. A 5xx is retried once after 250 ms; a 429
  with `Retry-After` of at most 5 s is retried once after waiting it out; a
  429 without `Retry-After`, a timeout and a connection error fail over at
  once (a silent route is not retried).
* Time limits per attempt: 2 s for the headers and between two reads of a
  stream (which bounds the first token and a stall), 30 s in all.
* Streams are stored and forwarded: an upstream stream is read to its end
  and checked (a `[DONE]`, or a clean end after a `finish_reason`) before
  the client gets it, so a broken stream can still fail over without a
  seam. A chunk that is not JSON is dropped.
* `GET /health` lists both upstreams' models and answers 503 naming the
  upstream that fails.

Run: python3 gateway.py --port 8801 --primary 9201 --fallback 9202
"""

import argparse
import http.client
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FALLBACK_MODEL = "continuity-sim-fallback"
LONG_CONTEXT_MODEL = "continuity-sim-long"
FALLBACK_MAX_TOKENS = 1024
READ_TIMEOUT_S = 2.0
ATTEMPT_DEADLINE_S = 30.0
RETRY_5XX_AFTER_S = 0.25
MAX_RETRY_AFTER_S = 5.0
PATH = "/v1/chat/completions"


class Result:
    """What one upstream attempt gave: a complete answer, or a failure."""

    def __init__(self, status, headers=None, body=b"", error=None, events=None):
        self.status = status  # HTTP status, or None (no response)
        self.headers = headers or {}
        self.body = body  # the whole body (JSON) when not streamed
        self.error = error  # why it is unusable, or None
        self.events = events  # the `data:` payloads of a stream, [DONE] excluded

    @property
    def ok(self):
        return self.error is None and self.status is not None and 200 <= self.status < 300

    def retry_after(self):
        value = self.headers.get("retry-after")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None

    def error_code(self):
        try:
            error = json.loads(self.body).get("error") or {}
            return error.get("code") or error.get("type")
        except (ValueError, AttributeError):
            return None


class Gateway:
    """The routing policy; each defect overrides one method."""

    def __init__(self, primary_port, fallback_port, host="127.0.0.1"):
        self.host = host
        self.primary = primary_port
        self.fallback = fallback_port

    # --- the decisions -------------------------------------------------
    def permanent(self, result):
        """A status another provider does not fix: pass it through."""
        s = result.status
        return s is not None and 400 <= s < 500 and s not in (404, 408, 429)

    def retry_delays(self, result):
        """Waits before each same-route retry after `result` (empty: none)."""
        if result.status == 429:
            after = result.retry_after()
            return [after] if after is not None and after <= MAX_RETRY_AFTER_S else []
        if result.status is not None and result.status >= 500:
            return [RETRY_5XX_AFTER_S]
        return []

    def stream_complete(self, saw_done, saw_finish, cut):
        """Whether a stream that ended this way is a whole answer."""
        return saw_done or (saw_finish and not cut)

    def wait_for_done(self, started):
        """Called when a stream ended cleanly without `[DONE]`."""
        return None

    # --- routing -------------------------------------------------------
    def handle(self, request):
        """The answer to one client request: (status, headers, body)."""
        stream = bool(request.get("stream"))
        result = self.attempt(self.primary, request, stream)
        for delay in self.retry_delays(result) if not result.ok else []:
            time.sleep(delay)
            result = self.attempt(self.primary, request, stream)
            if result.ok:
                break
        if result.ok:
            return self.reply(result, stream)
        if result.status == 400 and result.error_code() == "context_length_exceeded":
            longer = self.attempt(self.fallback, self.for_fallback(request, LONG_CONTEXT_MODEL), stream)
            return self.reply(longer if longer.ok else result, stream)
        if self.permanent(result):
            return self.reply(result, stream)
        fallback = self.for_fallback(request, FALLBACK_MODEL)
        last = self.attempt(self.fallback, fallback, stream)
        if not last.ok and last.status == 429 and last.retry_after() is not None:
            time.sleep(min(last.retry_after(), MAX_RETRY_AFTER_S))
            last = self.attempt(self.fallback, fallback, stream)
        return self.reply(last, stream)

    def for_fallback(self, request, model):
        body = dict(request)
        body["model"] = model
        body.setdefault("max_tokens", FALLBACK_MAX_TOKENS)
        body["enable_thinking"] = False
        return body

    def attempt(self, port, request, stream):
        """One request to an upstream, read to its end, never raising."""
        started = time.monotonic()
        conn = http.client.HTTPConnection(self.host, port, timeout=READ_TIMEOUT_S)
        try:
            conn.request("POST", PATH, json.dumps(request).encode(), {"Content-Type": "application/json", "Authorization": "Bearer sk-local-dummy"})
            resp = conn.getresponse()
            headers = {k.lower(): v for k, v in resp.getheaders()}
            if not (200 <= resp.status < 300) or not stream:
                body = resp.read()
                if 200 <= resp.status < 300:
                    json.loads(body)  # a body cut off is not an answer
                return Result(resp.status, headers, body)
            return self.read_stream(resp, headers, started)
        except (OSError, http.client.HTTPException, ValueError) as e:
            return Result(None, error=f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def read_stream(self, resp, headers, started):
        events, saw_done, saw_finish, cut = [], False, False, False
        try:
            while time.monotonic() - started < ATTEMPT_DEADLINE_S:
                line = resp.readline()
                if not line:
                    # The body ended. http.client's readline also returns
                    # b"" when the connection breaks mid-chunk, so an end
                    # before any finish_reason is a cut.
                    cut = not saw_finish
                    break
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    saw_done = True
                    break
                try:
                    chunk = json.loads(data)
                except ValueError:
                    continue  # one malformed event: drop it
                if any(c.get("finish_reason") for c in chunk.get("choices") or []):
                    saw_finish = True
                events.append(data)
        except TimeoutError as e:  # a stall, or no first token
            return Result(None, error=f"stream stalled: {e}")
        except (OSError, http.client.HTTPException):  # the connection broke
            cut = True
        if not saw_done and not cut and saw_finish:
            self.wait_for_done(started)
        if not self.stream_complete(saw_done, saw_finish, cut):
            return Result(None, error="stream ended before the answer was complete")
        return Result(resp.status, headers, events=events)

    def reply(self, result, stream):
        if result.status is None:
            body = json.dumps({"error": {"message": f"no upstream answered: {result.error}", "type": "upstream_error", "code": None}})
            return 502, {"Content-Type": "application/json"}, body.encode()
        if result.events is not None:
            body = b"".join(b"data: " + e + b"\n\n" for e in result.events) + b"data: [DONE]\n\n"
            return result.status, {"Content-Type": "text/event-stream"}, body
        headers = {"Content-Type": result.headers.get("content-type", "application/json")}
        if "retry-after" in result.headers:
            headers["Retry-After"] = result.headers["retry-after"]
        return result.status, headers, result.body

    def health(self):
        states = {}
        for name, port in (("primary", self.primary), ("fallback", self.fallback)):
            conn = http.client.HTTPConnection(self.host, port, timeout=READ_TIMEOUT_S)
            try:
                conn.request("GET", "/v1/models", headers={"Authorization": "Bearer sk-local-dummy"})
                status = conn.getresponse().status
                states[name] = "ok" if 200 <= status < 300 else f"unhealthy: HTTP {status}"
            except (OSError, http.client.HTTPException) as e:
                states[name] = f"unhealthy: {type(e).__name__}"
            finally:
                conn.close()
        healthy = all(v == "ok" for v in states.values())
        states["status"] = "ok" if healthy else "unhealthy"
        return (200 if healthy else 503), states


def handler_for(gateway):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))

        def send(self, status, headers, body):
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path in ("/health", "/healthz"):
                status, states = gateway.health()
                self.send(status, {"Content-Type": "application/json"}, json.dumps(states).encode())
            else:
                self.send(404, {"Content-Type": "application/json"}, b'{"error":{"message":"not found"}}')

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != PATH:
                self.send(404, {"Content-Type": "application/json"}, b'{"error":{"message":"not found"}}')
                return
            try:
                request = json.loads(raw)
            except ValueError:
                self.send(400, {"Content-Type": "application/json"}, b'{"error":{"message":"body is not JSON","type":"invalid_request_error"}}')
                return
            self.send(*gateway.handle(request))

    return Handler


def main(gateway_class=Gateway, description=None):
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="port to listen on (127.0.0.1)")
    parser.add_argument("--primary", type=int, required=True, help="the primary upstream's port")
    parser.add_argument("--fallback", type=int, required=True, help="the fallback upstream's port")
    args = parser.parse_args()
    gateway = gateway_class(args.primary, args.fallback)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler_for(gateway))
    server.daemon_threads = True
    sys.stderr.write(f"{gateway_class.__name__} on 127.0.0.1:{args.port} -> {args.primary}, {args.fallback}\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
