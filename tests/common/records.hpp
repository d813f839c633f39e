// SPDX-License-Identifier: Apache-2.0
// The shared record fixtures (fixtures/records.hpp), named from the tests' namespace.
#pragma once

#include "../../fixtures/records.hpp"

namespace strata_test {
using namespace strata_fixtures;
}  // namespace strata_test
