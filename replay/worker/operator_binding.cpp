#include "operator_binding.hpp"

#include <ATen/ScalarOps.h>
#include <ATen/core/List.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <limits>
#include <unordered_map>
#include <optional>

namespace acccheck::replay {

namespace {

using c10::IValue;
using c10::TypeKind;

// The value converted to what `type` accepts (int → float, one int → int[N], ints → float[]),
// or nullopt when it cannot be. With `numbers_as_tensors` (the recorded overload, known exactly) a
// number for a Tensor parameter becomes the 0-d "wrapped number" the dispatcher received: a Python
// number passed for a tensor (`total_norm + 1e-6`), which the dump writes as the number.
std::optional<IValue> coerce(const IValue& v, const c10::TypePtr& type, std::optional<int32_t> n,
                             bool numbers_as_tensors) {
  TypeKind k = type->kind();
  if (k == TypeKind::OptionalType) {
    if (v.isNone()) return v;
    return coerce(v, type->containedType(0), n, numbers_as_tensors);
  }
  if (v.isNone()) return std::nullopt;
  switch (k) {
    case TypeKind::TensorType:
      if (v.isTensor()) return v;
      if (numbers_as_tensors && (v.isDouble() || v.isInt() || v.isBool())) {
        at::Tensor wrapped = at::scalar_to_tensor(v.toScalar());
        wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
        return IValue(wrapped);
      }
      return std::nullopt;
    case TypeKind::FloatType:
      if (v.isDouble()) return v;
      if (v.isInt()) return IValue(static_cast<double>(v.toInt()));
      return std::nullopt;
    case TypeKind::IntType:
      if (v.isInt()) return v;
      if (v.isBool()) return IValue(static_cast<int64_t>(v.toBool()));
      return std::nullopt;
    case TypeKind::BoolType:
      if (v.isBool()) return v;
      return std::nullopt;
    case TypeKind::NumberType:
      if (v.isInt() || v.isDouble() || v.isBool()) return v;
      return std::nullopt;
    case TypeKind::StringType:
      if (v.isString()) return v;
      return std::nullopt;
    case TypeKind::DeviceObjType:
      if (v.isDevice()) return v;
      return std::nullopt;
    case TypeKind::ListType: {
      auto elem = type->containedType(0);
      TypeKind ek = elem->kind();
      if (v.isInt() && n && (ek == TypeKind::IntType || elem->str() == "SymInt")) {
        c10::List<int64_t> l;
        for (int32_t i = 0; i < *n; ++i) l.push_back(v.toInt());
        return IValue(l);
      }
      if (!v.isList()) {
        if (ek == TypeKind::TensorType && v.isTensor()) return std::nullopt;
        return std::nullopt;
      }
      auto items = v.toList();
      if (ek == TypeKind::IntType || elem->str() == "SymInt") {
        c10::List<int64_t> l;
        for (const IValue e : items) {
          if (!e.isInt()) return std::nullopt;
          l.push_back(e.toInt());
        }
        return IValue(l);
      }
      if (ek == TypeKind::FloatType) {
        c10::List<double> l;
        for (const IValue e : items) {
          if (e.isDouble()) l.push_back(e.toDouble());
          else if (e.isInt()) l.push_back(static_cast<double>(e.toInt()));
          else return std::nullopt;
        }
        return IValue(l);
      }
      if (ek == TypeKind::NumberType) {
        // Scalar[] (`_foreach_div_.ScalarList`'s scalars: Adam's per-parameter step sizes): a
        // list typed Scalar, which the kernel's unboxing checks.
        c10::impl::GenericList l(c10::NumberType::get());
        for (const IValue e : items) {
          if (!(e.isInt() || e.isDouble() || e.isBool() || e.isComplexDouble())) return std::nullopt;
          l.push_back(e);
        }
        return IValue(l);
      }
      if (ek == TypeKind::BoolType) {
        c10::List<bool> l;
        for (const IValue e : items) {
          if (!e.isBool()) return std::nullopt;
          l.push_back(e.toBool());
        }
        return IValue(l);
      }
      if (ek == TypeKind::TensorType) {
        c10::List<at::Tensor> l;
        for (const IValue e : items) {
          if (!e.isTensor()) return std::nullopt;
          l.push_back(e.toTensor());
        }
        return IValue(l);
      }
      if (ek == TypeKind::OptionalType && elem->containedType(0)->kind() == TypeKind::TensorType) {
        c10::List<c10::optional<at::Tensor>> l;
        for (const IValue e : items) {
          if (e.isNone()) l.push_back(c10::nullopt);
          else if (e.isTensor()) l.push_back(e.toTensor());
          else return std::nullopt;
        }
        return IValue(l);
      }
      return std::nullopt;
    }
    default:
      if (v.type()->isSubtypeOf(*type)) return v;
      return std::nullopt;
  }
}

struct Attempt {
  std::vector<IValue> stack;
  int defaults_used = 0;
  std::string why;
};

std::optional<Attempt> try_bind(const c10::FunctionSchema& schema, const std::vector<IValue>& args,
                                const std::vector<std::pair<std::string, IValue>>& kwargs, bool exact, std::string& why) {
  const auto& params = schema.arguments();
  if (schema.is_vararg()) return why = "varargs", std::nullopt;
  std::size_t positional = 0;
  for (const auto& p : params) positional += !p.kwarg_only();
  if (args.size() > positional) {
    why = "takes " + std::to_string(positional) + " positional arguments, " + std::to_string(args.size()) + " given";
    return std::nullopt;
  }
  Attempt a;
  std::vector<bool> used(kwargs.size(), false);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    std::optional<IValue> value;
    if (!p.kwarg_only() && i < args.size()) {
      value = args[i];
    } else {
      for (std::size_t k = 0; k < kwargs.size(); ++k)
        if (!used[k] && (kwargs[k].first == p.name() || (kwargs[k].first == "input" && p.name() == "self"))) {
          value = kwargs[k].second;
          used[k] = true;
          break;
        }
    }
    if (!value) {
      if (!p.default_value()) return why = "argument '" + p.name() + "' is missing", std::nullopt;
      a.stack.push_back(*p.default_value());
      ++a.defaults_used;
      continue;
    }
    std::optional<int32_t> n;  // c10::optional differs from std::optional before LibTorch 2.x
    if (p.N()) n = *p.N();
    auto c = coerce(*value, p.type(), n, exact);
    if (!c) {
      why = "argument '" + p.name() + "' expects " + p.type()->str() + ", got " + value->tagKind();
      return std::nullopt;
    }
    a.stack.push_back(*c);
  }
  for (std::size_t k = 0; k < kwargs.size(); ++k)
    if (!used[k]) return why = "no argument named '" + kwargs[k].first + "'", std::nullopt;
  return a;
}

}  // namespace

