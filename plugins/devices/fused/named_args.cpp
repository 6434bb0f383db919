#include "named_args.hpp"

#include <ATen/core/dispatch/Dispatcher.h>

#include <stdexcept>

namespace acccheck::fused {

NamedArgs::NamedArgs(const std::string& qualified_name, const std::vector<c10::IValue>& args) : op_(qualified_name), args_(args) {
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const char* overload : {"", "out"}) {
    auto handle = dispatcher.findSchema({qualified_name, overload});
    if (!handle || handle->schema().arguments().size() != args.size()) continue;
    overload_ = overload;
    for (const auto& a : handle->schema().arguments()) names_.push_back(a.name());
    return;
  }
  throw std::runtime_error(qualified_name + ": no schema of this process takes " + std::to_string(args.size()) + " arguments");
}

bool NamedArgs::has(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return !args_[i].isNone();
  return false;
}

const c10::IValue& NamedArgs::value(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return args_[i];
  throw std::runtime_error(op_ + ": the schema has no argument '" + name + "'");
}

at::Tensor NamedArgs::tensor(const std::string& name) const {
  const c10::IValue& v = value(name);
  if (!v.isTensor()) throw std::runtime_error(op_ + ": argument '" + name + "' is not a tensor");
  return v.toTensor();
}

std::optional<at::Tensor> NamedArgs::optional_tensor(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  at::Tensor t = tensor(name);
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

double NamedArgs::number(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const c10::IValue& v = value(name);
  return v.isScalar() ? v.toScalar().toDouble() : v.toDouble();
}

int64_t NamedArgs::integer(const std::string& name, int64_t fallback) const { return has(name) ? value(name).toInt() : fallback; }

bool NamedArgs::flag(const std::string& name, bool fallback) const { return has(name) ? value(name).toBool() : fallback; }

std::string NamedArgs::text(const std::string& name, const std::string& fallback) const {
  return has(name) ? value(name).toStringRef() : fallback;
}

std::vector<int64_t> NamedArgs::integers(const std::string& name) const {
  return has(name) ? value(name).toIntVector() : std::vector<int64_t>{};
}

}  // namespace acccheck::fused
