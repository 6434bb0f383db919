#include "npu_sim_backend.hpp"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/DeviceType.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <chrono>
#include <csignal>
#include <thread>

#include "fault_injection.hpp"
#include "fused_op_kernels.hpp"
#include "fused_rnn_cells.hpp"

namespace acccheck::npusim {

namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;
std::atomic<std::uint64_t> g_fallback_calls{0};
std::atomic<bool> g_registered{false};

// ---- memory: host memory tagged with the PrivateUse1 device ----------------------------------
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define NPUSIM_ALLOCATE_CONST
#else
#define NPUSIM_ALLOCATE_CONST const
#endif

struct SimAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) NPUSIM_ALLOCATE_CONST override {
    void* data = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    return {data, data, &c10::free_cpu, c10::Device(kDevice, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &c10::free_cpu; }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
#endif
};
SimAllocator g_allocator;

// ---- device guard: one device, one stream, events that are always complete ---------------------
// npu-sim computes synchronously on the host: its one stream is always idle and every event has
// already happened. LibTorch 2.x's autograd engine needs these answers for a PrivateUse1 device
// (InputBuffer::add asks for the default stream; from 2.8 the engine records and waits on events
// between the forward's and the backward's streams); 1.13 never asks.
void* const kRecordedEvent = reinterpret_cast<void*>(0x1);  // any non-null handle: "recorded"

struct SimGuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kDevice, 0); }
  c10::Device getDevice() const override { return c10::Device(kDevice, 0); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() <= 0, "npu-sim has one device (index 0), asked for ", d.index());
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const noexcept override { return default_stream(d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return default_stream(d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return default_stream(d); }
  c10::Stream exchangeStream(c10::Stream) const noexcept override { return default_stream(c10::Device(kDevice, 0)); }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    *event = kRecordedEvent;
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
#if TORCH_VERSION_MAJOR >= 2  // 1.13's interface has neither
  void synchronizeEvent(void*) const override {}
  double elapsedTime(void*, void*, const c10::DeviceIndex) const override { return 0.0; }
#endif

 private:
  static c10::Stream default_stream(c10::Device d) {
    return c10::Stream(c10::Stream::DEFAULT, c10::Device(kDevice, d.has_index() ? d.index() : 0));
  }
};

#if TORCH_VERSION_MAJOR >= 2
// ---- the accelerator's hooks (LibTorch 2.x; 1.13 has no PrivateUse1 hooks) ------------------------
// With these and the backend name registered, at::getAccelerator() reports npu-sim, as it does a real
// vendor backend, and the autograd engine treats its tensors as an accelerator's (streams, events).
struct SimHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  // The simulated device draws random numbers on the host: the CPU's default generator.
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    return at::detail::getDefaultCPUGenerator();
  }
  at::Device getDeviceFromPtr(void*) const override { return c10::Device(kDevice, 0); }
  bool isPinnedPtr(const void*) const override { return false; }
  c10::Allocator* getPinnedMemoryAllocator() const override { return c10::GetCPUAllocator(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    at::native::resize_bytes_cpu(storage.unsafeGetStorageImpl(), newsize);
  }
};
#endif

// ---- which thread is in backward: a RecordFunction observer on autograd nodes ------------------
thread_local int t_backward_depth = 0;

std::unique_ptr<at::ObserverContext> on_node_start(const at::RecordFunction&) {
  ++t_backward_depth;
  return nullptr;
}
void on_node_end(const at::RecordFunction&, at::ObserverContext*) { --t_backward_depth; }


}  // namespace

at::Tensor host_view(const at::Tensor& t) {
  if (!t.defined() || t.device().type() != kDevice) return t;
  if (t.numel() == 0) return at::empty(t.sizes(), t.options().device(c10::kCPU));
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(c10::kCPU));
}

bool in_backward_pass() { return t_backward_depth > 0; }
std::uint64_t fallback_calls() { return g_fallback_calls.load(); }

namespace {

// ---- minimal kernels ------------------------------------------------------------------------
constexpr c10::DispatchKeySet kKeys{c10::DispatchKey::PrivateUse1};

at::Tensor sim_empty(c10::IntArrayRef size, c10::optional<c10::ScalarType> dtype, c10::optional<c10::Layout>,
                     c10::optional<c10::Device>, c10::optional<bool>, c10::optional<c10::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &g_allocator, kKeys, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor sim_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, c10::optional<c10::ScalarType> dtype,
                             c10::optional<c10::Layout>, c10::optional<c10::Device>, c10::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &g_allocator, kKeys, c10::dtype_or_default(dtype));
}

