#!/usr/bin/env bash
# setup.sh — install what ipusim needs on Debian 12 (as root, or with sudo)
# and build it in ./build.  Safe to run again: installs only what is missing.
#
#   bash tests/setup.sh            # Release-with-debug-info build in build/
#   BUILD_DIR=build-asan CMAKE_ARGS=-DIPUSIM_SANITIZE=ON bash tests/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libopenblas-dev libelf-dev libreadline-dev
          libcunit1-dev libcjson-dev tmux
          libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
