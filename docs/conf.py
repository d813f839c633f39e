# SPDX-License-Identifier: Apache-2.0
# Sphinx configuration of strata's user guide and API reference (scripts/build-docs.sh builds it).
import os

project = "strata"
author = "the strata developers"
extensions = ["myst_parser", "breathe"]
# The API reference comes from Doxygen's XML of the headers (scripts/build-docs.sh runs Doxygen first).
breathe_projects = {"strata": os.environ.get("STRATA_DOXYGEN_XML", os.path.join(os.path.dirname(__file__), "..", "build", "docs", "doxygen", "xml"))}
breathe_default_project = "strata"
highlight_language = "cpp"
myst_heading_anchors = 3
# Only the guide's pages: the CMake file and Doxygen's configuration are not pages.
exclude_patterns = ["CMakeLists.txt", "Doxyfile", "requirements.txt", "_build"]
html_theme = "furo"
html_title = "strata"


# Pages of docs/ that the index's contents do not name yet (docs/performance.md, say, written
# beside this guide) are appended to them, so every page is reachable and none is left out.
def _list_every_page(app, docname, source):
    if docname != "index":
        return
    here = os.path.dirname(__file__)
    text = source[0]
    start = text.index("```{toctree}")
    end = text.index("```", start + 3)
    listed = set(text[start:end].split())
    extra = sorted(os.path.splitext(f)[0] for f in os.listdir(here)
                   if f.endswith(".md") and f != "index.md" and os.path.splitext(f)[0] not in listed)
    source[0] = text[:end] + "".join(name + "\n" for name in extra) + text[end:]


# Links from the guide to curated results files (../bench/results/...) stay plain relative links in
# the Markdown, so they work where the repository is browsed; in the HTML they become downloads of
# the file (MyST's path: scheme) instead of references to pages outside the guide.
def _results_as_files(app, docname, source):
    source[0] = source[0].replace("](../bench/results/", "](path:../bench/results/")


def setup(app):
    app.connect("source-read", _list_every_page)
    app.connect("source-read", _results_as_files)
