// SPDX-License-Identifier: Apache-2.0
// Particles that come and go: particles drift in the unit square; every few steps those that left
// are removed (erase_if, order kept), as many new ones are injected at the centre (append), and
// all are re-sorted by cell (sort_by, stable), so neighbours sit together in memory. A tracer joins
// with push_back, the one-record path. The same steps on a std::vector check every record.
#include <strata/strata.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

struct particle {
  BOOST_HANA_DEFINE_STRUCT(particle, (float, x), (float, y), (float, vx), (float, vy), (int, id));
};

// Positions, velocities and dt are multiples of powers of two: every step is exact, so host and
// GPU (which fuses x + v * dt into one instruction) compute the same bits.
constexpr float dt = 1.0f / 16;
struct drift {
  STRATA_HD particle operator()(particle p) const {
    p.x += p.vx * dt, p.y += p.vy * dt;
    return p;
  }
};
struct outside {
  STRATA_HD bool operator()(const particle& p) const { return p.x < 0 || p.x >= 1 || p.y < 0 || p.y >= 1; }
};
struct cell_of {  // a 16 x 16 grid over the square: 8-bit keys
  STRATA_HD unsigned operator()(const particle& p) const {
    auto c = [](float v) { const int i = int(v * 16); return unsigned(i < 0 ? 0 : i > 15 ? 15 : i); };
    return c(p.y) * 16 + c(p.x);
  }
};

particle make(int id) {  // deterministic: the host reference makes the same ones
  const unsigned h = unsigned(id) * 2654435761u;
  return {float(h % 1024) / 1024, float((h >> 10) % 1024) / 1024, float(int((h >> 20) % 1024) - 512) / 1024,
          float(int((h >> 5) % 1024) - 512) / 1024, id};
}
std::vector<particle> injected(int first_id, std::size_t count) {
  std::vector<particle> p;
  for (std::size_t i = 0; i < count; ++i) {
    particle q = make(first_id + int(i));
    q.x = 0.5f + q.x / 8, q.y = 0.5f + q.y / 8;  // near the centre
    p.push_back(q);
  }
  return p;
}

int main() {
  const int n = 5000, steps = 40, refresh_every = 5;
  std::vector<particle> host;
  for (int i = 0; i < n; ++i) host.push_back(make(i));
  strata::soa_vector<particle> ps(host);
  const particle tracer{0.5f, 0.5f, 0, 0, -1};
  ps.push_back(tracer);
  host.push_back(tracer);

  int next_id = n;
  std::size_t removed = 0;
  for (int s = 1; s <= steps; ++s) {
    strata::transform(ps, ps, drift{});
    for (auto& p : host) p = drift{}(p);
    if (s % refresh_every) continue;
    const std::size_t gone = strata::erase_if(ps, outside{});
    const auto fresh = injected(next_id, gone);
    ps.append(fresh);
    // Through a spare soa_vector kept across calls (sort_by(ps, key, spare, ...)), the re-sort
    // moves the records once instead of twice.
    strata::sort_by(ps, cell_of{}, strata::stream_t{}, 0, 8);

    const std::size_t host_gone = std::erase_if(host, outside{});
    host.insert(host.end(), fresh.begin(), fresh.end());
    std::stable_sort(host.begin(), host.end(), [](const particle& a, const particle& b) { return cell_of{}(a) < cell_of{}(b); });
    if (host_gone != gone) return std::printf("step %d: strata removed %zu particles, the reference %zu\n", s, gone, host_gone), 1;
    removed += gone, next_id += int(gone);
  }

  const std::vector<particle> out = ps.to_host();
  bool ok = out.size() == host.size() && out.size() == std::size_t(n) + 1;
  for (std::size_t i = 0; ok && i < out.size(); ++i)
    ok = out[i].x == host[i].x && out[i].y == host[i].y && out[i].vx == host[i].vx && out[i].vy == host[i].vy && out[i].id == host[i].id;
  std::printf("%d steps: %zu particles left the square and as many came in; %zu now, sorted by cell: %s\n", steps, removed, out.size(),
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
