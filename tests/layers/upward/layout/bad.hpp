// SPDX-License-Identifier: Apache-2.0
// Fixture for layers.detects_upward: a layout header that reaches up into the algorithms.
#pragma once
#include <strata/algorithm/step.hpp>
