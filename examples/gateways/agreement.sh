#!/usr/bin/env bash
# Cross-suite agreement: the independent failover suite (failoverbench, 16
# scenarios) and this catalogue on the same gateway, case by case.
#
# For each gateway (LiteLLM, Portkey; the pinned versions of compare.sh):
#   1. ours: `COMMAND=semantics compare.sh --no-builtin [--fast] --stream
#      --cases <the 16 mapped cases>` (the gateway over our simulated
#      upstreams, configured as the suite configures it), into
#      $OUT/ours-<gateway>/semantics.json;
#   2. theirs: the suite's wall (its fake provider) on 127.0.0.1:8401, the
#      same gateway installed by compare.sh and configured the suite's way
#      (LiteLLM: the suite's `litellm-config`; Portkey: its
#      systems/portkey-gateway.yaml with the wall on loopback), then
#      `python -m failoverbench run --profile $PROFILE`, into
#      $OUT/theirs/$PROFILE/<gateway>.json;
#   3. agreement.py prints the table: each scenario, our case, both
#      verdicts, agree or not, and for a difference the stated policy that
#      explains it (or "unexplained").
#
# The suite is not on PyPI: clone it (github.com/failoverbench/failoverbench)
# and point FAILOVERBENCH at the checkout; its Python needs httpx and pyyaml
# (FAILOVERBENCH_PYTHON, default $FAILOVERBENCH/.venv/bin/python, else
# python3). Every wait is bounded; everything started is stopped on exit.
#
# Usage: FAILOVERBENCH=~/src/failoverbench examples/gateways/agreement.sh [litellm] [portkey]
# Environment: FAILOVERBENCH (required), FAILOVERBENCH_PYTHON, PROFILE (fast,
# the default, about 10 minutes for both; or full, the published times,
# about 30 minutes), OUT (default
# reports/agreement-<UTC time>), CONTINUITY_BENCH (a built binary; default a
# release build), WALL_PORT (8401), THEIR_LITELLM_PORT (4100),
# THEIR_PORTKEY_PORT (8790), START_TIMEOUT (120 s), RUN_TIMEOUT (1800 s).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${GATEWAYS_CACHE:-$here/.cache}"
fob="${FAILOVERBENCH:?set FAILOVERBENCH to a checkout of github.com/failoverbench/failoverbench}"
fob="$(cd "$fob" && pwd)"
py="${FAILOVERBENCH_PYTHON:-}"
if [[ -z "$py" ]]; then
    if [[ -x "$fob/.venv/bin/python" ]]; then py="$fob/.venv/bin/python"; else py=python3; fi
fi
"$py" -c 'import httpx, yaml' 2>/dev/null || {
    echo "agreement: $py lacks httpx or pyyaml; set FAILOVERBENCH_PYTHON to a Python that has both" >&2
    exit 2
}
[[ -f "$fob/scenarios/catalogue.yaml" ]] || {
    echo "agreement: $fob/scenarios/catalogue.yaml not found; is FAILOVERBENCH a checkout of the suite?" >&2
    exit 2
}
out="${OUT:-$root/reports/agreement-$(date -u +%Y-%m-%dT%H-%M-%SZ)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
profile="${PROFILE:-fast}"
case "$profile" in fast | full) ;; *) echo "agreement: PROFILE must be fast or full" >&2; exit 2 ;; esac
wall_port="${WALL_PORT:-8401}"
litellm_port="${THEIR_LITELLM_PORT:-4100}"
portkey_port="${THEIR_PORTKEY_PORT:-8790}"
start_timeout="${START_TIMEOUT:-120}"
run_timeout="${RUN_TIMEOUT:-1800}"
gateways="${*:-litellm portkey}"
logs="$out/logs"
mkdir -p "$logs"
say() { echo "agreement: $*" >&2; }
command -v curl >/dev/null || { say "curl is needed to wait for the servers"; exit 2; }