bool draws_random_numbers(const std::string& op) {
  std::string name = op.substr(0, op.find('.', op.find("::") == std::string::npos ? 0 : op.find("::")));
  auto takes_generator = [](const std::string& qualified) {
    for (const auto& candidate : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualified)))
      for (const auto& a : candidate->schema().arguments())
        if (a.type()->str().find("Generator") != std::string::npos) return true;
    return false;
  };
  if (name.find("::") == std::string::npos) return false;
  if (takes_generator(name)) return true;
  const std::string like = "_like";
  return name.size() > like.size() && name.compare(name.size() - like.size(), like.size(), like) == 0 &&
         takes_generator(name.substr(0, name.size() - like.size()));
}

BoundCall bind_operator(const std::string& op, const std::vector<IValue>& args,
                        const std::vector<std::pair<std::string, IValue>>& kwargs) {
  std::string name = op, overload;
  bool exact = false;
  if (auto dot = op.find('.', op.find("::")); dot != std::string::npos) {
    name = op.substr(0, dot);
    overload = op.substr(dot + 1);
    exact = true;
  }
  // The overloads of a name, with their dispatcher handles, looked up once per process.
  static std::unordered_map<std::string, std::vector<c10::OperatorHandle>> overloads_of;
  auto found = overloads_of.find(name);
  if (found == overloads_of.end()) {
    std::vector<c10::OperatorHandle> handles;
    auto& dispatcher = c10::Dispatcher::singleton();
    for (const auto& candidate : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name)))
      if (auto h = dispatcher.findSchema({candidate->schema().name(), candidate->schema().overload_name()}))
        handles.push_back(*h);
    found = overloads_of.emplace(name, std::move(handles)).first;
  }
  std::optional<Attempt> best;
  const c10::OperatorHandle* best_op = nullptr;
  std::string reasons;
  for (const auto& handle : found->second) {
    const auto& schema = handle.schema();
    if (exact && schema.overload_name() != overload) continue;
    std::string why;
    auto a = try_bind(schema, args, kwargs, exact, why);
    if (!a) {
      if (reasons.size() < 600) reasons += "; " + (schema.overload_name().empty() ? std::string("(default)") : schema.overload_name()) + ": " + why;
      continue;
    }
    if (!best || a->defaults_used < best->defaults_used) {
      best = std::move(a);
      best_op = &handle;
    }
  }
  if (!best) {
    if (reasons.empty()) throw std::runtime_error("no operator " + op + " in this LibTorch");
    throw std::runtime_error("no overload of " + op + " accepts the recorded arguments (" + reasons.substr(2) + ")");
  }
  return {*best_op, std::move(best->stack)};
}

}  // namespace acccheck::replay
