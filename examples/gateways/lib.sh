# Shared by compare.sh and rust-gateways.sh (sourced, never run): the
# settings both read, stopping what was started, waiting for a gateway to
# answer, and the continuity-bench binary to run.
#
# The sourcing script sets SCRIPT_NAME (its messages' prefix) and
# DEFAULT_OUT_PREFIX, and may set START_TIMEOUT's default in
# DEFAULT_START_TIMEOUT, before sourcing this file.

: "${SCRIPT_NAME:?set by the script that sources lib.sh}" "${DEFAULT_OUT_PREFIX:?set by the script that sources lib.sh}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${GATEWAYS_CACHE:-$here/.cache}"
runs="${RUNS:-1}"
command="${COMMAND:-run}"
start_timeout="${START_TIMEOUT:-${DEFAULT_START_TIMEOUT:-60}}"
run_timeout="${RUN_TIMEOUT:-3600}"
out="${OUT:-reports/$DEFAULT_OUT_PREFIX-$(date -u +%Y-%m-%dT%H-%M-%SZ)}"
logs="$cache/logs"

say() { printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2; }

mkdir -p "$cache" "$logs"

# --- stop what we started ------------------------------------------------
started_pids=()
# --pid NAME=PID for each gateway started, for `bench overhead`.
pid_args=()
cleanup() {
    local pid
    for pid in "${started_pids[@]}"; do
        # Each gateway was started with setsid, so its pid is also its
        # process group: this ends the gateway and any worker it spawned.
        kill -TERM -- "-$pid" 2>/dev/null || true
    done
    for pid in "${started_pids[@]}"; do
        for _ in $(seq 1 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# started NAME PID: remembers a gateway started with setsid, to stop it on
# exit and to pass its PID to `bench overhead`.
started() {
    started_pids+=("$2")
    pid_args+=(--pid "$1=$2")
}

port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_http NAME PID URL [CURL ARGS...]: polls URL until it answers 2xx, the
# process exits, or START_TIMEOUT passes.
wait_http() {
    local name="$1" pid="$2" url="$3"
    shift 3
    local deadline=$((SECONDS + start_timeout))
    while ((SECONDS < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "$name exited during start-up; last lines of $logs/$name.log:"
            tail -n 25 "$logs/$name.log" >&2 || true
            return 1
        fi
        if curl -fsS --max-time 2 -o /dev/null "$@" "$url" 2>/dev/null; then
            return 0
        fi
        sleep 1
    done
    say "$name did not answer $url within ${start_timeout}s; see $logs/$name.log"
    return 1
}

# The binary: a release build by default; CONTINUITY_BENCH=path uses a
# built one (e.g. target/debug/continuity-bench).
if [[ -n "${CONTINUITY_BENCH:-}" ]]; then
    runner=("$CONTINUITY_BENCH")
else
    runner=(cargo run --release --quiet --)
fi

# continuity_bench ARGS...: continuity-bench ARGS under RUN_TIMEOUT (interrupted on
# expiry, so it writes what finished), from the repository's root. In the
# foreground, so that a Ctrl-C at the terminal reaches it too.
continuity_bench() {
    (cd "$root" && timeout --foreground -s INT -k 60 "$run_timeout" "${runner[@]}" "$@")
}
