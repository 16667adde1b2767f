#!/usr/bin/env bash
# test.sh: every check the project has, in the order a failure is cheapest
# to read. This is the README's test command and what CI runs.
#
#   scripts/test.sh            all checks
#   SKIP_INTEROP=1 scripts/test.sh   skip the Node client suite (needs the npm registry once)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "gofmt"
unformatted="$(gofmt -l .)"
if [[ -n "$unformatted" ]]; then
	echo "not gofmt-ed:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

step "go mod tidy leaves no diff"
cp go.mod "${TMPDIR:-/tmp}/go.mod.before"; cp go.sum "${TMPDIR:-/tmp}/go.sum.before"
go mod tidy
if ! cmp -s go.mod "${TMPDIR:-/tmp}/go.mod.before" || ! cmp -s go.sum "${TMPDIR:-/tmp}/go.sum.before"; then
	echo "go mod tidy changed go.mod or go.sum; run it and commit the result"
	cp "${TMPDIR:-/tmp}/go.mod.before" go.mod; cp "${TMPDIR:-/tmp}/go.sum.before" go.sum
	exit 1
fi

step "go test -race ./... (unit, end-to-end with the Go SDK client, fuzz seeds)"
go test -race -count=1 -timeout 15m ./...

step "demo (scripts/demo.sh --check)"
scripts/demo.sh --check >/dev/null

if [[ "${SKIP_INTEROP:-}" != 1 && -x scripts/interop.sh ]]; then
	step "Node clients: MCP Inspector CLI and the TypeScript SDK (scripts/interop.sh)"
	scripts/interop.sh
fi

step "all checks passed"
