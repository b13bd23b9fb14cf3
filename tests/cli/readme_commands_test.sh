#!/usr/bin/env bash
# The README's command lines, run as they are printed ("Use" and "Serve over HTTP"): every
# `build/hark ...` line of the "Use" block, then the second `hark serve` line and the curl lines
# against it. They run in a folder that holds what they name: stand-in models (make-test-model)
# under the README's file names, talk.mp3 / talk.wav / interview.wav / long.wav (make-test-audio),
# the Silero model from ../shared/vad, and $HARK_MODELS with base.en and silero-v6.2.0 as a
# download leaves them. Changed only where the machine differs from a user's: `build/hark` is
# this build's binary, port 8080 is a free port, and "[--json]" (an optional flag) is left out.
# Lines that need the network (`hark download`) or a microphone (`--capture default`, arecord) are
# skipped, each with its reason printed.
# Run by ctest (readme.command_lines):
#   readme_commands_test.sh SOURCE_DIR HARK MAKE_TEST_MODEL MAKE_TEST_AUDIO SHARED_DIR
set -euo pipefail
SRC=$1 HARK=$(realpath "$2") MAKE_TEST_MODEL=$3 MAKE_TEST_AUDIO=$4 SHARED=$5
README=$SRC/README.md

fail() { echo "FAIL: $*" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hark-readme-cli.XXXXXX")
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

VAD=$SHARED/vad/silero-v6.2.0-ggml.bin
[ -f "$VAD" ] || { echo "SKIP: no Silero model at $VAD (../shared/vad): the VAD lines need it"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: no curl (Debian: curl; scripts/setup installs it)"; exit 77; }

# shellcheck source=../sh/readme_block.sh
. "$SRC/tests/sh/readme_block.sh"
# The Nth sh block under "## HEADING".
blocks() { readme_block "$README" "## $1" sh "$2"; }

W=$TMP/work
mkdir -p "$W/models"
"$MAKE_TEST_MODEL" -o "$W/ggml-base.en.bin" --preset micro.en >/dev/null
"$MAKE_TEST_MODEL" -o "$W/ggml-base.bin" --preset micro --seed 2 >/dev/null
"$MAKE_TEST_MODEL" -o "$W/ggml-small.bin" --preset micro --seed 3 >/dev/null
cp "$W/ggml-base.en.bin" "$W/models/ggml-base.en.bin"
ln -s "$VAD" "$W/ggml-silero-v6.2.0.bin"
ln -s "$VAD" "$W/models/ggml-silero-v6.2.0.bin"
for f in talk.wav interview.wav; do "$MAKE_TEST_AUDIO" "$W/$f" --seconds 4; done
"$MAKE_TEST_AUDIO" "$W/long.wav" --seconds 12
"$MAKE_TEST_AUDIO" "$W/talk.mp3" --seconds 4 2>/dev/null \
  || { echo "SKIP: this libsndfile writes no MP3 (LAME): the README's talk.mp3 cannot be made"; exit 77; }
export HARK_MODELS=$W/models

# A README line as this machine runs it.
as_here() {
  sed -E 's/[[:space:]]+# .*$//; s/ \[[^]]*\]//g' <<<"$1" | sed "s#^build/hark #$(printf '%q' "$HARK") #"
}

echo "== the \"Use\" block"
n=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  case "$line" in
    *" download base.en"*) echo "skipped (needs the network): $line"; continue ;;
    *"--capture default"* | arecord*) echo "skipped (needs a microphone): $line"; continue ;;
    "build/hark download silero-v6.2.0"*)
      # Not fetched: $HARK_MODELS already holds it, so the line must find it there and say so.
      ;;
  esac
  cmd=$(as_here "$line")
  echo "\$ $line"
  (cd "$W" && eval "$cmd" >"$TMP/out.txt" 2>"$TMP/err.txt") \
    || { cat "$TMP/out.txt" "$TMP/err.txt"; fail "the README line exits non-zero: $line"; }
  n=$((n + 1))
done < <(blocks "Use" 1)
[ "$n" -ge 12 ] || fail "only $n lines of the \"Use\" block ran: is the block still there?"
for f in talk.mp3.srt talk.mp3.json out/interview.vtt talk.wav.json talk.wav.srt talk.wav.csv talk.wav.lrc \
         ggml-base-q5_0.bin; do
  [ -s "$W/$f" ] || fail "the README says a line writes $f; it is not there"
done

echo "== \"Serve over HTTP\": the second serve line, then the curl lines"
serve_line=$(blocks "Serve over HTTP" 1 | sed -n '2,$p' | sed -E 's/\\$//' | tr -d '\n')
[[ $serve_line == "build/hark serve -m base=ggml-base.bin"* ]] || fail "the serve block changed: $serve_line"
export KEY=readme-secret
cmd=$(as_here "$serve_line")
(cd "$W" && eval "exec $cmd --port 0" >"$TMP/serve.out" 2>"$TMP/serve.err") &
SERVER_PID=$!
for _ in $(seq 100); do
  grep -q 'listening on http://127.0.0.1:' "$TMP/serve.out" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$TMP/serve.err"; fail "hark serve (the README's line) exited"; }
  sleep 0.1
done
PORT=$(sed -nE 's#.*listening on http://127\.0\.0\.1:([0-9]+).*#\1#p' "$TMP/serve.out" | head -1)
[ -n "$PORT" ] || { cat "$TMP/serve.out" "$TMP/serve.err"; fail "hark serve never said where it listens"; }
# What each curl line's answer must hold, in order: verbose_json's words (only the granularity
# asked for, as OpenAI's), the stream's last event, and (whisper.cpp's route) an SRT, empty when
# the stand-in model says nothing.
expect=('"words"' 'transcript.text.done' '')
m=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  cmd=$(as_here "${line//localhost:8080/localhost:$PORT}")
  echo "\$ $line"
  code=$(cd "$W" && eval "$cmd -s -o '$TMP/body' -w '%{http_code}'") || fail "curl failed: $line"
  [ "$code" = 200 ] || { cat "$TMP/body"; echo; fail "HTTP $code for the README line: $line"; }
  grep -qF -- "${expect[$m]:-}" "$TMP/body" || { cat "$TMP/body"; fail "no ${expect[$m]} in the answer to: $line"; }
  m=$((m + 1))
done < <(blocks "Serve over HTTP" 2 | sed -E ':a; /\\$/ { N; s/\\\n[[:space:]]*/ /; ba }')
[ "$m" -ge 3 ] || fail "only $m curl lines ran"
kill -TERM "$SERVER_PID"
code=0
wait "$SERVER_PID" || code=$?
SERVER_PID=
[ "$code" = 0 ] || { cat "$TMP/serve.err"; fail "hark serve exited $code on SIGTERM (expected 0)"; }
echo "PASS: $n command lines and $m curl lines as printed"
