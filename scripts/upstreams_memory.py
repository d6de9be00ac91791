#!/usr/bin/env python3
"""The upstreams' memory under 30 MB request bodies: 20 requests whose
`model` string is 30 MB, sent with a Content-Length (refused from the
header when over the body cap), then 20 sent chunked, without a length
(read up to the cap, then refused). Prints the answers and the process's
VmRSS / VmHWM (peak) from /proc after each phase.

Usage: scripts/upstreams_memory.py UPSTREAMS_PID UPSTREAM_URL [REQUESTS]

Example (the release binary, default 8 MiB cap, then raised past 30 MB):
  continuity-bench upstreams --primary 127.0.0.1:19301 --fallback 127.0.0.1:19302 &
  scripts/upstreams_memory.py $! http://127.0.0.1:19301
  continuity-bench upstreams --max-body-bytes 67108864 ... &
"""
import json, socket, sys, urllib.parse


def rss(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        k, v = line.split(":", 1)
        fields[k] = v.strip()
    return f"VmRSS {fields['VmRSS']}, VmHWM {fields['VmHWM']}"


def post(url, body, chunked):
    """POST with `Expect: 100-continue`, as curl does for large bodies: a
    server that refuses from the headers answers at once, and the body is
    never sent. Returns the status line's code and the start of the reply
    (or how the connection ended)."""
    u = urllib.parse.urlsplit(url)
    s = socket.create_connection((u.hostname, u.port), timeout=300)
    length = "transfer-encoding: chunked" if chunked else f"content-length: {len(body)}"
    s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nhost: {u.netloc}\r\n"
              f"content-type: application/json\r\n{length}\r\n"
              "expect: 100-continue\r\nconnection: close\r\n\r\n".encode())
    reply = b""
    try:
        first = s.recv(65536)
        if first.startswith(b"HTTP/1.1 100"):
            step = 1 << 20
            for i in range(0, len(body), step):
                piece = body[i:i + step]
                s.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                s.sendall(b"0\r\n\r\n")
        else:
            reply = first
        while True:
            more = s.recv(65536)
            if not more:
                break
            reply += more
    except OSError as e:
        if not reply:
            return None, f"connection ended: {e}"
    finally:
        s.close()
    status = reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/") else None
    return status, reply.split(b"\r\n\r\n", 1)[-1][:200].decode(errors="replace")


if __name__ == "__main__":
    pid, url = sys.argv[1:3]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    print("before:", rss(pid))
    model = "m" * (30 * 1024 * 1024)
    body = json.dumps({"model": model, "messages": "not a list"}).encode()
    for chunked in (False, True):
        answers = [post(url, body, chunked) for _ in range(n)]
        how = "chunked" if chunked else "with Content-Length"
        print(f"{n} x {len(body) / 2**20:.1f} MiB {how}: {answers[0][0]} {answers[0][1]!r}")
        print("  statuses:", sorted({a[0] for a in answers}, key=str), "after:", rss(pid))
