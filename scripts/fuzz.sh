#!/usr/bin/env bash
# fuzz.sh: run every fuzz target for a bounded time (FUZZTIME, default 30s
# each). A failing input is saved under the package's testdata/fuzz/ by Go;
# fix the bug and commit the input, so every `go test` replays it.
#
#   scripts/fuzz.sh              every target, 30s each
#   FUZZTIME=5m scripts/fuzz.sh  longer
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-30s}"
# Every fuzz target: `grep -rn '^func Fuzz' --include='*_test.go' .` lists them.
targets=(
	"./protocol FuzzServe"
	"./protocol FuzzDecodeMessage"
	"./protocol FuzzIDFromPrefix"
	"./protocol/safetext FuzzPolicy"
	"./manifest FuzzParse"
	"./manifest FuzzDecodeValue"
	"./registry FuzzClientName"
	"./registry FuzzSearchArguments"
	"./registry/internal/toolsearch FuzzSearch"
	"./socketclient FuzzDecodeReply"
	"./cmd/tairseach-mcp/cli FuzzJSONObject"
)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	printf '\n== %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
done
