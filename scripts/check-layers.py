#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata's headers include only downward: each header may include headers of its own layer or of
a layer below it, never above. Reads the #include <strata/...> lines of every header under
include/strata and exits 1 naming each include that runs upward, or a header no layer claims.

  check-layers.py [include/strata]
  check-layers.py --no-test-includes DIR...
      Benchmarks, examples and the tools are not tests: exits 1 naming each #include in a source
      under DIR... that reaches into tests/ (tests/common/testing.hpp pulls in GoogleTest; the
      shared records live in fixtures/).
"""
import os, re, sys

# Lowest first. A layer is a list of path prefixes relative to include/strata/.
LAYERS = [
    ("config", ["config.hpp", "version.hpp"]),
    ("reflect", ["reflect/"]),
    ("layout", ["layout/"]),
    ("memory", ["memory/"]),
    ("views", ["container/view.hpp", "container/soa_view.hpp", "container/aos_view.hpp", "container/matrix.hpp"]),
    ("iterator", ["iterator/"]),
    ("convert kernels", ["convert/transpose.hpp", "convert/gather.hpp", "convert/host_transfer.hpp", "convert/runtime.hpp", "convert/columnar.hpp"]),
    # Every other container/ header: the generic container, its aliases and the containers of added
    # mappings (a mapping header that also names its container sits here).
    ("owning containers", ["container/"]),
    ("algorithm", ["algorithm/", "convert/convert.hpp"]),
    ("access", ["access/"]),
    ("neighbor", ["neighbor/"]),
    ("interop", ["interop/"]),
    ("distributed", ["distributed/"]),
    ("io", ["io/"]),
    ("umbrella", ["strata.hpp"]),
]


def layer_of(rel):
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in prefixes):
            return i
    return None


def check_no_test_includes(dirs):
    problems, checked = [], 0
    for d in dirs:
        for dirpath, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith((".hpp", ".cpp", ".cu", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                checked += 1
                for n, line in enumerate(open(path, errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', line)
                    if m and re.search(r'(^|/)(tests/|common/(testing|records|functors|foreign)\.hpp)', m.group(1)):
                        problems.append(f"{path}:{n}: includes the test header {m.group(1)}")
    for p in problems:
        print(p)
    print(f"{checked} sources outside tests/, {len(problems)} test-header includes")
    return 1 if problems or checked == 0 else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--no-test-includes":
        return check_no_test_includes(sys.argv[2:])
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "include", "strata")
    problems, checked = [], 0
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".hpp"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            mine = layer_of(rel)
            if mine is None:
                problems.append(f"{rel}: no layer claims this header; add it to LAYERS in {os.path.basename(__file__)}")
                continue
            checked += 1
            for n, line in enumerate(open(os.path.join(dirpath, f)), 1):
                m = re.match(r'\s*#\s*include\s*<strata/([^>]+)>', line)
                if not m:
                    continue
                theirs = layer_of(m.group(1))
                if theirs is None:
                    problems.append(f"{rel}:{n}: includes {m.group(1)}, which no layer claims")
                elif theirs > mine:
                    problems.append(f"{rel}:{n}: {LAYERS[mine][0]} header includes {m.group(1)} of the higher layer "
                                    f"{LAYERS[theirs][0]}")
    for p in problems:
        print(p)
    if checked == 0:
        print(f"no headers found under {root}")
        return 1
    print(f"{checked} headers, {len(problems)} upward includes or unplaced headers "
          f"(order: {' -> '.join(name for name, _ in LAYERS)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
