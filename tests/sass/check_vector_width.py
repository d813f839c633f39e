#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Asserts the width of every global load and store in the probe kernels.

Each `// sass-expect: <function-regex> load=<bits> store=<bits>` line in the probe source names
kernels (by regex on the symbol) and the width every LDG/STG in them must have; each matched
kernel must contain at least one of each named kind. SASS comes from cuobjdump when one is found
(PATH, the CUDA toolkit, or PyPI's nvidia-cuda-cuobjdump); otherwise the PTX is read
(ld.global.v4.f32 = 128 bits).
"""
import argparse, os, re, shutil, subprocess, sys


def find_cuobjdump(hint):
    for cand in [shutil.which("cuobjdump"), hint and os.path.join(hint, "cuobjdump")]:
        if cand and os.path.exists(cand):
            return cand
    try:
        import nvidia  # PyPI nvidia-cuda-cuobjdump installs nvidia/cu13/bin/cuobjdump
        for base in nvidia.__path__:
            for sub in ("cu13/bin/cuobjdump", "cuda_cuobjdump/bin/cuobjdump"):
                p = os.path.join(base, sub)
                if os.path.exists(p):
                    return p
    except ImportError:
        pass
    return None


def sass_functions(cuobjdump, obj, env):
    out = subprocess.run([cuobjdump, "-sass", obj], check=True, capture_output=True, text=True, env=env).stdout
    funcs, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = re.search(r"\b(LDG|STG)(\.[A-Z0-9_.]+)?\s", line)
        if name and m:
            mods = (m.group(2) or "").split(".")
            bits = 32
            for tok in mods:
                t = tok[1:] if tok[:1] in ("U", "S") and tok[1:].isdigit() else tok
                if t in ("8", "16", "64", "128"):
                    bits = int(t)
            funcs[name].append(("load" if m.group(1) == "LDG" else "store", bits, line.strip()))
    return funcs


def ptx_functions(ptx_text):
    funcs, name = {}, None
    for line in ptx_text.splitlines():
        m = re.search(r"\.entry\s+(\S+?)\s*\(", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = re.search(r"\b(ld|st)\.global(?:\.\w+)*?(?:\.v(2|4|8))?\.[bfus](8|16|32|64)\b", line)
        if name and m:
            vec = int(m.group(2) or 1)
            funcs[name].append(("load" if m.group(1) == "ld" else "store", vec * int(m.group(3)), line.strip()))
    return funcs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--object", help="object or executable with sm_90 SASS")
    ap.add_argument("--ptx", help="PTX of the same source, used when cuobjdump is missing")
    ap.add_argument("--cuda-bin", default="")
    ap.add_argument("--require-sass", action="store_true")
    ap.add_argument("--expect-failure", action="store_true",
                    help="negative control: succeed only if some width expectation fails")
    args = ap.parse_args()

    cuobjdump = find_cuobjdump(args.cuda_bin)
    funcs = None
    if cuobjdump and args.object:
        # cuobjdump needs nvdisasm beside it or on PATH
        env = dict(os.environ, PATH=os.path.dirname(cuobjdump) + os.pathsep + os.environ.get("PATH", ""))
        try:
            funcs, mode = sass_functions(cuobjdump, args.object, env), "SASS (" + cuobjdump + ")"
        except subprocess.CalledProcessError as e:
            print(f"cuobjdump failed ({e.stderr.strip()}); falling back to PTX")
    if funcs is not None:
        pass
    elif args.require_sass:
        sys.exit("cuobjdump not found; install it with: python3 -m pip install nvidia-cuda-cuobjdump")
    else:
        funcs, mode = ptx_functions(open(args.ptx).read()), "PTX"
    print(f"checking {len(funcs)} kernels in {mode}")

    # load=128: every global load is 128 bits; load=any128: the kernel has 128-bit loads (other
    # widths allowed, e.g. byte accesses at the ends of an unaligned array).
    # loads=N stores=N (optional, SASS only: PTX keeps loads that ptxas removes): the kernel has
    # exactly that many global loads / stores, e.g. an in-place update storing only what it changed.
    expects = re.findall(r"//\s*sass-expect:\s*(\S+)\s+load=(any)?(\d+)\s+store=(any)?(\d+)(?:\s+loads=(\d+)\s+stores=(\d+))?",
                         open(args.source).read())
    failures = 0
    for regex, load_any, load, store_any, store, loads, stores in expects:
        want = {"load": int(load), "store": int(store)}
        anyw = {"load": bool(load_any), "store": bool(store_any)}
        matched = [f for f in funcs if re.search(regex, f)]
        if not matched:
            print(f"FAIL {regex}: no kernel matches")
            failures += 1
        for f in matched:
            ops = funcs[f]
            for kind in ("load", "store"):
                widths = sorted({b for k, b, _ in ops if k == kind})
                ok = want[kind] in widths if anyw[kind] else widths == [want[kind]]
                failures += not ok
                rule = f"has {want[kind]}" if anyw[kind] else f"all {want[kind]}"
                print(f"{'ok  ' if ok else 'FAIL'} {f[:60]:60} {kind:5} widths {widths} want {rule}")
                if not ok and not anyw[kind]:
                    for k, b, text in ops:
                        if k == kind and b != want[kind]:
                            print(f"       {text}")
            if loads and mode.startswith("SASS"):
                for kind, n in (("load", int(loads)), ("store", int(stores))):
                    got = sum(1 for k, _, _ in ops if k == kind)
                    failures += got != n
                    print(f"{'ok  ' if got == n else 'FAIL'} {f[:60]:60} {kind:5} count {got} want {n}")
    print(f"{len(expects)} expectations, {failures} failures")
    if args.expect_failure:
        print("negative control: " + ("the check caught the unaligned build" if failures else "NOT caught"))
        return 0 if failures and expects else 1
    return 1 if failures or not expects else 0


if __name__ == "__main__":
    sys.exit(main())
