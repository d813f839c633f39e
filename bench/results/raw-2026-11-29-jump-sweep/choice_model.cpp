// choice_model: gather's sampled count on the host for the index families of jump_sweep.cu, with
// two statistics: far pairs (neighbours more than `near` records apart: the count before this
// change) and the window count (a pair that jumps more than W records, W = the records whose
// traffic a 62914560-byte L2 holds, to a place more than `near` from every earlier index of its
// sampled line). Prints each family's shares and the way each picks for the three records with
// gather_costs' limit (random sector = 3 x a streamed one); score.py sets the picks against the
// faster way measured (call1/sweep.txt). Reads perm50.bin / perm150.bin
// (../raw-2026-11-29-permute-profile/resort_host.cpp) when present.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>
using idx_t = std::int32_t;
inline unsigned mix(unsigned x) { x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x; }
struct jumps {
  long n, d; unsigned threshold;
  idx_t operator()(unsigned i) const {
    const unsigned h = mix(i * 0x9E3779B9u ^ 0x1234567u);
    if (h >= threshold) return idx_t(i);
    if (d == 0) return idx_t(mix(h ^ 0xabcdefu) % unsigned(n));
    const long j = (h & 1) ? long(i) + d : long(i) - d;
    return idx_t(((j % n) + n) % n);
  }
};
constexpr long line = 32, lines = 16, group = line * lines;
long line_start(long g) { return g * group + long(((unsigned long long)g + 1) * 0x9E3779B97F4A7C15ull >> 60) * line; }
struct rec { const char* name; double leaf, stride; std::vector<double> leaves; long near; };
int main() {
  const long n = 1l << 26;
  std::vector<std::pair<std::string, std::vector<idx_t>>> fams;
  for (int s : {50, 150}) {
    std::string f = "perm" + std::to_string(s) + ".bin";
    if (FILE* p = std::fopen(f.c_str(), "rb")) {
      std::vector<idx_t> v(n);
      if (std::fread(v.data(), 4, n, p) == size_t(n)) fams.emplace_back("re-sort " + std::to_string(s), std::move(v));
      std::fclose(p);
    }
  }
  for (double f : {0.05, 0.1, 0.2, 0.4})
    for (long d : {0l, 1l << 8, 1l << 11, 1l << 14, 1l << 17, 1l << 19, 1l << 20, 1l << 21, 1l << 22, 1l << 24}) {
      std::vector<idx_t> v(n);
      jumps j{n, d, unsigned(f * 4294967296.0)};
      for (long i = 0; i < n; ++i) v[i] = j(unsigned(i));
      fams.emplace_back("f " + std::to_string(f).substr(0, 4) + ", " + (d ? "D 2^" + std::to_string(__builtin_ctzl(d)) : std::string("uniform")), std::move(v));
    }
  const rec recs[] = {{"particle", 28, 32, {4, 4, 4, 4, 4, 4, 4}, 8}, {"mixed15", 15, 16, {8, 4, 2, 1}, 8}, {"pair2", 16, 16, {8, 8}, 4}};
  std::printf("| family | record | far share | window count share | far count picks | window count picks |\n| --- | --- | ---: | ---: | --- | --- |\n");
  for (auto& [name, idx] : fams)
    for (const rec& r : recs) {
      const long groups = n / group;
      unsigned long long far = 0, fresh = 0, longj = 0;
      const long W = long(62914560.0 / (2 * r.leaf + 4));
      for (long g = 0; g < groups; ++g) {
        const long first = line_start(g);
        for (long i = first + 1; i < first + line; ++i) {
          const long d = long(idx[i]) - idx[i - 1];
          if (d <= r.near && d >= -r.near) continue;
          ++far;
          bool seen = false;
          for (long m = first; m < i && !seen; ++m) seen = std::labs(long(idx[m]) - idx[i]) <= r.near;
          if (!seen) { ++fresh; if (std::labs(d) > W) ++longj; }
        }
      }
      const double pairs = double(groups) * (line - 1);
      auto limit = [&](double sector_cost) {
        double fc = 0;
        for (double b : r.leaves) fc += sector_cost * double(long(b + 31) / 32);
        fc -= r.leaf;
        const double fr = sector_cost * double(long(r.stride + 31) / 32) - r.stride;
        const double rec_bytes = (r.leaf + r.stride) + (r.stride - r.leaf);
        return rec_bytes / (fc - fr);
      };
      std::printf("| %s | %s | %.4f | %.4f | %s | %s |\n", name.c_str(), r.name, far / pairs, longj / pairs,
                  far / pairs > limit(96) ? "records" : "columns", longj / pairs > limit(96) ? "records" : "columns");
    }
}
