#!/bin/bash
# The host model of gather's count (../raw-2026-11-29-jump-sweep/choice_model.cpp) with a sampled
# line in every 16 lines (as before) and in every 64: the picks and window-count shares of each.
set -eu
cd "$(dirname "$0")"
M=../raw-2026-11-29-jump-sweep/choice_model.cpp
for L in 16 64; do
  sed "s/constexpr long line = 32, lines = 16,/constexpr long line = 32, lines = $L,/" $M > /tmp/cm$L.cpp
  g++ -O3 -fopenmp -o /tmp/cm$L /tmp/cm$L.cpp
  /tmp/cm$L > model-lines-$L.txt
done
paste -d'#' <(grep "^| f\|^| re" model-lines-16.txt) <(grep "^| f\|^| re" model-lines-64.txt) |
  awk -F'#' '{split($1,a,"|"); split($2,b,"|"); if (a[6]!=b[6] || a[7]!=b[7]) c++; d=a[5]-b[5]; if (d<0) d=-d; if (d>m) m=d}
             END {print NR " family x record rows; " c+0 " picks differ; largest difference of the window-count share " m}' | tee sample_density.txt
