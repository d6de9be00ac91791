#!/usr/bin/env bash
# Compares LiteLLM and the Portkey gateway with the built-in reference systems.
#
# Installs both gateways at pinned versions into a local cache (a Python venv
# and a node_modules, never globally), starts them bound to 127.0.0.1 with
# their logs in files, runs continuity-bench against all four systems, prints
# the summary table and stops what it started (trap on EXIT). Every wait is
# bounded. A gateway that cannot be installed or started is reported and
# skipped; the others still run.
#
# Usage (from anywhere in the repository):
#   examples/gateways/compare.sh [extra `continuity-bench run` flags...]
#   RUNS=2 examples/gateways/compare.sh --concurrency 50
#   COMMAND=semantics examples/gateways/compare.sh          # the whole catalogue
#   COMMAND=semantics examples/gateways/compare.sh --fast --out reports/sem
#   COMMAND=grade examples/gateways/compare.sh        # one page: systems.toml
#   COMMAND=grade SYSTEMS_FILE=examples/sdks/systems.toml examples/gateways/compare.sh
#                                                     # (examples/sdks/grade.sh does this)
#   COMMAND=overhead examples/gateways/compare.sh     # bench overhead: added latency,
#                                                     # memory and CPU of each gateway
#   COMMAND=grade examples/gateways/compare.sh --overhead   # the page with the overhead
#
# Environment (all optional):
#   COMMAND             `run` (default): the continuity benchmark; `semantics`:
#                       the failover catalogue (35 cases; extra flags such as
#                       --fast, --cases or --out are passed on); `grade`: one
#                       page over examples/gateways/systems.toml (both
#                       gateways must start); `overhead`: `bench overhead`
#                       over the same systems. `overhead` and `grade` pass
#                       each started gateway's PID (--pid NAME=PID) so its
#                       memory and CPU are read; grade reads them with
#                       --overhead
#   SYSTEMS_FILE        the systems file `grade` reads (default
#                       examples/gateways/systems.toml); the systems it names
#                       other than litellm and portkey must be up already.
#                       Set, `semantics` reads it too instead of testing the
#                       gateways started here directly
#   CB_LITELLM_MASTER_KEY  LiteLLM's key (default a fresh random one)
#   CONTINUITY_BENCH    a built binary to use instead of `cargo run --release`
#   RUNS                runs of the benchmark (default 1)
#   GATEWAYS            which gateways to run (default "litellm portkey")
#   GATEWAYS_CACHE      install and log directory
#                       (default examples/gateways/.cache, git-ignored)
#   LITELLM_PORT        LiteLLM's port (default 4000)
#   PORTKEY_PORT        Portkey's port (default 8787)
#   INSTALL_TIMEOUT     seconds allowed for each install (default 900)
#   START_TIMEOUT       seconds allowed for each gateway to come up (default 120)
#   RUN_TIMEOUT         seconds allowed for the benchmark (default 3600; on
#                       expiry it is interrupted and writes what finished)
#   OUT                 report directory (default reports/gateways-<UTC time>)
#   LITELLM_CONFIG      LiteLLM's configuration (default litellm/config.yaml)
#   PORTKEY_CONFIG_FILE Portkey's per-request config (default portkey/config.json)

set -euo pipefail

LITELLM_VERSION="1.106.12"
PORTKEY_VERSION="1.15.2"

SCRIPT_NAME=compare.sh
DEFAULT_OUT_PREFIX=gateways
DEFAULT_START_TIMEOUT=120
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
gateways="${GATEWAYS:-litellm portkey}"
litellm_port="${LITELLM_PORT:-4000}"
portkey_port="${PORTKEY_PORT:-8787}"
install_timeout="${INSTALL_TIMEOUT:-900}"
systems_file="${SYSTEMS_FILE:-$here/systems.toml}"

