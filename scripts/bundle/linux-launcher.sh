#!/bin/sh
# Starts the bridge built for this machine's CPU. Claude Desktop chooses a
# bundle's command by operating system only (platform_overrides is keyed by
# process.platform), and Linux has no universal binaries as macOS has.
dir=$(dirname "$0")
case $(uname -m) in
x86_64 | amd64) exec "$dir/tairseach-mcp-amd64" "$@" ;;
aarch64 | arm64) exec "$dir/tairseach-mcp-arm64" "$@" ;;
esac
echo "tairseach-mcp: this bundle has no build for $(uname -m) (Linux: amd64 and arm64)" >&2
exit 1
