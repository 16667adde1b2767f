#!/usr/bin/env bash
# soak.sh: repeat the fault tests (backend restarts under load, misbehaving
# backend, stalled client, stdin flood, manifest churn, the fault table) under the race
# detector, for a bounded number of rounds (SOAK_ROUNDS, default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${SOAK_ROUNDS:-20}"
go test -race -count="$rounds" -timeout 60m \
	-run 'TestBackendKilledAndRestartedDuringPipelinedLoad|TestBackendMisbehaviourFailsOnlyThatCall|TestAClientThatStopsReadingGetsBackpressureNotBloat|TestStdinFloodAndGarbage|TestManifestChurnUnderLoad|TestFaultTable' \
	./cmd/tairseach-mcp/
# Then a long randomised mix of valid calls and hostile input of every
# class (SOAK_RANDOM, default 3m); it logs its seed, which
# TAIRSEACH_SOAK_SEED replays.
TAIRSEACH_SOAK="${SOAK_RANDOM:-3m}" go test -race -count=1 -timeout 60m -run 'TestRandomisedHostileMix' -v ./cmd/tairseach-mcp/ | grep -E 'seed|requests|FAIL|ok|---'
