#include "cli/command_line.hpp"

#include "cli/commands.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <stdexcept>

#include "config/yaml_settings.hpp"

namespace acccheck::host {

std::vector<std::string> normalise_spellings(const std::vector<std::string>& args,
                                             const std::vector<std::pair<std::string, std::string>>& spellings) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {  // everything after belongs to the launched program
      out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    std::string replaced = a;
    for (const auto& [from, to] : spellings) {
      if (a == from) {
        replaced = to;
        break;
      }
      if (a.size() > from.size() && a.compare(0, from.size(), from) == 0 && a[from.size()] == '=') {
        replaced = to + a.substr(from.size());
        break;
      }
    }
    out.push_back(replaced);
  }
  return out;
}

void add_common_options(po::options_description& desc) {
  desc.add_options()
      ("help,h", "show this help")
      ("log-level", po::value<std::string>()->default_value("info"),
       "trace, debug, info, warn, error or off")
      ("config", po::value<std::string>(), "YAML file with option values (command line wins)")
      ("plugin-dir", po::value<std::vector<std::string>>()->composing(),
       "folder to load plugins from (repeatable; before ACCCHECK_PLUGIN_PATH and the built-in folder)")
      ("plugin", po::value<std::vector<std::string>>()->composing(), "load this plugin file (repeatable)");
}

namespace {

// Turns the YAML config into options: top-level scalar/sequence keys, plus the keys of the
// section named after the command. Other commands' sections are ignored.
po::parsed_options options_from_yaml(const std::string& file, const std::string& command,
                                     const po::options_description& desc) {
  YAML::Node root = core::load_yaml_file(file);
  po::parsed_options parsed(&desc);
  if (!root || root.IsNull()) return parsed;
  if (!root.IsMap()) throw std::runtime_error(file + ": expected a mapping of option names to values");
  auto add = [&](const std::string& key, const YAML::Node& value, const std::string& where) {
    if (!desc.find_nothrow(key, false))
      throw std::runtime_error(file + ": " + where + "unknown option '" + key + "' for 'acccheck " + command + "'");
    if (key == "config") throw std::runtime_error(file + ": 'config' cannot be set from a config file");
    po::option opt;
    opt.string_key = key;
    if (value.IsSequence()) {
      for (const auto& v : value) {
        if (!v.IsScalar())
          throw std::runtime_error(file + ": " + where + "option '" + key + "': expected a list of values, found a nested " +
                                   (v.IsMap() ? "mapping" : "list"));
        opt.value.push_back(v.Scalar());
      }
    } else if (value.IsScalar()) {
      std::string s = value.Scalar();
      const auto* d = desc.find_nothrow(key, false);
      bool is_switch = d && d->semantic()->max_tokens() == 0;
      if (is_switch) {
        if (s == "false" || s == "no" || s == "off" || s == "0") return;  // switch left unset
      } else {
        opt.value.push_back(s);
      }
    } else {
      throw std::runtime_error(file + ": " + where + "option '" + key + "' must be a value or a list");
    }
    opt.original_tokens = {"--" + key};
    parsed.options.push_back(opt);
  };
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    if (kv.second.IsMap()) {
      if (key == command) {
        for (const auto& inner : kv.second) add(inner.first.as<std::string>(), inner.second, "section '" + key + "': ");
      } else if (desc.find_nothrow(key, false)) {
        throw std::runtime_error(file + ": option '" + key + "' must be a value or a list, found a mapping");
      } else {
        // Another command's section is fine; anything else is a typo that would be ignored silently.
        bool known = false;
        std::string names;
        for (const auto& c : all_commands()) {
          known = known || c.name == key;
          names += (names.empty() ? "" : ", ") + c.name;
        }
        if (!known)
          throw std::runtime_error(file + ": unknown section '" + key + "' (expected an option of 'acccheck " + command +
                                   "' or a command's section: " + names + ")");
      }
      continue;
    }
    add(key, kv.second, "");
  }
  return parsed;
}

}  // namespace

po::variables_map parse_command(const CommandSpec& spec, const po::options_description& desc,
                                const std::vector<std::string>& args, std::vector<std::string>* passthrough) {
  std::vector<std::string> normalised = normalise_spellings(args, spec.spellings);
  auto dashdash = std::find(normalised.begin(), normalised.end(), "--");
  if (dashdash != normalised.end()) {
    if (!passthrough) throw po::error("'acccheck " + spec.name + "' does not launch a program; unexpected '--'");
    passthrough->assign(dashdash + 1, normalised.end());
    normalised.erase(dashdash, normalised.end());
  }
  po::variables_map vm;
  po::positional_options_description positional;
  if (!spec.positional.empty()) positional.add(spec.positional.c_str(), 1);
  auto parsed = po::command_line_parser(normalised)
                    .options(desc)
                    .positional(positional)
                    .style(po::command_line_style::unix_style)
                    .run();
  po::store(parsed, vm);
  if (vm.count("config") && !spec.own_config) {
    // Stored after the command line: po::store never overwrites, so the command line wins.
    po::store(options_from_yaml(vm["config"].as<std::string>(), spec.name, desc), vm);
  }
  po::notify(vm);
  return vm;
}

}  // namespace acccheck::host
