// run_ut's per-row comparison cost: each metric plugin's stage 1 (compute) and run_ut's status
// ladder on one float output, the part of run_ut's harness that grows with the output's size.
// Run: build/bench/stage1_bench   (the medium API of run_ut_bench.sh compares three 65,536-element rows;
// the second argument is the device dtype's width: 32 = float32 vs float64, 16 = float16 vs float32)
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <acccheck/float_formats.hpp>

#include "plugin_host/plugin_registry.hpp"
#include "standards/standards_setup.hpp"
#include "verdict/status_ladder.hpp"

namespace {

using namespace acccheck;

// A float32 output and its float64 benchmark: the device value is the benchmark rounded to
// float32 plus a few ULPs of noise, as a matmul's would be. Half: a float16 output against its
// float32 benchmark (an NPU's usual case).
struct Row {
  std::vector<double> bench, device;
  bool half = false;
  explicit Row(std::size_t n, bool float16 = false) : bench(n), device(n), half(float16) {
    if (float16) {
      std::mt19937_64 rng(7);
      std::uniform_real_distribution<double> u(-4.0, 4.0);
      for (std::size_t i = 0; i < n; ++i) {
        bench[i] = round_to_float32(u(rng));
        device[i] = round_to_float16(bench[i] * (1.0 + 1e-3 * u(rng)));
      }
      return;
    }
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    std::uniform_int_distribution<int> ulps(-3, 3);
    for (std::size_t i = 0; i < n; ++i) {
      bench[i] = u(rng);
      float f = static_cast<float>(bench[i]);
      for (int k = ulps(rng); k != 0; k += k > 0 ? -1 : 1) f = std::nextafter(f, k > 0 ? 10.f : -10.f);
      device[i] = f;
    }
  }
  OutputPair pair() const {
    return {bench.data(), device.data(), bench.size(), half ? "torch.float16" : "torch.float32",
            half ? "torch.float32" : "torch.float64", false};
  }
};

// The metric plugins configured as the run_ut worker configures them (standards.yaml).
MetricPlugin& metric(const std::string& standard_id) {
  static core::PluginSearch search = [] {
    core::PluginSearch s;
    s.dirs = {ACCCHECK_PLUGIN_DIR};
    return s;
  }();
  static auto* registry = [] {
    auto* r = new core::PluginRegistry();
    r->load(search, {PluginKind::metric});
    return r;
  }();
  static auto* standards = new core::Standards(core::load_standards(*registry, search, std::nullopt));
  auto it = standards->by_standard.find(standard_id);
  if (it == standards->by_standard.end()) throw std::runtime_error("metric plugin not built: " + standard_id);
  return *it->second;
}

void BM_Stage1(benchmark::State& state, const char* standard_id) {
  Row row(static_cast<std::size_t>(state.range(0)), state.range(1) == 16);
  MetricPlugin& m = metric(standard_id);
  for (auto _ : state) benchmark::DoNotOptimize(m.compute(row.pair()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_StatusLadder(benchmark::State& state) {
  Row row(static_cast<std::size_t>(state.range(0)), state.range(1) == 16);
  for (auto _ : state) {
    replay::DetailsRow cells;
    std::string message;
    benchmark::DoNotOptimize(replay::status_ladder(row.pair(), cells, message));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK_CAPTURE(BM_Stage1, ulp_compare, "ulp_compare")->Args({65536, 32})->Args({65536, 16});
BENCHMARK_CAPTURE(BM_Stage1, benchmark, "benchmark")->Args({65536, 32})->Args({65536, 16});
BENCHMARK_CAPTURE(BM_Stage1, absolute_threshold, "absolute_threshold")->Args({65536, 32})->Args({65536, 16});
BENCHMARK_CAPTURE(BM_Stage1, thousandth_threshold, "thousandth_threshold")->Args({65536, 32})->Args({65536, 16});
BENCHMARK_CAPTURE(BM_Stage1, accumulative_error_compare, "accumulative_error_compare")->Args({65536, 32})->Args({65536, 16});
BENCHMARK(BM_StatusLadder)->Args({65536, 32})->Args({65536, 16});
// As the acccheck-replay worker (worker_main.cpp): freed buffers are kept, not unmapped, so the
// per-row arrays cost no page faults.
int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