at::Tensor sim_copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  host_view(dst).copy_(host_view(self));
  return dst;
}

at::Tensor sim_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  host_view(dst).copy_(host_view(self));
  return dst;
}

at::Tensor& sim_copy_(at::Tensor& self, const at::Tensor& src, bool) {
  host_view(self).copy_(host_view(src));
  return self;
}

const at::Tensor& sim_resize_(const at::Tensor& self, c10::IntArrayRef size, c10::optional<c10::MemoryFormat> format) {
  // The CPU resize grows the storage through its own allocator: ours.
  return at::native::resize_(self, size, format);
}

at::Tensor sim_as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                          c10::optional<int64_t> offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, offset);
}

at::Tensor sim_view(const at::Tensor& self, c10::IntArrayRef size) { return at::native::view(self, size); }

at::Tensor sim_reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::as_strided_tensorimpl(self, size, stride, self.storage_offset());
}

// ---- healthy "accelerator" arithmetic: other accumulation orders --------------------------------
bool is_half(const at::Tensor& t) { return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16; }
at::Tensor acc(const at::Tensor& t) { return is_half(t) ? t.to(at::kFloat) : t; }

// A·B with the contraction dimension split in blocks whose partial products are added afterwards,
// left in the accumulator's precision (float32 for half types, the op's dtype otherwise) so that
// addmm adds its bias before the one rounding, as a fused accelerator kernel does.
at::Tensor blocked_matmul_unrounded(const at::Tensor& a, const at::Tensor& b, bool batched) {
  // Four blocks along K (an accelerator's tiles), partial products added in order.
  const int64_t k = a.size(-1);
  const int64_t kdim = batched ? 1 : 0;
  const int64_t blocks = std::min<int64_t>(4, k);
  const int64_t step = (k + blocks - 1) / blocks;
  at::Tensor r;
  for (int64_t start = 0; start < k; start += step) {
    const int64_t len = std::min(step, k - start);
    at::Tensor part = at::matmul(acc(a).narrow(-1, start, len), acc(b).narrow(kdim, start, len));
    r = r.defined() ? r + part : part;
  }
  return r;
}

at::Tensor blocked_matmul(const at::Tensor& a, const at::Tensor& b, bool batched) {
  return blocked_matmul_unrounded(a, b, batched).to(a.scalar_type());
}

// Sum over `dims` with the first reduced dimension split in two blocks.
at::Tensor blocked_sum(const at::Tensor& x, std::vector<int64_t> dims, bool keepdim, c10::ScalarType out_dtype) {
  at::Tensor src = acc(x.to(at::isFloatingType(out_dtype) ? out_dtype : x.scalar_type()));
  if (dims.empty())
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  if (x.dim() == 0 || dims.empty()) return at::sum(src, dims, keepdim).to(out_dtype);
  int64_t d0 = c10::maybe_wrap_dim(dims.front(), x.dim());
  const int64_t n = x.size(d0);
  if (n < 2) return at::sum(src, dims, keepdim).to(out_dtype);
  at::Tensor r = at::sum(src.narrow(d0, 0, n / 2), dims, keepdim) + at::sum(src.narrow(d0, n / 2, n - n / 2), dims, keepdim);
  return r.to(out_dtype);
}

std::vector<int64_t> dims_of(const c10::IValue& v) {
  if (v.isNone()) return {};
  return v.toIntVector();
}

