#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Extracts the C++ code blocks of the guide (docs/*.md) and README.md into a few translation units
that the host build compiles into one program, `docs_snippets`, which runs every block (ctest label
`docs`). So the guide cannot drift from the code.

A block is a whole program: its #include lines, its types and functors, and `int main()`, which
must return 0 (asserts are on even in Release builds). Each block goes into a namespace of its own
and its main is called from the generated one. An HTML comment on the line before a block changes
that:
  <!-- snippet: fragment -->  statements only: wrapped into a function, in a namespace that sees the
                              names of the page's previous whole block (its record types, functors)
  <!-- snippet: skip -->      not compiled (say why in the text: MPI, a GPU-only API, Python)
BOOST_HANA_ADAPT_STRUCT, which must stand at global scope, is moved out of the block's namespace.

Usage: doc-snippets.py --out-dir DIR --tus N [--root DIR] FILE.md ...
Writes DIR/snippets_0.cpp .. snippets_{N-1}.cpp and DIR/snippets_main.cpp. `--list` prints the
blocks found instead.
"""
import argparse
import os
import re
import sys

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
MARKER = re.compile(r"<!--\s*snippet:\s*([\w-]+)\s*-->")
CPP = {"cpp", "c++", "cxx"}
KINDS = {"fragment", "skip"}
INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"].*[>\"]\s*$")
MAIN = re.compile(r"\bint\s+main\s*\(\s*\)")
ADAPT = re.compile(r"^\s*BOOST_HANA_ADAPT_STRUCT\s*\(\s*([A-Za-z_]\w*)")
# Headers that need a package the host build may lack: the block is left out, and says so, where it is missing.
RESET = "#line RESET"  # replaced by the generated file's own line: later diagnostics point there
OPTIONAL = {"strata/interop/dlpack.hpp": "dlpack/dlpack.h", "strata/io/hdf5.hpp": "hdf5.h", "strata/io/openpmd.hpp": "hdf5.h",
            "strata/io/distributed.hpp": "hdf5.h", "strata/io/arrow.hpp": "arrow/c/abi.h"}


class Block:
    def __init__(self, path, line, kind, lines):
        self.path, self.line, self.kind, self.lines = path, line, kind, lines
        self.name = ""
        self.sees = None  # a fragment: the namespace of the page's previous whole block

    @property
    def where(self):
        return f"{self.path}:{self.line}"


def closes(line, fence):
    """Whether line closes a block opened by `fence` (the same character, at least as many, nothing else)."""
    t = line.strip()
    return len(t) >= len(fence) and t == fence[0] * len(t)


def read_blocks(path, shown):
    """Every C++ block of a markdown file, with the marker on the line before it. MyST directives
    other than code blocks ({note}, {toctree} ...) hold markdown: blocks inside them count."""
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    directives = []  # fences of the directives open around line i
    i = 0
    while i < len(lines):
        if directives and closes(lines[i], directives[-1]):
            directives.pop()
            i += 1
            continue
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(2), m.group(3).split()
        if info and info[0] in ("{code-block}", "{code}", "{sourcecode}"):
            info = info[1:]
        elif info and info[0].startswith("{"):
            directives.append(fence)  # a directive's body is markdown: read on inside it
            i += 1
            continue
        lang = info[0].lower() if info else ""
        start = i + 1
        j = start
        while j < len(lines) and not closes(lines[j], fence):
            j += 1
        if j == len(lines):
            sys.exit(f"{shown}:{i + 1}: code block never closed")
        if lang in CPP:
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            kind = "program"
            if k >= 0:
                mk = MARKER.search(lines[k])
                if mk:
                    kind = mk.group(1)
                    if kind not in KINDS:
                        sys.exit(f"{shown}:{k + 1}: unknown snippet marker '{kind}' (fragment or skip)")
            body = lines[start:j]
            # Code inside MyST directives is indented: take the block's own indentation off.
            indent = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
            blocks.append(Block(shown, start + 1, kind, [l[indent:] for l in body]))
        i = j + 1
    return blocks


def slug(path):
    return re.sub(r"\W", "_", os.path.splitext(path)[0]).strip("_")


def split_includes(lines):
    """(includes, body): #include lines leave the body (blank lines keep the numbering)."""
    inc, body = [], []
    for l in lines:
        if INCLUDE.match(l):
            inc.append(l.strip())
            body.append("")
        else:
            body.append(l)
    return inc, body


