// SPDX-License-Identifier: Apache-2.0
// HDF5 write and read rates of strata::io (strata/io/hdf5.hpp) for the benchmark particle (7
// floats), from and into host and device containers, beside the copy between the GPU and pinned
// memory alone, so the two rates side by side show how much of the copy the staging hides behind
// HDF5's I/O. bench/io_h5py.py times h5py writing and reading the same datasets (same chunks,
// same checksum filter) from NumPy arrays on the same file system, and writes the comparison.
//
//   io_bench --n 67108864 --dir /tmp --json io_bench.json
//
// Every read is checked against the records written (every leaf of every record). Timings are wall
// clock, file creation to close, best of --repeat; the file system's page cache is left as it is
// (the comparison with h5py runs under the same conditions).
#include <strata/strata.hpp>
#include <strata/io/hdf5.hpp>

#include "../fixtures/random.hpp"
#include "../fixtures/records.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

using particle = strata_fixtures::particle;
using clock_type = std::chrono::steady_clock;

double best_of(int repeat, const std::function<void()>& setup, const std::function<void()>& body) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    setup();
    const auto t0 = clock_type::now();
    body();
    best = std::min(best, std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  return best;
}

bool same(const std::vector<particle>& a, const std::vector<particle>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(particle)) == 0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("strata HDF5 I/O rates: host and device containers against the copy alone");
  std::size_t n = std::size_t(1) << 26;
  std::string dir = std::filesystem::temp_directory_path().string(), json_path;
  int repeat = 3;
  std::size_t staging = strata::io::write_options{}.staging_records;
  app.add_option("--n", n, "particles")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--dir", dir, "directory for the files")->capture_default_str();
  app.add_option("--repeat", repeat, "runs per case (the best is reported)")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--staging", staging, "records per pinned staging block")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--json", json_path, "results file");
  CLI11_PARSE(app, argc, argv);

  const std::vector<particle> records = strata_fixtures::seeded_records<particle>(n, 0x10u, 0);
  const double bytes = double(n) * double(sizeof(particle));
  const std::string file_path = (std::filesystem::path(dir) / "strata-io-bench.h5").string();
  auto fresh = [&] { std::filesystem::remove(file_path); };

  strata::host_soa_vector<particle> host(records);
  strata::soa_vector<particle> device(records);
  strata::aos_vector<particle> device_aos(records);
  nlohmann::json cases = nlohmann::json::array();
  auto report = [&](const std::string& name, double seconds, const std::string& what) {
    const double gbs = bytes / seconds * 1e-9;
    std::printf("%-28s %10.1f ms %8.2f GB/s  %s\n", name.c_str(), seconds * 1e3, gbs, what.c_str());
    cases.push_back({{"case", name}, {"seconds", seconds}, {"GB/s", gbs}, {"what", what}});
  };

  for (const bool checksum : {true, false}) {
    strata::io::write_options wo;
    wo.checksum = checksum;
    wo.staging_records = staging;
    strata::io::read_options ro;
    ro.staging_records = staging;
    const std::string tag = checksum ? "" : " nochecksum";
    auto write = [&](const auto& c) {
      return [&] {
        strata::io::file f = strata::io::file::create(file_path);
        strata::io::write(f, "particles", c, wo);
      };
    };
    report("write host soa" + tag, best_of(repeat, fresh, write(host)), "host soa_vector to the file");
    report("write device soa" + tag, best_of(repeat, fresh, write(device)), "device soa_vector to the file, staged through pinned memory");
    report("write device aos" + tag, best_of(repeat, fresh, write(device_aos)), "device aos_vector to the file, transposed on the GPU block by block and staged");

    // The file now holds the records; reads go back into each kind of container and are checked.
    strata::host_soa_vector<particle> host_in;
    report("read host soa" + tag, best_of(repeat, [] {}, [&] {
      strata::io::file f = strata::io::file::open(file_path);
      strata::io::read(f, "particles", host_in, ro);
    }), "file to a host soa_vector");
    if (!same(host_in.to_host(), records)) return std::fprintf(stderr, "read host soa: records differ\n"), 1;
    strata::soa_vector<particle> device_in;
    report("read device soa" + tag, best_of(repeat, [] {}, [&] {
      strata::io::file f = strata::io::file::open(file_path);
      strata::io::read(f, "particles", device_in, ro);
    }), "file to a device soa_vector, staged through pinned memory");
    if (!same(device_in.to_host(), records)) return std::fprintf(stderr, "read device soa: records differ\n"), 1;
    strata::aos_vector<particle> aos_in;
    report("read device aos" + tag, best_of(repeat, [] {}, [&] {
      strata::io::file f = strata::io::file::open(file_path);
      strata::io::read(f, "particles", aos_in, ro);
    }), "file to a device aos_vector, staged and transposed on the GPU block by block");
    if (!same(aos_in.to_host(), records)) return std::fprintf(stderr, "read device aos: records differ\n"), 1;
  }

  // The copy alone: every column between the GPU and a pinned buffer, in blocks of the staging size.
  strata::buffer pinned(std::size_t(bytes), strata::memory_space::pinned);
  auto columns = [&](auto&& copy) {
    std::size_t off = 0;
    for (std::size_t l = 0; l < strata::reflect::leaf_count<particle>; ++l) {
      for (std::size_t s = 0; s < n; s += staging) {
        const std::size_t b = std::min(staging, n - s) * sizeof(float);
        copy(pinned.data() + off, device.view().column_bytes(l) + s * sizeof(float), b);
        off += b;
      }
    }
    strata::synchronize(strata::stream_t{});
  };
  report("copy device to pinned", best_of(repeat, [] {}, [&] {
    columns([](std::byte* p, std::byte* d, std::size_t b) { strata::copy_bytes_async(p, d, b, strata::stream_t{}); });
  }), "the device soa_vector's columns to pinned memory, no file");
  report("copy pinned to device", best_of(repeat, [] {}, [&] {
    columns([](std::byte* p, std::byte* d, std::size_t b) { strata::copy_bytes_async(d, p, b, strata::stream_t{}); });
  }), "pinned memory to the device soa_vector's columns, no file");
  fresh();

  if (!json_path.empty()) {
    nlohmann::json out = {{"benchmark", "io"},
#if defined(STRATA_BACKEND_CUDA)
                          {"backend", "cuda"},
#else
                          {"backend", "host"},
#endif
                          {"record", "strata_fixtures::particle (7 x float32)"},
                          {"n", n},
                          {"bytes", bytes},
                          {"staging_records", staging},
                          {"chunk_records", strata::io::write_options{}.chunk_records},
                          {"hdf5", H5_VERSION},
                          {"cases", cases}};
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}
