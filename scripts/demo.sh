#!/usr/bin/env bash
# demo.sh: build the bridge and the example backend, start the backend on a
# temporary socket, run the bridge over the example manifests, pipe it a
# short hand-written MCP session (tools, a resource read, a prompt, a
# tool whose backend reports its progress, a confirmation, a task), and
# show the responses. Everything it starts is stopped, and everything it
# creates removed, when it exits.
#
#   scripts/demo.sh           show the session
#   scripts/demo.sh --check   also verify every response (used by the tests)
set -euo pipefail

check=false
[[ "${1:-}" == "--check" ]] && check=true

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tsdemo.XXXXXX")"
backend_pid=""
cleanup() {
	if [[ -n "$backend_pid" ]] && kill -0 "$backend_pid" 2>/dev/null; then
		kill "$backend_pid" 2>/dev/null || true
		wait "$backend_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf '\033[1m%s\033[0m\n' "$*" >&2; }

say "building tairseach-mcp and tairseach-example-backend"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$work/bin/" ./cmd/tairseach-mcp ./cmd/tairseach-example-backend)

sock="$work/backend.sock"
mkdir -p "$work/data" "$work/shared"
printf 'hello from the demo\n' >"$work/shared/readme.txt"
mkdir -p "$work/shared/photos"

say "starting the example backend on $sock"
"$work/bin/tairseach-example-backend" -socket "$sock" -data "$work/data" -files-root "$work/shared" \
	2>"$work/backend.log" &
backend_pid=$!
for _ in $(seq 1 100); do
	[[ -S "$sock" ]] && break
	kill -0 "$backend_pid" 2>/dev/null || { cat "$work/backend.log" >&2; exit 1; }
	sleep 0.05
done
[[ -S "$sock" ]] || { say "the backend did not start"; cat "$work/backend.log" >&2; exit 1; }

session=(
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}'
	'{"jsonrpc":"2.0","method":"notifications/initialized"}'
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"groceries","body":"oat milk, bread"}}}'
	'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tairseach_files_list","arguments":{"path":"."}}}'
	'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"tairseach_secrets_read","arguments":{"name":"api-key"}}}'
	'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":42}}}'
	'{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"tairseach://system/status"}}'
	'{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"tairseach_notes_summarize","arguments":{"topic":"groceries"}}}'
	'{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"info"}}'
	'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"tairseach_notes_import","arguments":{"count":3,"delay_ms":200},"_meta":{"progressToken":"import"}}}'
)

say "running: tairseach-mcp --socket $sock --manifests manifests-example"
printf '%s\n' "${session[@]}" |
	"$work/bin/tairseach-mcp" --socket "$sock" --manifests "$root/manifests-example" --log-level warn \
		>"$work/out.jsonl" 2>"$work/bridge.log"

