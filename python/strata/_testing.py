# SPDX-License-Identifier: Apache-2.0
"""Testing only, not part of strata's API: fault injection into the allocations strata's C++
library makes, for tests that make the k-th allocation of a call fail and check what the call
leaves behind.

fail_allocation(k): the k-th allocation from now on (0: the next) raises MemoryError; k < 0 turns
    the injection off. allocations(): how many allocations strata made since that call.
live_allocations(): allocations made and not freed. set_affine_copy_bytes(bytes): the input size
    from which normalization copies weight and bias into scratch (tests lower it).
"""
from ._strata import _testing as _t

fail_allocation = _t.fail_allocation
allocations = _t.allocations
live_allocations = _t.live_allocations
set_affine_copy_bytes = _t.set_affine_copy_bytes

__all__ = ["fail_allocation", "allocations", "live_allocations", "set_affine_copy_bytes"]
