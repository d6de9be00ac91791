#!/usr/bin/env bash
# Installs the SDK shims' dependencies (and the extra gateway) at pinned
# versions into a local cache, never globally:
#   .cache/venv/                         Python venv from requirements.txt (langchain-python, openai-python)
#   .cache/ai-fallback-node/node_modules  npm ci from ai-fallback-node/package-lock.json
#   .cache/nullplatform/node_modules      npm ci from nullplatform/package-lock.json
# Idempotent: each part is skipped while its stamp matches the hash of its
# lock file. Every step is bounded by INSTALL_TIMEOUT (600 s).
#
# Usage: ./install.sh [python] [node] [nullplatform]   (default: all three)
# Environment: SDKS_CACHE (default <this dir>/.cache), INSTALL_TIMEOUT, PYTHON (python3)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
install_timeout="${INSTALL_TIMEOUT:-600}"
python="${PYTHON:-python3}"
mkdir -p "$SDKS_CACHE" "$SDKS_LOGS"

stamp_of() { sha256sum "$1" | cut -c1-16; }

install_python() {
    local venv="$SDKS_CACHE/venv" stamp
    stamp="$venv/.installed-$(stamp_of "$SDKS_DIR/requirements.txt")"
    [[ -f "$stamp" ]] && { say "python: up to date ($venv)"; return 0; }
    say "python: installing requirements.txt into $venv (log: $SDKS_LOGS/install-python.log)"
    [[ -x "$venv/bin/python" ]] || timeout "$install_timeout" "$python" -m venv "$venv"
    timeout "$install_timeout" "$venv/bin/pip" install --disable-pip-version-check --no-input \
        -r "$SDKS_DIR/requirements.txt" >"$SDKS_LOGS/install-python.log" 2>&1 || {
        say "python: install failed; last lines:"; tail -n 5 "$SDKS_LOGS/install-python.log" >&2; return 1; }
    rm -f "$venv"/.installed-*; touch "$stamp"
}

# install_npm NAME SRC_DIR: npm ci of SRC_DIR's package.json + package-lock.json in the cache.
install_npm() {
    local name="$1" src="$2" dir="$SDKS_CACHE/$1" stamp
    stamp="$dir/.installed-$(stamp_of "$src/package-lock.json")"
    [[ -f "$stamp" ]] && { say "$name: up to date ($dir)"; return 0; }
    command -v npm >/dev/null || { say "$name: npm not found"; return 1; }
    say "$name: npm ci into $dir (log: $SDKS_LOGS/install-$name.log)"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && timeout "$install_timeout" npm ci --no-audit --no-fund) \
        >"$SDKS_LOGS/install-$name.log" 2>&1 || {
        say "$name: install failed; last lines:"; tail -n 5 "$SDKS_LOGS/install-$name.log" >&2; return 1; }
    rm -f "$dir"/.installed-*; touch "$stamp"
}

parts=("$@")
((${#parts[@]})) || parts=(python node nullplatform)
status=0
for part in "${parts[@]}"; do
    case "$part" in
        python) install_python || status=1 ;;
        node) install_npm ai-fallback-node "$SDKS_DIR/ai-fallback-node" || status=1 ;;
        nullplatform) install_npm nullplatform "$SDKS_DIR/nullplatform" || status=1 ;;
        *) say "unknown part $part (known: python node nullplatform)"; exit 2 ;;
    esac
done
exit "$status"
