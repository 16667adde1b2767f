#!/usr/bin/env bash
# bundle.sh: build tairseach-mcp.mcpb, the MCP Bundle that Claude Desktop
# installs with a double click. It holds the bridge for macOS (one universal
# binary for Apple silicon and Intel) and Linux (amd64 and arm64, chosen by a
# small launcher), and scripts/bundle/manifest.json, whose settings (manifests
# folder, socket, read-only) Claude Desktop asks for at install time.
#
# Needs Go and npm: the bundle is packed by the official MCPB CLI,
# @anthropic-ai/mcpb at the version pinned in scripts/interop/package.json,
# through `npm exec`, or the installed copy that MCPB_CLI names (a cli.js, run
# with MCPB_NODE or node; scripts/interop.sh passes its own).
#
#   scripts/bundle.sh                  ./tairseach-mcp.mcpb, version from git describe
#   scripts/bundle.sh 1.2.0            version 1.2.0 (semver)
#   scripts/bundle.sh -o DIR/x.mcpb    another output file
#   scripts/bundle.sh --stage DIR      keep the unpacked bundle in DIR (new or empty)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
die() { printf 'bundle: %s\n' "$*" >&2; exit 1; }

out="$root/tairseach-mcp.mcpb" stage="" version=""
while (($#)); do
	case "$1" in
	-o | --out) out="${2:?"$1 needs a file"}"; shift 2 ;;
	--stage) stage="${2:?"$1 needs a folder"}"; shift 2 ;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) version="${1#v}"; shift ;;
	esac
done

# The version: a v-tag on this commit (v1.2.0 → 1.2.0); after a tag, that
# tag with the commit as build metadata (1.2.0+3.gabc1234); with no tag,
# 0.0.0-dev+gabc1234 (.dirty when the work tree has changes).
if [[ -z "$version" ]]; then
	d="$(git -C "$root" describe --tags --match 'v[0-9]*' --long --dirty --always 2>/dev/null || true)"
	if [[ "$d" =~ ^v(.+)-([0-9]+)-g([0-9a-f]+)(-dirty)?$ ]]; then
		version="${BASH_REMATCH[1]}"
		[[ "${BASH_REMATCH[2]}" == 0 && -z "${BASH_REMATCH[4]}" ]] ||
			version+="+${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}${BASH_REMATCH[4]:+.dirty}"
	elif [[ "$d" =~ ^([0-9a-f]+)(-dirty)?$ ]]; then
		version="0.0.0-dev+g${BASH_REMATCH[1]}${BASH_REMATCH[2]:+.dirty}"
	else
		die "not a git checkout: give the version, e.g. scripts/bundle.sh 1.0.0"
	fi
fi
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
	die "version $version is not a semantic version (MAJOR.MINOR.PATCH[-pre][+build])"

# The official CLI, pinned.
if [[ -n "${MCPB_CLI:-}" ]]; then
	mcpb() { "${MCPB_NODE:-node}" "$MCPB_CLI" "$@"; }
else
	pin="$(sed -n 's|^ *"@anthropic-ai/mcpb": *"\([^"]*\)".*|\1|p' "$root/scripts/interop/package.json")"
	[[ -n "$pin" ]] || die "no @anthropic-ai/mcpb version in scripts/interop/package.json"
	command -v npm >/dev/null 2>&1 || die "npm is needed to run the MCPB CLI (@anthropic-ai/mcpb@$pin)"
	mcpb() { npm exec --yes --package="@anthropic-ai/mcpb@$pin" -- mcpb "$@"; }
fi

# Absolute paths: the builds run from the repository's root.
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
if [[ -z "$stage" ]]; then
	stage="$(mktemp -d "${TMPDIR:-/tmp}/tairseach-bundle.XXXXXX")"
	trap 'rm -rf "$stage"' EXIT
elif [[ -e "$stage" && -n "$(ls -A "$stage")" ]]; then
	die "--stage $stage is not empty"
fi
mkdir -p "$stage/server/darwin" "$stage/server/linux"
stage="$(cd "$stage" && pwd)"

# build GOOS GOARCH OUT: the bridge, static, without local paths.
build() {
	printf 'building %s/%s\n' "$1" "$2"
	(cd "$root" && GOOS="$1" GOARCH="$2" CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/cli.buildVersion=v$version" \
		-o "$3" ./cmd/tairseach-mcp)
}
build darwin arm64 "$stage/darwin-arm64"
build darwin amd64 "$stage/darwin-amd64"
(cd "$root" && go run scripts/bundle/lipo.go "$stage/server/darwin/tairseach-mcp" "$stage/darwin-arm64" "$stage/darwin-amd64")
rm "$stage/darwin-arm64" "$stage/darwin-amd64"
build linux amd64 "$stage/server/linux/tairseach-mcp-amd64"
build linux arm64 "$stage/server/linux/tairseach-mcp-arm64"
cp "$root/scripts/bundle/linux-launcher.sh" "$stage/server/linux/tairseach-mcp"
chmod 755 "$stage/server/darwin/tairseach-mcp" "$stage/server/linux/"*
sed "s/@VERSION@/$version/" "$root/scripts/bundle/manifest.json" >"$stage/manifest.json"

# pack validates the manifest first.
if ! log="$(mcpb pack "$stage" "$out" 2>&1)"; then
	printf '%s\n' "$log" >&2
	die "mcpb pack failed"
fi
printf '%s: tairseach-mcp %s for macOS (arm64, x86_64) and Linux (amd64, arm64), %s bytes\n' \
	"$out" "$version" "$(wc -c <"$out" | tr -d ' ')"
printf 'Install: open it with Claude Desktop (double click), then Install.\n'
