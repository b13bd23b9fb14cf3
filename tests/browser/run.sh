#!/usr/bin/env bash
# Runs the page's browser test against `hark serve` (ctest browser.ui and browser.ui_firefox;
# scripts/test runs them).
#   run.sh HARK_BINARY MAKE_TEST_MODEL_BINARY SCREENSHOT_DIR [chromium|firefox]
# Exits 77 (ctest: skipped) with the reason when node, the pinned puppeteer-core (scripts/setup:
# npm ci) or the browser (Debian's chromium, firefox-esr) is missing; nothing is downloaded here.
set -euo pipefail
cd "$(dirname "$0")"
BROWSER=${4:-chromium}
skip() {
  echo "browser.ui ($BROWSER): skipped: $*"
  exit 77
}
command -v node >/dev/null || skip "node is not installed (scripts/setup installs nodejs)"
[ -d node_modules/puppeteer-core ] || skip "tests/browser/node_modules is missing (scripts/setup runs npm ci there)"
case "$BROWSER" in
  chromium) EXE=$(command -v chromium || true); PKG=chromium ;;
  firefox) EXE=$(command -v firefox-esr || command -v firefox || true); PKG=firefox-esr ;;
  *) echo "run.sh: unknown browser $BROWSER (chromium or firefox)"; exit 2 ;;
esac
[ -n "$EXE" ] || skip "no $BROWSER (Debian: $PKG; scripts/setup installs it)"
# Firefox runs an AudioContext only with a sound server: a private PulseAudio daemon with a null
# sink (its own socket and folder, anonymous auth), stopped on exit.
if [ "$BROWSER" = firefox ] && command -v pulseaudio >/dev/null && command -v pactl >/dev/null; then
  pulse=$(mktemp -d)
  export XDG_RUNTIME_DIR="$pulse" PULSE_RUNTIME_PATH="$pulse/run" PULSE_SERVER="unix:$pulse/sock"
  pulseaudio --daemonize=no --exit-idle-time=-1 -n --disable-shm=yes \
    --load="module-native-protocol-unix auth-anonymous=1 socket=$pulse/sock" \
    --load="module-null-sink sink_name=hark_null" >"$pulse/daemon.log" 2>&1 &
  pulse_pid=$!
  trap 'kill $pulse_pid 2>/dev/null; wait $pulse_pid 2>/dev/null; rm -rf "$pulse"' EXIT
  for _ in $(seq 50); do pactl info >/dev/null 2>&1 && break; sleep 0.1; done
  pactl info >/dev/null 2>&1 || { echo "browser.ui (firefox): no PulseAudio daemon: $(tail -3 "$pulse/daemon.log")"; unset PULSE_SERVER; }
fi
HARK_CLI="$1" HARK_MAKE_TEST_MODEL="$2" HARK_SCREENSHOT_DIR="$3" HARK_BROWSER="$BROWSER" HARK_BROWSER_PATH="$EXE" \
  node --test --test-reporter=spec --test-concurrency=1 ui.test.mjs
