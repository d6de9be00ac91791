#!/usr/bin/env python3
"""continuity-bench shim: LangChain `ChatOpenAI(...).with_fallbacks([ChatOpenAI(...)])`.

Failover as an application does it with LangChain: two ChatOpenAI models,
one per upstream, chained with `Runnable.with_fallbacks`, built once at
start-up. Every request converts the whole OpenAI `messages` history to
LangChain messages (`convert_to_messages`) and calls `invoke` (or `stream`
when the request has stream: true). The shim adds no retry, timeout, cache
or failover of its own: LangChain decides (with_fallbacks catches every
Exception of the primary; each ChatOpenAI's OpenAI client keeps its SDK
defaults, max_retries=2 and timeout 600 s, unless the env vars below set them).

Environment:
  SHIM_PORT (8101)                          port on 127.0.0.1
  SHIM_PRIMARY_URL, SHIM_FALLBACK_URL       base URLs, e.g. http://127.0.0.1:9001/v1 (required)
  SHIM_PRIMARY_MODEL (continuity-sim), SHIM_FALLBACK_MODEL (continuity-sim-fallback)
  SHIM_API_KEY (sk-local-dummy)
  SHIM_{PRIMARY,FALLBACK}_MAX_RETRIES       ChatOpenAI(max_retries=...) when set
  SHIM_{PRIMARY,FALLBACK}_TIMEOUT           ChatOpenAI(timeout=...) in seconds when set

POST /v1/chat/completions -> chain.invoke / chain.stream; the AIMessage as a
chat.completion (or SSE chunks ending with `data: [DONE]`). An exception ->
its HTTP status when it carries one (openai.APIStatusError, which LangChain
re-raises), 504 for openai.APITimeoutError, else 502; body
{"error": {"type": <exception class>, ...}}. GET /health -> 200 (the shim only).
"""
import itertools
import json
import os
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
from langchain_core.messages import convert_to_messages, convert_to_openai_messages
from langchain_openai import ChatOpenAI


def chat_model(prefix, default_model):
    kw = {}
    if os.environ.get(f"{prefix}_MAX_RETRIES"):
        kw["max_retries"] = int(os.environ[f"{prefix}_MAX_RETRIES"])
    if os.environ.get(f"{prefix}_TIMEOUT"):
        kw["timeout"] = float(os.environ[f"{prefix}_TIMEOUT"])
    return ChatOpenAI(
        base_url=os.environ[f"{prefix}_URL"],
        api_key=os.environ.get("SHIM_API_KEY", "sk-local-dummy"),
        model=os.environ.get(f"{prefix}_MODEL", default_model),
        **kw,
    )


PRIMARY = chat_model("SHIM_PRIMARY", "continuity-sim")
FALLBACK = chat_model("SHIM_FALLBACK", "continuity-sim-fallback")
CHAIN = PRIMARY.with_fallbacks([FALLBACK])
# Request fields passed as call kwargs (they reach the OpenAI payload); any
# other field goes to `extra_body`. `model` is the shim's, never the client's.
KNOWN = {
    "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "user",
    "stop", "response_format", "presence_penalty", "frequency_penalty", "n",
    "logit_bias", "logprobs", "top_logprobs", "tools", "tool_choice",
    "parallel_tool_calls", "reasoning_effort", "metadata", "service_tier",
}


def error_body(exc):
    """(status, body) for an exception raised by the chain."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = 504 if isinstance(exc, openai.APITimeoutError) else 502
    upstream = getattr(exc, "body", None)
    code = upstream.get("code") if isinstance(upstream, dict) else None
    # code first: a client that shows only the start of the body still sees it
    err = {"code": code, "type": type(exc).__name__, "message": str(exc), "shim": "langchain-python"}
    if isinstance(upstream, dict):
        err["upstream"] = upstream
    return status, {"error": err}


def usage(msg):
    u = getattr(msg, "usage_metadata", None)
    if not u:
        return None
    return {"prompt_tokens": u["input_tokens"], "completion_tokens": u["output_tokens"],
            "total_tokens": u["total_tokens"]}


def completion(msg):
    meta = msg.response_metadata
    out = {
        "id": meta.get("id") or msg.id or f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": meta.get("model_name", ""),
        "choices": [{"index": 0, "message": convert_to_openai_messages(msg),
                     "finish_reason": meta.get("finish_reason")}],
    }
    if usage(msg):
        out["usage"] = usage(msg)
    return out


def chunk_event(cid, model, delta=None, finish=None, usage_block=None):
    obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
           "choices": [] if usage_block else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if usage_block:
        obj["usage"] = usage_block
    return f"data: {json.dumps(obj)}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY on the client's connection: the handler writes the headers
    # and the body in two sends, and with Nagle's algorithm the body waits
    # for the client's delayed ACK of the headers, about 40 ms a request on
    # a reused connection, which is the shim's cost, not the SDK's.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
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
            self.send_json(200, {"status": "ok", "shim": "langchain-python"})
        else:
            self.send_json(404, {"error": {"message": "not found", "type": "NotFound"}})

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "not found", "type": "NotFound"}})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            messages = convert_to_messages(req.get("messages", []))
        except Exception as exc:  # noqa: BLE001 - a request LangChain cannot convert
            return self.send_json(400, {"error": {"message": str(exc), "type": type(exc).__name__}})
        kwargs = {k: v for k, v in req.items() if k in KNOWN}
        extra = {k: v for k, v in req.items()
                 if k not in KNOWN | {"model", "messages", "stream", "stream_options"}}
        if extra:
            kwargs["extra_body"] = extra
        if not req.get("stream"):
            try:
                msg = CHAIN.invoke(messages, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every error becomes an HTTP answer
                return self.send_json(*error_body(exc))
            return self.send_json(200, completion(msg))
        if (req.get("stream_options") or {}).get("include_usage"):
            kwargs["stream_usage"] = True
        try:
            chunks = CHAIN.stream(messages, **kwargs)
            first = next(chunks)  # with_fallbacks switches only before the first chunk
        except StopIteration:
            first = None
        except Exception as exc:  # noqa: BLE001
            return self.send_json(*error_body(exc))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        cid, model, finish, usage_block = f"chatcmpl-{uuid.uuid4().hex}", "", None, None
        try:
            for chunk in itertools.chain([first] if first is not None else [], chunks):
                meta = chunk.response_metadata or {}
                model = meta.get("model_name") or model
                finish = meta.get("finish_reason") or finish
                usage_block = usage(chunk) or usage_block
                if chunk.content:
                    self.wfile.write(chunk_event(cid, model, {"role": "assistant", "content": chunk.content}))
            self.wfile.write(chunk_event(cid, model, {}, finish))  # None if the SDK gave none
            if usage_block:
                self.wfile.write(chunk_event(cid, model, usage_block=usage_block))
            self.wfile.write(b"data: [DONE]\n\n")
        except Exception as exc:  # noqa: BLE001 - broken mid-stream: an error event, no [DONE]
            try:
                self.wfile.write(f"data: {json.dumps(error_body(exc)[1])}\n\n".encode())
            except OSError:
                pass


if __name__ == "__main__":
    ThreadingHTTPServer.daemon_threads = True
    # socketserver listens with a backlog of 5: 64 clients connecting at
    # once overflow it, and a dropped SYN is retried after 1, 3, 7, 15 s...
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("SHIM_PORT", "8101"))), Handler)
    print(f"langchain-python shim on http://127.0.0.1:{server.server_port}: "
          f"{PRIMARY.openai_api_base} -> fallback {FALLBACK.openai_api_base}", flush=True)
    server.serve_forever()
