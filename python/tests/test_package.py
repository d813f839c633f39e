# SPDX-License-Identifier: Apache-2.0
"""The package as a user installs it (issue 67 item 7): a version from its metadata, a docstring on
every public function, type stubs for the C++ module and the py.typed marker beside it."""
import ast
import importlib.metadata
import inspect
import pathlib
import re

import numpy as np

import strata
from strata import _strata, _testing


def test_version_is_the_installed_distributions():
    assert strata.__version__ == importlib.metadata.version(strata.DISTRIBUTION)
    assert re.fullmatch(r"\d+\.\d+\.\d+([.+-].*)?", strata.__version__), strata.__version__
    assert strata.DISTRIBUTION == "strata-soa"


def test_every_public_function_has_a_docstring():
    public = [getattr(strata, name) for name in strata.__all__ if callable(getattr(strata, name))]
    assert {f.__name__ for f in public} == {"layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm", "layer_norm_backward", "rms_norm_backward", "to_soa", "to_aos",
                                              "leaves", "to_arrow", "ArrowBatch"}
    native = [getattr(_strata, name) for name in dir(_strata) if not name.startswith("_") and callable(getattr(_strata, name))]
    testing = [getattr(_testing, name) for name in _testing.__all__]
    for f in public + native + testing:
        doc = inspect.getdoc(f) or ""
        assert len(doc.split()) >= 8, f"{f.__name__} has no docstring worth the name: {doc!r}"
    for f in native:  # nb::arg names in the signature, keyword arguments work
        assert re.match(rf"{f.__name__}\(\w+: ", f.__doc__), f.__doc__
    out = np.empty((1, 2), np.float32)
    assert _strata.normalize(rms=True, x=np.ones((1, 2), np.float32), out=out, weight=None, bias=None, eps=0.0)
    assert "Testing only" in _testing.__doc__ and "Testing only" in _strata._testing.__doc__


def test_stubs_and_py_typed_are_installed_beside_the_module():
    here = pathlib.Path(_strata.__file__).parent
    assert (here / "py.typed").is_file()
    stub = here / "_strata.pyi"
    tree = ast.parse(stub.read_text())
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    for name in ("normalize", "aos_to_soa", "soa_to_aos", "dense_bytes", "synchronize", "to_arrow"):
        assert name in functions, f"{name} missing from {stub}"
        assert ast.get_docstring(functions[name]), f"{name}'s stub has no docstring"
    assert [a.arg for a in functions["normalize"].args.args] == ["rms", "x", "out", "weight", "bias", "eps", "stream"]
