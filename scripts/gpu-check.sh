#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check, run on a machine with a GPU: build the CUDA preset (or use a prebuilt one), run every
# GPU test, run them again under compute-sanitizer (memcheck, racecheck, initcheck, synccheck), run
# the demo and every example, run the benchmarks, write logs and JSON under $OUT (the results as $OUT/<gpu>/<date>/strata_bench.json,
# the layout of bench/results) and print a short table last.
#   STRATA_PREBUILT=dir   use test/bench binaries built elsewhere (dir/tests, dir/bench)
#   STRATA_SKIP=list      skip stages: build,tests,sanitize,demo,examples,torch,bench (comma separated)
#   STRATA_BENCH_ARGS     extra arguments for the benchmark binary
#   STRATA_SANITIZERS     compute-sanitizer tools to run (default: memcheck racecheck initcheck synccheck)
#   STRATA_SANITIZER_TIMEOUT  seconds one binary may run under one tool (default 300)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
LOGS=$OUT/logs  # packed into logs.tar.gz at the end: $OUT holds a few files
mkdir -p "$OUT" "$LOGS"
skip() { [[ ",${STRATA_SKIP:-}," == *",$1,"* ]]; }
summary=()
add() { summary+=("$(printf '%-34s %s' "$1" "$2")"); }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
add "gpu" "${gpu:-none found}"
add "driver / nvcc" "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) / $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

build=${STRATA_PREBUILT:-build/cuda}
if [ -z "${STRATA_PREBUILT:-}" ] && ! skip build; then
  start=$SECONDS
  if cmake --preset cuda >"$LOGS/build.log" 2>&1 && cmake --build --preset cuda >>"$LOGS/build.log" 2>&1; then
    add "build (cuda preset)" "ok in $((SECONDS - start)) s"
  else
    add "build (cuda preset)" "FAILED (build.log)"; tail -30 "$LOGS/build.log"
  fi
fi
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$PWD/$build/lib:${LD_LIBRARY_PATH:-}"
# NCCL (distributed_test, the demo's --gpus, several_gpus): the library of PyPI's nvidia-nccl package
# in this Python (PyTorch brings one), where the system has none on its library path.
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))' 2>/dev/null || true)
[ -n "$nccl_lib" ] && [ -d "$nccl_lib" ] && export LD_LIBRARY_PATH="$nccl_lib:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}  # NVLink multicast off unless the caller turns it on
# MPI for mpi_join_test (built against MPICH's libmpi.so.12): the system's, or PyPI's mpich wheel
# (a file named by STRATA_MPI_WHEEL), installed into the Python prefix, whose lib/ and bin/ then
# serve, ahead of another MPI installed here (Open MPI's mpiexec cannot start an MPICH job).
py_prefix=$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null || true)
if [ -n "${STRATA_MPI_WHEEL:-}" ] && [ ! -e "$py_prefix/lib/libmpi.so.12" ]; then
  python3 -m pip install -q --no-index "$STRATA_MPI_WHEEL" >"$LOGS/mpi-install.log" 2>&1 || true
fi
if [ -n "$py_prefix" ] && [ -e "$py_prefix/lib/libmpi.so.12" ]; then
  export LD_LIBRARY_PATH="$py_prefix/lib:${LD_LIBRARY_PATH:-}" PATH="$py_prefix/bin:$PATH"
fi

# A binary whose libraries are missing here (mpi_join_test without MPI) is left out, and said so.
tests=""
for t in $(find "$build/tests" -maxdepth 1 -type f -name '*_test' -perm -u+x | sort); do
  if ldd "$t" 2>/dev/null | grep -q 'not found'; then add "left out: $(basename "$t")" "libraries missing: $(ldd "$t" | awk '/not found/ {print $1}' | xargs)"
  else tests+=" $t"; fi
done
status=0
if ! skip tests; then
  pass=0; fail=0; failed=""
  for t in $tests; do
    if "$t" >>"$LOGS/tests.log" 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=" $(basename "$t")"; fi
  done
  add "gpu tests (binaries)" "$pass passed, $fail failed$failed"
  grep -hE '^\[  PASSED  \]|^\[  FAILED  \]' "$LOGS/tests.log" | awk '{n+=$4} END {print n}' >"$LOGS/cases.txt"
  add "gpu test cases passed" "$(grep -h '^\[  PASSED  \]' "$LOGS/tests.log" | awk '{n+=$4} END {print n+0}')"
  ((fail)) && status=1
fi

