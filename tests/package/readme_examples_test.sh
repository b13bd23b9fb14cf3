#!/usr/bin/env bash
# The README's C and C++ programs ("From C", "From C++"), run as they are printed: each is taken
# from README.md, built with the command the README gives for it (checked to be there, word for
# word) against a fresh install found through pkg-config, and run in a folder that holds what it
# names (ggml-base.en.bin: a make-test-model model; talk.mp3: an MP3 made by make-test-audio).
# Run by ctest (readme.c_and_cpp_examples); arguments come from CMakeLists.txt:
#   readme_examples_test.sh BUILD_DIR SOURCE_DIR CMAKE CC CXX PKG_CONFIG LIBDIR MAKE_TEST_MODEL MAKE_TEST_AUDIO
set -euo pipefail
BUILD=$1 SRC=$2 CMAKE=$3 CC=$4 CXX=$5 PKG_CONFIG=$6 LIBDIR=$7 MAKE_TEST_MODEL=$8 MAKE_TEST_AUDIO=$9

fail() { echo "FAIL: $*" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hark-readme.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
README=$SRC/README.md

# shellcheck source=../sh/readme_block.sh
. "$SRC/tests/sh/readme_block.sh"

"$CMAKE" --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" || { cat "$TMP/install.log"; fail "install"; }
export PKG_CONFIG_PATH=$TMP/prefix/$LIBDIR/pkgconfig
export LD_LIBRARY_PATH=$TMP/prefix/$LIBDIR
RUN=$TMP/run
mkdir -p "$RUN"
"$MAKE_TEST_MODEL" -o "$RUN/ggml-base.en.bin" --preset micro >/dev/null
if ! "$MAKE_TEST_AUDIO" "$RUN/talk.mp3" --seconds 4 2>"$TMP/mp3.err"; then
  echo "SKIP: no MP3 to feed the examples: $(cat "$TMP/mp3.err") (Debian's libsndfile encodes MP3 through LAME)"
  exit 77
fi

# build_and_run LANG HEADING FILE PRINTED_COMPILER COMPILER FLAGS...: the block, built with the
# README's command (its compiler name standing for this build's), and run; PROGRAM is what it made.
build_and_run() {
  local lang=$1 heading=$2 file=$3 printed_compiler=$4 compiler=$5; shift 5
  local printed="Build it with \`$printed_compiler $* $file \$(pkg-config --cflags --libs hark)\`"
  PROGRAM=$RUN/${file/./-}
  echo "== $heading"
  readme_block "$README" "### $heading" "$lang" >"$RUN/$file"
  [ -s "$RUN/$file" ] || fail "README.md has no \`\`\`$lang block under '### $heading'"
  grep -qF -- "$printed" "$README" || fail "README.md does not say: $printed"
  # shellcheck disable=SC2046  # pkg-config's flags are meant to split
  (cd "$RUN" && "$compiler" "$@" "$file" $("$PKG_CONFIG" --cflags --libs hark) -o "$PROGRAM") \
    || fail "the README's $heading example does not build"
  (cd "$RUN" && "$PROGRAM" >"$TMP/$file.out" 2>"$TMP/$file.err") \
    || { cat "$TMP/$file.err"; fail "the README's $heading example failed"; }
  cat "$TMP/$file.out" "$TMP/$file.err"
}

build_and_run c "From C" app.c cc "$CC" -std=c11
C_PROGRAM=$PROGRAM
grep -q 'talk.mp3: 100%' "$TMP/app.c.err" || fail "From C: no progress to 100% on stderr"
if grep -Ev '^\[[0-9]+ --> [0-9]+\] ' "$TMP/app.c.out"; then fail "From C: a line that is not a segment (above)"; fi

build_and_run cpp "From C++" app.cpp c++ "$CXX" -std=c++20
CPP_PROGRAM=$PROGRAM
grep -Eq '^[0-9]+ segments$' "$TMP/app.cpp.err" || fail "From C++: no segment count"
grep -q '^100%$' "$TMP/app.cpp.err" || fail "From C++: no progress to 100%"
if grep -Ev '^\[[0-9:.]+ --> [0-9:.]+\]  ' "$TMP/app.cpp.out"; then fail "From C++: a line that is not a segment (above)"; fi

# The error path both print: a model that is not there is named, with exit 1.
rm "$RUN/ggml-base.en.bin"
for program in "$C_PROGRAM" "$CPP_PROGRAM"; do
  code=0
  (cd "$RUN" && "$program" >/dev/null 2>"$TMP/missing.err") || code=$?
  [ "$code" = 1 ] || fail "$program: no model, exit $code (expected 1)"
  grep -q '^hark: .*ggml-base.en.bin' "$TMP/missing.err" || fail "$program: the error does not name the model: $(cat "$TMP/missing.err")"
done
echo "PASS"
