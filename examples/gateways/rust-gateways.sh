#!/usr/bin/env bash
# Measures two Rust gateways, TensorZero and the Helicone AI gateway, each with
# its own fallback feature over the harness's simulated upstreams.
#
# This script neither builds nor fetches anything: it starts binaries that are
# already built (TENSORZERO_BIN, HELICONE_BIN), bound to 127.0.0.1 with their
# logs in files, runs continuity-bench against each of them, and stops what it
# started (trap on EXIT). Every wait is bounded. A gateway whose binary is not
# given or that does not come up is reported and skipped; the other still runs.
#
# The two gateways route on model ids of their own (TensorZero on
# `tensorzero::model_name::continuity-sim`, Helicone on `groq/continuity-sim`):
# each is asked for its own with --gateway-model, beside the reference
# proxies, in one continuity-bench invocation into $OUT. The one page with
# every other system too is examples/systems/all.toml (examples/sdks/grade.sh).
#
# Usage (from anywhere in the repository):
#   TENSORZERO_BIN=/path/to/gateway HELICONE_BIN=/path/to/ai-gateway \
#     examples/gateways/rust-gateways.sh [extra continuity-bench flags...]
#   COMMAND=semantics HELICONE_BIN=... examples/gateways/rust-gateways.sh --fast
#
# Environment:
#   TENSORZERO_BIN      the TensorZero gateway binary (package `gateway`)
#   HELICONE_BIN        the Helicone AI gateway binary (package `ai-gateway`)
#   COMMAND             `run` (default): the continuity benchmark (paper
#                       profile unless --faults is passed); `semantics`: the
#                       failover catalogue (extra flags such as --fast or
#                       --cases are passed on); `overhead`: `bench overhead`
#                       (each gateway's PID passed)
#   CONTINUITY_BENCH    a built continuity-bench to use instead of
#                       `cargo run --release`
#   RUNS                runs of the benchmark (default 1)
#   GATEWAYS            which gateways (default "tensorzero helicone")
#   GATEWAYS_CACHE      log directory parent (default examples/gateways/.cache)
#   TENSORZERO_PORT     TensorZero's port (default 3000; upstreams 9021/9022)
#   HELICONE_PORT       Helicone's port (default 8080; upstreams 9031/9032)
#   START_TIMEOUT       seconds allowed for each gateway to come up (default 60)
#   RUN_TIMEOUT         seconds allowed for each continuity-bench invocation
#                       (default 3600; on expiry it is interrupted and writes
#                       what finished)
#   OUT                 report directory (default reports/rust-gateways-<UTC
#                       time>)
#   TENSORZERO_CONFIG   default tensorzero/tensorzero.toml
#   HELICONE_CONFIG     default helicone/config.yaml
#
# The upstream ports are written in the two configurations; change both
# together.

set -euo pipefail

SCRIPT_NAME=rust-gateways.sh
DEFAULT_OUT_PREFIX=rust-gateways
DEFAULT_START_TIMEOUT=60
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gateways="${GATEWAYS:-tensorzero helicone}"
tensorzero_port="${TENSORZERO_PORT:-3000}"
helicone_port="${HELICONE_PORT:-8080}"

check_bin() {
    local name="$1" bin="$2" var="$3"
    if [[ -z "$bin" ]]; then
        say "$var is not set; skipping $name (this script does not build it)"
        return 1
    fi
    if [[ ! -x "$bin" ]]; then
        say "$var=$bin is not an executable file; skipping $name"
        return 1
    fi
}

# --- TensorZero ----------------------------------------------------------
start_tensorzero() {
    check_bin tensorzero "${TENSORZERO_BIN:-}" TENSORZERO_BIN || return 1
    if port_busy "$tensorzero_port"; then
        say "port $tensorzero_port is already in use; set TENSORZERO_PORT to a free port"
        return 1
    fi
    say "starting TensorZero on 127.0.0.1:$tensorzero_port (log: $logs/tensorzero.log)"
    # No database variables: observability is off in the configuration, and
    # unset here so that a developer's own ClickHouse/Postgres is not used.
    # CB_SIM_API_KEY: a dummy key; the simulated upstreams ignore it.
    env -u TENSORZERO_CLICKHOUSE_URL -u TENSORZERO_POSTGRES_URL -u TENSORZERO_VALKEY_URL \
        CB_SIM_API_KEY=sk-local-dummy RUST_LOG="${TENSORZERO_RUST_LOG:-gateway=info,tensorzero_core=info}" \
        setsid "$TENSORZERO_BIN" --config-file "${TENSORZERO_CONFIG:-$here/tensorzero/tensorzero.toml}" \
        --bind-address "127.0.0.1:$tensorzero_port" >"$logs/tensorzero.log" 2>&1 </dev/null &
    local pid=$!
    started tensorzero "$pid"
    wait_http tensorzero "$pid" "http://127.0.0.1:$tensorzero_port/health"
}

