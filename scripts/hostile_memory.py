#!/usr/bin/env python3
"""Memory under hostile requests: 20 requests with a 30 MB `model` string
to `upstreams` (its RSS afterwards), and one 32 MiB request of tiny
messages to a `history` proxy whose primary fails (its peak RSS).

Usage: scripts/hostile_memory.py UPSTREAMS_PID PRIMARY_URL PROXY_PID PROXY_URL [MESSAGES]
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