// The fused recurrent cells (no CPU kernel: fused_rnn_cells.hpp), results put back on the device.
template <typename Arg>
bool run_fused_rnn_cell(const std::string& name, std::size_t nargs, const Arg& arg, torch::jit::Stack* stack) {
  auto t = [&](std::size_t i) { return arg(i).isTensor() ? host_view(arg(i).toTensor()) : at::Tensor(); };
  auto opt = [&](std::size_t i) { return arg(i).isTensor() ? std::optional<at::Tensor>(t(i)) : std::nullopt; };
  std::vector<at::Tensor> results;
  if (name == "aten::_thnn_fused_lstm_cell") {
    auto [hy, cy, ws] = fused_lstm_cell(t(0), t(1), t(2), opt(3), opt(4));
    results = {hy, cy, ws};
  } else if (name == "aten::_thnn_fused_lstm_cell_backward_impl") {
    auto [gg, gcx, gb] = fused_lstm_cell_backward(t(0), t(1), t(2), t(3), t(4), arg(5).toBool());
    results = {gg, gcx, gb};
  } else if (name == "aten::_thnn_fused_gru_cell") {
    auto [hy, ws] = fused_gru_cell(t(0), t(1), t(2), opt(3), opt(4));
    results = {hy, ws};
  } else if (name == "aten::_thnn_fused_gru_cell_backward") {
    auto [gi, gh, ghx, gib, ghb] = fused_gru_cell_backward(t(0), t(1), arg(2).toBool());
    results = {gi, gh, ghx, gib, ghb};
  } else {
    return false;
  }
  torch::jit::drop(*stack, nargs);
  for (const at::Tensor& r : results) stack->emplace_back(r.defined() ? r.to(c10::Device(kDevice, 0)) : r);
  return true;
}

