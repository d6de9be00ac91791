#!/usr/bin/env bash
# One command, one page: installs the SDK shims, @nullplatform/llm-gateway,
# LiteLLM and Portkey at their pinned versions, starts every system that
# systems.toml names (127.0.0.1 only), runs `continuity-bench grade` over all
# of them (the reference proxies too): `run` under the paper and the
# degraded profiles, then the semantics catalogue with its full times, and
# writes one page, reports/grade-<UTC time>/report.html. Everything started
# is stopped on exit (error and Ctrl-C included); a system that died during
# the grade is named at the end with the tail of its log. Prints the wall
# time of the whole thing (install, start, grade, stop).
#
# Usage (from anywhere): examples/sdks/grade.sh [extra `grade` flags...]
#   examples/sdks/grade.sh                      # the full catalogue and the overhead
#   GRADE_ARGS= examples/sdks/grade.sh          # fast catalogue times, no overhead
#   examples/sdks/grade.sh --fail-under cpr=95  # any `grade` flag
# Environment: SYSTEMS_FILE (this folder's systems.toml), OUT (report
# directory, default <repo>/reports/grade-<UTC time>, never overwritten),
# GRADE_ARGS (default "--full --overhead"), BENCH (default target/release, built when
# missing), START_TIMEOUT, INSTALL_TIMEOUT, RUN_TIMEOUT (3600 s for the grade).
# Exit status: grade's (0, 1 when --fail-under is not met, 2 error, 130
# Ctrl-C), or 1 when something could not be installed or started.
set -uo pipefail
started=$SECONDS
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT
trap 'exit 130' INT TERM
root="$(cd "$SDKS_DIR/../.." && pwd)"
systems_file="$(realpath "${SYSTEMS_FILE:-$SDKS_DIR/systems.toml}")"
out="${OUT:-$root/reports/grade-$(date -u +%Y-%m-%dT%H-%M-%SZ)}"
[[ "$out" == /* ]] || out="$PWD/$out"
grade_args=(${GRADE_ARGS---full --overhead})

# The systems to start, from the systems file: "NAME PORT PRIMARY FALLBACK"
# per line for this folder's systems, "gateway NAME" for those compare.sh
# starts. Built-in systems need nothing.
plan="$(python3 - "$systems_file" "$SYSTEMS_KNOWN" <<'EOF'
import sys, tomllib, urllib.parse
path, known = sys.argv[1], sys.argv[2].split()
with open(path, "rb") as f:
    systems = tomllib.load(f).get("system", [])
for s in systems:
    name, url = s.get("name"), s.get("url")
    if url is None:
        continue
    if name in ("litellm", "portkey"):
        print("gateway", name)
        continue
    if name not in known:
        sys.exit(f"{path}: system {name!r}: grade.sh cannot start it (known: {' '.join(known)} litellm portkey); add it to system_spec in lib.sh")
    port = urllib.parse.urlsplit(url).port
    ports = s.get("upstream_ports")
    if port is None or not ports or len(ports) != 2:
        sys.exit(f"{path}: system {name!r}: grade.sh needs a port in url and upstream_ports = [PRIMARY, FALLBACK]")
    print(name, port, ports[0], ports[1])
EOF
)" || exit 2

say "installing (pinned versions, cached in $SDKS_CACHE)"
"$SDKS_DIR/install.sh" || { say "install failed; see $SDKS_LOGS"; exit 1; }

gateways=()
declare -A pid_of=()
while read -r name port p f; do
    [[ -n "$name" ]] || continue
    if [[ "$name" == gateway ]]; then gateways+=("$port"); continue; fi
    say "starting $name on 127.0.0.1:$port (upstreams $p, $f; log $SDKS_LOGS/$name.log)"
    start_system "$name" "$port" "$p" "$f" || { say "$name did not start: the page must show every system, stopping"; exit 1; }
    pid_of[$name]="$SHIM_PID"
done <<<"$plan"
say "$((${#pid_of[@]})) system(s) up after $((SECONDS - started)) s; compare.sh starts ${gateways[*]:-no gateway} and grades"

# With --overhead, each system started here is read by its PID (compare.sh
# adds LiteLLM's and Portkey's).
pid_args=()
for arg in "${grade_args[@]}" "$@"; do
    [[ "$arg" == --overhead ]] || continue
    for name in "${!pid_of[@]}"; do pid_args+=(--pid "$name=${pid_of[$name]}"); done
    break
done

status=0
COMMAND=grade SYSTEMS_FILE="$systems_file" OUT="$out" CONTINUITY_BENCH="$BENCH" \
    GATEWAYS="${gateways[*]}" RUN_TIMEOUT="${RUN_TIMEOUT:-3600}" \
    "$root/examples/gateways/compare.sh" "${grade_args[@]}" "${pid_args[@]}" "$@" || status=$?

for name in "${!pid_of[@]}"; do
    if ! kill -0 "${pid_of[$name]}" 2>/dev/null; then
        say "$name exited during the grade (its later results are what the harness saw: no answer); last lines of $SDKS_LOGS/$name.log:"
        tail -n 8 "$SDKS_LOGS/$name.log" >&2
    fi
done
stop_all
say "page: $out/report.html"
echo "grade.sh: wall time $((SECONDS - started)) s (install, start, grade, stop); exit status $status"
exit "$status"
