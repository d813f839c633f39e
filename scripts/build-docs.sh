#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the user guide and API reference into build/docs/html: Doxygen (Debian's package) reads the
# headers' doc comments into XML, Sphinx with MyST and Breathe (docs/requirements.txt, installed into
# build/docs-venv, never the system python) renders the guide and that XML. Any warning of either fails.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
if ! command -v doxygen >/dev/null; then
  echo "build-docs: installing doxygen"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends doxygen
fi
venv=build/docs-venv
stamp=$venv/.requirements
if ! cmp -s docs/requirements.txt "$stamp" 2>/dev/null; then
  echo "build-docs: installing docs/requirements.txt into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r docs/requirements.txt
  cp docs/requirements.txt "$stamp"
fi

export STRATA_DOXYGEN_OUT=build/docs/doxygen
rm -rf "$STRATA_DOXYGEN_OUT" build/docs/html
mkdir -p "$STRATA_DOXYGEN_OUT"
# WARN_AS_ERROR fails the run; the log says what was wrong (a header's comment, most likely).
if ! doxygen docs/Doxyfile || [ -s "$STRATA_DOXYGEN_OUT/warnings.log" ]; then
  echo "build-docs: doxygen warned:" >&2
  cat "$STRATA_DOXYGEN_OUT/warnings.log" >&2
  exit 1
fi
export STRATA_DOXYGEN_XML=$PWD/$STRATA_DOXYGEN_OUT/xml
"$venv/bin/sphinx-build" -W --keep-going -q -b html docs build/docs/html
echo "build-docs: build/docs/html/index.html"
