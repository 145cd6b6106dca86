#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds examples/trainer against it and trains
# it for one epoch on a small synthetic file.
#   example_install_test.sh BUILD_DIR SOURCE_DIR H5PACK [TORCH_DIR]
set -euo pipefail
build_dir=$1
source_dir=$2
h5pack=$3
torch_dir=${4:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
torch_args=()
[ -n "$torch_dir" ] && torch_args=("-DTorch_DIR=$torch_dir")
cmake -S "$source_dir/examples/trainer" -B "$scratch/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release "${torch_args[@]}" >/dev/null
cmake --build "$scratch/build" >/dev/null
"$h5pack" convert 512:16x16x3 "$scratch/data.h5" --chunk 64 >/dev/null
"$scratch/build/trainer" "$scratch/data.h5"