def adapt_moved(body, ns, where):
    """Body lines where each BOOST_HANA_ADAPT_STRUCT(T, ...) leaves the namespace, T qualified, on
    the same lines (so #line numbering holds)."""
    out, i = list(body), 0
    while i < len(out):
        m = ADAPT.match(out[i])
        if not m:
            i += 1
            continue
        j, depth = i, 0
        while True:
            if j == len(out):
                sys.exit(f"{where}: BOOST_HANA_ADAPT_STRUCT never closed")
            depth += out[j].count("(") - out[j].count(")")
            if depth <= 0:
                break
            j += 1
        out[i] = "} " + out[i].replace(m.group(1), f"::{ns}::{m.group(1)}", 1)
        out[j] = out[j] + f" namespace {ns} {{"
        i = j + 1
    return out


def optional_guard(includes):
    """The __has_include condition a block's optional headers need, or None."""
    needs = [OPTIONAL[h] for inc in includes for h in OPTIONAL if h in inc]
    return " && ".join(f"__has_include(<{n}>)" for n in needs) or None


def emit_block(b, out):
    inc, body = split_includes(b.lines)
    guard = optional_guard(inc)
    text = "\n".join(body)
    if b.kind == "program":
        if not MAIN.search(text):
            sys.exit(f"{b.where}: a whole block needs `int main()` (or mark it <!-- snippet: fragment -->)")
        body = [MAIN.sub("int snippet_main()", l) for l in body]
    elif MAIN.search(text):
        sys.exit(f"{b.where}: a fragment has no main; drop the marker to make it a whole block")
    body = adapt_moved(body, b.name, b.where)
    if guard:
        out.append(f"#if {guard}")
    out.append(f"namespace {b.name} {{")
    if b.sees:
        out.append(f"using namespace {b.sees};")
    if b.kind == "fragment":
        out.append("int snippet_main() {")
    out.append(f'#line {b.line} "{b.path}"')
    out.extend(body)
    if b.kind == "fragment":
        out.append("  return 0;\n}")
    out.append(f"}}  // namespace {b.name}")
    out.append(RESET)
    if guard:
        out.append("#endif")
    return inc, guard


def write_tu(index, blocks, out_dir):
    parts, includes = [], []
    runs = []
    for b in blocks:
        inc, guard = emit_block(b, parts)
        for i in inc:
            g = optional_guard([i])
            entry = f"#if {g}\n{i}\n#endif" if g else i
            if entry not in includes:
                includes.append(entry)
        runs.append((b, guard))
    src = [f"// Generated by scripts/doc-snippets.py from the guide's C++ blocks; edit the markdown, not this file."]
    src += includes
    src += ["// Asserts in the blocks check their results in every build type.", "#undef NDEBUG", "#include <cassert>",
            "#include <cstdio>", "#include <exception>", ""]
    src += parts
    src += ["", f"int docs_snippets_{index}(int& passed, int& failed, int& skipped) {{", "  (void)skipped;"]
    src += ["  auto run = [&](const char* where, int (*f)()) {",
            "    try {",
            "      const int rc = f();",
            "      if (rc == 0) { ++passed; std::printf(\"ok      %s\\n\", where); }",
            "      else { ++failed; std::printf(\"FAILED  %s: main returned %d\\n\", where, rc); }",
            "    } catch (const std::exception& e) {",
            "      ++failed; std::printf(\"FAILED  %s: %s\\n\", where, e.what());",
            "    }",
            "  };"]
    for b, guard in runs:
        call = f'  run("{b.where}", &{b.name}::snippet_main);'
        if guard:
            src += [f"#if {guard}", call, "#else",
                    f'  ++skipped; std::printf("skipped %s: its package header is missing\\n", "{b.where}");', "#endif"]
        else:
            src.append(call)
    src += ["  return 0;", "}", ""]
    name = f"snippets_{index}.cpp"
    path = os.path.join(out_dir, name)
    src = [f'#line {n + 2} "{name}"' if l == RESET else l for n, l in enumerate("\n".join(src).split("\n"))]
    text = "\n".join(src)
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:  # unchanged: no rebuild
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def write_main(n, total, out_dir):
    src = ["// Generated by scripts/doc-snippets.py: runs every C++ block of the guide.", "#include <cstdio>", ""]
    src += [f"int docs_snippets_{k}(int& passed, int& failed, int& skipped);" for k in range(n)]
    src += ["", "int main() {", "  int passed = 0, failed = 0, skipped = 0;"]
    src += [f"  docs_snippets_{k}(passed, failed, skipped);" for k in range(n)]
    src += [f"  if (passed + failed + skipped != {total}) {{ std::printf(\"ran %d of {total} blocks\\n\", passed + failed + skipped); return 1; }}",
            "  std::printf(\"%d passed, %d failed, %d skipped\\n\", passed, failed, skipped);",
            "  return failed == 0 && passed > 0 ? 0 : 1;", "}", ""]
    path = os.path.join(out_dir, "snippets_main.cpp")
    text = "\n".join(src)
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