# One line per exchange: what was asked, and the gist of the answer.
# Calls run concurrently, so responses may come in any order: shown by id.
gist() { # gist ID: the response's text, or its tool names for a list
	local line
	line="$(grep "\"id\":$1," "$work/out.jsonl" || true)"
	case "$line" in
	*'"protocolVersion":'*)
		printf 'protocol %s, server %s\n' "$(grep -o '"protocolVersion":"[^"]*"' <<<"$line" | cut -d'"' -f4)" \
			"$(grep -o '"serverInfo":{"name":"[^"]*"' <<<"$line" | cut -d'"' -f6)" ;;
	*'"contents":['* | *'"messages":['*)
		# The text of a resource read, or of a prompt's last message.
		sed -e 's/.*"text":"//' -e 's/"}]}}$//' -e 's/"}}]}}$//' <<<"$line" | sed 's/\\n/ · /g; s/\\"/"/g' | cut -c1-150 ;;
	*'"tools":['*)
		local names
		names="$(grep -o '"name":"tairseach_[a-z_]*"' <<<"$line" | cut -d'"' -f4)"
		printf '%s tools: %s\n' "$(wc -l <<<"$names" | tr -d ' ')" "$(tr '\n' ' ' <<<"$names")" ;;
	*'"text":'*)
		local text
		text="$(sed -e 's/.*"text":"//' -e 's/","type".*//' -e 's/"}\].*//' <<<"$line" | sed 's/\\n/ · /g; s/\\"/"/g' | cut -c1-150)"
		[[ "$line" == *'"isError":true'* ]] && text="isError: $text"
		printf '%s\n' "$text" ;;
	*) cut -c1-150 <<<"$line" ;;
	esac
}
describe=(
	""
	"initialize (protocol 2025-11-25)"
	"tools/list"
	"tools/call tairseach_notes_create {title: groceries}"
	"tools/call tairseach_files_list {path: .}"
	"tools/call tairseach_secrets_read (the backend refuses it)"
	"tools/call tairseach_notes_create {title: 42} (bad arguments)"
	"resources/read tairseach://system/status"
	"prompts/get tairseach_notes_summarize {topic: groceries}"
)
for id in 1 2 3 4 5 6 7 8; do
	printf '\033[1m→ %s\033[0m\n  ← %s\n' "${describe[$id]}" "$(gist "$id")"
