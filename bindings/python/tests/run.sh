#!/usr/bin/env bash
# ctest python.package: pytest over bindings/python/tests against the built package
# (build/python: the module and links to the Python sources), an offline pip install of the
# package, and mypy over a user of the API.
#   run.sh PYTHON PACKAGE_DIR MAKE_TEST_MODEL [WHY_NOT_BUILT]
# Makes its models (micro, micro.en) and a spoken clip (espeak-ng, sox) in a temporary folder.
# Exits 77 (ctest: skipped) with the reason when Python, the module or pytest is missing.
set -euo pipefail
cd "$(dirname "$0")"
python="${1:-/usr/bin/python3}"
pkg="${2:-}"
make_model="${3:-}"
why="${4:-}"
if [ ! -x "$python" ]; then
  echo "python.package: skipped: no Python at $python (scripts/setup installs Debian's python3)"
  exit 77
fi
if [ -z "$pkg" ] || ! ls "$pkg"/hark/_hark*.so >/dev/null 2>&1; then
  echo "python.package: skipped: the module was not built: ${why:-no _hark module in ${pkg:-?}/hark}"
  exit 77
fi
for m in pytest numpy; do
  if ! "$python" -c "import $m" 2>/dev/null; then
    echo "python.package: skipped: $python has no $m (Debian: python3-$m; scripts/setup installs it)"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_model" -o "$tmp/micro.bin" --preset micro >/dev/null
"$make_model" -o "$tmp/micro.en.bin" --preset micro.en >/dev/null
if command -v espeak-ng >/dev/null && command -v sox >/dev/null; then
  espeak-ng -w "$tmp/raw.wav" "hark transcribes speech on your own machine, from Python as well"
  sox "$tmp/raw.wav" -r 16000 -c 1 "$tmp/speech.wav"
  sox "$tmp/raw.wav" -r 44100 -c 2 "$tmp/speech-44k-stereo.flac"
  # An MP3 for the README's example (talk.mp3): sox writes none on Debian, make-test-audio does.
  make_audio="$(dirname "$make_model")/make-test-audio"
  [ -x "$make_audio" ] && "$make_audio" "$tmp/talk.mp3" --from "$tmp/speech.wav" || true
fi
export PYTHONPATH="$pkg" HARK_TEST_MICRO="$tmp/micro.bin" HARK_TEST_MICRO_EN="$tmp/micro.en.bin" \
  HARK_TEST_SPEECH="$tmp/speech.wav" HARK_TEST_SPEECH_FLAC="$tmp/speech-44k-stereo.flac" HARK_TEST_MP3="$tmp/talk.mp3" \
  HARK_SHARED_DIR="${HARK_SHARED_DIR:-$(cd ../../../.. && pwd)/shared}" HARK_MODELS="$tmp/models"
"$python" -m pytest -q -p no:cacheprovider .
# Installable offline: pip with Debian's setuptools and pybind11, no build isolation, no index.
if "$python" -m pip --version >/dev/null 2>&1; then
  HARK_BUILD_DIR="$(cd "$pkg/.." && pwd)" PIP_NO_INDEX=1 "$python" -m pip install -q --no-build-isolation --no-deps \
    --target "$tmp/site" .. 2>&1 | grep -v "Running pip as the 'root' user" || true
  (cd "$tmp" && PYTHONPATH="$tmp/site" "$python" -c "
import hark
segments, info = hark.WhisperModel('$tmp/micro.bin').transcribe('$tmp/speech.wav', language='en', beam_size=1)
assert list(segments), 'no segments from the pip-installed package'
print('python.package: pip install --no-build-isolation: the installed package transcribes')")
else
  echo "python.package: pip not installed (Debian: python3-pip): the install check is skipped"
fi
if "$python" -m mypy --version >/dev/null 2>&1; then
  "$python" -m mypy --no-error-summary --ignore-missing-imports --cache-dir "$tmp/mypy" types_usage.py
else
  echo "python.package: mypy not installed (Debian: mypy): the typing check is skipped"
fi
