#!/usr/bin/env bash
# The test command: every unit, property and integration test, benchmark compilation, and the
# end-to-end suite against a real local control plane.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test
cargo bench --no-run
