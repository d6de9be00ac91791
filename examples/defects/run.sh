#!/usr/bin/env bash
# Runs continuity-bench's `semantics` catalogue against the small gateways
# in this folder: the good one (gateway.py) and each one-defect variant
# (defect_*.py), side by side, each with its own pair of simulated
# upstreams. Starts them on 127.0.0.1, stops them on exit (trap), and
# bounds every wait.
#
# Usage (from anywhere in the repository):
#   examples/defects/run.sh                       # --fast, all five gateways
#   examples/defects/run.sh --out reports/defects # extra flags go to `semantics`
#   GATEWAYS="good masks_stream_cut" examples/defects/run.sh
#
# Environment: GATEWAYS (default: all), BASE_PORT (default 8801: gateway k
# listens on BASE_PORT+k, its upstreams are 9201+10k and 9202+10k),
# BIN (default target/release/continuity-bench, built if missing),
# PROFILE_FLAG (default --fast; set to "" for the full profile).

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
all="good fails_over_on_400 retry_storm_429 masks_stream_cut waits_for_done"
gateways="${GATEWAYS:-$all}"
base_port="${BASE_PORT:-8801}"
bin="${BIN:-$root/target/release/continuity-bench}"
profile_flag="${PROFILE_FLAG---fast}"

say() { printf 'run.sh: %s\n' "$*" >&2; }

[[ -x "$bin" ]] || (cd "$root" && cargo build --release --quiet)

pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$root/reports/defects-logs"
args=()
k=0
for name in $gateways; do
    file="$here/defect_$name.py"
    [[ $name == good ]] && file="$here/gateway.py"
    [[ -f $file ]] || { say "unknown gateway $name (known: $all)"; exit 2; }
    port=$((base_port + k)) primary=$((9201 + 10 * k)) fallback=$((9202 + 10 * k))
    PYTHONDONTWRITEBYTECODE=1 python3 "$file" --port "$port" --primary "$primary" --fallback "$fallback" \
        >"$root/reports/defects-logs/$name.log" 2>&1 &
    pids+=("$!")
    args+=(--gateway "$name=http://127.0.0.1:$port" --upstream-ports "$name=$primary,$fallback")
    k=$((k + 1))
done

say "semantics $profile_flag against: $gateways (logs in reports/defects-logs/)"
cd "$root"
# shellcheck disable=SC2086 # PROFILE_FLAG is one flag or none
timeout -s INT -k 30 1800 "$bin" semantics $profile_flag --no-builtin --gateway-wait 20s "${args[@]}" "$@"
