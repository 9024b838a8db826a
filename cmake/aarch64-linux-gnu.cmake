# aarch64-linux-gnu.cmake - a cross build for arm64 (Graviton, Ampere) from an x86-64 Debian host:
# Debian's gcc-aarch64-linux-gnu, its libc6-dev-arm64-cross, and the arm64 (multiarch) -dev
# packages of jflame's libraries (scripts/deps.sh installs them all: dpkg --add-architecture arm64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# the cross libc's root, then the host's root for the multiarch libraries (/usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config reads the arm64 libraries' .pc files only
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# tests built here run under qemu-user (Debian's qemu-user-static), the arm64 libraries
# from the multiarch paths: ctest prefixes the test executables with it
find_program(JFLAME_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(JFLAME_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${JFLAME_QEMU_AARCH64})
endif()
