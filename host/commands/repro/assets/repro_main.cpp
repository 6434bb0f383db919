// A standalone reproducer written by `acccheck repro`: rebuilds one dumped API call's inputs,
// runs the operator on the device under test and on the CPU benchmark in raised precision
// (float16/bfloat16 → float32, float32 → float64), and prints the metrics. Attach this folder to a
// bug report; it needs LibTorch only (and acccheck's SDK headers for a device plugin).
//
//   ./repro [--device cpu|cuda|privateuseone] [--plugin DEVICE_PLUGIN.so] [--seed N]
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#ifdef REPRO_WITH_ACCCHECK
#include <acccheck/device.hpp>
#include <acccheck/plugin.hpp>
#include <acccheck/settings.hpp>
#include <dlfcn.h>
#endif

namespace {

// One argument of the call: a tensor (drawn between its recorded Min and Max, or read from the
// dump's .pt file), a list of them, or any other value.
struct Arg {
  std::string name;  // the schema argument it fills; empty: the next positional one
  bool is_tensor = false;
  bool is_list = false;     // a tensor list: `items`, each a tensor or None
  std::vector<Arg> items;
  std::vector<int64_t> shape;
  at::ScalarType dtype = at::kFloat;
  double min = 0, max = 0;
  std::string data_file;  // real data, relative to this folder
  c10::IValue value;
};

Arg tensor(std::vector<int64_t> shape, at::ScalarType dtype, double min, double max, std::string data_file = "") {
  Arg a;
  a.is_tensor = true;
  a.shape = std::move(shape);
  a.dtype = dtype;
  a.min = min;
  a.max = max;
  a.data_file = std::move(data_file);
  return a;
}
Arg tensors(std::vector<Arg> items) {
  Arg a;
  a.is_list = true;
  a.items = std::move(items);
  return a;
}
Arg value(c10::IValue v) {
  Arg a;
  a.value = std::move(v);
  return a;
}
Arg named(std::string name, Arg a) {
  a.name = std::move(name);
  return a;
}

// @REPRO_CASE@

at::Tensor make_tensor(const Arg& a, const std::string& folder) {
  if (!a.data_file.empty()) {
    std::ifstream in(folder + "/" + a.data_file, std::ios::binary);
    if (!in) throw std::runtime_error(a.data_file + ": cannot open");
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return torch::jit::pickle_load(bytes).toTensor().to(a.dtype);
  }
  if (a.dtype == at::kBool) return at::rand(a.shape, at::kDouble) < 0.5;
  if (at::isIntegralType(a.dtype, false))
    return at::randint(static_cast<int64_t>(a.min), static_cast<int64_t>(a.max) + 1, a.shape, at::kLong).to(a.dtype);
  at::Tensor u = at::rand(a.shape, at::kDouble);
  return (u * (a.max - a.min) + a.min).to(a.dtype);
}

at::ScalarType raised(at::ScalarType t) {
  if (t == at::kHalf || t == at::kBFloat16) return at::kFloat;
  if (t == at::kFloat) return at::kDouble;
  return t;
}

// The tensors an argument is made of: one for a tensor, one per item for a list (undefined for a
// None item), none for any other value.
std::vector<at::Tensor> make_inputs(const Arg& a, const std::string& folder) {
  std::vector<at::Tensor> made;
  if (a.is_tensor) made.push_back(make_tensor(a, folder));
  for (const auto& item : a.items) made.push_back(item.is_tensor ? make_tensor(item, folder) : at::Tensor());
  return made;
}

// A tensor list as the schema's parameter takes it: `Tensor?[]` (index's indices) keeps None items.
template <typename Convert>
c10::IValue list_value(const c10::Argument& param, const std::vector<at::Tensor>& made, Convert&& convert) {
  const auto* list_type = param.type()->castRaw<c10::ListType>();
  if (list_type && list_type->getElementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<c10::optional<at::Tensor>> list;
    for (const auto& t : made) list.push_back(t.defined() ? c10::optional<at::Tensor>(convert(t)) : c10::nullopt);
    return c10::IValue(std::move(list));
  }
  c10::List<at::Tensor> list;
  for (const auto& t : made) list.push_back(convert(t));
  return c10::IValue(std::move(list));
}

// What a call that returns nothing produced: the arguments it wrote (the in-place foreach family,
// `_foreach_add_(Tensor(a!)[] self, ...) -> ()`), as run_ut compares them. `args`: the call's
// arguments as pushed, which share the memory the call wrote.
std::vector<c10::IValue> written_arguments(const c10::FunctionSchema& schema, const std::vector<c10::IValue>& args) {
  std::vector<c10::IValue> written;
  for (std::size_t i = 0; i < schema.arguments().size() && i < args.size(); ++i)
    if (schema.arguments()[i].alias_info() && schema.arguments()[i].alias_info()->isWrite()) written.push_back(args[i]);
  return written;
}

std::vector<at::Tensor> tensors_of(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> out;
  for (const auto& v : values) {
    if (v.isTensor()) out.push_back(v.toTensor());
    else if (v.isTensorList())
      for (const auto& t : v.toTensorVector()) out.push_back(t);
  }
  return out;
}

void print_metrics(std::size_t i, const at::Tensor& device_out, const at::Tensor& bench_out) {
  at::Tensor d = device_out.cpu().to(at::kDouble), b = bench_out.cpu().to(at::kDouble);
  if (d.sizes() != b.sizes()) {
    std::printf("output %zu: shapes differ (device %s, benchmark %s)\n", i, c10::str(d.sizes()).c_str(),
                c10::str(b.sizes()).c_str());
    return;
  }
  at::Tensor err = (d - b).abs();
  at::Tensor rel = err / (b.abs() + 1e-12);
  const double cosine = d.numel() ? (d.flatten().dot(b.flatten()) / (d.norm() * b.norm() + 1e-300)).item<double>() : 1.0;
  std::printf("output %zu  %-8s %-14s cosine %.14f  max abs %.6e  max rel %.6e  mean rel %.6e  rmse %.6e  nan/inf %lld\n",
              i, c10::toString(device_out.scalar_type()), c10::str(device_out.sizes()).c_str(), cosine,
              err.numel() ? err.max().item<double>() : 0.0, rel.numel() ? rel.max().item<double>() : 0.0,
              rel.numel() ? rel.mean().item<double>() : 0.0, err.numel() ? err.pow(2).mean().sqrt().item<double>() : 0.0,
              static_cast<long long>((~at::isfinite(d)).sum().item<int64_t>()));
}

}  // namespace

