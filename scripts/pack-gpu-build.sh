#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs the CUDA build made on this machine into .carry/ (git-ignored) for the device machine:
# test and benchmark binaries plus the shared libraries they need that Ubuntu may lack.
# On the device: tar -xJf .carryz/carry.tar.xz && STRATA_PREBUILT=.carry bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/cuda}
rm -rf .carry && mkdir -p .carry/tests .carry/bench .carry/lib .carry/src .carry/examples
cp "$build"/tests/*_test "$build"/tests/issue12_repro .carry/tests/
cp "$build"/bench/strata_bench .carry/bench/
cp "$build/src/strata" .carry/src/
cp "$build/examples/particles" "$build/examples/layer_norm_example" "$build/examples/libstrata_norm.so" .carry/examples/
for name in quick_start thrust_algorithms aos_file nested_records particle_lifecycle several_gpus foreign_memory; do
  [ -x "$build/examples/$name" ] && cp "$build/examples/$name" .carry/examples/
done
[ -x "$build/bench/norm_sweep" ] && cp "$build/bench/norm_sweep" .carry/bench/
[ -x "$build/bench/distributed_bench" ] && cp "$build/bench/distributed_bench" .carry/bench/
for bin in .carry/tests/* .carry/bench/* .carry/src/* .carry/examples/*; do
  ldd "$bin" | awk '/benchmark|gtest/ {print $3}' | while read -r lib; do [ -f "$lib" ] && cp -L "$lib" .carry/lib/; done
done
strip --strip-debug .carry/tests/* .carry/bench/* .carry/src/* .carry/examples/* 2>/dev/null || true
# The device tool carries at most 64 MiB: the binaries travel compressed (.carryz/, git-ignored);
# on the device: tar -xJf .carryz/carry.tar.xz, then STRATA_PREBUILT=.carry.
rm -rf .carryz && mkdir -p .carryz && tar -cJf .carryz/carry.tar.xz .carry
du -sh .carry .carryz
