#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata's version is written once, in include/strata/version.hpp. Checks that the three places
that publish it agree: the header's defines, CMake's PROJECT_VERSION (read from the header at
configure time, passed here) and the Python package's version (pyproject.toml's regex provider,
applied to the file it names, as scikit-build-core applies it). Exits 1 naming each disagreement.

  check-version.py --cmake-version X.Y.Z [--root DIR]
"""
import argparse, os, re, sys

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


def header_version(path):
    text = open(path, encoding="utf-8").read()
    parts = {}
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define STRATA_VERSION_{name} (\d+)$", text, re.MULTILINE)
        if not m:
            sys.exit(f"{path}: no '#define STRATA_VERSION_{name} <number>' line")
        parts[name] = int(m.group(1))
    m = re.search(r'^#define STRATA_VERSION_STRING "([^"]*)"$', text, re.MULTILINE)
    if not m:
        sys.exit(f'{path}: no \'#define STRATA_VERSION_STRING "..."\' line')
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}", m.group(1)


def python_version(root):
    """The version scikit-build-core's regex provider gives the wheel, by its own rules."""
    project = tomllib.load(open(os.path.join(root, "pyproject.toml"), "rb"))
    problems = []
    if "version" in project.get("project", {}):
        problems.append("pyproject.toml: [project] writes a version of its own; it must be dynamic")
    if "version" not in project.get("project", {}).get("dynamic", []):
        problems.append('pyproject.toml: [project] dynamic lacks "version"')
    settings = project.get("tool", {}).get("scikit-build", {}).get("metadata", {}).get("version", {})
    if settings.get("provider") != "scikit_build_core.metadata.regex":
        problems.append("pyproject.toml: [tool.scikit-build.metadata.version] provider is not scikit_build_core.metadata.regex")
        return None, problems
    if settings.get("input") != "include/strata/version.hpp":
        problems.append(f"pyproject.toml: the version is read from {settings.get('input')}, not include/strata/version.hpp")
    text = open(os.path.join(root, settings["input"]), encoding="utf-8").read()
    m = re.search(settings["regex"], text, re.MULTILINE)
    if not m:
        problems.append(f"pyproject.toml: its regex {settings['regex']!r} finds nothing in {settings['input']}")
        return None, problems
    return settings.get("result", "{value}").format(*m.groups(), **m.groupdict()), problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake-version", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    a = ap.parse_args()
    numbers, string = header_version(os.path.join(a.root, "include", "strata", "version.hpp"))
    python, problems = python_version(a.root)
    if string != numbers:
        problems.append(f"version.hpp: STRATA_VERSION_STRING is {string}, the MAJOR/MINOR/PATCH defines say {numbers}")
    if a.cmake_version != numbers:
        problems.append(f"CMake's PROJECT_VERSION is {a.cmake_version}, version.hpp says {numbers}")
    if python is not None and python != numbers:
        problems.append(f"the Python package's version is {python}, version.hpp says {numbers}")
    for p in problems:
        print(p)
    print(f"version.hpp {numbers} ({string}), CMake {a.cmake_version}, Python {python}: "
          + ("agree" if not problems else f"{len(problems)} disagreements"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