if ! skip sanitize; then
  # The four tools run side by side (each is CPU-bound); sizes above 1e5 and the cases marked
  # Large (2^31 records) or OutOfMemory are left out under the sanitizer.
  export STRATA_TEST_SANITIZER=1
  # Cases whose kernels are launched from several host threads at once: racecheck (2025.3) now and
  # then loses track of such a launch, then reports a tool error or stalls.
  racecheck_apart='*ConcurrentStreamsAndThreads*'
  tools=(${STRATA_SANITIZERS:-memcheck racecheck initcheck synccheck})
  for tool in "${tools[@]}"; do
    (
      extra=""; [ "$tool" = memcheck ] && extra="--leak-check full"
      : >"$LOGS/sanitize-$tool.failed"
      # One run of binary $t under the tool: label, time limit, gtest filter. A run that outlives
      # its limit is reported as stalled, and one where the tool says it lost track of a launch as a
      # tool error: neither counts as clean, and neither holds up the other binaries.
      one="$LOGS/sanitize-$tool.one"
      run_one() {
        timeout -k 10 "$2" compute-sanitizer --tool "$tool" $extra $api --require-cuda-init no --error-exitcode 99 "$t" \
          --gtest_brief=1 --gtest_filter="$3" >"$one" 2>&1
        local rc=$?
        cat "$one" >>"$LOGS/sanitize-$tool.log"
        if [ $rc = 124 ] || [ $rc = 137 ]; then echo " $1 (stalled: killed after $2 s)" >>"$LOGS/sanitize-$tool.failed"
        elif [ $rc != 0 ] && grep -q 'Internal Sanitizer Error' "$one" && ! grep -qE 'Race reported|Invalid|Uninitialized|Barrier error|Leaked' "$one"; then
          echo " $1 (tool error: $(grep -m1 -o 'Internal Sanitizer Error: [^.]*' "$one"))" >>"$LOGS/sanitize-$tool.failed"
        elif [ $rc != 0 ]; then echo " $1" >>"$LOGS/sanitize-$tool.failed"; fi
        rm -f "$one"
      }
      for t in $tests; do
        echo "=== $(basename "$t")" >>"$LOGS/sanitize-$tool.log"
        skip_cases='*Large*:*OutOfMemory*'
        # Thrust copies min_element's (index, record) tuple to the host with its padding bytes.
        [ "$tool" = initcheck ] && skip_cases+=':*UninitPadding*'
        # NCCL probes its kernels at initialisation and reports the expected CUDA errors
        # (no kernel image for other architectures, peer access already enabled) through the API.
        # NCCL's own kernels read their FIFOs before a peer writes them and share memory between
        # warps by design (initcheck and racecheck findings inside ncclDevKernel_*): only strata's
        # kernels are checked there.
        # initcheck does not see what a peer GPU's NCCL kernel writes either: the copies out of
        # received wire blocks (unpack_run) would read as uninitialized, so initcheck leaves them out.
        api=""; case "$(basename "$t")" in distributed_test | mpi_join_test) api="--report-api-errors no --kernel-name-exclude kns=nccl" ;; esac
        [ "$(basename "$t")" = distributed_test ] && [ "$tool" = initcheck ] && api+=" --kernel-name-exclude kns=unpack_run"
        # Under racecheck, the cases that launch from several host threads at once run apart, with
        # their own shorter limit: a stall there then costs STRATA_RACECHECK_THREADS_TIMEOUT seconds
        # (default 90), not the binary's limit, and every other case of the binary is still checked.
        threaded=""; [ "$tool" = racecheck ] && threaded="$racecheck_apart"
        run_one "$(basename "$t")" "${STRATA_SANITIZER_TIMEOUT:-300}" "-$skip_cases${threaded:+:$threaded}"
        if [ -n "$threaded" ] && "$t" --gtest_list_tests --gtest_filter="$threaded" 2>/dev/null | grep -q '^  '; then
          echo "=== $(basename "$t"), cases launching from several threads" >>"$LOGS/sanitize-$tool.log"
          run_one "$(basename "$t") [$threaded]" "${STRATA_RACECHECK_THREADS_TIMEOUT:-90}" "$threaded"
        fi
      done
    ) &
  done
  wait
  for tool in "${tools[@]}"; do
    bad=$(tr -d '\n' <"$LOGS/sanitize-$tool.failed"); rm -f "$LOGS/sanitize-$tool.failed"
    add "compute-sanitizer $tool" "$([ -n "$bad" ] && echo "FINDINGS in$bad" || echo "clean ($(echo $tests | wc -w) binaries)")"
    [ -n "$bad" ] && status=1
  done
  unset STRATA_TEST_SANITIZER
fi

examples=$build/examples
if ! skip demo && [ -x "$examples/particles" ]; then
  if "$examples/particles" >"$LOGS/demo.log" 2>&1; then add "particle demo" "ok (demo.log)"; else add "particle demo" "FAILED (demo.log)"; status=1; fi
fi

# The sharded demo on every GPU here (it compares its final particles with a one-rank run).
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
if ! skip demo && [ -x "$examples/particles" ] && [ "$gpus" -ge 2 ]; then
  if "$examples/particles" --gpus "$gpus" >"$LOGS/demo-gpus.log" 2>&1; then add "particle demo --gpus $gpus" "ok (demo-gpus.log)"
  else add "particle demo --gpus $gpus" "FAILED (demo-gpus.log)"; status=1; fi
