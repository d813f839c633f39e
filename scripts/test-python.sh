#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python module as a user gets it: `pip wheel .` builds the wheel once (the host backend unless
# STRATA_PIP_ARGS asks for another: -C cmake.define.STRATA_BACKEND=cuda), the wheel and its test
# dependencies go into a virtual environment of the project's own (build/python-venv: no pip
# install ever touches the system python, PEP 668), and the pytest suite runs there against it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -m venv "$venv" 2>/dev/null; then  # Debian's python3 needs python3-venv for ensurepip
    rm -rf "$venv"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install -q --upgrade pip  # Debian's pip 23.0 lacks -C (config settings)
fi
py="$PWD/$venv/bin/python"
# pyproject.toml's build requirements, installed here once: the wheel then builds without an
# isolated environment of its own per run, and its CMake build directory is reused.
mapfile -t build_requires < <("$py" - <<'PY'
import re
text = open("pyproject.toml").read()
try:
    import tomllib
    print("\n".join(tomllib.loads(text)["build-system"]["requires"]))
except ImportError:  # Python < 3.11
    print("\n".join(re.findall(r'"([^"]+)"', re.search(r"requires\s*=\s*\[([^\]]*)\]", text).group(1))))
PY
)
"$py" -m pip install -q "${build_requires[@]}"
rm -rf build/python-wheel
# shellcheck disable=SC2086
"$py" -m pip wheel -q --no-build-isolation --no-deps -w build/python-wheel ${STRATA_PIP_ARGS:-} .
wheel=$(echo build/python-wheel/strata_soa-*.whl)
"$py" -m pip install -q --force-reinstall --no-deps "$wheel"
"$py" -m pip install -q "$wheel[test]"
"$py" examples/torch_normalize/normalize.py  # the example of the guide, against the installed wheel
cd python/tests
"$py" -m pytest -q .
