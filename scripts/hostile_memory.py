#!/usr/bin/env python3
"""Memory under hostile requests: 20 requests with a 30 MB `model` string
to `upstreams` (its RSS afterwards), and one 32 MiB request of tiny
messages to a `history` proxy whose primary fails (its peak RSS).

Usage: scripts/hostile_memory.py UPSTREAMS_PID PRIMARY_URL PROXY_PID PROXY_URL [MESSAGES]

And hostile upstreams and clients against the proxy's per-request memory
budget (issue 40); each scenario starts its own proxy from BIN and prints
its peak RSS (VmHWM) and what the client got:

    scripts/hostile_memory.py streams BIN [SCENARIO ...]

Scenarios: comments (1.5 GB of `: ping` before the first token), long
(a 1.2 GB streamed answer, then cut), anthropic (a 400 MB line from an
Anthropic-dialect fallback), stopped (20 streamed clients that read
nothing; the proxy runs with --write-timeout 10s when BIN has the flag).
"""
import json, os, sys

def rss(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        k, v = line.split(":", 1)
        fields[k] = v.strip()
    return fields["VmRSS"], fields["VmHWM"]

# POST with `Expect: 100-continue`, as curl does for large bodies, so a
# refusal from the headers is read, not lost to a broken pipe.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from upstreams_memory import post as expect_post


def post(url, body):
    return expect_post(url, body, False)

# ---------------------------------------------------------------------------
# `streams`: hostile upstreams and clients against the proxy's budget.
import socket, subprocess, threading, time

GB = 1 << 30
MB = 1 << 20


def chunk(content):
    return ("data: " + json.dumps({"id": "s", "object": "chat.completion.chunk", "created": 0,
            "model": "m", "choices": [{"index": 0, "delta": {"content": content},
            "finish_reason": None}]}) + "\n\n").encode()


DONE = b"data: [DONE]\n\n"
SSE_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"connection: close\r\n\r\n")


def answer_ok(conn):
    conn.sendall(SSE_HEAD + chunk("Your sister is Oriane.") + DONE)


def comments(conn):
    """1.5 GB of `: ping` comments before the first token, then the answer."""
    block = b": ping\n\n" * (MB // 8)
    for _ in range(1536):
        conn.sendall(block)
    conn.sendall(chunk("late") + DONE)


def long_answer(conn):
    """A 1.2 GB streamed answer, then the connection closes (a cut)."""
    piece = chunk("y" * 65536)
    for _ in range((1200 * MB) // len(piece)):
        conn.sendall(piece)


def endless(conn):
    """Content without end, until the reader goes."""
    piece = chunk("w" * 4096)
    while True:
        conn.sendall(piece)


def status_503(conn):
    body = b'{"error":{"message":"primary down (simulated)","type":"api_error"}}'
    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                 b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))


