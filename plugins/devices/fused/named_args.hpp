// A fused operator's arguments by name: a bench function receives the stack bound against the
// schema this process has (torch_npu's, which gained arguments over its versions, or acccheck's), so
// positions are looked up in that schema rather than assumed.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace acccheck::fused {

class NamedArgs {
 public:
  // The overload of `qualified_name` whose argument count is args.size(); throws when none is.
  NamedArgs(const std::string& qualified_name, const std::vector<c10::IValue>& args);

  bool has(const std::string& name) const;  // in the schema and not None
  const c10::IValue& value(const std::string& name) const;
  at::Tensor tensor(const std::string& name) const;
  std::optional<at::Tensor> optional_tensor(const std::string& name) const;  // nullopt when None
  double number(const std::string& name, double fallback) const;
  int64_t integer(const std::string& name, int64_t fallback) const;
  bool flag(const std::string& name, bool fallback) const;
  std::string text(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> integers(const std::string& name) const;
  const std::string& overload() const { return overload_; }

 private:
  std::string op_, overload_;
  std::vector<std::string> names_;
  const std::vector<c10::IValue>& args_;
};

}  // namespace acccheck::fused
