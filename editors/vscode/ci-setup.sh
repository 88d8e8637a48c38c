#!/usr/bin/env bash
# CI-only setup for the VS Code extension's real-workbench test (editors/vscode/test-workbench).
#
# Idempotent: every step is skipped when its result is already there. Installs
#   - Debian packages: chromium (the headless browser that starts code-server's extension host),
#     libkrb5-dev + pkg-config (code-server's `kerberos` native module), ripgrep (seeds the
#     @vscode/ripgrep download cache, which would otherwise fetch from GitHub);
#   - code-server 4.100.3 from the npm registry into editors/vscode/.cache/code-server (the last
#     code-server release for Node 20), with the workarounds that
#     /work/shared/reference/real-clients.md ("code-server install") verified on this machine;
#   - the extension's and the harness's npm dependencies (npm ci, from the committed lock files).
# Run as root on Debian 12 with Node 20 (the CI machine). Never run on a user's machine.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="$HERE/.cache"
CS="$CACHE/code-server"
CS_VERSION=4.100.3
# code-server writes a default config under XDG_CONFIG_HOME on every start: keep it in the cache.
cs_version() { XDG_CONFIG_HOME="$CACHE/xdg-config" XDG_DATA_HOME="$CACHE/xdg-data" "$CS/node_modules/.bin/code-server" --version; }

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
[ -x /usr/bin/rg ] || need_apt+=(ripgrep)
if [ ${#need_apt[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! cs_version 2>/dev/null | grep -q "^$CS_VERSION"; then
    # @vscode/ripgrep's postinstall downloads rg from GitHub: seed its cache with Debian's rg.
    rg_cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
    rg_tar="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
    if [ ! -f "$rg_tar" ]; then
        mkdir -p "$rg_cache"
        tmp="$(mktemp -d)"
        cp /usr/bin/rg "$tmp/rg"
        tar czf "$rg_tar" -C "$tmp" rg
        rm -rf "$tmp"
    fi
    mkdir -p "$CS"
    [ -f "$CS/package.json" ] || (cd "$CS" && npm init -y >/dev/null)
    # unsafe_perm: code-server's postinstall refuses root without it.
    # nodedir: node-gyp builds against /usr/include/node instead of downloading headers.
    # yes: node-pty's postinstall runs `npx node-gyp`, fetched from the npm registry.
    (cd "$CS" && npm_config_unsafe_perm=true npm_config_nodedir=/usr npm_config_yes=true \
        npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION")
    cs_version
fi

# npm dependencies from the committed lock files (npm ci starts from scratch: only when missing).
[ -d "$HERE/node_modules" ] || (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
[ -d "$HERE/test-workbench/node_modules" ] || (cd "$HERE/test-workbench" && npm ci --no-audit --no-fund --loglevel=error)
