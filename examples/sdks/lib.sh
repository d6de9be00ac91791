# Shared functions of install.sh, start.sh and check.sh (source it; bash).
#
#   start_shim NAME PORT PRIMARY_URL FALLBACK_URL   start a shim, wait for /health
#   start_upstreams PRIMARY_PORT FALLBACK_PORT PROFILE ATTEMPTS_CSV
#   stop_pid PID [SIGNAL]                           SIGTERM (or SIGNAL), then SIGKILL, bounded
#   stop_all                                        every process started here
#
# Started processes run under setsid (their pid is their process group) and
# are recorded in STARTED_PIDS; stop_all (trap it on EXIT) ends them.
# Environment: SDKS_CACHE (default <this dir>/.cache), START_TIMEOUT (60 s),
# BENCH (the continuity-bench binary; default the repository's
# target/release/continuity-bench, built when missing).

SDKS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SDKS_CACHE="${SDKS_CACHE:-$SDKS_DIR/.cache}"
SDKS_LOGS="$SDKS_CACHE/logs"
START_TIMEOUT="${START_TIMEOUT:-60}"
if [[ -z "${BENCH:-}" ]]; then
    # The repository's release binary, built when missing.
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    BENCH="$repo/target/release/continuity-bench"
    if [[ ! -x "$BENCH" ]]; then
        (cd "$repo" && cargo build --release --locked --quiet) || { echo "lib.sh: cargo build --release failed" >&2; exit 1; }
    fi
fi
SHIMS="langchain-python ai-fallback-node openai-python"
STARTED_PIDS=()

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_http NAME PID URL: until URL answers 2xx, the process exits, or START_TIMEOUT.
wait_http() {
    local name="$1" pid="$2" url="$3" deadline=$((SECONDS + START_TIMEOUT))
    while ((SECONDS < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "$name exited during start-up; last lines of its log:"
            tail -n 20 "$SDKS_LOGS/$name.log" >&2 || true
            return 1
        fi
        curl -fsS --max-time 2 -o /dev/null "$url" 2>/dev/null && return 0
        sleep 0.5
    done
    say "$name did not answer $url within ${START_TIMEOUT}s; see $SDKS_LOGS/$name.log"
    return 1
}

# start_shim NAME PORT PRIMARY_URL FALLBACK_URL [LOGNAME]: starts the shim with
# SHIM_* variables from the caller's environment (timeouts, retries, models),
# sets SHIM_PID, waits for GET /health. NAME nullplatform starts that gateway
# instead (its base URL for the harness is http://127.0.0.1:PORT/openai).
start_shim() {
    local name="$1" port="$2" primary="$3" fallback="$4" log="${5:-$1}" cmd
    mkdir -p "$SDKS_LOGS"
    if port_busy "$port"; then say "port $port is already in use"; return 1; fi
    case "$name" in
        langchain-python | openai-python) cmd=("$SDKS_CACHE/venv/bin/python" "$SDKS_DIR/$name/shim.py") ;;
        ai-fallback-node)
            # ESM resolves packages next to the file: run a copy beside the cached node_modules.
            cp "$SDKS_DIR/ai-fallback-node/shim.mjs" "$SDKS_CACHE/ai-fallback-node/shim.mjs"
            cmd=(node "$SDKS_CACHE/ai-fallback-node/shim.mjs") ;;
        nullplatform)
            # Not a shim: the @nullplatform/llm-gateway, configured by nullplatform/gateway.yaml.
            cmd=(env NULLPLATFORM_PORT="$port" NULLPLATFORM_PRIMARY_URL="$primary"
                NULLPLATFORM_FALLBACK_URL="$fallback"
                NULLPLATFORM_GATEWAY_ENTRY="$SDKS_CACHE/nullplatform/node_modules/@nullplatform/llm-gateway/dist/cli.js"
                node "$SDKS_DIR/nullplatform/start-local.cjs" --config "$SDKS_DIR/nullplatform/gateway.yaml") ;;
        *) say "unknown shim $name (known: $SHIMS nullplatform)"; return 2 ;;
    esac
    SHIM_PORT="$port" SHIM_PRIMARY_URL="$primary" SHIM_FALLBACK_URL="$fallback" \
        setsid "${cmd[@]}" >"$SDKS_LOGS/$log.log" 2>&1 </dev/null &
    SHIM_PID=$!
    STARTED_PIDS+=("$SHIM_PID")
    wait_http "$log" "$SHIM_PID" "http://127.0.0.1:$port/health"
}

# start_upstreams PRIMARY_PORT FALLBACK_PORT PROFILE ATTEMPTS_CSV [LOGNAME]: sets UPSTREAMS_PID.
start_upstreams() {
    local p="$1" f="$2" profile="$3" csv="$4" log="${5:-upstreams}"
    mkdir -p "$SDKS_LOGS"
    setsid "$BENCH" upstreams --primary "127.0.0.1:$p" --fallback "127.0.0.1:$f" \
        --faults "$profile" --attempts "$csv" >"$SDKS_LOGS/$log.log" 2>&1 </dev/null &
    UPSTREAMS_PID=$!
    STARTED_PIDS+=("$UPSTREAMS_PID:INT")
    wait_http "$log" "$UPSTREAMS_PID" "http://127.0.0.1:$p/v1/models" &&
        wait_http "$log" "$UPSTREAMS_PID" "http://127.0.0.1:$f/v1/models"
}

# stop_pid PID [SIGNAL]: SIGNAL (TERM; the upstreams get INT, on which they
# write their CSV) to the process group, then up to 10 s, then SIGKILL. (A
# background job of a script starts with SIGINT ignored: Python shims would
# not stop on it.)
stop_pid() {
    local pid="$1" sig="${2:-TERM}"
    [[ "$pid" == *:* ]] && { sig="${pid#*:}"; pid="${pid%%:*}"; }
    kill "-$sig" -- "-$pid" 2>/dev/null || return 0
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    kill -TERM -- "-$pid" 2>/dev/null; sleep 1
    kill -KILL -- "-$pid" 2>/dev/null || true
}

stop_all() {
    local pid
    for pid in "${STARTED_PIDS[@]}"; do stop_pid "$pid"; done
    STARTED_PIDS=()
}
