#!/usr/bin/env bash
# Runs the openai npm SDK test against `hark serve` (ctest server.openai_sdk; scripts/test runs it).
#   run.sh HARK_BINARY MAKE_TEST_MODEL_BINARY [MAKE_TEST_AUDIO_BINARY]
# Exits 77 (ctest: skipped) with the reason when node or the pinned SDK (scripts/setup: npm ci) is
# missing; nothing is downloaded here.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null; then
  echo "server.openai_sdk: skipped: node is not installed (scripts/setup installs nodejs)"
  exit 77
fi
if [ ! -d node_modules/openai ]; then
  echo "server.openai_sdk: skipped: tests/server/openai_sdk/node_modules is missing (scripts/setup runs npm ci there)"
  exit 77
fi
HARK_CLI="$1" HARK_MAKE_TEST_MODEL="$2" HARK_MAKE_TEST_AUDIO="${3:-}" exec node --test --test-reporter=spec sdk.test.mjs
