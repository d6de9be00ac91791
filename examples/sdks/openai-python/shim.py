#!/usr/bin/env python3
"""continuity-bench shim: the OpenAI Python SDK with its default retries and NO fallback.

The baseline an application gets for free: one `openai.OpenAI` client on the
primary, constructed once at start-up as an application would, called with
the whole `messages` history of each request. No fallback, and no retry,
timeout or cache of the shim's own: the SDK's defaults (max_retries=2,
timeout 600 s, connect 5 s) unless SHIM_PRIMARY_MAX_RETRIES or
SHIM_PRIMARY_TIMEOUT is set.

Environment:
  SHIM_PORT (8103)          port on 127.0.0.1
  SHIM_PRIMARY_URL          base URL, e.g. http://127.0.0.1:9001/v1 (required)
  SHIM_PRIMARY_MODEL        model id sent (continuity-sim)
  SHIM_API_KEY              dummy key (sk-local-dummy)
  SHIM_PRIMARY_MAX_RETRIES  passed to OpenAI(max_retries=...) when set
  SHIM_PRIMARY_TIMEOUT      seconds, passed to OpenAI(timeout=...) when set

POST /v1/chat/completions -> client.chat.completions.create(...); the answer as
chat.completion JSON, or as SSE ending with `data: [DONE]` when stream is true.
An SDK exception -> its HTTP status (APIStatusError), 504 (APITimeoutError) or
502 (anything else), body {"error": {"type": <exception class>, ...}}.
GET /health -> 200 {"status": "ok"} (liveness of the shim only).
"""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai


def client_kwargs(prefix):
    kw = {}
    if os.environ.get(f"{prefix}_MAX_RETRIES"):
        kw["max_retries"] = int(os.environ[f"{prefix}_MAX_RETRIES"])
    if os.environ.get(f"{prefix}_TIMEOUT"):
        kw["timeout"] = float(os.environ[f"{prefix}_TIMEOUT"])
    return kw


CLIENT = openai.OpenAI(
    base_url=os.environ["SHIM_PRIMARY_URL"],
    api_key=os.environ.get("SHIM_API_KEY", "sk-local-dummy"),
    **client_kwargs("SHIM_PRIMARY"),
)
MODEL = os.environ.get("SHIM_PRIMARY_MODEL", "continuity-sim")
# Keyword arguments of chat.completions.create; any other field of the request
# goes to the SDK's `extra_body`. `model` is the shim's, never the client's.
KNOWN = {
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "user",
    "stop", "response_format", "presence_penalty", "frequency_penalty", "n",
    "logit_bias", "logprobs", "top_logprobs", "tools", "tool_choice",
    "parallel_tool_calls", "stream_options", "reasoning_effort", "metadata",
    "service_tier", "store", "modalities", "prediction", "audio",
}


def error_body(exc):
    """(status, body) for an SDK exception."""
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
    elif isinstance(exc, openai.APITimeoutError):
        status = 504
    else:
        status = 502
    upstream = getattr(exc, "body", None)
    code = upstream.get("code") if isinstance(upstream, dict) else None
    # code first: a client that shows only the start of the body still sees it
    err = {"code": code, "type": type(exc).__name__, "message": str(exc), "shim": "openai-python"}
    if isinstance(upstream, dict):
        err["upstream"] = upstream
    return status, {"error": err}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY on the client's connection: the handler writes the headers
    # and the body in two sends, and with Nagle's algorithm the body waits
    # for the client's delayed ACK of the headers, about 40 ms a request on
    # a reused connection, which is the shim's cost, not the SDK's.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # one line per request on stderr
        pass

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path in ("/health", "/v1/health"):
            self.send_json(200, {"status": "ok", "shim": "openai-python"})
        else:
            self.send_json(404, {"error": {"message": "not found", "type": "NotFound"}})

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "not found", "type": "NotFound"}})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError as exc:
            return self.send_json(400, {"error": {"message": str(exc), "type": type(exc).__name__}})
        kwargs = {k: v for k, v in req.items() if k in KNOWN}
        extra = {k: v for k, v in req.items() if k not in KNOWN | {"model", "messages", "stream"}}
        if extra:
            kwargs["extra_body"] = extra
        stream = bool(req.get("stream"))
        try:
            result = CLIENT.chat.completions.create(
                model=MODEL, messages=req.get("messages", []), stream=stream, **kwargs
            )
            if not stream:
                return self.send_json(200, result.model_dump(exclude_unset=True))
            chunks = iter(result)
            first = next(chunks, None)  # headers wait for the first chunk
        except Exception as exc:  # noqa: BLE001 - every SDK error becomes an HTTP answer
            return self.send_json(*error_body(exc))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            if first is not None:
                self.wfile.write(f"data: {first.model_dump_json(exclude_unset=True)}\n\n".encode())
            for chunk in chunks:
                self.wfile.write(f"data: {chunk.model_dump_json(exclude_unset=True)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
        except Exception as exc:  # noqa: BLE001 - a stream broken mid-way: an error event, no [DONE]
            _, body = error_body(exc)
            try:
                self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
            except OSError:
                pass


if __name__ == "__main__":
    ThreadingHTTPServer.daemon_threads = True
    # socketserver listens with a backlog of 5: 64 clients connecting at
    # once overflow it, and a dropped SYN is retried after 1, 3, 7, 15 s...
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("SHIM_PORT", "8103"))), Handler)
    print(f"openai-python shim on http://127.0.0.1:{server.server_port} -> {CLIENT.base_url}", flush=True)
    server.serve_forever()