// Runs the operator on host views of its inputs with a custom formula; returns false when the
// operator has no healthy-accelerator variant (then the plain CPU kernel runs).
bool run_accelerator_variant(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (run_fused_operator(op, stack)) return true;  // a vendor fused operator: its device formula on the device
  const auto& schema = op.schema();
  const std::string& name = schema.name();
  // Structured operators reach a backend as their out= variant (mm → mm.out): same arguments
  // plus `out`, which receives the result.
  std::string overload = schema.overload_name();
  const bool is_out = overload == "out" || (overload.size() > 4 && overload.compare(overload.size() - 4, 4, "_out") == 0);
  if (is_out) {
    if (name == "aten::sum" && overload == "IntList_out") overload = "dim_IntList";
    else if (name == "aten::mean" && overload == "out") overload = "dim";
    else if (overload == "out") overload.clear();
    else return false;
  }
  auto arg = [&](std::size_t i) -> c10::IValue& { return (*stack)[stack->size() - schema.arguments().size() + i]; };
  auto tensor = [&](std::size_t i) { return host_view(arg(i).toTensor()); };
  if (!is_out && run_fused_rnn_cell(name, schema.arguments().size(), arg, stack)) return true;
  c10::optional<at::Tensor> result;
  const bool float_input = schema.arguments().size() > 0 && arg(0).isTensor() && at::isFloatingType(arg(0).toTensor().scalar_type());
  if (!float_input) return false;

  if (name == "aten::mm" && overload.empty()) {
    result = blocked_matmul(tensor(0), tensor(1), false);
  } else if (name == "aten::bmm" && overload.empty()) {
    result = blocked_matmul(tensor(0), tensor(1), true);
  } else if (name == "aten::addmm" && overload.empty()) {
    at::Tensor self = tensor(0), m = blocked_matmul_unrounded(tensor(1), tensor(2), false);
    at::Scalar beta = arg(3).toScalar(), alpha = arg(4).toScalar();
    const c10::ScalarType out = tensor(1).scalar_type();
    result = beta.toDouble() == 0.0 ? (m * alpha.toDouble()).to(out)
                                    : (acc(self) * beta.toDouble() + m * alpha.toDouble()).to(out);
  } else if (name == "aten::sum" && (overload == "dim_IntList" || overload.empty())) {
    at::Tensor x = tensor(0);
    auto dtype_arg = overload.empty() ? arg(1) : arg(3);
    c10::ScalarType out = dtype_arg.isNone() ? (at::isIntegralType(x.scalar_type(), true) ? at::kLong : x.scalar_type())
                                             : dtype_arg.toScalarType();
    result = overload.empty() ? blocked_sum(x, {}, false, out) : blocked_sum(x, dims_of(arg(1)), arg(2).toBool(), out);
  } else if (name == "aten::mean" && overload == "dim") {
    at::Tensor x = tensor(0);
    c10::ScalarType out = arg(3).isNone() ? x.scalar_type() : arg(3).toScalarType();
    auto dims = dims_of(arg(1));
    int64_t count = 1;
    if (dims.empty()) count = x.numel();
    for (auto d : dims) count *= x.size(c10::maybe_wrap_dim(d, x.dim()));
    at::Tensor s = blocked_sum(x, dims, arg(2).toBool(), is_half(x) ? at::kFloat : out);
    result = (s / static_cast<double>(count)).to(out);
  } else if (name == "aten::convolution_overrideable") {
    at::Tensor input = tensor(0), weight = tensor(1);
    // No bias arrives as None or as an undefined tensor (what convolution passes down for a
    // bias-less layer: torchvision's convolutions, most of them).
    c10::optional<at::Tensor> bias;
    if (arg(2).isTensor() && arg(2).toTensor().defined()) bias = host_view(arg(2).toTensor());
    auto stride = arg(3).toIntVector(), padding = arg(4).toIntVector(), dilation = arg(5).toIntVector();
    bool transposed = arg(6).toBool();
    auto output_padding = arg(7).toIntVector();
    int64_t groups = arg(8).toInt();
    const int64_t cin = input.size(1);
    if (groups == 1 && !transposed && cin >= 2) {
      // Input channels in two blocks, partial convolutions added afterwards.
      const int64_t h = cin / 2;
      at::Tensor x = acc(input), w = acc(weight);
      at::Tensor r = at::convolution(x.narrow(1, 0, h), w.narrow(1, 0, h), c10::nullopt, stride, padding, dilation,
                                     false, output_padding, 1) +
                     at::convolution(x.narrow(1, h, cin - h), w.narrow(1, h, cin - h), c10::nullopt, stride, padding,
                                     dilation, false, output_padding, 1);
      if (bias) {
        std::vector<int64_t> shape(r.dim(), 1);
        shape[1] = -1;
        r = r + acc(*bias).view(shape);
      }
      result = r.to(input.scalar_type());
    } else {
      result = at::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
    }
  } else if (name == "aten::convolution_backward_overrideable") {
    at::Tensor grad = tensor(0), input = tensor(1), weight = tensor(2);
    auto stride = arg(3).toIntVector(), padding = arg(4).toIntVector(), dilation = arg(5).toIntVector();
    bool transposed = arg(6).toBool();
    auto output_padding = arg(7).toIntVector();
    int64_t groups = arg(8).toInt();
    auto mask_list = arg(9).toBoolList();
    std::array<bool, 3> mask{mask_list.get(0), mask_list.get(1), mask_list.get(2)};
    auto grads = at::convolution_backward(grad, input, weight, std::vector<int64_t>{weight.size(transposed ? 1 : 0) * (transposed ? groups : 1)},
                                          stride, padding, dilation, transposed, output_padding, groups, mask);
    torch::jit::drop(*stack, schema.arguments().size());
    for (const at::Tensor& g : {std::get<0>(grads), std::get<1>(grads), std::get<2>(grads)})
      stack->emplace_back(g.defined() ? g.to(c10::Device(kDevice, 0)) : g);
    return true;
  } else {
    return false;
  }
  if (is_out) {
    at::Tensor out = arg(schema.arguments().size() - 1).toTensor();
    out.resize_(result->sizes());
    host_view(out).copy_(*result);
    torch::jit::drop(*stack, schema.arguments().size());
    stack->emplace_back(out);
    return true;
  }
  torch::jit::drop(*stack, schema.arguments().size());
  stack->emplace_back(result->to(c10::Device(kDevice, 0)));
  return true;
}

// ---- the fallback: every other operator, plus fault injection ------------------------------------
// `outputs`: the call's returns, or for an operator that returns nothing the arguments it wrote
// (the in-place foreach family), whose tensors the call has changed.
void apply_faults_to_outputs(const Fault& fault, const std::vector<c10::IValue>& outputs, std::uint64_t call_index) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const c10::IValue& v = outputs[i];
    if (v.isTensor()) {
      apply_value_fault(fault, installed_seed(), call_index * 131 + i, host_view(v.toTensor()));
    } else if (v.isTensorList()) {
      auto list = v.toTensorList();
      for (std::size_t k = 0; k < list.size(); ++k)
        apply_value_fault(fault, installed_seed(), call_index * 131 + i * 17 + k, host_view(list.get(k)));
    }
  }
}