int main(int argc, char** argv) {
  std::string device_name = kDefaultDevice, plugin_file = kDefaultPlugin;
  int64_t seed = 1234;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device")) device_name = argv[i + 1], plugin_file = "";
    else if (!std::strcmp(argv[i], "--plugin")) plugin_file = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seed")) seed = std::atoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--device cpu|cuda|privateuseone] [--plugin FILE.so] [--seed N]\n", argv[0]);
      return 2;
    }
  }
  try {
    const std::string folder = REPRO_SOURCE_DIR;  // the reproducer's folder (inputs/*.pt)
    at::manual_seed(seed);
    std::vector<Arg> args = case_arguments();
    std::vector<std::vector<at::Tensor>> inputs;
    for (const auto& a : args) inputs.push_back(make_inputs(a, folder));

    auto op = c10::Dispatcher::singleton().findSchemaOrThrow(kOperator, kOverload);
    // The dump leaves out arguments equal to their defaults: the schema supplies them.
    auto stack_with = [&](auto&& convert) {
      torch::jit::Stack s;
      std::size_t next = 0;
      for (const auto& sa : op.schema().arguments()) {
        std::size_t i = args.size();
        for (std::size_t k = 0; k < args.size(); ++k)
          if (args[k].name == sa.name()) i = k;
        if (i == args.size() && next < args.size() && args[next].name.empty()) i = next++;
        if (i < args.size() && !args[i].is_tensor && sa.type()->kind() == c10::TypeKind::TensorType &&
            (args[i].value.isDouble() || args[i].value.isInt() || args[i].value.isBool())) {
          // A Python number passed for a tensor (the dump writes it as the number): the 0-d
          // "wrapped number" the dispatcher received, which takes no part in type promotion.
          at::Tensor wrapped = at::scalar_to_tensor(args[i].value.toScalar());
          wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
          s.push_back(wrapped);
        } else if (i < args.size() && args[i].is_list) {
          s.push_back(list_value(sa, inputs[i], convert));
        } else if (i < args.size()) {
          s.push_back(args[i].is_tensor ? c10::IValue(convert(inputs[i][0])) : args[i].value);
        } else if (sa.default_value()) {
          s.push_back(*sa.default_value());
        } else {
          throw std::runtime_error("argument '" + sa.name() + "' of " + kOperator + " is missing");
        }
        // A dropout inside the operator (attention's dropout_p, a recurrent operator's dropout)
        // draws random numbers, so the two sides would differ however healthy: switched off, as
        // run_ut replays it (docs/run_ut.md).
        if ((sa.name() == "dropout_p" || sa.name() == "dropout") && s.back().isDouble() && s.back().toDouble() != 0) {
          static bool told = false;
          if (!told) std::printf("%s %g switched off: it draws random numbers (as run_ut replays the call)\n", sa.name().c_str(), s.back().toDouble());
          told = true;
          s.back() = c10::IValue(0.0);
        }
      }
      return s;
    };

    // The results: what the call returned, or what it wrote when it returns nothing.
    auto results = [&](const torch::jit::Stack& pushed, const torch::jit::Stack& after) {
      return op.schema().returns().empty() ? written_arguments(op.schema(), pushed) : after;
    };
    // The device under test.
    torch::jit::Stack device_stack, device_args;
#ifdef REPRO_WITH_ACCCHECK
    if (!plugin_file.empty()) {
      void* lib = dlopen(plugin_file.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) throw std::runtime_error(std::string("cannot load ") + plugin_file + ": " + dlerror());
      auto* alias = static_cast<const acccheck::PluginDescriptor* const*>(dlsym(lib, acccheck::kEntrySymbol));
      if (!alias) throw std::runtime_error(plugin_file + ": not an acccheck plugin");
      auto* device = dynamic_cast<acccheck::DevicePlugin*>((*alias)->create());
      if (!device) throw std::runtime_error(plugin_file + ": not a device plugin");
      device->configure(acccheck::Settings{});  // npu-sim reads ACCCHECK_NPUSIM_FAULTS here
      device->initialize({0});
      device_stack = stack_with([&](const at::Tensor& t) { return device->to_device(t); });
      device_args = device_stack;
      device->call_operator(op, device_stack);
      device->synchronize();
      device_name = std::string((*alias)->name) + " (" + device->device().str() + ")";
    } else
#endif
    {
      if (!plugin_file.empty()) throw std::runtime_error("built without acccheck's SDK: --plugin is not available");
      c10::Device dev(device_name == "privateuseone" ? "privateuseone:0" : device_name);
      // Copies, always: `to()` of a tensor already on the device in its dtype returns the tensor
      // itself, and an in-place call would then write the inputs the benchmark is made from.
      device_stack = stack_with([&](const at::Tensor& t) { return t.to(dev, t.scalar_type(), false, /*copy=*/true); });
      device_args = device_stack;
      op.callBoxed(&device_stack);
    }
    // The benchmark: the CPU in raised precision.
    torch::jit::Stack bench_stack =
        stack_with([&](const at::Tensor& t) { return t.to(raised(t.scalar_type()), false, /*copy=*/true); });
    const torch::jit::Stack bench_args = bench_stack;
    op.callBoxed(&bench_stack);

    std::printf("%s  %s%s%s on %s vs the CPU benchmark (raised precision), seed %lld\n", kEntry, kOperator,
                *kOverload ? "." : "", kOverload, device_name.c_str(), static_cast<long long>(seed));
    auto d = tensors_of(results(device_args, device_stack)), b = tensors_of(results(bench_args, bench_stack));
    for (std::size_t i = 0; i < d.size() && i < b.size(); ++i) print_metrics(i, d[i], b[i]);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::fprintf(stderr, "repro: %s\n", what.substr(0, what.find('\n')).c_str());
    return 1;
  }
  return 0;
}
