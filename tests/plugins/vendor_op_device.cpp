// A device plugin with a vendor operator, for run_ut's NPU.* path: it registers npu::npu_rms_norm
// with a CPU kernel (the "device" computes in the input dtype, as a vendor kernel would) and gives
// run_ut the reference implementation as a bench function (api-list.md §4).
#include <ATen/ATen.h>
#include <torch/library.h>

#include <acccheck/device.hpp>

namespace {

using namespace acccheck;

std::tuple<at::Tensor, at::Tensor> rms_norm_kernel(const at::Tensor& x, const at::Tensor& gamma, double eps) {
  // Accumulates in float32 and rounds once to the input dtype, as a vendor kernel would.
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor rstd = at::rsqrt(xf.pow(2).mean(-1, true) + eps);
  return {(xf * rstd * gamma.to(at::kFloat)).to(x.scalar_type()), rstd.to(x.scalar_type())};
}

TORCH_LIBRARY(npu, m) { m.def("npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)"); }
TORCH_LIBRARY_IMPL(npu, CPU, m) { m.impl("npu_rms_norm", rms_norm_kernel); }

class VendorOpDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "vendor-sim"; }
  void configure(const Settings&) override {}
  Availability available() const override { return {true, ""}; }
  void initialize(const std::vector<int>&) override {}
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.clone(); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t; }
  void synchronize() const override {}
  std::vector<c10::ScalarType> supported_dtypes() const override { return {c10::kHalf, c10::kFloat}; }
  std::map<std::string, BenchFunction> bench_functions() const override {
    return {{"npu::npu_rms_norm", [](const std::vector<c10::IValue>& a) {
               const at::Tensor& x = a[0].toTensor();
               at::Tensor rstd = at::rsqrt(x.pow(2).mean(-1, true) + a[2].toDouble());
               return std::vector<c10::IValue>{x * rstd * a[1].toTensor(), rstd};
             }}};
  }
};

}  // namespace

ACCCHECK_PLUGIN(device, VendorOpDevice, "vendor-sim", "1.0.0", "test device with the vendor operator npu::npu_rms_norm")
