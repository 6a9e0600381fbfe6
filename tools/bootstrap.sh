# Sourced by .ci/run and ./piw, never run: puts Node >= 22.19 and pnpm 12.4.2 first on PATH. When the
# machine's are missing or too old, npm installs them into a cache folder once (node@22 is on the npm
# registry), and later calls find them there. Progress goes to stderr: ./piw's stdout is the CLI's.

PIW_PNPM_VERSION=12.4.2

piw_node_is_recent() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [major, minor] = process.versions.node.split(".").map(Number); process.exit(major > 22 || (major === 22 && minor >= 19) ? 0 : 1)'
}

piw_pnpm_is_pinned() {
  [ "$(pnpm --version 2>/dev/null || true)" = "$PIW_PNPM_VERSION" ]
}

# piw_npm_install <prefix> <package>: the machine's npm, whose Node may be too old for piw itself.
piw_npm_install() {
  if ! command -v npm >/dev/null 2>&1; then
    echo "piw: needs Node 22.19 or newer and pnpm $PIW_PNPM_VERSION, or npm to install them" >&2
    return 1
  fi
  echo "piw: installing $2 into $1 (once)" >&2
  npm i -g --no-audit --no-fund --prefix "$1" "$2" >&2
}

# piw_bootstrap <cache folder>: Node and pnpm first on PATH, installed into the folder when needed.
piw_bootstrap() {
  local cache="$1"
  if ! piw_node_is_recent; then
    export PATH="$cache/node22/lib/node_modules/node/bin:$PATH"
    hash -r
    if ! piw_node_is_recent; then
      piw_npm_install "$cache/node22" node@22 || return 1
      hash -r
      if ! piw_node_is_recent; then
        echo "piw: node@22 from npm in $cache/node22 does not run here" >&2
        return 1
      fi
    fi
  fi
  if ! piw_pnpm_is_pinned; then
    export PATH="$cache/pnpm/bin:$PATH"
    hash -r
    if ! piw_pnpm_is_pinned; then
      piw_npm_install "$cache/pnpm" "pnpm@$PIW_PNPM_VERSION" || return 1
      hash -r
      if ! piw_pnpm_is_pinned; then
        echo "piw: pnpm $PIW_PNPM_VERSION from npm in $cache/pnpm does not run here" >&2
        return 1
      fi
    fi
  fi
}