def anthropic_line(conn):
    """An Anthropic stream whose text delta is one 400 MB line."""
    conn.sendall(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
                 b"\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"")
    block = b"z" * MB
    for _ in range(400):
        conn.sendall(block)


def serve(behaviour):
    """A listener on 127.0.0.1 answering every POST with `behaviour` (after
    a 200 SSE head unless it writes its own), GET /v1/models with a list."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)

    def one(conn):
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                more = conn.recv(65536)
                if not more:
                    return
                head += more
            top, _, rest = head.partition(b"\r\n\r\n")
            length = 0
            for line in top.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v)
            while len(rest) < length:
                rest += conn.recv(65536)
            if top.startswith(b"GET"):
                body = b'{"object":"list","data":[]}'
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
                             % (len(body), body))
            else:
                if behaviour not in (status_503, answer_ok):
                    conn.sendall(SSE_HEAD)
                behaviour(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def loop():
        while True:
            conn, _ = ls.accept()
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return f"http://127.0.0.1:{ls.getsockname()[1]}"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_proxy(bin_path, primary, fallback, extra):
    port = free_port()
    args = [bin_path, "proxy", "--mode", "history", "--listen", f"127.0.0.1:{port}",
            "--primary", primary, "--fallback", fallback] + extra
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the proxy did not listen: {proc.stderr.read().decode()[:400]}")


def request_bytes(port):
    body = json.dumps({"model": "m", "stream": True, "messages": [
        {"role": "user", "content": "My sister's name is Oriane."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "What is my sister called?"}]}).encode()
    return (f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


def stream_client(port, timeout=600):
    """Sends a streamed request and reads the reply to its end; returns
    (status line, bytes read, the last 300 bytes, how it ended)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(request_bytes(port))
    total, head, tail, how = 0, b"", b"", "closed"
    try:
        while True:
            more = s.recv(1 << 20)
            if not more:
                break
            if len(head) < 200:
                head += more[:200]
            total += len(more)
            tail = (tail + more)[-300:]
    except OSError as e:
        how = f"error: {e}"
    s.close()
    return head.split(b"\r\n")[0].decode(errors="replace"), total, tail, how


def metric(port, name):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
    data = b""
    while True:
        more = s.recv(65536)
        if not more:
            break
        data += more
    for line in data.decode(errors="replace").splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return line
    return f"{name}: absent"


def kib(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def has_flag(bin_path, flag):
    out = subprocess.run([bin_path, "proxy", "--help"], capture_output=True, text=True).stdout
    return flag in out


def scenario(bin_path, name):
    primary, fallback, extra = {
        "comments": (serve(comments), serve(answer_ok), []),
        "long": (serve(long_answer), serve(answer_ok), []),
        "anthropic": (serve(status_503), serve(anthropic_line), ["--fallback-dialect", "anthropic"]),
        "stopped": (serve(endless), serve(answer_ok), []),
    }[name]
    if name == "stopped" and has_flag(bin_path, "--write-timeout"):
        extra = extra + ["--write-timeout", "10s"]
    proc, port = start_proxy(bin_path, primary, fallback, extra)
    began = time.monotonic()
    try:
        if name != "stopped":
            status, total, tail, how = stream_client(port)
            print(f"{name}: client got {status!r}, {total / MB:.1f} MiB, {how}, "
                  f"in {time.monotonic() - began:.1f} s; ends with {tail[-160:]!r}")
        else:
            clients = []
            for _ in range(20):
                s = socket.create_connection(("127.0.0.1", port))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(request_bytes(port))
                clients.append(s)  # and never read
            peak_seen = 0
            t_closed = None
            while time.monotonic() - began < 90:
                time.sleep(1)
                rss_now = kib(proc.pid, "VmRSS")
                peak_seen = max(peak_seen, rss_now)
                line = metric(port, "continuity_proxy_connections_write_timeouts_total")
                if t_closed is None and line.endswith(" 20"):
                    t_closed = time.monotonic() - began
                    break
            time.sleep(2)
            print(f"stopped: 20 clients that read nothing; {line}; "
                  f"all disconnected after {t_closed if t_closed is None else round(t_closed, 1)} s; "
                  f"RSS then {kib(proc.pid, 'VmRSS') / 1024:.0f} MB "
                  f"(highest sampled {peak_seen / 1024:.0f} MB); "
                  f"{metric(port, 'continuity_proxy_connections_open')}")
            for s in clients:
                s.close()
        print(f"{name}: proxy peak RSS (VmHWM) {kib(proc.pid, 'VmHWM') / 1024:.0f} MB")
    finally:
        proc.kill()
        proc.wait()


def main(argv):
    bin_path, names = argv[0], argv[1:] or ["comments", "long", "anthropic", "stopped"]
    for name in names:
        scenario(bin_path, name)
    return 0


if len(sys.argv) > 1 and sys.argv[1] == "streams":
    sys.exit(main(sys.argv[2:]))

up_pid, up_url, px_pid, px_url = sys.argv[1:5]
n = int(sys.argv[5]) if len(sys.argv) > 5 else 1_160_000
print("upstreams before:", rss(up_pid))
model = "m" * (30 * 1024 * 1024)
body = json.dumps({"model": model, "messages": "not a list"}).encode()
statuses = [post(up_url, body)[0] for _ in range(20)]
print("upstreams 20 x 30 MB model:", statuses[:3], "... RSS, peak:", rss(up_pid))
print("proxy before:", rss(px_pid))
msg = '{"role":"user","content":""}'
body = ('{"model":"m","messages":[' + ",".join([msg] * n) + "]}").encode()
print(f"request: {n} messages, {len(body) / 2**20:.1f} MiB")
status, reply = post(px_url, body)
print("proxy answered", status, reply[:160])
print("proxy RSS, peak:", rss(px_pid))
