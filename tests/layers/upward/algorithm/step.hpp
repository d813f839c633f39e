// SPDX-License-Identifier: Apache-2.0
// Fixture for layers.detects_upward.
#pragma once
