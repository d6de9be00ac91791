#!/usr/bin/env bash
# Self-check of the SDK shims (and the nullplatform gateway), two parts:
#
# 1. Healthy path adds no attempt. Per system: `continuity-bench upstreams`
#    with fault_profiles/clean.toml (nothing faulted) and --attempts CSV, the
#    system started on them, N plain and N streamed requests (a 3-message
#    history) through it, each must be a 200 (a stream must end with
#    data: [DONE]); then the upstreams are stopped and their CSV must show
#    exactly 2N primary attempts and 0 fallback attempts.
# 2. Positive control. Every system started with its fallback on a port where
#    nothing listens, and one `continuity-bench run --fast-forward` (paper
#    profile) through all of them: each must lose every faulted turn (CPR 0).
#    openai-python has no fallback, so this is its normal configuration;
#    ai-fallback-node gets SHIM_MODEL_RESET_MS=0 (see below).
#
# Usage: ./check.sh [NAME...]   (default: langchain-python ai-fallback-node openai-python nullplatform)
# Environment: N (10), SKIP_CONTROL=1 skips part 2, CHECK_OUT (reports/check-<UTC time>),
# START_TIMEOUT (60 s), BENCH. Exit 0 when every check passes, 1 otherwise.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT
trap 'exit 130' INT TERM
n="${N:-10}"
names=("$@")
((${#names[@]})) || names=(langchain-python ai-fallback-node openai-python nullplatform)
out="${CHECK_OUT:-$SDKS_DIR/reports/check-$(date -u +%Y-%m-%dT%H-%M-%SZ)}"
mkdir -p "$out"
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

base_url() { [[ "$1" == nullplatform ]] && echo "http://127.0.0.1:$2/openai" || echo "http://127.0.0.1:$2"; }

body() { # body STREAM
    printf '{"model":"continuity-sim","stream":%s,"max_tokens":200,"temperature":0.2,"messages":[%s]}' "$1" \
        '{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"My favourite tea is sencha."},{"role":"assistant","content":"Noted."},{"role":"user","content":"Suggest a snack."}'
}

healthy_check() {
    local name="$1" i=0 p=$((19101 + 10 * $2)) f=$((19102 + 10 * $2)) port=$((18101 + $2)) url csv bad=0 resp prim fb
    csv="$out/$name-clean-attempts.csv"
    start_upstreams "$p" "$f" "$SDKS_DIR/fault_profiles/clean.toml" "$csv" "upstreams-$name" || { fail "$name: upstreams did not start"; return; }
    local up="$UPSTREAMS_PID"
    start_shim "$name" "$port" "http://127.0.0.1:$p/v1" "http://127.0.0.1:$f/v1" "$name-check" || { fail "$name: did not start"; stop_pid "$up" INT; return; }
    local shim="$SHIM_PID"
    url="$(base_url "$name" "$port")/v1/chat/completions"
    for ((i = 0; i < n; i++)); do
        resp="$(curl -sS --max-time 30 -w '\n%{http_code}' -H 'content-type: application/json' -d "$(body false)" "$url")"
        [[ "${resp##*$'\n'}" == 200 ]] || { bad=$((bad + 1)); echo "  plain request $i: ${resp//$'\n'/ }" | cut -c1-300; }
        resp="$(curl -sSN --max-time 30 -w '\n%{http_code}' -H 'content-type: application/json' -d "$(body true)" "$url")"
        [[ "${resp##*$'\n'}" == 200 && "$resp" == *'data: [DONE]'* ]] || { bad=$((bad + 1)); echo "  streamed request $i: ${resp//$'\n'/ }" | cut -c1-300; }
    done
    stop_pid "$shim"
    stop_pid "$up" INT
    prim="$(awk -F, 'NR > 1 && $3 == "primary"' "$csv" | wc -l)"
    fb="$(awk -F, 'NR > 1 && $3 == "fallback"' "$csv" | wc -l)"
    if ((bad == 0 && prim == 2 * n && fb == 0)); then
        pass "$name healthy path: $((2 * n)) requests (${n} plain, ${n} streamed) -> $prim primary attempts, $fb fallback attempts"
    else
        fail "$name healthy path: $bad of $((2 * n)) requests failed; $prim primary attempts (want $((2 * n))), $fb fallback attempts (want 0); see $csv"
    fi
}

positive_control() {
    local name k=0 args=() port p f dead
    for name in "${names[@]}"; do
        p=$((19101 + 10 * k)); f=$((19102 + 10 * k)); port=$((18101 + k)); dead=$((19109 + 10 * k))
        port_busy "$dead" && { fail "$name control: port $dead is in use"; continue; }
        # ai-fallback would send every request after the first failure to the (dead)
        # fallback for 3 min, leaving the faults unexercised: start each request on the primary.
        [[ "$name" == ai-fallback-node ]] && export SHIM_MODEL_RESET_MS=0
        start_shim "$name" "$port" "http://127.0.0.1:$p/v1" "http://127.0.0.1:$dead/v1" "$name-control" ||
            { fail "$name control: did not start"; unset SHIM_MODEL_RESET_MS; continue; }
        unset SHIM_MODEL_RESET_MS
        args+=(--gateway "$name=$(base_url "$name" "$port")" --upstream-ports "$name=$p,$f")
        k=$((k + 1))
    done
    ((${#args[@]})) || return
    timeout -s INT -k 30 600 "$BENCH" run --runs 1 --fast-forward --no-builtin --quiet --out "$out/control-run" \
        "${args[@]}" | tee "$out/control-run.txt"
    for name in "${names[@]}"; do
        python3 - "$out/control-run/summary.json" "$name" <<'EOF' && pass "$name control: broken fallback loses every faulted turn" || fail "$name control"
import json, sys
s = next(s for s in json.load(open(sys.argv[1]))["systems"] if s["name"] == sys.argv[2])
c = s["cpr"]
print(f"  {sys.argv[2]}: CPR {c['successes']}/{c['trials']}, verdicts {s['verdicts']}")
sys.exit(0 if c["trials"] > 0 and c["successes"] == 0 else 1)
EOF
    done
}

k=0
for name in "${names[@]}"; do healthy_check "$name" "$k"; k=$((k + 1)); done
[[ "${SKIP_CONTROL:-}" == 1 ]] || positive_control
stop_all
echo "check.sh: $failures failure(s); files in $out"
((failures == 0))