SELF_TEST_PAGE = """# A page

<!-- snippet: skip -->
```cpp
this is not compiled
```

```cpp
#include <strata/strata.hpp>
struct hit { int id; float e; };
BOOST_HANA_ADAPT_STRUCT(hit,
  id, e);
int main() { return 0; }
```

<!-- snippet: fragment -->
```c++
hit h{1, 2.0f};
```

```{note}
   ```cpp
   int main() { return 0; }
   ```
```
"""


def self_test():
    """Checks the extractor on a page holding every kind of block (ctest docs.extractor)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        page = os.path.join(d, "page.md")
        with open(page, "w", encoding="utf-8") as f:
            f.write(SELF_TEST_PAGE)
        kinds = [(b.line, b.kind) for b in read_blocks(page, "page.md")]
        assert kinds == [(5, "skip"), (9, "program"), (18, "fragment"), (23, "program")], kinds
        rc = os.system(f"{sys.executable} {__file__} --out-dir {d}/out --tus 1 --root {d} {page}")
        assert rc == 0, rc
        tu = open(os.path.join(d, "out", "snippets_0.cpp"), encoding="utf-8").read()
        assert "this is not compiled" not in tu
        assert tu.index("#include <strata/strata.hpp>") < tu.index("namespace page_2")  # includes hoisted
        assert "} BOOST_HANA_ADAPT_STRUCT(::page_2::hit," in tu and "e); namespace page_2 {" in tu
        assert "namespace page_3 {\nusing namespace page_2;\nint snippet_main() {" in tu
        assert '#line 9 "page.md"' in tu and '#line 18 "page.md"' in tu and '#line 23 "page.md"' in tu
        assert tu.count("int snippet_main()") == 3
        main_tu = open(os.path.join(d, "out", "snippets_main.cpp"), encoding="utf-8").read()
        assert "!= 3)" in main_tu  # three blocks must run
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!-- snippet: sometimes -->\n```cpp\nint main() { return 0; }\n```\n")
        assert os.system(f"{sys.executable} {__file__} --list {page} 2>/dev/null") != 0  # unknown marker
        with open(page, "w", encoding="utf-8") as f:
            f.write("```cpp\nint x = 1;\n```\n")
        assert os.system(f"{sys.executable} {__file__} --out-dir {d}/out2 {page} 2>/dev/null") != 0  # no main
    print("doc-snippets self-test: 1 passed, 0 failed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir")
    ap.add_argument("--tus", type=int, default=1)
    ap.add_argument("--root", default="", help="paths in messages are relative to this folder")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("pages", nargs="+")
    a = ap.parse_args()
    pages = []
    for p in a.pages:
        shown = os.path.relpath(p, a.root) if a.root else p
        blocks = read_blocks(p, shown)
        last = None
        for n, b in enumerate(blocks):
            b.name = f"{slug(shown)}_{n + 1}"
            if b.kind == "fragment":
                if last is None:
                    sys.exit(f"{b.where}: a fragment needs a whole block before it on its page")
                b.sees = last
            elif b.kind == "program":
                last = b.name
        pages.append([b for b in blocks if b.kind != "skip"])
    if a.list:
        for blocks in pages:
            for b in blocks:
                print(b.where, b.kind)
        return
    if not a.out_dir:
        ap.error("--out-dir is needed")
    os.makedirs(a.out_dir, exist_ok=True)
    # Whole pages to the translation unit with the fewest lines so far (each TU parses strata's headers once).
    groups = [[] for _ in range(max(a.tus, 1))]
    weight = [0] * len(groups)
    for blocks in sorted(pages, key=lambda bs: -sum(len(b.lines) for b in bs)):
        k = weight.index(min(weight))
        groups[k].extend(blocks)
        weight[k] += sum(len(b.lines) for b in blocks)
    total = sum(len(bs) for bs in pages)
    if total == 0:
        sys.exit("no C++ blocks found: the check would test nothing")
    for k, blocks in enumerate(groups):
        write_tu(k, blocks, a.out_dir)
    write_main(len(groups), total, a.out_dir)


if __name__ == "__main__":
    main()
