#!/usr/bin/env bash
# Starts one shim (or the nullplatform gateway) on 127.0.0.1, detached, and
# returns once its GET /health answers (at most START_TIMEOUT, 60 s).
#
# Usage: ./start.sh NAME PORT PRIMARY_URL FALLBACK_URL
#   NAME: langchain-python | ai-fallback-node | openai-python | nullplatform
#   e.g.  ./start.sh langchain-python 8101 http://127.0.0.1:9001/v1 http://127.0.0.1:9002/v1
# (openai-python ignores FALLBACK_URL: it has none.) Other settings come from
# the SHIM_* variables each shim's header documents, e.g.
#   SHIM_PRIMARY_TIMEOUT=1.5 ./start.sh langchain-python ...
# Prints the process group id; stop it with: kill -TERM -- -PGID
# Log: $SDKS_CACHE/logs/NAME.log. Run ./install.sh first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
(($# == 4)) || { sed -n '2,14p' "$0" >&2; exit 2; }
start_shim "$1" "$2" "$3" "$4" || { stop_all; exit 1; }
base="http://127.0.0.1:$2"; [[ "$1" == nullplatform ]] && base="$base/openai"
echo "$1 pid $SHIM_PID base URL $base (stop: kill -TERM -- -$SHIM_PID)"