void sim_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  g_fallback_calls.fetch_add(1, std::memory_order_relaxed);
  const auto& schema = op.schema();
  bool is_out_variant = false;
  for (const auto& a : schema.arguments())
    is_out_variant = is_out_variant || (a.kwarg_only() && a.alias_info() && a.alias_info()->isWrite());
  const Fault* fault = find_fault(schema.name(), schema.overload_name(), is_out_variant, in_backward_pass());
  std::uint64_t call_index = fault ? next_call_index(*fault) : 0;
  if (fault && fault->kind == FaultKind::crash) std::raise(SIGSEGV);
  if (fault && fault->kind == FaultKind::hang)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  if (fault && fault->kind == FaultKind::low_precision) {
    // Inputs that the operator does not write to are replaced by rounded copies.
    const auto& args = schema.arguments();
    const std::size_t base = stack->size() - args.size();
    for (std::size_t i = 0; i < args.size(); ++i) {
      c10::IValue& v = (*stack)[base + i];
      bool written = args[i].alias_info() && args[i].alias_info()->isWrite();
      if (written || !v.isTensor()) continue;
      at::Tensor t = v.toTensor();
      if (!t.defined() || t.device().type() != kDevice) continue;
      v = round_input(*fault, host_view(t)).to(t.device());
    }
  }
  // LibTorch's cpu_fallback moves tensors and tensor lists to the CPU but not lists of optional
  // tensors (`Tensor?[] indices` of index, index_put_): the CPU kernel would then refuse indices on
  // the device. They are only read: their host views go instead. On LibTorch 1.13 a tensor list
  // the operator writes (`_foreach_add_(Tensor(a!)[] self, ...)`) goes as host views too, so the
  // CPU kernel writes the device's memory: 1.13's cpu_fallback wrote such a list into CPU copies and
  // dropped them (the device's tensors kept their old values); 2.x's copies them back itself, and
  // would refuse host views as the copies' destination.
  {
    const std::size_t base = stack->size() - schema.arguments().size();
    for (std::size_t i = base; i < stack->size(); ++i) {
      c10::IValue& v = (*stack)[i];
      const auto* alias = schema.arguments()[i - base].alias_info();
      if (TORCH_VERSION_MAJOR < 2 && v.isTensorList() && alias && alias->isWrite()) {
        const auto list = v.toTensorList();
        c10::List<at::Tensor> on_host;
        for (std::size_t k = 0; k < list.size(); ++k) {
          const at::Tensor t = list.get(k);
          on_host.push_back(t.defined() && t.device().type() == kDevice ? host_view(t) : t);
        }
        v = c10::IValue(std::move(on_host));
        continue;
      }
      if (!v.isOptionalTensorList()) continue;
      const auto list = v.toOptionalTensorList();
      c10::List<c10::optional<at::Tensor>> on_host;
      for (std::size_t k = 0; k < list.size(); ++k) {
        const c10::optional<at::Tensor> t = list.get(k);
        on_host.push_back(t && t->defined() ? c10::optional<at::Tensor>(host_view(*t)) : t);
      }
      v = c10::IValue(std::move(on_host));
    }
  }
  std::vector<c10::IValue> written;
  if (fault && schema.returns().empty()) {
    const std::size_t base = stack->size() - schema.arguments().size();
    for (std::size_t i = 0; i < schema.arguments().size(); ++i)
      if (schema.arguments()[i].alias_info() && schema.arguments()[i].alias_info()->isWrite())
        written.push_back((*stack)[base + i]);
  }
  if (!run_accelerator_variant(op, stack)) at::native::cpu_fallback(op, stack);
  if (fault && fault->kind != FaultKind::low_precision) {
    if (schema.returns().empty()) {
      apply_faults_to_outputs(*fault, written, call_index);
    } else {
      const std::size_t nret = schema.returns().size();
      apply_faults_to_outputs(*fault, std::vector<c10::IValue>(stack->end() - static_cast<std::ptrdiff_t>(nret), stack->end()),
                              call_index);
    }
  }
}

}  // namespace

}  // namespace acccheck::npusim

