# Sphinx configuration of strata's user guide and API reference (scripts/build-docs.sh builds it).
import os

project = "strata"
author = "the strata developers"
extensions = ["myst_parser", "breathe"]
# The API reference comes from Doxygen's XML of the headers (scripts/build-docs.sh runs Doxygen first).
breathe_projects = {"strata": os.environ.get("STRATA_DOXYGEN_XML", os.path.join(os.path.dirname(__file__), "..", "build", "docs", "doxygen", "xml"))}
breathe_default_project = "strata"
breathe_default_members = ("members",)
primary_domain = "cpp"
highlight_language = "cpp"
myst_heading_anchors = 3
# Only the guide's pages: the CMake file and Doxygen's configuration are not pages.
exclude_patterns = ["CMakeLists.txt", "Doxyfile", "requirements.txt", "_build"]
html_theme = "furo"
html_title = "strata"
