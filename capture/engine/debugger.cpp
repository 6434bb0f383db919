// acccheck::Debugger: the SDK face of the capture engine.
#include <acccheck/debugger.hpp>

#include <iostream>

#include "engine/capture_engine.hpp"

namespace acccheck {

namespace {

core::DumpOptions options_of(const DebuggerConfig& c) {
  core::DumpOptions o;
  if (!c.config_file.empty()) o = core::load_dump_options_file(c.config_file);
  if (!c.dump_path.empty()) o.dump_path = c.dump_path;
  if (!c.task.empty()) o.task = c.task;
  if (!c.step.empty()) o.steps = core::parse_index_selection({c.step}, "step");
  return o;
}

}  // namespace

Debugger::Debugger(const DebuggerConfig& config) { capture::CaptureEngine::instance().configure(options_of(config)); }

Debugger::Debugger(const std::string& config_file) : Debugger(DebuggerConfig{config_file, "", "", ""}) {}

Debugger::~Debugger() {
  try {
    finish();
  } catch (const std::exception& e) {
    std::cerr << "acccheck dump: " << e.what() << "\n";
  }
}

void Debugger::start() { capture::CaptureEngine::instance().start(); }
void Debugger::stop() { capture::CaptureEngine::instance().stop(); }
void Debugger::step() { capture::CaptureEngine::instance().step(); }

std::string Debugger::finish() {
  static bool printed = false;
  std::string s = capture::CaptureEngine::instance().finish();
  if (!printed && !s.empty()) {
    std::cerr << s << "\n";
    printed = true;
  }
  return s;
}

}  // namespace acccheck
