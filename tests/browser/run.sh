#!/usr/bin/env bash
# Runs the page's browser test against `hark serve` (ctest browser.ui; scripts/test runs it).
#   run.sh HARK_BINARY MAKE_TEST_MODEL_BINARY SCREENSHOT_DIR
# Exits 77 (ctest: skipped) with the reason when node, the pinned puppeteer-core (scripts/setup:
# npm ci) or Debian's Chromium is missing; nothing is downloaded here.
set -euo pipefail
cd "$(dirname "$0")"
skip() {
  echo "browser.ui: skipped: $*"
  exit 77
}
command -v node >/dev/null || skip "node is not installed (scripts/setup installs nodejs)"
[ -d node_modules/puppeteer-core ] || skip "tests/browser/node_modules is missing (scripts/setup runs npm ci there)"
CHROMIUM=${HARK_CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip "no Chromium (Debian: chromium; scripts/setup installs it)"
HARK_CLI="$1" HARK_MAKE_TEST_MODEL="$2" HARK_SCREENSHOT_DIR="$3" HARK_CHROMIUM="$CHROMIUM" \
  exec node --test --test-reporter=spec --test-concurrency=1 ui.test.mjs
