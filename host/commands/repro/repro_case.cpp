#include "commands/repro/repro_case.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include <acccheck/json.hpp>

#include "tensor_file_check.hpp"

namespace fs = std::filesystem;

namespace acccheck::host {

std::string cxx_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

namespace {

const std::map<std::string, std::string>& aten_dtypes() {
  static const std::map<std::string, std::string> m = {
      {"torch.float32", "at::kFloat"}, {"torch.float64", "at::kDouble"}, {"torch.float16", "at::kHalf"},
      {"torch.bfloat16", "at::kBFloat16"}, {"torch.int64", "at::kLong"}, {"torch.int32", "at::kInt"},
      {"torch.int16", "at::kShort"}, {"torch.int8", "at::kChar"}, {"torch.uint8", "at::kByte"},
      {"torch.bool", "at::kBool"}};
  return m;
}

// A bundled file's name from a data_name: its plain characters (letters, digits, '.', '_', '-'), so no
// path, no control character and nothing the CMake project or the program would read as more than
// a name.
std::string bundled_name(const std::string& data_name) {
  std::string name = fs::path(data_name).filename().string(), out;
  for (unsigned char c : name) out += std::isalnum(c) || c == '.' || c == '_' || c == '-' ? static_cast<char>(c) : '_';
  if (out.find_first_not_of('.') == std::string::npos) out = "tensor";
  if (out.size() < 3 || out.compare(out.size() - 3, 3, ".pt") != 0) out += ".pt";
  return out;
}


// A double as C++ source. NaN and the infinities have no literal: "nan" would not compile and the
// stream's text turned into value(nan) resolves to another overload (a bool: the replay then
// multiplied by 1); they are written through the <cmath> macros.
std::string number(double v) {
  if (std::isnan(v)) return "static_cast<double>(NAN)";
  if (std::isinf(v)) return v > 0 ? "static_cast<double>(INFINITY)" : "-static_cast<double>(INFINITY)";
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// A list of tensors, some of them perhaps None (an optional tensor list), at least one a tensor.
bool tensor_list(const Argument& a) {
  bool tensor = false;
  for (const auto& i : a.items) {
    if (i.kind == Argument::Kind::tensor) tensor = true;
    else if (i.kind != Argument::Kind::none) return false;
  }
  return tensor;
}

std::string argument_code(const Argument& a, const std::string& where, const DumpHeader& header, ReproCase& g) {
  auto unsupported = [&](const std::string& what) {
    return ReproError(where + ": " + what + " is not supported by repro (use run_ut --filter-api for this entry)");
  };
  switch (a.kind) {
    case Argument::Kind::none: return "value(c10::IValue())";
    case Argument::Kind::tensor: {
      auto dt = aten_dtypes().find(a.tensor.dtype);
      if (dt == aten_dtypes().end()) throw unsupported("tensor dtype " + a.tensor.dtype);
      std::string shape = "{";
      for (std::size_t i = 0; i < a.tensor.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.tensor.shape[i]);
      shape += "}";
      double lo = a.tensor.min.present() ? a.tensor.min.value : -1.0, hi = a.tensor.max.present() ? a.tensor.max.value : 1.0;
      if (!std::isfinite(lo)) lo = -1.0;
      if (!std::isfinite(hi)) hi = 1.0;
      std::string file;
      if (!a.tensor.data_name.empty() && header.dump_data_dir) {
        // Read later exactly where and as run_ut reads it; named here as nothing in the dump decides.
        file = "inputs/" + bundled_name(a.tensor.data_name);
        g.data_files.push_back({a.tensor.data_name, replay::tensor_bytes(a.tensor.shape, a.tensor.dtype), file});
      }
      return "tensor(" + shape + ", " + dt->second + ", " + number(lo) + ", " + number(hi) +
             (file.empty() ? "" : ", " + cxx_string(file)) + ")";
    }
    case Argument::Kind::scalar: {
      const Json& v = a.value;
      if (a.type_name == "bool" || v.is_bool()) return std::string("value(") + (v.as_bool() ? "true" : "false") + ")";
      if (a.type_name == "int" || v.is_integer()) return "value(static_cast<int64_t>(" + std::to_string(v.as_int()) + "))";
      if (a.type_name == "float" || v.is_number()) return "value(" + number(v.as_double()) + ")";
      if (v.is_string()) return "value(std::string(" + cxx_string(v.as_string()) + "))";
      throw unsupported("scalar of type " + a.type_name);
    }
    case Argument::Kind::dtype: {
      auto dt = aten_dtypes().find(a.value.is_string() ? a.value.as_string() : "");
      if (dt == aten_dtypes().end()) throw unsupported("dtype value");
      return "value(" + dt->second + ")";
    }
    case Argument::Kind::list:
      if (tensor_list(a)) {
        // A tensor list (`Tensor[]`: the foreach family, cat, stack; `Tensor?[]`: index's indices,
        // where an item may be None): each item rebuilt as a tensor argument of its own.
        std::string items;
        for (std::size_t k = 0; k < a.items.size(); ++k)
          items += (k ? ", " : "") + argument_code(a.items[k], where + "[" + std::to_string(k) + "]", header, g);
        return "tensors({" + items + "})";
      }
      [[fallthrough]];
    case Argument::Kind::size: {
      // torch.Size keeps its numbers in `value`; a list holds scalar arguments.
      std::string joined;
      bool ints = true, floats = true;
      auto add = [&](const Json& v, bool integer) {
        joined += (joined.empty() ? "" : ", ") + (integer ? std::to_string(v.as_int()) : number(v.as_double()));
        ints = ints && integer;
        floats = floats && v.is_number();
      };
      if (a.kind == Argument::Kind::size && a.value.is_array()) {
        for (const auto& i : a.value.items()) add(i, true);
      } else {
        for (const auto& i : a.items) {
          if (i.kind != Argument::Kind::scalar) throw unsupported("a list of " + i.type_name);
          add(i.value, i.type_name == "int" || i.value.is_integer());
        }
      }
      if (ints) return "value(std::vector<int64_t>{" + joined + "})";
      if (floats) return "value(std::vector<double>{" + joined + "})";
      throw unsupported("a mixed list");
    }
    default: throw unsupported("an argument of type " + a.type_name);
  }
}

}  // namespace

ReproCase generate_repro_case(const ApiRecord& record, const DumpHeader& header, const std::string& dump,
                              const std::string& entry, const std::string& default_device, const std::string& plugin) {
  ReproCase g;
  std::string args;
  for (std::size_t i = 0; i < record.args.size(); ++i) {
    std::string code = argument_code(record.args[i], entry + ": input_args[" + std::to_string(i) + "]", header, g);
    if (i < record.arg_names.size()) code = "named(" + cxx_string(record.arg_names[i]) + ", " + code + ")";
    args += "      " + code + ",\n";
  }
  for (const auto& [k, a] : record.kwargs)
    args += "      named(" + cxx_string(k) + ", " + argument_code(a, entry + ": input_kwargs." + k, header, g) + "),\n";
  g.code =
      "// The case, from the dump kDump names.\n"
      "const char* kDump = " + cxx_string(dump) + ";\n"
      "const char* kEntry = " + cxx_string(entry) + ";\n"
      "const char* kOperator = " + cxx_string(record.op_name) + ";\n"
      "const char* kOverload = " + cxx_string(record.op_overload) + ";\n"
      "const char* kDefaultDevice = " + cxx_string(default_device) + ";\n"
      "const char* kDefaultPlugin = " + cxx_string(plugin) + ";  // acccheck device plugin (needs its SDK)\n"
      "std::vector<Arg> case_arguments() {\n  return {\n" + args + "  };\n}\n";
  return g;
}

}  // namespace acccheck::host
