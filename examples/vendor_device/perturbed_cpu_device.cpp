// A tiny vendor device: the CPU, except that one operator (aten::gelu unless configured
// otherwise) comes out 1 % too large — a stand-in for a vendor kernel with a precision bug, and a
// template for wrapping operator calls (streams, contexts) in call_operator().
#include <ATen/ATen.h>

#include <acccheck/device.hpp>

namespace {

using namespace acccheck;

class PerturbedCpuDevice final : public DevicePlugin {
 public:
  std::string_view device_name() const override { return "perturbed-cpu"; }
  void configure(const Settings& s) override {
    op_ = s.text("op").value_or("aten::gelu");
    factor_ = s.has("factor") ? s.number("factor") : 1.01;
  }
  Availability available() const override { return {true, ""}; }
  void initialize(const std::vector<int>&) override {}
  c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
  at::Tensor to_device(const at::Tensor& t) const override { return t.clone(); }
  at::Tensor to_cpu(const at::Tensor& t) const override { return t; }
  void synchronize() const override {}
  std::vector<c10::ScalarType> supported_dtypes() const override {
    return {c10::ScalarType::Half, c10::ScalarType::BFloat16, c10::ScalarType::Float, c10::ScalarType::Double};
  }

  void call_operator(const c10::OperatorHandle& op, torch::jit::Stack& stack) const override {
    op.callBoxed(&stack);
    if (op.schema().name() != op_) return;
    const std::size_t n = op.schema().returns().size();
    for (std::size_t i = stack.size() - n; i < stack.size(); ++i)
      if (stack[i].isTensor() && at::isFloatingType(stack[i].toTensor().scalar_type()))
        stack[i] = stack[i].toTensor() * factor_;
  }

 private:
  std::string op_ = "aten::gelu";
  double factor_ = 1.01;
};

}  // namespace

ACCCHECK_PLUGIN(device, PerturbedCpuDevice, "perturbed-cpu", "1.0.0",
                "example vendor device: the CPU with one operator 1% off")
