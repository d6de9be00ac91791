#!/usr/bin/env bash
# Stacked retries as one figure: the OpenAI Python SDK (default retries)
# chained in front of LiteLLM, against LiteLLM alone, under the semantics load
# phase with every upstream rate limited (`--load-fault all-limited`), so that
# every layer spends its retries and the attempts per client request are the
# layers' product.
#
# Usage (from anywhere): examples/sdks/chain.sh [extra `semantics` flags]
#   C=500 examples/sdks/chain.sh          # another concurrency (default 100)
# Writes reports/chain-<UTC time>/ (each phase's semantics.json and stdout)
# and prints both load lines. Installs the shims (install.sh) and LiteLLM
# (examples/gateways/compare.sh) when missing; stops everything it started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap stop_all EXIT
trap 'exit 130' INT TERM

root="$(cd "$SDKS_DIR/../.." && pwd)"
c="${C:-100}"
out="${OUT:-$root/reports/chain-$(date -u +%Y-%m-%dT%H-%M-%SZ)}"
# The full profile: its 30 s bound; a request still retrying then is counted
# beside the figures (at C = 100 a few are: LiteLLM is slow under load).
phase=(--cases ok --load "$c" --load-fault all-limited)
"$SDKS_DIR/install.sh" python

# One key for LiteLLM and for the SDK that calls it, in the environment only
# (compare.sh reads CB_LITELLM_MASTER_KEY; a user's LITELLM_MASTER_KEY is left alone).
CB_LITELLM_MASTER_KEY="sk-local-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
export CB_LITELLM_MASTER_KEY

# The SDK's layer: the shim, pointed at LiteLLM (it has no fallback of its own).
SHIM_API_KEY="$CB_LITELLM_MASTER_KEY" start_shim openai-python 8108 \
    http://127.0.0.1:4000/v1 http://127.0.0.1:4000/v1 openai-sdk-over-litellm

mkdir -p "$out"
status=0
say "LiteLLM alone"
GATEWAYS=litellm COMMAND=semantics CONTINUITY_BENCH="$BENCH" OUT="$out/litellm" \
    "$root/examples/gateways/compare.sh" --no-builtin "${phase[@]}" "$@" | tee "$out/litellm.txt" ||
    { status=$?; say "the LiteLLM phase exited with status $status"; }
say "the OpenAI SDK over LiteLLM"
GATEWAYS=litellm COMMAND=semantics CONTINUITY_BENCH="$BENCH" OUT="$out/chain" \
    SYSTEMS_FILE="$SDKS_DIR/chain.toml" \
    "$root/examples/gateways/compare.sh" "${phase[@]}" "$@" | tee "$out/chain.txt" ||
    { status=$?; say "the chained phase exited with status $status"; }
say "both load phases (semantics.json in $out/litellm and $out/chain):"
grep -h '^load ' "$out/litellm.txt" "$out/chain.txt" || { say "no load line was printed; see the output above"; exit 1; }
exit "$status"