# The 16 catalogue cases the suite's scenarios map onto (agreement.py holds
# the map).
cases="$(python3 "$here/agreement.py" --cases)"

# Every server is started here, in this shell, as the leader of its own
# process group (setsid execs in place: a background job is no group
# leader), so stopping a group stops the server and whatever it spawned.
wall_pid=""
gateway_pid=""
stop_group() {
    if [[ -n "$1" ]]; then kill -TERM -- "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || true; fi
}
cleanup() {
    stop_group "$gateway_pid"
    stop_group "$wall_pid"
}
trap cleanup EXIT

wait_http() { # NAME PID URL: at most START_TIMEOUT seconds in all
    local name="$1" pid="$2" url="$3" until=$((SECONDS + start_timeout))
    until curl -s -o /dev/null -m 2 "$url"; do
        kill -0 "$pid" 2>/dev/null || { say "$name exited; last lines of its log:"; tail -n 5 "$logs/$name.log" >&2; return 1; }
        ((SECONDS < until)) || { say "$name did not answer $url within ${start_timeout}s"; return 1; }
        sleep 1
    done
}

port_free() { ! curl -s -o /dev/null -m 2 "http://127.0.0.1:$1/"; }

start_wall() {
    port_free "$wall_port" || { say "port $wall_port is in use; set WALL_PORT"; return 1; }
    say "starting the suite's wall on 127.0.0.1:$wall_port ($profile profile)"
    setsid bash -c 'cd "$1" && exec "$2" -m failoverbench wall --port "$3" --profile "$4"' _ \
        "$fob" "$py" "$wall_port" "$profile" >"$logs/wall.log" 2>&1 </dev/null &
    wall_pid=$!
    wait_http wall "$wall_pid" "http://127.0.0.1:$wall_port/control/health"
}

# Start one gateway configured for the suite; sets $system (the system
# file the suite runs) and $gateway_pid.
their_litellm() {
    local cfg="$out/litellm-failoverbench.yaml"
    (cd "$fob" && "$py" -m failoverbench litellm-config --wall-url "http://127.0.0.1:$wall_port/v1") >"$cfg" || return 1
    port_free "$litellm_port" || { say "port $litellm_port is in use; set THEIR_LITELLM_PORT"; return 1; }
    say "starting LiteLLM for the suite on 127.0.0.1:$litellm_port (log: $logs/litellm.log)"
    LITELLM_MASTER_KEY=sk-failoverbench LITELLM_LOCAL_MODEL_COST_MAP=True \
        setsid "$cache/litellm-venv/bin/litellm" --config "$cfg" --host 127.0.0.1 \
        --port "$litellm_port" --keepalive_timeout 120 >"$logs/litellm.log" 2>&1 </dev/null &
    gateway_pid=$!
    wait_http litellm "$gateway_pid" "http://127.0.0.1:$litellm_port/health/liveliness" || return 1
    system="$out/litellm.yaml"
    sed -e "s#http://127.0.0.1:4000/v1#http://127.0.0.1:$litellm_port/v1#" \
        -e "s#^name: .*#name: litellm#" "$fob/systems/litellm-proxy.yaml" >"$system"
}

their_portkey() {
    port_free "$portkey_port" || { say "port $portkey_port is in use; set THEIR_PORTKEY_PORT"; return 1; }
    say "starting Portkey for the suite on 127.0.0.1:$portkey_port (log: $logs/portkey.log)"
    PORTKEY_GATEWAY_ENTRY="$cache/portkey/node_modules/@portkey-ai/gateway/build/start-server.js" \
        setsid node "$here/portkey/start-local.mjs" "--port=$portkey_port" --headless \
        >"$logs/portkey.log" 2>&1 </dev/null &
    gateway_pid=$!
    wait_http portkey "$gateway_pid" "http://127.0.0.1:$portkey_port/" || return 1
    system="$out/portkey.yaml"
    sed -e "s#http://host.docker.internal:8401/v1#http://127.0.0.1:$wall_port/v1#g" \
        -e "s#http://127.0.0.1:8787/v1#http://127.0.0.1:$portkey_port/v1#" \
        -e "s#^name: .*#name: portkey#" "$fob/systems/portkey-gateway.yaml" >"$system"
}

