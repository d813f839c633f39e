#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file git carries (C++, CUDA, Python, shell, CMake) names its license in an SPDX line
near its top. Exits 1 naming each file that does not.

  check-spdx.py [REPO]
"""
import os, subprocess, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
files = subprocess.check_output(["git", "-C", root, "ls-files"], text=True).split()
source = (".hpp", ".cpp", ".cu", ".cuh", ".h", ".py", ".sh", ".cmake", ".in")
missing = []
checked = 0
for f in files:
    if f.startswith("bench/results/") or not (f.endswith(source) or os.path.basename(f) == "CMakeLists.txt" or f == ".ci/run"):
        continue
    checked += 1
    with open(os.path.join(root, f), errors="replace") as fh:
        head = fh.read(400)
    if "SPDX-License-Identifier: Apache-2.0" not in head:
        missing.append(f)
for f in missing:
    print(f"{f}: no 'SPDX-License-Identifier: Apache-2.0' line at its top")
print(f"{checked} sources, {len(missing)} without an SPDX line")
sys.exit(1 if missing or checked == 0 else 0)
