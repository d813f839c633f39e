// layer_norm_check: runs strata's layer norm on tensors written by bench/layer_norm_torch.py.
//   layer_norm_check DIR   reads DIR/meta.txt ("rows cols dtype eps"), x.bin, gamma.bin, beta.bin
//                          (raw row-major values), writes DIR/y.bin
#include "layer_norm.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

template <class T>
std::vector<T> read(const std::string& path, std::size_t n) {
  std::vector<T> v(n);
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * sizeof(T))))
    throw std::runtime_error("cannot read " + std::to_string(n) + " values from " + path);
  return v;
}

template <class T>
void run(const std::string& dir, strata::index_t rows, strata::index_t cols, float eps) {
  auto x = read<T>(dir + "/x.bin", std::size_t(rows * cols));
  auto g = read<T>(dir + "/gamma.bin", std::size_t(cols));
  auto b = read<T>(dir + "/beta.bin", std::size_t(cols));
  strata::matrix<T> mx(rows, cols, x.data()), mg(1, cols, g.data()), mb(1, cols, b.data()), my(rows, cols);
  strata_examples::layer_norm<T>(mx.const_view(), mg.const_view(), mb.const_view(), my.view(), eps);
  strata::synchronize(strata::stream_t{});
  my.copy_to_host(x.data());
  std::ofstream(dir + "/y.bin", std::ios::binary).write(reinterpret_cast<const char*>(x.data()), std::streamsize(x.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: layer_norm_check DIR\n";
    return 2;
  }
  std::string dir = argv[1], dtype;
  strata::index_t rows = 0, cols = 0;
  float eps = 0;
  std::ifstream(dir + "/meta.txt") >> rows >> cols >> dtype >> eps;
  try {
    if (dtype == "fp32") run<float>(dir, rows, cols, eps);
    else if (dtype == "bf16") run<strata::bfloat16>(dir, rows, cols, eps);
    else if (dtype == "fp16") run<strata::half>(dir, rows, cols, eps);
    else throw std::runtime_error("unknown dtype '" + dtype + "' in " + dir + "/meta.txt");
  } catch (const std::exception& e) {
    std::cerr << "layer_norm_check: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