# --- Helicone ------------------------------------------------------------
start_helicone() {
    check_bin helicone "${HELICONE_BIN:-}" HELICONE_BIN || return 1
    if port_busy "$helicone_port"; then
        say "port $helicone_port is already in use; set HELICONE_PORT to a free port"
        return 1
    fi
    say "starting Helicone on 127.0.0.1:$helicone_port (log: $logs/helicone.log)"
    # <PROVIDER>_API_KEY: a provider without a key is not used; dummy values.
    # AI_GATEWAY__SERVER__*: the gateway's environment override of its config.
    # HELICONE_CONTROL_PLANE_API_KEY is unset: no control plane, no auth.
    env -u HELICONE_CONTROL_PLANE_API_KEY \
        GROQ_API_KEY=sk-local-dummy DEEPSEEK_API_KEY=sk-local-dummy \
        AI_GATEWAY__SERVER__ADDRESS=127.0.0.1 AI_GATEWAY__SERVER__PORT="$helicone_port" \
        setsid "$HELICONE_BIN" --config "${HELICONE_CONFIG:-$here/helicone/config.yaml}" \
        >"$logs/helicone.log" 2>&1 </dev/null &
    local pid=$!
    started helicone "$pid"
    wait_http helicone "$pid" "http://127.0.0.1:$helicone_port/health"
}

# --- run -----------------------------------------------------------------
# Per gateway: the flags that name it to continuity-bench.
declare -A gw_args=()
for g in $gateways; do
    case "$g" in
        tensorzero)
            if start_tensorzero; then
                gw_args[tensorzero]="--gateway tensorzero=http://127.0.0.1:$tensorzero_port/openai
                    --upstream-ports tensorzero=9021,9022
                    --gateway-model tensorzero=tensorzero::model_name::continuity-sim"
            else
                say "skipping tensorzero"
            fi
            ;;
        helicone)
            if start_helicone; then
                gw_args[helicone]="--gateway helicone=http://127.0.0.1:$helicone_port/router/cbsim/chat/completions
                    --upstream-ports helicone=9031,9032
                    --gateway-model helicone=groq/continuity-sim"
            else
                say "skipping helicone"
            fi
            ;;
        *)
            say "unknown gateway $g (known: tensorzero helicone)"
            exit 2
            ;;
    esac
done
if ((${#gw_args[@]} == 0)); then
    say "no gateway could be started"
    exit 1
fi

cd "$root"
status=0
flags=()
for g in $gateways; do
    [[ -n "${gw_args[$g]:-}" ]] || continue
    # The flag strings above hold no spaces inside a value: split on them.
    read -r -a more <<<"$(echo ${gw_args[$g]})"
    flags+=("${more[@]}")
done
case "$command" in
    run)
        say "running continuity-bench (runs $runs, report in $out)"
        continuity_bench run --runs "$runs" --out "$out" --gateway-wait 60s \
            "${flags[@]}" "$@" || status=$?
        ;;
    semantics)
        say "checking failover semantics (results in $out)"
        continuity_bench semantics --out "$out" --gateway-wait 60s \
            "${flags[@]}" "$@" || status=$?
        ;;
    overhead)
        say "measuring each system's overhead (report in $out)"
        continuity_bench bench overhead --out "$out" --gateway-wait 60s \
            "${flags[@]}" "${pid_args[@]}" "$@" || status=$?
        ;;
    *)
        say "unknown COMMAND $command (known: run semantics overhead)"
        exit 2
        ;;
esac
if ((status != 0)); then
    say "continuity-bench exited with status $status; gateway logs are in $logs"
fi
exit "$status"
