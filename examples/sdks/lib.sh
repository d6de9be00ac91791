# Shared functions of install.sh, start.sh and check.sh (source it; bash).
#
#   start_shim NAME PORT PRIMARY_URL FALLBACK_URL   start a shim, wait for /health
#   start_system NAME PORT PRIMARY_PORT FALLBACK_PORT  a named system (shim + settings), sets GW, PORTS
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
# The systems bench.sh and grade.sh know (start_system): a shim and its settings.
SYSTEMS_KNOWN="langchain langchain-t15 langchain-deadfb aifallback aifallback-t15 aifallback-t15r0 openai nullplatform tensorzero helicone"
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
        # The Rust gateways, built from their public source beside this
        # repository (never by these scripts): TENSORZERO_BIN and
        # HELICONE_BIN name the binaries; their ports are in their
        # configurations (examples/gateways/tensorzero, helicone).
        tensorzero)
            [[ -x "${TENSORZERO_BIN:-}" ]] || { say "tensorzero: set TENSORZERO_BIN to TensorZero's gateway binary, built from source (docs/examples.md)"; return 1; }
            cmd=(env CB_SIM_API_KEY=sk-local-dummy "$TENSORZERO_BIN" --bind-address "127.0.0.1:$port"
                --config-file "$SDKS_DIR/../gateways/tensorzero/tensorzero.toml") ;;
        helicone)
            [[ -x "${HELICONE_BIN:-}" ]] || { say "helicone: set HELICONE_BIN to Helicone's ai-gateway binary, built from source (docs/examples.md)"; return 1; }
            cmd=(env GROQ_API_KEY=sk-local-dummy DEEPSEEK_API_KEY=sk-local-dummy
                AI_GATEWAY__SERVER__ADDRESS=127.0.0.1 AI_GATEWAY__SERVER__PORT="$port" "$HELICONE_BIN"
                --config "$SDKS_DIR/../gateways/helicone/config.yaml") ;;
        *) say "unknown shim $name (known: $SHIMS nullplatform tensorzero helicone)"; return 2 ;;
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

# system_spec NAME: what system NAME is. Sets SPEC_SHIM (the shim, or
# nullplatform), SPEC_ENV (its SHIM_* settings) and SPEC_DEAD_FALLBACK (1:
# the fallback URL points at a port where nothing listens, a positive
# control: every event that needs the fallback must be lost).
system_spec() {
    SPEC_ENV=(); SPEC_DEAD_FALLBACK=0
    case "$1" in
        langchain) SPEC_SHIM=langchain-python ;;
        langchain-t15) SPEC_SHIM=langchain-python; SPEC_ENV=(SHIM_PRIMARY_TIMEOUT=1.5) ;;
        # Timed out like langchain-t15 so that every fault (TIMEOUT too) needs the dead fallback.
        langchain-deadfb) SPEC_SHIM=langchain-python; SPEC_ENV=(SHIM_PRIMARY_TIMEOUT=1.5); SPEC_DEAD_FALLBACK=1 ;;
        aifallback) SPEC_SHIM=ai-fallback-node ;;
        aifallback-t15) SPEC_SHIM=ai-fallback-node; SPEC_ENV=(SHIM_PRIMARY_TIMEOUT_MS=1500) ;;
        aifallback-t15r0) SPEC_SHIM=ai-fallback-node; SPEC_ENV=(SHIM_PRIMARY_TIMEOUT_MS=1500 SHIM_MODEL_RESET_MS=0) ;;
        openai) SPEC_SHIM=openai-python ;;
        nullplatform) SPEC_SHIM=nullplatform ;;
        tensorzero | helicone) SPEC_SHIM="$1" ;;
        *) say "unknown system $1 (known: $SYSTEMS_KNOWN)"; return 2 ;;
    esac
}

# start_system NAME PORT PRIMARY_PORT FALLBACK_PORT: starts system NAME on
# 127.0.0.1:PORT, pointed at upstreams on PRIMARY_PORT and FALLBACK_PORT (the
# harness serves them; a dead-fallback system gets FALLBACK_PORT+7 instead,
# which must be free). Sets GW (NAME=base URL, for --gateway) and PORTS
# (NAME=P,F, for --upstream-ports).
start_system() {
    local name="$1" port="$2" p="$3" f="$4" fb kv rc
    system_spec "$name" || return
    fb="$f"
    if ((SPEC_DEAD_FALLBACK)); then
        fb=$((f + 7))
        if port_busy "$fb"; then say "$name: its dead fallback port $fb is in use"; return 1; fi
    fi
    for kv in "${SPEC_ENV[@]}"; do export "$kv"; done # seen by the shim started next only
    start_shim "$SPEC_SHIM" "$port" "http://127.0.0.1:$p/v1" "http://127.0.0.1:$fb/v1" "$name"
    rc=$?
    for kv in "${SPEC_ENV[@]}"; do unset "${kv%%=*}"; done
    ((rc == 0)) || return "$rc"
    GW="$name=http://127.0.0.1:$port"
    case "$SPEC_SHIM" in
        nullplatform | tensorzero) GW="$GW/openai" ;;
        helicone) GW="$GW/router/cbsim/chat/completions" ;;
    esac
    PORTS="$name=$p,$f"
}
