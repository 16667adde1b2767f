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

step "staticcheck"
# Pinned, installed into the ignored .cache/ on first use.
staticcheck_version=v0.8.2
staticcheck="$root/.cache/bin/staticcheck-$staticcheck_version"
if [[ ! -x "$staticcheck" ]]; then
	mkdir -p "$root/.cache/bin"
	GOBIN="$root/.cache/bin" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version"
	mv "$root/.cache/bin/staticcheck" "$staticcheck"
fi
"$staticcheck" ./...

step "go mod tidy leaves no diff"
saved="$(mktemp -d)"
trap 'rm -rf "$saved"' EXIT
cp go.mod go.sum "$saved/"
go mod tidy
if ! cmp -s go.mod "$saved/go.mod" || ! cmp -s go.sum "$saved/go.sum"; then
	echo "go mod tidy changed go.mod or go.sum; run it and commit the result"
	cp "$saved/go.mod" "$saved/go.sum" .
	exit 1
fi

if [[ ! -d "$root/../shared/mcp-schema" ]]; then
	printf '\n\033[1;33m!! ../shared/mcp-schema is missing: every test runs, but the check of each message against\n!! the official MCP schemas is SKIPPED (TestTheOfficialSchemasAreHere says so). CI provides\n!! the folder and fails without it; see docs/development.md.\033[0m\n'
fi

step "go test -race ./... (unit, end-to-end with the Go SDK client, fuzz seeds)"
go test -race -count=1 -timeout 15m ./...

step "the fault tables without the race detector, whose memory hides the bridge's (peak RSS bounds)"
go test -count=1 -run 'TestFaultTable|TestHeldBytesTable' ./cmd/tairseach-mcp

step "demo (scripts/demo.sh --check)"
scripts/demo.sh --check >/dev/null

if [[ "${SKIP_INTEROP:-}" != 1 && -x scripts/interop.sh ]]; then
	step "Node clients: MCP Inspector CLI and the TypeScript SDK (scripts/interop.sh)"
	scripts/interop.sh
fi

step "all checks passed"
