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
# The LibTorch the project was built with, and its Caffe2 config beside it (TorchConfig looks
# for Caffe2 on the prefix path first: another LibTorch installed on the system would win).
prefix_path="$scratch/prefix"
torch_args=()
if [ -n "$torch_dir" ]; then
  torch_args=("-DTorch_DIR=$torch_dir")
  prefix_path="$prefix_path;$(dirname "$torch_dir")"
fi
cmake -S "$source_dir/examples/trainer" -B "$scratch/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix_path" -DCMAKE_BUILD_TYPE=Release "${torch_args[@]}" >/dev/null
cmake --build "$scratch/build" >/dev/null
"$h5pack" convert 512:16x16x3 "$scratch/data.h5" --chunk 64 >/dev/null
"$scratch/build/trainer" "$scratch/data.h5"
