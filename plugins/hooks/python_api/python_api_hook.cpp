// The `python_api` operator category: APIs recorded under their Python names (msprobe's
// Functional./Tensor./Torch. entries) and how each replays as a dispatcher operator. The table is
// the YAML beside this plugin; an API it does not list replays as aten::<name> by position.
// Torch-free: it rewrites the recorded arguments; the worker binds them to the schema.
#include <map>
#include <set>

#include <acccheck/hook.hpp>
#include <acccheck/number_format.hpp>

namespace {

using namespace acccheck;

struct ApiRule {
  std::string op;
  std::vector<std::string> params;
  std::map<std::string, std::string> rename;
  std::set<std::string> drop;
  std::map<std::string, std::map<std::string, std::string>> values;
  std::vector<std::pair<std::string, std::string>> defaults, none_to;
  std::string unsupported;
  bool varargs = false;  // Python `*sizes` after self (x.reshape(2, 3), x.permute(0, 2, 1)) → one int[] argument
};

// A YAML scalar as a recorded argument: ~ → None, true/false → bool, integers, floats, text.
Argument argument_of(const std::string& text) {
  Argument a;
  if (text == "~" || text == "null") return a;
  a.kind = Argument::Kind::scalar;
  if (text == "true" || text == "false") {
    a.type_name = "bool";
    a.value = Json::boolean(text == "true");
  } else if (!text.empty() && text.find_first_not_of("-0123456789") == std::string::npos) {
    a.type_name = "int";
    a.value = Json::integer(std::stoll(text));
  } else if (auto d = parse_python_float(text)) {
    a.type_name = "float";
    a.value = Json::number(*d);
  } else if (text == "[]") {
    a.kind = Argument::Kind::list;
  } else {
    a.type_name = "str";
    a.value = Json::string(text);
  }
  return a;
}

// "apis/<api>/<field>/<rest>" → the rule's field.
void add_setting(ApiRule& r, const std::string& field, const std::string& rest, const std::string& value) {
  auto key = rest.substr(0, rest.find('/'));
  if (field == "op") r.op = value;
  else if (field == "unsupported") r.unsupported = value;
  else if (field == "varargs") r.varargs = value == "true";
  else if (field == "params") r.params.push_back(value);
  else if (field == "rename") r.rename[key] = value;
  else if (field == "drop") r.drop.insert(value);
  else if (field == "values") r.values[key][rest.substr(rest.find('/') + 1)] = value;
  else if (field == "defaults") r.defaults.emplace_back(key, value);
  else if (field == "none_to") r.none_to.emplace_back(key, value);
  else throw std::runtime_error("python_api hook: unknown field '" + field + "' (" + rest + " = " + value + ")");
}

class PythonApiHook final : public HookPlugin {
 public:
  std::string_view category() const override { return "python_api"; }

  void configure(const Settings& s) override {
    rules_.clear();
    drop_everywhere_.clear();
    for (auto& d : s.list("drop_everywhere")) drop_everywhere_.insert(d);
    // Settings are sorted by key, so list items ("params/0", "params/1", ..., "params/10") need
    // their numeric order back.
    std::map<std::string, std::map<std::string, std::map<int, std::string>>> lists;
    const Settings apis = s.section("apis");  // named: a temporary's all() would dangle in the loop
    for (const auto& [key, value] : apis.all()) {
      auto slash = key.find('/');
      if (slash == std::string::npos) continue;
      std::string api = key.substr(0, slash), rest = key.substr(slash + 1);
      auto slash2 = rest.find('/');
      std::string field = rest.substr(0, slash2), tail = slash2 == std::string::npos ? "" : rest.substr(slash2 + 1);
      ApiRule& r = rules_[api];
      if (field == "params" || field == "drop") lists[api][field][std::stoi(tail)] = value;
      else add_setting(r, field, tail, value);
    }
    for (auto& [api, fields] : lists)
      for (auto& [field, items] : fields)
        for (auto& [index, value] : items) add_setting(rules_[api], field, "", value);
  }

