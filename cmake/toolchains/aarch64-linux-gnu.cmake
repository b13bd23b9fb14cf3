# Cross-building hark for 64-bit ARM Linux on an x86-64 Debian machine:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# with Debian's cross compiler (crossbuild-essential-arm64) and the arm64 builds of the libraries
# hark links, installed beside the native ones by multiarch (dpkg --add-architecture arm64;
# scripts/setup does both). Test programs run under QEMU user mode (qemu-user):
# CMAKE_CROSSCOMPILING_EMULATOR makes ctest and gtest_discover_tests go through it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HARK_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${HARK_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${HARK_CROSS_TRIPLE}-g++)

# Libraries and headers: the multiarch folders of the arm64 packages (/usr/lib/aarch64-linux-gnu,
# /usr/include/aarch64-linux-gnu) and the architecture-independent headers in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE ${HARK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH /usr/${HARK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config reads only the arm64 .pc files (and the architecture-independent ones).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${HARK_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# qemu-aarch64 with the multiarch arm64 loader and libraries (-L /: /lib/ld-linux-aarch64.so.1 of
# libc6:arm64; the cross toolchain's loader in /usr/aarch64-linux-gnu is another Debian revision,
# and with the multiarch libc.so.6 it hangs in the first pthread_create). QEMU_CPU (QEMU's own
# variable) picks the core it emulates (max, cortex-a53, cortex-a76, neoverse-n1, ...): the
# kernel levels hark finds follow it.
find_program(HARK_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(HARK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HARK_QEMU_AARCH64};-L;/)
endif()
