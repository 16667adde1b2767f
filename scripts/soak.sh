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