namespace acccheck::npusim {

bool privateuse1_taken_by_someone_else() {
  return !g_registered.load() && c10::impl::hasDeviceGuardImpl(kDevice);
}

void register_backend() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Registered at run time, not by static initialisers: loading the plugin (e.g. for
    // `acccheck plugins`) must not claim PrivateUse1, which torch_npu may need. Never unregistered.
    TORCH_CHECK(!c10::impl::hasDeviceGuardImpl(kDevice),
                "npu-sim: PrivateUse1 is already registered by another backend in this process");
    c10::SetAllocator(kDevice, &g_allocator);
#if TORCH_VERSION_MAJOR >= 2
    // The backend keeps PyTorch's own name, so the device string is privateuseone:0 on every LibTorch
    // (1.13 cannot rename it); registering it is what makes LibTorch 2.x see an accelerator.
    c10::register_privateuse1_backend("privateuseone");
    at::RegisterPrivateUse1HooksInterface(new SimHooks());
#endif
    static auto* guard = new c10::impl::DeviceGuardImplRegistrar(kDevice, new SimGuardImpl());
    (void)guard;
    auto* kernels = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    kernels->impl("empty.memory_format", TORCH_FN(sim_empty));
    kernels->impl("empty_strided", TORCH_FN(sim_empty_strided));
    kernels->impl("_copy_from", TORCH_FN(sim_copy_from));
    kernels->impl("_copy_from_and_resize", TORCH_FN(sim_copy_from_and_resize));
    kernels->impl("copy_", TORCH_FN(sim_copy_));
    kernels->impl("resize_", TORCH_FN(sim_resize_));
    kernels->impl("as_strided", TORCH_FN(sim_as_strided));
    kernels->impl("view", TORCH_FN(sim_view));
    kernels->impl("_reshape_alias", TORCH_FN(sim_reshape_alias));
    // A view the fallback cannot run (it would copy, not alias): repeat's backward takes it.
    kernels->impl("unfold", TORCH_FN(at::native::unfold));
    // These two have a default (CompositeExplicitAutograd) kernel that throws for unknown backends,
    // which would win over the fallback: route them to it explicitly.
    kernels->impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&sim_fallback>());
    kernels->impl("convolution_backward_overrideable", torch::CppFunction::makeFromBoxedFunction<&sim_fallback>());
    // LibTorch 2.x's lstm/gru send PrivateUse1 tensors through these fused cells, which have CUDA
    // kernels and no CPU one (fused_rnn_cells.hpp; 1.13 never calls them for PrivateUse1).
    for (const char* cell : {"_thnn_fused_lstm_cell", "_thnn_fused_lstm_cell_backward_impl", "_thnn_fused_gru_cell",
                             "_thnn_fused_gru_cell_backward"})
      kernels->impl(cell, torch::CppFunction::makeFromBoxedFunction<&sim_fallback>());
    // Operators with both a CPU kernel and a CompositeExplicitAutograd one (LibTorch 1.13: _stack,
    // addr, native_group_norm, native_layer_norm; 2.13 adds all.dims, any.dims, linalg__powsum): for
    // a backend without a kernel of its own the dispatcher prefers the composite to the backend's
    // fallback, so they would arrive decomposed — fault files naming them would match nothing, and
    // the decomposition's rounding (2.x's bfloat16 layer norm) is not the CPU kernel's. A real
    // accelerator has kernels for them: the fallback runs the CPU's. So too the multi-tensor
    // `_foreach_*` family (optimizers, gradient clipping), whose CPU kernel is the composite itself
    // on LibTorch 2.x (a loop of per-tensor calls: 1.13 registered it as the CPU kernel): CUDA and
    // torch_npu run each as one kernel.
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const c10::OperatorName& op : dispatcher.getRegistrationsForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd)) {
      if (op.name.rfind("aten::", 0) != 0) continue;
      auto handle = dispatcher.findOp(op);
      const bool multi_tensor = op.name.rfind("aten::_foreach_", 0) == 0;
      if (!handle || !(multi_tensor || handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) ||
          handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1))
        continue;
      std::string qualified = op.name.substr(6) + (op.overload_name.empty() ? "" : "." + op.overload_name);
      kernels->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&sim_fallback>());
    }
    auto* fallback = new torch::Library(torch::Library::IMPL, "_", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    fallback->fallback(torch::CppFunction::makeFromBoxedFunction<&sim_fallback>());
    register_fused_operators(&sim_fallback);
    at::addGlobalCallback(at::RecordFunctionCallback(&on_node_start, &on_node_end)
                              .scopes({at::RecordScope::BACKWARD_FUNCTION}));
    g_registered = true;
  });
}

}  // namespace acccheck::npusim
