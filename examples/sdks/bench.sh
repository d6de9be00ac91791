#!/usr/bin/env bash
# Runs continuity-bench against the SDK shims and the nullplatform gateway:
# each system is started on its own ports, `run` is run once per system (its
# own report directory), then one `semantics` over all of them side by side;
# everything started is stopped on exit. Every printed table is also saved
# as reports/<name>-run.txt and reports/semantics.txt.
#
# Systems (NAME = shim, settings):
#   langchain        langchain-python, SDK defaults (max_retries 2, timeout 600 s)
#   langchain-t15    langchain-python, SHIM_PRIMARY_TIMEOUT=1.5 (s)
#   aifallback       ai-fallback-node, SDK defaults (maxRetries 2, no fetch timeout,
#                    modelResetInterval 3 min)
#   aifallback-t15   ai-fallback-node, SHIM_PRIMARY_TIMEOUT_MS=1500
#   aifallback-t15r0 ai-fallback-node, SHIM_PRIMARY_TIMEOUT_MS=1500, SHIM_MODEL_RESET_MS=0
#                    (every request starts on the primary)
#   openai           openai-python, SDK defaults, no fallback
#   nullplatform     @nullplatform/llm-gateway with nullplatform/gateway.yaml
#
# Usage: ./bench.sh [run] [semantics]   (default both)
# Environment: SYSTEMS (all seven), OUT (reports), RUN_ARGS (extra `run` flags,
# default "--runs 1"), SEM_ARGS (extra `semantics` flags, default "--fast"),
# RUN_TIMEOUT (900 s per command), BENCH.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT
trap 'exit 130' INT TERM
out="${OUT:-$SDKS_DIR/reports}"
systems=(${SYSTEMS:-langchain langchain-t15 aifallback aifallback-t15 aifallback-t15r0 openai nullplatform})
commands=("$@"); ((${#commands[@]})) || commands=(run semantics)
run_timeout="${RUN_TIMEOUT:-900}"
mkdir -p "$out"

# start NAME K: starts system NAME on shim port 8101+K, upstreams 9101+10K / 9102+10K; sets GW and PORTS.
start() { start_system "$1" $((8101 + $2)) $((9101 + 10 * $2)) $((9102 + 10 * $2)); }

for command in "${commands[@]}"; do
    case "$command" in
        run)
            k=0
            for name in "${systems[@]}"; do
                if start "$name" "$k"; then
                    say "run: $name"
                    timeout -s INT -k 30 "$run_timeout" "$BENCH" run ${RUN_ARGS:---runs 1} --no-builtin --quiet \
                        --gateway "$GW" --upstream-ports "$PORTS" --out "$out/$name-run" 2>&1 | tee "$out/$name-run.txt"
                fi
                stop_all
                k=$((k + 1))
            done
            ;;
        semantics)
            args=(); k=0
            for name in "${systems[@]}"; do
                start "$name" "$k" && args+=(--gateway "$GW" --upstream-ports "$PORTS")
                k=$((k + 1))
            done
            say "semantics: ${systems[*]}"
            timeout -s INT -k 30 "$run_timeout" "$BENCH" semantics ${SEM_ARGS:---fast} --no-builtin \
                "${args[@]}" --out "$out/semantics" 2>&1 | tee "$out/semantics.txt"
            stop_all
            ;;
        *) say "unknown command $command (known: run semantics)"; exit 2 ;;
    esac
done