  std::optional<HookDecision> classify(const OperatorName&) const override { return std::nullopt; }
  std::size_t operator_count() const override { return rules_.size(); }

  std::optional<ReplayPlan> plan_replay(const ApiRecord& fwd, std::string& why_not) const override {
    auto first = fwd.api.find('.');
    auto last = fwd.api.rfind('.');
    if (first == std::string::npos || last == first) return std::nullopt;
    std::string family = fwd.api.substr(0, first);
    if (family != "Functional" && family != "Tensor" && family != "Torch") return std::nullopt;
    std::string api = fwd.api.substr(0, last);  // "Functional.conv2d"
    std::string name = api.substr(first + 1);
    ReplayPlan plan;
    auto it = rules_.find(api);
    static const ApiRule kByPosition;
    const ApiRule& rule = it == rules_.end() ? kByPosition : it->second;
    if (!rule.unsupported.empty()) {
      why_not = rule.unsupported;
      return std::nullopt;
    }
    if (name.rfind("__", 0) == 0 && it == rules_.end()) {
      why_not = "no replay rule for the Python operator '" + name + "' (add one to acccheck_hook_python_api.yaml)";
      return std::nullopt;
    }
    plan.op = rule.op.empty() ? "aten::" + name.substr(name.rfind('.') + 1) : rule.op;
    std::vector<std::pair<std::string, Argument>> named;
    std::vector<Argument> positional = fwd.args;
    if (rule.varargs && positional.size() >= 2 &&
        !(positional.size() == 2 && (positional[1].kind == Argument::Kind::list || positional[1].kind == Argument::Kind::size))) {
      Argument sizes;
      sizes.kind = Argument::Kind::list;
      sizes.items.assign(positional.begin() + 1, positional.end());
      positional.resize(1);
      positional.push_back(std::move(sizes));
    }
    if (rule.params.empty()) {
      plan.args = positional;
    } else {
      if (positional.size() > rule.params.size()) {
        why_not = api + " takes at most " + std::to_string(rule.params.size()) + " positional arguments, the record has " +
                  std::to_string(positional.size());
        return std::nullopt;
      }
      for (std::size_t i = 0; i < positional.size(); ++i) named.emplace_back(rule.params[i], positional[i]);
    }
    for (const auto& kw : fwd.kwargs) named.push_back(kw);
    for (auto& [key, arg] : named) {
      if (auto r = rule.rename.find(key); r != rule.rename.end()) key = r->second;
      if (auto v = rule.values.find(key); v != rule.values.end() && arg.kind == Argument::Kind::scalar &&
                                          arg.value.is_string()) {
        auto m = v->second.find(arg.value.as_string());
        if (m == v->second.end()) {
          why_not = api + ": argument '" + key + "' has the value '" + arg.value.as_string() + "', which has no aten equivalent";
          return std::nullopt;
        }
        arg = argument_of(m->second);
      }
      if (arg.kind == Argument::Kind::none)
        for (const auto& [k, v] : rule.none_to)
          if (k == key) arg = argument_of(v);
      if (!rule.drop.count(key) && !drop_everywhere_.count(key)) plan.kwargs.emplace_back(key, arg);
    }
    for (const auto& [key, value] : rule.defaults) {
      bool given = false;
      for (const auto& kw : plan.kwargs) given = given || kw.first == key;
      if (!given) plan.kwargs.emplace_back(key, argument_of(value));
    }
    return plan;
  }

 private:
  std::map<std::string, ApiRule> rules_;
  std::set<std::string> drop_everywhere_;
};

}  // namespace

ACCCHECK_PLUGIN(hook, PythonApiHook, "python_api", "1.0.0",
                "replays Functional./Tensor./Torch. (msprobe) entries as dispatcher operators (acccheck_hook_python_api.yaml)")
