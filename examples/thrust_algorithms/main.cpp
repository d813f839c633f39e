// SPDX-License-Identifier: Apache-2.0
// Thrust algorithms on records: a soa_vector's begin() / end() are random-access iterators whose
// reference is a proxy (reads gather the columns, writes scatter them), so thrust::sort,
// transform, reduce and copy_if take them as they take a device_vector's. Functors see the record.
#include <strata/strata.hpp>

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

struct star {
  BOOST_HANA_DEFINE_STRUCT(star, (float, mass), (float, luminosity), (int, id));
};

struct by_mass {
  STRATA_HD bool operator()(const star& a, const star& b) const { return a.mass < b.mass; }
};
struct brighten {  // record -> record, written back through the proxy
  STRATA_HD star operator()(star s) const {
    s.luminosity *= 2.0f;
    return s;
  }
};
struct mass_of {  // record -> float, into an ordinary device_vector
  STRATA_HD float operator()(const star& s) const { return s.mass; }
};
struct heavy {
  STRATA_HD bool operator()(const star& s) const { return s.mass >= 50.0f; }
};
struct add_stars {  // thrust::reduce over records: the sum of every field
  STRATA_HD star operator()(const star& a, const star& b) const { return {a.mass + b.mass, a.luminosity + b.luminosity, a.id + b.id}; }
};

int main() {
  const int n = 1000;
  std::vector<star> input(n);
  for (int i = 0; i < n; ++i) input[std::size_t(i)] = {float((i * 37) % n) / 10.0f, float(i % 7), i};  // distinct masses 0.0 .. 99.9, shuffled

  strata::soa_vector<star> stars(input);
  thrust::sort(stars.begin(), stars.end(), by_mass{});
  thrust::transform(stars.begin(), stars.end(), stars.begin(), brighten{});
  thrust::device_vector<float> masses(n);
  thrust::transform(stars.begin(), stars.end(), masses.begin(), mass_of{});
  const star total = thrust::reduce(stars.begin(), stars.end(), star{0, 0, 0}, add_stars{});

  strata::soa_vector<star> heavies(stars.size());  // copy_if writes into a container sized for all
  const auto end = thrust::copy_if(stars.begin(), stars.end(), heavies.begin(), heavy{});
  heavies.resize(std::size_t(end - heavies.begin()));

  // The same steps on the host AoS input, with std algorithms.
  std::vector<star> want = input;
  std::sort(want.begin(), want.end(), by_mass{});
  const std::vector<star> got = stars.to_host();
  const std::vector<float> got_masses(masses.begin(), masses.end());
  bool ok = got.size() == want.size();
  double mass = 0, light = 0;
  long ids = 0;
  for (std::size_t i = 0; ok && i < got.size(); ++i) {
    ok = got[i].mass == want[i].mass && got[i].luminosity == 2 * want[i].luminosity && got_masses[i] == want[i].mass;
    if (i > 0) ok = ok && got[i - 1].mass <= got[i].mass;
    mass += want[i].mass, light += 2 * want[i].luminosity, ids += want[i].id;
  }
  const auto n_heavy = std::count_if(want.begin(), want.end(), heavy{});
  ok = ok && std::abs(total.mass - mass) < 1e-5 * mass && total.luminosity == float(light) && total.id == ids;
  ok = ok && heavies.size() == std::size_t(n_heavy) && thrust::count_if(heavies.begin(), heavies.end(), heavy{}) == n_heavy;
  std::printf("sorted %d stars by mass, %zu of them heavy, total mass %.1f: %s\n", n, heavies.size(), double(total.mass), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