done
# The backend speaks during the call (docs/backend-protocol.md): progress
# after each note, which the bridge passes on for the request's progress
# token, and a log message at the level the client asked for.
progress="$(grep '"method":"notifications/progress"' "$work/out.jsonl" | grep -o '"message":"[^"]*"' | cut -d'"' -f4 | paste -sd'|' - | sed 's/|/ · /g' || true)"
logged="$(grep '"method":"notifications/message"' "$work/out.jsonl" | grep -o '"data":"[^"]*"' | cut -d'"' -f4 || true)"
printf '\033[1m→ %s\033[0m\n  ← %s\n  ← %s\n  ← %s\n' "tools/call tairseach_notes_import {count: 3, delay_ms: 200}, with a progress token, after logging/setLevel info" \
	"progress: ${progress:-none}" "log message: ${logged:-none}" "$(gist 10)"
# A destructive tool: the bridge asks the user, through a client that
# declared elicitation, before it calls the backend. This client reads the
# bridge's output as it comes, to answer the question when it is asked.
coproc BRIDGE { "$work/bin/tairseach-mcp" --socket "$sock" --manifests "$root/manifests-example" --log-level warn 2>>"$work/bridge.log"; }
send() { printf '%s\n' "$1" >&"${BRIDGE[1]}"; printf '%s\n' "$1" >>"$work/asked.in"; }
next() { local line; IFS= read -r -t 10 line <&"${BRIDGE[0]}" || line=""; printf '%s\n' "$line" >>"$work/asked.jsonl"; printf '%s' "$line"; }
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"demo","version":"1"}}}'
next >/dev/null
send '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_notes_delete","arguments":{"id":"0a1b"}}}'
question="$(next)"
qid="$(grep -o '"id":"tairseach-[0-9]*"' <<<"$question" | cut -d'"' -f4 || true)"
send "{\"jsonrpc\":\"2.0\",\"id\":\"$qid\",\"result\":{\"action\":\"accept\",\"content\":{\"confirm\":false}}}"
refused="$(next)"
exec {BRIDGE[1]}>&-
wait "$BRIDGE_PID" 2>/dev/null || true
printf '\033[1m→ %s\033[0m\n  ← %s\n  → %s\n  ← %s\n' "tools/call tairseach_notes_delete {id: 0a1b}, from a client that can ask its user" \
	"the bridge asks first: $(grep -o '"message":"[^"]*"' <<<"$question" | cut -d'"' -f4)" \
	"the user answers no" \
	"$(sed -e 's/.*"text":"//' -e 's/"}\].*//' <<<"$refused" | cut -c1-150)"

# A call that outlives its request: notes.import declares taskSupport
# optional, so a client that can take a task gets one and polls it. call
# --task runs it as such a client does, its progress on stderr.
"$work/bin/tairseach-mcp" call --task --socket "$sock" --manifests "$root/manifests-example" \
	tairseach_notes_import '{"count":3,"delay_ms":400}' >"$work/task.out" 2>"$work/task.err" || true
printf '\033[1m→ %s\033[0m\n' "call --task tairseach_notes_import {count: 3} (a task: status polled, progress shown)"
sed 's/^/  ← /' "$work/task.err"
printf '  ← %s\n' "$(tr -d ' \n' <"$work/task.out" | cut -c1-150)"

say "the full responses: rerun with DEMO_RAW=1"
if [[ -n "${DEMO_RAW:-}" ]]; then cat "$work/out.jsonl"; fi

if [[ -s "$work/bridge.log" ]]; then
	say "bridge stderr:"
	cat "$work/bridge.log" >&2
fi

if $check; then
	fail=0
	expect() { # expect ID PATTERN DESCRIPTION
		if ! grep -q "\"id\":$1,.*$2" "$work/out.jsonl"; then
			say "FAIL: response $1: $3"
			fail=1
		fi
	}
	responses="$(grep -c '^{"jsonrpc":"2.0","id":' "$work/out.jsonl" || true)"
	[[ "$responses" -eq 10 ]] || { say "FAIL: want 10 responses, got $responses"; fail=1; }
	expect 1 '"protocolVersion":"2025-11-25"' "initialize negotiates 2025-11-25"
	expect 2 '"name":"tairseach_notes_create"' "tools/list lists the notes tools"
	expect 3 '"structuredContent":{"id":' "a note is created"
	expect 4 'readme.txt' "files.list lists the shared folder"
	expect 5 '"isError":true' "secrets.read fails"
	expect 5 'error -32011' "with the backend's permission error"
	expect 6 'Invalid arguments' "bad arguments never reach the backend"
	expect 7 '"uri":"tairseach://system/status","mimeType":"application/json","text":"{\\"status\\":\\"ok\\"' "the status resource is read from the backend"
	expect 8 'Find my notes about \\"groceries\\"' "the prompt's argument is filled in"
	expect 10 '"structuredContent":{"imported":3,"ids":\[' "notes.import imports three notes"
	grep -q '"method":"notifications/progress","params":{"progressToken":"import","progress":3,"total":3,"message":"3 of 3 notes"}' "$work/out.jsonl" ||
		{ say "FAIL: no progress 3 of 3 for the import"; fail=1; }
	grep -q '"method":"notifications/message".*"data":"imported 3 notes"' "$work/out.jsonl" || { say "FAIL: no log message from the import"; fail=1; }
	if grep -q '"method":"notes.create"' "$work/backend.log" && [[ $(grep -c '"method":"notes.create"' "$work/backend.log") -gt 1 ]]; then
		say "FAIL: the invalid call reached the backend"; fail=1
	fi
	grep -q '"method":"elicitation/create".*"message":"Delete the note 0a1b for good' "$work/asked.jsonl" || { say "FAIL: the bridge did not ask before notes.delete"; fail=1; }
	grep -q '"id":2,.*did not allow.*"isError":true' "$work/asked.jsonl" || { say "FAIL: a no does not refuse the call"; fail=1; }
	if grep -q '"method":"notes.delete"' "$work/backend.log"; then
		say "FAIL: the backend was asked to delete after a no"; fail=1
	fi
	grep -q 'working' "$work/task.err" && grep -q ': completed' "$work/task.err" || { say "FAIL: notes.import did not run as a task"; fail=1; }
	grep -q '"imported": 3' "$work/task.out" || { say "FAIL: the task's result is not the import's"; fail=1; }
	[[ $fail -eq 0 ]] && say "demo check passed"
	exit $fail
fi