# Our side runs each gateway configured as the suite configures it (so
# both suites judge the same gateway): LiteLLM's router with the suite's
# `litellm-config` settings (2 retries, a 30 s timeout, the fallback also
# for context windows, unknown parameters dropped); Portkey with the
# suite's per-request config (2 retries on 429 and 5xx honouring
# Retry-After, a 30 s timeout, fallback on any non-2xx). Only the upstream
# addresses and model names are ours.
cat >"$out/litellm-ours.yaml" <<'YAML'
model_list:
  - model_name: continuity-sim
    litellm_params: {model: openai/continuity-sim, api_base: "http://127.0.0.1:9001/v1", api_key: sk-local-dummy}
  - model_name: continuity-sim-fallback
    litellm_params: {model: openai/continuity-sim-fallback, api_base: "http://127.0.0.1:9002/v1", api_key: sk-local-dummy}
router_settings:
  num_retries: 2
  timeout: 30
  fallbacks: [{continuity-sim: [continuity-sim-fallback]}]
  context_window_fallbacks: [{continuity-sim: [continuity-sim-fallback]}]
litellm_settings: {drop_params: true}
YAML
cat >"$out/portkey-ours.json" <<'JSON'
{"strategy": {"mode": "fallback"}, "request_timeout": 30000, "targets": [
 {"provider": "openai", "api_key": "sk-local-dummy", "custom_host": "http://127.0.0.1:9011/v1",
  "override_params": {"model": "continuity-sim"},
  "retry": {"attempts": 2, "on_status_codes": [429, 500, 502, 503, 504], "use_retry_after_header": true}},
 {"provider": "openai", "api_key": "sk-local-dummy", "custom_host": "http://127.0.0.1:9012/v1",
  "override_params": {"model": "continuity-sim-fallback"}}]}
JSON

our_profile=()
[[ "$profile" == fast ]] && our_profile=(--fast)
status=0
for g in $gateways; do
    case "$g" in litellm | portkey) ;; *) say "unknown gateway $g (known: litellm portkey)"; exit 2 ;; esac
    say "$g: our catalogue (its 16 mapped cases, streamed, $profile profile)"
    COMMAND=semantics GATEWAYS="$g" OUT="$out/ours-$g" LITELLM_CONFIG="$out/litellm-ours.yaml" \
        PORTKEY_CONFIG_FILE="$out/portkey-ours.json" "$here/compare.sh" \
        --no-builtin --stream --cases "$cases" "${our_profile[@]}" >"$logs/ours-$g.log" 2>&1 || true
    [[ -f "$out/ours-$g/semantics.json" ]] || { say "$g: our catalogue wrote nothing; see $logs/ours-$g.log"; status=1; continue; }
    if [[ -z "$wall_pid" ]]; then start_wall || exit 1; fi
    if ! "their_$g"; then
        say "$g: could not start it for the suite"
        stop_group "$gateway_pid"; gateway_pid=""
        status=1
        continue
    fi
    say "$g: the suite's 16 scenarios ($profile profile)"
    (cd "$fob" && timeout -s INT -k 30 "$run_timeout" "$py" -m failoverbench run \
        --system "$system" --profile "$profile" --wall "http://127.0.0.1:$wall_port" --out "$out/theirs" \
        >"$logs/theirs-$g.log" 2>&1) || say "$g: the suite exited non-zero (see $logs/theirs-$g.log)"
    # Stop this gateway before the next starts (the wall stays).
    stop_group "$gateway_pid"
    gateway_pid=""
done
python3 "$here/agreement.py" --out "$out" --profile "$profile" $gateways || status=$?
exit "$status"
