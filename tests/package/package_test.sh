#!/usr/bin/env bash
# Installs the built tree into a temporary prefix and uses it as an outside project would:
#   - the installed files are the public ones (headers, libhark.so*, hark.pc, CMake package, CLI);
#   - libhark.so has SONAME libhark.so.0 and exports the public API only (no internals);
#   - tests/package/outside/ builds with pkg-config and with find_package(hark), and both programs
#     load a model (made with make-test-model) and transcribe a tone through the installed library.
# Run by ctest (package.install_and_use); arguments come from CMakeLists.txt:
#   package_test.sh BUILD_DIR SOURCE_DIR CMAKE CXX PKG_CONFIG LIBDIR MAKE_TEST_MODEL GENERATOR
set -euo pipefail
BUILD=$1 SRC=$2 CMAKE=$3 CXX=$4 PKG_CONFIG=$5 LIBDIR=$6 MAKE_TEST_MODEL=$7 GENERATOR=$8

fail() { echo "FAIL: $*" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hark-package.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
LIB=$PREFIX/$LIBDIR

echo "== install into $PREFIX"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" || { cat "$TMP/install.log"; fail "install"; }
for f in include/hark/hark.hpp include/hark/error.hpp include/hark/export.h include/hark/log.hpp \
         include/hark/version.h "$LIBDIR/libhark.so" "$LIBDIR/libhark.so.0" "$LIBDIR/libhark.so.0.1.0" \
         "$LIBDIR/pkgconfig/hark.pc" "$LIBDIR/cmake/hark/harkConfig.cmake" \
         "$LIBDIR/cmake/hark/harkConfigVersion.cmake" "$LIBDIR/cmake/hark/harkTargets.cmake" bin/hark; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
# Only the public headers, and no test, tool or benchmark binaries (nor the static core).
extra=$(cd "$PREFIX" && find . -type f ! -path './include/hark/*' ! -path "./$LIBDIR/libhark.so*" \
        ! -path "./$LIBDIR/pkgconfig/hark.pc" ! -path "./$LIBDIR/cmake/hark/*" ! -path ./bin/hark)
[ -z "$extra" ] || fail "installed but not part of the package: $extra"
grep -q 'HARK_VERSION_STRING "0.1.0"' "$PREFIX/include/hark/version.h" || fail "version.h"

echo "== exports of libhark.so"
soname=$(readelf -d "$LIB/libhark.so.0.1.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libhark.so.0 ] || fail "SONAME is '$soname', expected libhark.so.0"
nm -DC --defined-only "$LIB/libhark.so" | cut -c18- >"$TMP/exports.txt"
echo "exported symbols: $(wc -l <"$TMP/exports.txt") ($(grep -c 'hark::' "$TMP/exports.txt") C++ hark::," \
     "$(grep -c '^T hark_' "$TMP/exports.txt" || true) C hark_*, the rest std:: template instantiations)"
# Internal namespaces and the runtime's classes must stay hidden.
if grep -E 'hark::(ops|decode|frontend|audio|model|runtime|backend|cpu|ref|reference|logging|detail|transcribe|capi)::|hark::([A-Za-z_]+::)*(Tensor|Graph|GraphAllocator|Backend|Buffer|BufferType|Scheduler|Registry|ThreadPool|KvCache|WhisperRunner|ModelFile|Vocab)\b|\(anonymous namespace\)' \
     "$TMP/exports.txt"; then
  # A std:: template over an internal enum is exported too: GCC gives enums no hidden visibility.
  # Wrap such an enum in a struct (classes are hidden) or keep it in an anonymous namespace.
  fail "libhark.so exports internal symbols (above)"
fi
# Every exported hark:: name is one the installed headers declare (the last identifier: function,
# or class for typeinfo and vtables).
sed -nE 's/^[A-Za-z] (typeinfo name for |typeinfo for |vtable for )?(hark::[A-Za-z0-9_:]*[A-Za-z0-9_]).*/\2/p' \
  "$TMP/exports.txt" | sed -E 's/.*:://' | sort -u >"$TMP/names.txt"
while read -r name; do
  grep -rqw -- "$name" "$PREFIX/include/hark" || fail "libhark.so exports hark::...::$name, which no public header declares"
done <"$TMP/names.txt"
# The C API's functions likewise (hark.h), and nothing else but the standard library's template
# instantiations, which C++ exports weakly wherever they are used.
sed -nE 's/^T (hark_[A-Za-z0-9_]+)$/\1/p' "$TMP/exports.txt" | while read -r name; do
  grep -rqw -- "$name" "$PREFIX/include/hark" || fail "libhark.so exports $name, which no public header declares"
done
if grep -vE 'hark::|^[A-Za-z] hark_[A-Za-z0-9_]+$|std::|__gnu_cxx::' "$TMP/exports.txt"; then
  fail "libhark.so exports symbols outside the API (above)"
fi
grep -q '^T hark::Context::load(' "$TMP/exports.txt" || fail "hark::Context::load is not exported"
grep -q '^V typeinfo for hark::Error$' "$TMP/exports.txt" || fail "hark::Error's typeinfo is not exported"

echo "== test model"
"$MAKE_TEST_MODEL" -o "$TMP/micro.bin" --preset micro --type q4_0 >/dev/null

# Each program must run on the installed library, not the build tree's.
check_loads_installed() {  # check_loads_installed PROGRAM (with LD_LIBRARY_PATH as the caller set it)
  local found
  found=$(ldd "$1" | awk '$1 == "libhark.so.0" { print $3 }')
  [ -n "$found" ] && [ "$(realpath "$found")" = "$(realpath "$LIB/libhark.so.0")" ] \
    || { ldd "$1"; fail "$1 does not load $LIB/libhark.so.0"; }
}
check_run() {  # check_run PROGRAM
  check_loads_installed "$1"
  "$1" "$TMP/micro.bin" | tee "$TMP/out.txt"
  grep -q '^hark 0.1.0 (headers 0.1.0)$' "$TMP/out.txt" || fail "$1: version line"
  grep -q '^caught hark::Error$' "$TMP/out.txt" || fail "$1: hark::Error not caught"
  grep -Eq '^model .*, segments: [0-9]+$' "$TMP/out.txt" || fail "$1: segments line"
}

echo "== pkg-config"
export PKG_CONFIG_PATH=$LIB/pkgconfig
[ "$("$PKG_CONFIG" --modversion hark)" = 0.1.0 ] || fail "pkg-config --modversion hark"
# shellcheck disable=SC2046  # the flags are meant to split
"$CXX" -std=c++20 -o "$TMP/outside-pc" "$SRC/tests/package/outside/main.cpp" $("$PKG_CONFIG" --cflags --libs hark)
LD_LIBRARY_PATH=$LIB check_run "$TMP/outside-pc"

echo "== find_package(hark)"
"$CMAKE" -S "$SRC/tests/package/outside" -B "$TMP/outside-cmake" -G "$GENERATOR" \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Release >"$TMP/cmake.log" \
  || { cat "$TMP/cmake.log"; fail "configure of the find_package project"; }
"$CMAKE" --build "$TMP/outside-cmake" >"$TMP/build.log" || { cat "$TMP/build.log"; fail "build of the find_package project"; }
check_run "$TMP/outside-cmake/outside"  # CMake's build rpath points at the installed library

echo "== installed CLI"
check_loads_installed "$PREFIX/bin/hark"  # by its rpath, $ORIGIN/../lib
"$PREFIX/bin/hark" --version | grep -q '0.1.0' || fail "bin/hark --version"
echo "PASS"
