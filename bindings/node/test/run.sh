#!/usr/bin/env bash
# ctest node.binding: node's test runner over bindings/node/test/*.test.js against the built
# addon, then tsc --noEmit over a TypeScript user of the API.
#   run.sh [ADDON_PATH MAKE_TEST_MODEL [WHY_NO_ADDON]]
# Without arguments (npm test): hark.node from this package's build or hark's build/, and
# make-test-model from hark's build/.
# Makes its models (micro, tiny) in a temporary folder. Exits 77 (ctest: skipped) with the reason
# when node, bindings/node/node_modules or the addon is missing; nothing is downloaded here.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  for f in build/hark.node ../../build/hark.node; do if [ -f "$f" ]; then addon="$(pwd)/$f"; break; fi; done
  set -- "${addon:-}" "$(pwd)/../../build/make-test-model"
fi
addon="${1:-}"
make_model="$2"
why="${3:-}"
if ! command -v node >/dev/null; then
  echo "node.binding: skipped: node is not installed (scripts/setup installs nodejs)"
  exit 77
fi
if [ -z "$addon" ] || [ ! -f "$addon" ]; then
  echo "node.binding: skipped: the addon was not built: ${why:-hark.node not found}"
  exit 77
fi
if [ ! -x "$make_model" ]; then
  echo "node.binding: skipped: make-test-model not found at $make_model (build hark first)"
  exit 77
fi
if [ ! -d node_modules/typescript ]; then
  echo "node.binding: skipped: bindings/node/node_modules is missing (scripts/setup runs npm ci there)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_model" -o "$tmp/micro.bin" --preset micro >/dev/null
"$make_model" -o "$tmp/tiny.bin" --preset tiny --type q8_0 >/dev/null
"$make_model" -o "$tmp/tdrz.bin" --preset micro.en --tdrz >/dev/null
"$make_model" -o "$tmp/nst.bin" --preset micro --favour-token 40 --seed 2 >/dev/null  # writes "(" now and then
export HARK_NODE_ADDON="$addon" HARK_TEST_MICRO="$tmp/micro.bin" HARK_TEST_TINY="$tmp/tiny.bin" \
       HARK_TEST_TDRZ="$tmp/tdrz.bin" HARK_TEST_NST="$tmp/nst.bin" HARK_TEST_TMP="$tmp"
export HARK_SHARED_DIR="${HARK_SHARED_DIR:-$(cd ../.. && pwd)/../shared}"
# Each job runs on a thread of its own, and glibc gives threads their own malloc arenas (up to 8
# per core), each keeping what it freed: RSS then wanders by tens of MB from run to run, which the
# leak check would read as growth. Two arenas measure hark's memory instead (flat: +3 MB over
# 800 cycles; without the cap +4 to +24 MB).
export MALLOC_ARENA_MAX=2
node --expose-gc --test --test-reporter=spec --test-concurrency=1 test/*.test.js
if [ -f test/types/tsconfig.json ]; then
  echo "node.binding: tsc --noEmit -p test/types"
  node node_modules/typescript/bin/tsc --noEmit -p test/types
fi
