#!/usr/bin/env python3
"""Opens N idle TCP connections to a server (default 10,000), then sends
one good request and GET /health beside them, and prints how long each
took and what the server's /metrics says about its connections.

Usage: scripts/idle_connections.py http://127.0.0.1:8080 [N]
(the proxy under test with `upstreams` behind it). The script raises its
own soft open-file limit to the hard one.
"""
import json, resource, socket, sys, time, urllib.request

base = sys.argv[1].rstrip("/")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
host, port = base.split("//")[1].split(":")
idle = []
for _ in range(n):
    s = socket.create_connection((host, int(port)))
    idle.append(s)
print(f"{len(idle)} idle connections open")

def timed(req):
    t = time.monotonic()
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
        return r.status, (time.monotonic() - t) * 1000, body

body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]}).encode()
req = urllib.request.Request(base + "/v1/chat/completions", data=body,
                             headers={"content-type": "application/json"})
status, ms, _ = timed(req)
print(f"POST /v1/chat/completions -> {status} in {ms:.0f} ms")
status, ms, _ = timed(base + "/health")
print(f"GET /health -> {status} in {ms:.0f} ms")
status, ms, metrics = timed(base + "/metrics")
for line in metrics.decode().splitlines():
    if line.startswith("proxy_connections"):
        print(line)
for s in idle:
    s.close()
