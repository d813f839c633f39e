// SPDX-License-Identifier: Apache-2.0
// AoS records from a binary file: the file holds records as the struct lays them out (what a
// C program's fwrite or a detector's DAQ leaves). They are read in chunks into a host buffer and
// appended to a soa_vector, which converts each chunk to columns on its way to the device; a
// column is then used as it is (statistics) and the records come back as AoS for the check.
//   aos_file [FILE]   (default: records.bin in the working directory)
#include <strata/strata.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

struct sample {
  BOOST_HANA_DEFINE_STRUCT(sample, (double, time), (float, value), (std::uint32_t, sensor), (std::uint16_t, flags));
};
// The file's record is the struct's bytes: 8 + 4 + 4 + 2, padded by the compiler to 24.
static_assert(sizeof(sample) == 24, "the file format below assumes the natural layout");

std::vector<sample> make_samples(std::size_t n) {
  std::vector<sample> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = {1e-3 * double(i), float(i % 50) - 20.0f, std::uint32_t(i % 16), std::uint16_t(i & 0x3)};
  return s;
}

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "records.bin";
  const std::vector<sample> written = make_samples(10007);  // not a whole number of chunks
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(written.data()), std::streamsize(written.size() * sizeof(sample)));

  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    strata::soa_vector<sample> samples;
    std::vector<sample> chunk(4096);
    while (in.read(reinterpret_cast<char*>(chunk.data()), std::streamsize(chunk.size() * sizeof(sample))) || in.gcount() > 0) {
      if (in.gcount() % std::streamsize(sizeof(sample)) != 0) throw std::runtime_error(path + " ends inside a record");
      samples.append(std::span<const sample>(chunk.data(), std::size_t(in.gcount()) / sizeof(sample)));
    }

    // One column, read where it lies: count, mean, min and max of `value` in one pass.
    const strata::column_stats v = strata::statistics(samples.column<&sample::value>());
    const std::vector<sample> back = samples.to_host();

    bool ok = back.size() == written.size() && v.count == double(written.size());
    double sum = 0;
    for (std::size_t i = 0; ok && i < back.size(); ++i) {
      const sample &a = back[i], &b = written[i];
      ok = a.time == b.time && a.value == b.value && a.sensor == b.sensor && a.flags == b.flags;
      sum += b.value;
    }
    ok = ok && std::abs(v.mean - sum / double(written.size())) < 1e-9 && v.min == -20.0 && v.max == 29.0;
    std::printf("%zu records of %zu bytes from %s; value: mean %.4f, min %.0f, max %.0f: %s\n", back.size(), sizeof(sample),
                path.c_str(), v.mean, v.min, v.max, ok ? "ok" : "WRONG");
    std::remove(path.c_str());
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aos_file: %s\n", e.what());
    return 1;
  }
}
