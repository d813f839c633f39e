// SPDX-License-Identifier: Apache-2.0
// The rank of a test particle in a distributed job: slabs of the box [-1, 1) along x, one per rank,
// and the ghosts of a slab's faces (records within `cut` of a face go to the neighbouring rank).
#pragma once

#include <strata/config.hpp>

#include "records.hpp"

namespace strata_test {

struct slab_of {
  int ranks;
  STRATA_HD int operator()(const particle& p) const {
    int r = int((p.x + 1.0f) * 0.5f * float(ranks));
    return r < 0 ? 0 : r >= ranks ? ranks - 1 : r;
  }
};

/// Direction 0 sends records within `cut` of the slab's lower face to the rank below, direction 1
/// those near the upper face to the rank above.
struct near_face {
  int ranks;
  float cut;
  STRATA_HD int operator()(const particle& p, int k) const {
    const int me = slab_of{ranks}(p);
    const float width = 2.0f / float(ranks), lo = -1.0f + width * float(me);
    if (k == 0) return me > 0 && p.x < lo + cut ? me - 1 : -1;
    return me + 1 < ranks && p.x >= lo + width - cut ? me + 1 : -1;
  }
};

}  // namespace strata_test
