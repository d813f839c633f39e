// SPDX-License-Identifier: Apache-2.0
// The neighbor layer: cell lists, Verlet lists and the loops over them (docs/neighbors.md).
#pragma once

#include <strata/neighbor/box.hpp>
#include <strata/neighbor/cell_list.hpp>
#include <strata/neighbor/for_each_neighbor.hpp>
#include <strata/neighbor/verlet_list.hpp>