# --- LiteLLM -------------------------------------------------------------
install_litellm() {
    local venv="$cache/litellm-venv" stamp="$cache/litellm-venv/.installed-$LITELLM_VERSION"
    [[ -f "$stamp" ]] && return 0
    command -v python3 >/dev/null || { say "python3 not found; cannot install LiteLLM"; return 1; }
    say "installing litellm[proxy]==$LITELLM_VERSION into $venv (log: $logs/litellm-install.log)"
    python3 -m venv "$venv" >"$logs/litellm-install.log" 2>&1 &&
        timeout "$install_timeout" "$venv/bin/pip" install --disable-pip-version-check \
            "litellm[proxy]==$LITELLM_VERSION" >>"$logs/litellm-install.log" 2>&1 || {
        say "LiteLLM install failed; last lines of $logs/litellm-install.log:"
        tail -n 5 "$logs/litellm-install.log" >&2
        return 1
    }
    touch "$stamp"
}

start_litellm() {
    if port_busy "$litellm_port"; then
        say "port $litellm_port is already in use; set LITELLM_PORT to a free port"
        return 1
    fi
    # The proxy refuses to start without a master key. A fresh random one per
    # run, kept in the environment only (never written to a file or printed).
    # A caller that chains a client in front of LiteLLM (examples/sdks/chain.sh)
    # sets CB_LITELLM_MASTER_KEY first, so that the client can send it (never
    # LITELLM_MASTER_KEY, which may hold a user's real key).
    LITELLM_MASTER_KEY="${CB_LITELLM_MASTER_KEY:-sk-local-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')}"
    export LITELLM_AUTH="Bearer $LITELLM_MASTER_KEY"
    say "starting LiteLLM on 127.0.0.1:$litellm_port (log: $logs/litellm.log)"
    # LITELLM_LOCAL_MODEL_COST_MAP: use the bundled model price map instead of
    # downloading it at start-up (the download blocks offline).
    # --keepalive_timeout 120: uvicorn closes idle keep-alive connections after
    # 5 s by default, and a client that reuses one at that instant gets
    # "connection reset by peer" (seen between runs); 120 s outlasts the
    # driver's idle connections.
    LITELLM_MASTER_KEY="$LITELLM_MASTER_KEY" LITELLM_LOCAL_MODEL_COST_MAP=True \
        setsid "$cache/litellm-venv/bin/litellm" --config "${LITELLM_CONFIG:-$here/litellm/config.yaml}" \
        --host 127.0.0.1 --port "$litellm_port" --keepalive_timeout 120 >"$logs/litellm.log" 2>&1 </dev/null &
    local pid=$!
    started litellm "$pid"
    wait_http litellm "$pid" "http://127.0.0.1:$litellm_port/health/liveliness"
}

# --- Portkey -------------------------------------------------------------
install_portkey() {
    local dir="$cache/portkey" stamp="$cache/portkey/.installed-$PORTKEY_VERSION"
    [[ -f "$stamp" ]] && return 0
    command -v npm >/dev/null || { say "npm not found; cannot install the Portkey gateway"; return 1; }
    say "installing @portkey-ai/gateway@$PORTKEY_VERSION into $dir (log: $logs/portkey-install.log)"
    mkdir -p "$dir"
    [[ -f "$dir/package.json" ]] || echo '{"name":"continuity-bench-portkey","private":true}' >"$dir/package.json"
    timeout "$install_timeout" npm install --prefix "$dir" --no-audit --no-fund --save-exact \
        "@portkey-ai/gateway@$PORTKEY_VERSION" >"$logs/portkey-install.log" 2>&1 || {
        say "Portkey install failed; last lines of $logs/portkey-install.log:"
        tail -n 5 "$logs/portkey-install.log" >&2
        return 1
    }
    touch "$stamp"
}

