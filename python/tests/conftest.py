# SPDX-License-Identifier: Apache-2.0
"""Hypothesis settings for the fuzzers (test_fuzz.py). "ci" (the default) keeps their time small:
300 examples per property (about 1.5 s each on 2 cores) and no example database written into the tree;
STRATA_HYPOTHESIS_PROFILE=thorough runs many more."""
import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # test_fuzz.py skips itself; scripts/test-python.sh installs hypothesis
    settings = None

if settings is not None:
    settings.register_profile("ci", max_examples=300, deadline=2000, database=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", max_examples=5000, deadline=None, database=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("STRATA_HYPOTHESIS_PROFILE", "ci"))
