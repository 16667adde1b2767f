#!/usr/bin/env bash
# tap.sh LOG COMMAND [ARGS...]: run COMMAND with everything written to its
# standard input also appended to LOG, so that scripts/interop.sh can check
# what a client really sent (which protocol era it spoke). Standard output
# and standard error pass through untouched.
set -uo pipefail
log="$1"
shift
tee -a "$log" | "$@"
