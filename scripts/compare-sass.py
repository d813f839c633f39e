#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares the SASS of two builds of the same object or executable, kernel by kernel, so that a
change meant to leave the GPU code as it was (a header split, a rename of host code) can be checked
on a machine without a GPU. Kernels are matched by name, with the hash of anonymous namespaces
(which depends on the source file's path) taken out; the order of kernels in the files is ignored.

  compare-sass.py BEFORE AFTER [BEFORE AFTER ...]

Needs cuobjdump (the CUDA Toolkit's, or PyPI's nvidia-cuda-cuobjdump, which scripts/install-deps.sh
installs). Exits 1 when any kernel differs or exists on one side only, naming it.
"""
import re
import shutil
import subprocess
import sys

ANON = re.compile(r"N?\d*_GLOBAL__N__[0-9a-f]+_\d+_[a-z_]+?_cpp_[0-9a-f]+_\d+")


def cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        import nvidia  # PyPI's nvidia-cuda-cuobjdump puts it under nvidia/cu13/bin
        for base in nvidia.__path__:
            for sub in ("cu13/bin/cuobjdump", "cuda_cuobjdump/bin/cuobjdump"):
                cand = f"{base}/{sub}"
                if shutil.which(cand):
                    return cand
    except ImportError:
        pass
    sys.exit("compare-sass: no cuobjdump on PATH (pip install nvidia-cuda-cuobjdump)")


def kernels(tool, path):
    out = subprocess.run([tool, "-sass", path], capture_output=True, text=True, check=True).stdout
    found, name, body = {}, None, []
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                found.setdefault(name, []).append("\n".join(body))
            name, body = ANON.sub("ANON", m.group(1)), []
        elif name and line.strip():
            body.append(line)
    if name:
        found.setdefault(name, []).append("\n".join(body))
    return found


def main(args):
    if len(args) < 2 or len(args) % 2:
        sys.exit(__doc__)
    tool, bad = cuobjdump(), 0
    for before, after in zip(args[::2], args[1::2]):
        a, b = kernels(tool, before), kernels(tool, after)
        differ = [k for k in a if k in b and sorted(a[k]) != sorted(b[k])]
        only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        same = len(a) - len(differ) - len(only_a)
        print(f"{after}: {same} of {len(a)} kernels identical, {len(differ)} differ, "
              f"{len(only_a)} only before, {len(only_b)} only after")
        for k in differ[:10] + only_a[:10] + only_b[:10]:
            print("  ", k[:160])
        bad += len(differ) + len(only_a) + len(only_b)
        if not a:
            print(f"  {before}: no kernels found")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
