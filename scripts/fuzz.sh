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
targets=(
	"./protocol FuzzServe"
	"./protocol FuzzIDFromPrefix"
	"./protocol FuzzWriteString"
	"./protocol/jsonscan FuzzValid"
	"./protocol/jsonscan FuzzDecode"
	"./protocol/jsonscan FuzzObject"
	"./protocol/jsonscan FuzzArray"
	"./protocol/jsonscan FuzzCompact"
	"./protocol/jsonscan FuzzPlain"
	"./manifest FuzzParse"
	"./manifest FuzzSurelyCompiles"
	"./manifest FuzzSurelyWellFormed"
	"./manifest FuzzArgumentsSurelyValid"
	"./registry FuzzClientName"
	"./socketclient FuzzDecodeReply"
)
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	printf '\n== %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
done
