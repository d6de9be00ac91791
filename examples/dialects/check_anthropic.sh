#!/usr/bin/env bash
# The outside check of the Anthropic translation (issue 16): every request
# the reference `history` proxy sends to an Anthropic-dialect fallback during
# a run of the rich dataset, plain and streamed, is captured by a logging
# reverse proxy in front of the simulated fallback (capture.py) and then
# validated against a definition the project does not share: the request
# types of Anthropic's official Python SDK, checked by pydantic in strict
# mode with unknown keys refused, plus the API's documented rules a type
# cannot express (validate.py). Offline apart from the first pip install;
# bounded (each run under `timeout`); every process it starts is stopped on
# exit and its scratch directory removed.
#
# Usage: examples/dialects/check_anthropic.sh   (from anywhere)
# Exit status 0 when every request validates and the validator's controls
# behave; 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=examples/dialects
VENV=$HERE/.venv
BIN=${CONTINUITY_BENCH:-target/debug/continuity-bench}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}

if [ ! -x "$BIN" ]; then
    cargo build --quiet
fi
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check 'anthropic>=0.40,<3' 'pydantic>=2,<3'

WORK=$(mktemp -d)
PIDS=()
stop() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
cleanup() {
    stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for_port() {
    local i
    for i in $(seq 1 50); do
        if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    return 1
}

for mode in plain stream; do
    primary=$(free_port)
    fallback=$(free_port)
    capture=$(free_port)
    gateway=$(free_port)
    "$VENV/bin/python" "$HERE/capture.py" "$capture" "http://127.0.0.1:$fallback" "$WORK/$mode.jsonl" &
    PIDS+=($!)
    "$BIN" proxy --mode history --listen "127.0.0.1:$gateway" \
        --primary "http://127.0.0.1:$primary" --fallback "http://127.0.0.1:$capture" \
        --fallback-dialect anthropic --attempt-timeout 2s 2>"$WORK/proxy-$mode.log" &
    PIDS+=($!)
    wait_for_port "$capture"
    wait_for_port "$gateway"
    flags=()
    if [ "$mode" = stream ]; then
        flags=(--stream)
    fi
    echo "== run ($mode): history proxy -> capture -> Anthropic-dialect fallback"
    timeout "$RUN_TIMEOUT" "$BIN" run --quiet --no-builtin \
        --gateway "history-anthropic=http://127.0.0.1:$gateway" \
        --upstream-ports "history-anthropic=$primary,$fallback" \
        --dataset datasets/continuity-rich-150.jsonl --faults fault_profiles/paper.toml \
        --latency instant --out "$WORK/report-$mode" "${flags[@]}" >"$WORK/run-$mode.log" 2>&1 ||
        { cat "$WORK/run-$mode.log" >&2; exit 1; }
    "$VENV/bin/python" - "$WORK/report-$mode/summary.json" <<'PY'
import json, sys
s = next(x for x in json.load(open(sys.argv[1]))["systems"] if x["name"] == "history-anthropic")
d = s["fallback_delivery"]
rate = lambda share: "n/a" if share["rate"] is None else f"{100 * share['rate']:.1f} %"
print(f"   CPR {rate(s['cpr'])} of {s['events']} events; reached the fallback: system messages "
      f"{rate(d['system_messages'])}, tool results {rate(d['tool_results'])}, user turns "
      f"{rate(d['user_turns'])}; refused by the fallback: {d['rejected']}")
PY
    stop
done

echo "== validate every captured request"
"$VENV/bin/python" "$HERE/validate.py" "$WORK/plain.jsonl" "$WORK/stream.jsonl"