start_portkey() {
    if port_busy "$portkey_port"; then
        say "port $portkey_port is already in use; set PORTKEY_PORT to a free port"
        return 1
    fi
    # Routing travels with every request in the x-portkey-config header.
    PORTKEY_CONFIG="$(tr -d '\n' <"${PORTKEY_CONFIG_FILE:-$here/portkey/config.json}")"
    export PORTKEY_CONFIG
    say "starting Portkey on 127.0.0.1:$portkey_port (log: $logs/portkey.log)"
    PORTKEY_GATEWAY_ENTRY="$cache/portkey/node_modules/@portkey-ai/gateway/build/start-server.js" \
        setsid node "$here/portkey/start-local.mjs" "--port=$portkey_port" --headless \
        >"$logs/portkey.log" 2>&1 </dev/null &
    local pid=$!
    started portkey "$pid"
    wait_http portkey "$pid" "http://127.0.0.1:$portkey_port/"
}

# --- run -----------------------------------------------------------------
args=()
missing=()
for g in $gateways; do
    case "$g" in
        litellm)
            if install_litellm && start_litellm; then
                args+=(--gateway "litellm=http://127.0.0.1:$litellm_port"
                    --upstream-ports litellm=9001,9002
                    --header litellm:Authorization=env:LITELLM_AUTH)
            else
                say "skipping litellm"
                missing+=(litellm)
            fi
            ;;
        portkey)
            if install_portkey && start_portkey; then
                args+=(--gateway "portkey=http://127.0.0.1:$portkey_port"
                    --upstream-ports portkey=9011,9012
                    --header portkey:x-portkey-config=env:PORTKEY_CONFIG)
            else
                say "skipping portkey"
                missing+=(portkey)
            fi
            ;;
        *)
            say "unknown gateway $g (known: litellm portkey)"
            exit 2
            ;;
    esac
done
((${#args[@]})) || say "no gateway could be started; running the built-in systems only"
# A systems file names systems that may stand in front of these gateways (a
# chained client): without them its figures would measure nothing.
if [[ -n "${SYSTEMS_FILE:-}" ]] && ((${#missing[@]})); then
    say "SYSTEMS_FILE is set and ${missing[*]} did not start; not running"
    exit 1
fi

cd "$root"
status=0
case "$command" in
    run)
        say "running continuity-bench (runs $runs, report in $out)"
        continuity_bench run --runs "$runs" --out "$out" --gateway-wait 60s \
            "${args[@]}" "$@" || status=$?
        ;;
    semantics)
        mkdir -p "$out"
        # SYSTEMS_FILE names the systems instead of the gateways started here
        # (a client chained in front of one of them: examples/sdks/chain.sh).
        systems=("${args[@]}")
        [[ -n "${SYSTEMS_FILE:-}" ]] && systems=(--systems "$systems_file")
        say "checking failover semantics (results in $out/semantics.json)"
        continuity_bench semantics --json "$out/semantics.json" --gateway-wait 60s \
            "${systems[@]}" "$@" || status=$?
        ;;
    grade)
        # Both gateways up, as the systems file lists them. Their PIDs go
        # with --overhead only (grade refuses --pid without it).
        grade_pids=()
        for arg in "$@"; do
            [[ "$arg" == --overhead ]] && grade_pids=("${pid_args[@]}")
        done
        say "grading the systems of $systems_file (page in $out/report.html)"
        continuity_bench grade --systems "$systems_file" --out "$out" \
            "${grade_pids[@]}" "$@" || status=$?
        ;;
    overhead)
        systems=("${args[@]}")
        [[ -n "${SYSTEMS_FILE:-}" ]] && systems=(--systems "$systems_file")
        say "measuring each system's overhead (report in $out)"
        continuity_bench bench overhead --out "$out" --gateway-wait 60s \
            "${systems[@]}" "${pid_args[@]}" "$@" || status=$?
        ;;
    *)
        say "unknown COMMAND $command (known: run semantics grade overhead)"
        exit 2
        ;;
esac
if ((status != 0)); then
    say "continuity-bench exited with status $status; gateway logs are in $logs"
fi
exit "$status"
