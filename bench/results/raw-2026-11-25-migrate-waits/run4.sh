#!/usr/bin/env bash
# Call 4: lifecycle_test again under initcheck and memcheck (side by side), after its keyed
# selection test presets the output buffer it copies back (call 3's initcheck findings were that
# test reading back index slots nothing had written). .carryz/carry4.tar.xz holds the rebuilt test.
set -u
tar -xJf .carryz/carry4.tar.xz
export STRATA_TEST_SANITIZER=1
for tool in initcheck memcheck; do
  compute-sanitizer --tool $tool --require-cuda-init no --error-exitcode 99 .carry/tests/lifecycle_test --gtest_brief=1 \
    --gtest_filter='-*Large*:*OutOfMemory*' >"$OUT/$tool-lifecycle_test.log" 2>&1 &
done
wait
for tool in initcheck memcheck; do echo "== $tool"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/$tool-lifecycle_test.log"; done
.carry/tests/lifecycle_test --gtest_brief=1 2>&1 | tail -2
