// A vendor's fused operator and its reference, shipped as a device plugin without rebuilding acccheck:
//   vendor::fused_add_rms_norm(x, residual, gamma, epsilon) -> (rms_norm(x + residual) * gamma, x + residual)
// The "device" is the CPU running the vendor's kernel (float32 accumulation, results rounded to the
// input dtype, optionally off by the `defect` factor of --device-config, a stand-in for a kernel bug).
// bench_functions() gives run_ut the reference: the formula evaluated in whatever precision run_ut
// hands it (float16/bfloat16 inputs arrive as float32, float32 as float64).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <atomic>

#include <acccheck/device.hpp>

namespace {

using namespace acccheck;

std::atomic<double> g_defect{1.0};

at::Tensor widened(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16 ? t.to(at::kFloat) : t;
}

// The vendor's kernel. Registered as CompositeImplicitAutograd: built from ATen operators, so
// autograd differentiates it on any backend with no backward of its own.
std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm_kernel(const at::Tensor& x, const at::Tensor& residual, const at::Tensor& gamma,
                                                             double epsilon) {
  at::Tensor sum = widened(x) + widened(residual);
  at::Tensor y = sum * at::rsqrt(sum.pow(2).mean(-1, true) + epsilon) * widened(gamma) * g_defect.load();
  return {y.to(x.scalar_type()), sum.to(x.scalar_type())};
}

// The reference run_ut's benchmark side calls (same boxed convention as the dispatcher: the bound
// arguments in, the results out).
std::vector<c10::IValue> fused_add_rms_norm_reference(const std::vector<c10::IValue>& args) {
  const at::Tensor sum = args.at(0).toTensor() + args.at(1).toTensor();
  const at::Tensor y = sum * at::rsqrt(sum.pow(2).mean(-1, true) + args.at(3).toDouble()) * args.at(2).toTensor();
  return {y, sum};
}

TORCH_LIBRARY(vendor, m) {
  m.def("fused_add_rms_norm(Tensor x, Tensor residual, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)");
  m.impl("fused_add_rms_norm", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(fused_add_rms_norm_kernel));
}

class VendorFusedCpuDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "vendor-fused-cpu"; }
  void configure(const Settings& s) override { g_defect = s.has("defect") ? s.number("defect") : 1.0; }
  Availability available() const override { return {true, ""}; }
  void initialize(const std::vector<int>&) override {}
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.clone(); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t; }
  void synchronize() const override {}
  std::vector<c10::ScalarType> supported_dtypes() const override {
    return {c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Float, c10::ScalarType::Double};
  }
  // Keyed by the operator's qualified name: run_ut's benchmark runs it for every entry of that
  // operator (our dumps name it in "acccheck_op"; the vendor hook records vendor:: calls once the
  // namespace is listed in acccheck_hook_vendor.yaml).
  std::map<std::string, BenchFunction> bench_functions() const override {
    return {{"vendor::fused_add_rms_norm", fused_add_rms_norm_reference}};
  }
};

}  // namespace

ACCCHECK_PLUGIN(device, VendorFusedCpuDevice, "vendor-fused-cpu", "1.0.0",
                "example vendor device: the CPU with the fused operator vendor::fused_add_rms_norm and its reference")
