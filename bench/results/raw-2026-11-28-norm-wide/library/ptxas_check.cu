// ptxas resource usage of three rows_kernel variants: two holding part of a row in shared memory
// (Spill = true) and the whole-unit fp32 RMS kernel without it. Built with
// nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -Xptxas -v -Iinclude -c ptxas_check.cu
// (output: ptxas-5df385a.txt; ptxas-unit-k.txt is the first build, whose row_part read w[k] at a run-time k).
#include <strata/algorithm/normalize.hpp>
namespace sn = strata::detail::norm;
template __global__ void sn::rows_kernel<strata::norm_kind::rms, float, 8, true, true>(sn::args<float>, int, strata::index_t, int);
template __global__ void sn::rows_kernel<strata::norm_kind::layer, strata::bfloat16, 8, false, true>(sn::args<strata::bfloat16>, int, strata::index_t, int);
template __global__ void sn::rows_kernel<strata::norm_kind::rms, float, 8, true, false>(sn::args<float>, int, strata::index_t, int);