fi
# join_mpi(): one process per GPU (up to 4) under mpiexec. The test pass above ran it as a job of
# one process.
if ! skip tests && [ -x "$build/tests/mpi_join_test" ] && [ "$gpus" -ge 2 ]; then
  if ! command -v mpiexec >/dev/null; then add "mpi_join_test under mpiexec" "not run: no mpiexec"
  elif [[ " $tests " != *" $build/tests/mpi_join_test "* ]]; then add "mpi_join_test under mpiexec" "not run: its libraries are missing (STRATA_MPI_WHEEL)"
  else
    procs=$((gpus < 4 ? gpus : 4))
    if timeout 300 mpiexec -n "$procs" "$build/tests/mpi_join_test" >"$LOGS/mpi.log" 2>&1; then
      add "mpi_join_test, $procs processes" "ok: $(grep -c '^\[  PASSED  \]' "$LOGS/mpi.log") ranks passed (mpi.log)"
    else add "mpi_join_test, $procs processes" "FAILED (mpi.log)"; status=1; fi
    # Rank 1 sees no GPU: join_mpi() must throw on both processes (a hang here is the bug).
    t="$build/tests/mpi_join_test"
    if timeout 120 mpiexec -n 1 env STRATA_TEST_GPULESS_RANK=1 "$t" --gtest_filter='*WithoutAGpu*' \
        : -n 1 env STRATA_TEST_GPULESS_RANK=1 CUDA_VISIBLE_DEVICES= "$t" --gtest_filter='*WithoutAGpu*' >"$LOGS/mpi-gpuless.log" 2>&1; then
      add "mpi_join_test, a rank without GPU" "ok: both processes threw (mpi-gpuless.log)"
    else add "mpi_join_test, a rank without GPU" "FAILED (mpi-gpuless.log)"; status=1; fi
  fi
fi
if ! skip demo && [ -x "$examples/layer_norm_example" ]; then
  if "$examples/layer_norm_example" >>"$LOGS/demo.log" 2>&1; then add "layer norm example" "ok (demo.log)"; else add "layer norm example" "FAILED (demo.log)"; status=1; fi
fi

# Every example checks its own result: each runs once, its output in examples.log.
if ! skip examples; then
  for name in quick_start thrust_algorithms aos_file nested_records particle_lifecycle several_gpus foreign_memory; do
    if [ ! -x "$examples/$name" ]; then add "example $name" "not built"; continue; fi
    echo "=== $name" >>"$LOGS/examples.log"
    bin="$(cd "$examples" && pwd)/$name"  # run from $LOGS: aos_file writes its file where it runs
    if (cd "$LOGS" && timeout 300 "$bin") >>"$LOGS/examples.log" 2>&1; then add "example $name" "ok"
    else add "example $name" "FAILED (examples.log)"; status=1; fi
  done
  # The Python example runs where strata's module is installed (its CUDA build, with PyTorch).
  echo "=== torch_normalize" >>"$LOGS/examples.log"
  timeout 300 python3 examples/torch_normalize/normalize.py >>"$LOGS/examples.log" 2>&1
  case $? in
    0) add "example torch_normalize" "ok" ;;
    77) add "example torch_normalize" "not run: strata's Python module or PyTorch is missing (examples.log)" ;;
    *) add "example torch_normalize" "FAILED (examples.log)"; status=1 ;;
  esac
fi

extra=()
if ! skip torch && [ -f "$examples/libstrata_norm.so" ] && python3 -c 'import torch' 2>/dev/null; then
  if PYTHONUNBUFFERED=1 timeout "${STRATA_TORCH_TIMEOUT:-300}" python3 bench/layer_norm_torch.py --library "$examples/libstrata_norm.so" \
       --out "$LOGS/torch.json" ${STRATA_TORCH_ARGS:-} >"$LOGS/torch.log" 2>&1; then
    add "layer norm vs PyTorch" "ok: $(grep -c '^ok' "$LOGS/torch.log") checks passed (torch.log)"; extra=(--extra "$LOGS/torch.json")
  else
    add "layer norm vs PyTorch" "FAILED (torch.log)"; grep -E 'FAIL|Error' "$LOGS/torch.log" | head; status=1
    [ -s "$LOGS/torch.json" ] && extra=(--extra "$LOGS/torch.json")
  fi
fi

if ! skip bench && [ -x "$build/bench/strata_bench" ]; then
  if "$build/bench/strata_bench" --benchmark_out="$LOGS/bench-raw.json" --benchmark_out_format=json \
       ${STRATA_BENCH_ARGS:-} >"$LOGS/bench.log" 2>&1; then
    python3 bench/report.py results "$LOGS/bench-raw.json" "${extra[@]}" --out "$OUT" \
      --commit "${STRATA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" >"$LOGS/report.log" 2>&1 \
      && add "benchmarks" "ok ($(cd "$OUT" && find . -name strata_bench.json | sed 's|^\./||'))" \
      || add "benchmarks" "report FAILED (report.log)"
  else
    add "benchmarks" "FAILED (bench.log)"; tail -20 "$LOGS/bench.log"; status=1
  fi
fi

# the table report.py wrote beside the results, under $OUT/<gpu>/<date>/ as in bench/results
find "$OUT" -name strata_bench.md -exec cat {} +
[ -f "$LOGS/demo.log" ] && sed -n '/^| variant/,$p' "$LOGS/demo.log"
echo
echo "== strata gpu-check =="
printf '%s\n' "${summary[@]}" | tee "$LOGS/summary.txt"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"
exit $status
