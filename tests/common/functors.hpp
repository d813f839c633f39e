// SPDX-License-Identifier: Apache-2.0
// The shared functor fixtures (fixtures/functors.hpp), named from the tests' namespace.
#pragma once

#include "../../fixtures/functors.hpp"
#include "records.hpp"
