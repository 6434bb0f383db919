// The dump's statistics pass (capture/engine/tensor_statistics.cpp): Max/Min/Mean/Norm of a CPU
// tensor in one pass, per element, with the tensor in cache (read again at once: "hot") and out of
// it (a rotation through 64 MiB of tensors, more than this project's VM's last-level cache: "cold").
// Inference tensors, so the statistics cache never answers for the pass.
// Run: build/bench/statistics_bench
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <vector>

#include "engine/tensor_statistics.hpp"

namespace {

std::vector<at::Tensor> tensors(std::int64_t n, at::ScalarType dtype, std::size_t total_bytes) {
  c10::InferenceMode inference;
  std::size_t count = std::max<std::size_t>(1, total_bytes / (n * at::elementSize(dtype)));
  std::vector<at::Tensor> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(at::randn({n}).to(dtype));
  return out;
}

void run(benchmark::State& state, at::ScalarType dtype, std::size_t total_bytes) {
  const std::int64_t n = state.range(0);
  auto ts = tensors(n, dtype, total_bytes);
  acccheck::capture::Statistics s;
  at::Tensor pending;
  std::size_t i = 0;
  for (auto _ : state) {
    acccheck::capture::fill_statistics(ts[i], s, &pending);
    benchmark::DoNotOptimize(s);  // the whole record: its packed members bind to no reference
    i = (i + 1) % ts.size();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void Float32Hot(benchmark::State& state) { run(state, at::kFloat, 0); }
void Float32Cold(benchmark::State& state) { run(state, at::kFloat, 64u << 20); }
void BFloat16Hot(benchmark::State& state) { run(state, at::kBFloat16, 0); }

}  // namespace

BENCHMARK(Float32Hot)->Arg(256)->Arg(2048)->Arg(65536)->Arg(1 << 20);
BENCHMARK(Float32Cold)->Arg(65536)->Arg(1 << 20);
BENCHMARK(BFloat16Hot)->Arg(65536);
BENCHMARK_MAIN();
