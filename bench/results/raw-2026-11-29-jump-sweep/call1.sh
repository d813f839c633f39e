#!/usr/bin/env bash
# One H200: jump_sweep (built here from the library at HEAD).
set -u
R=$OUT/r && mkdir -p "$R" /tmp/pp && tar -xJf .carry/c2.tar.xz -C /tmp/pp
timeout 500 /tmp/pp/jump_sweep 2>&1 | tee "$R/sweep.txt"
cd $OUT && tar -czf results.tar.gz r && rm -rf r
