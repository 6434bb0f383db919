// Device plugins load vendor runtimes that can crash or hang on a bad driver. For listing, the
// host opens them in a child process (the gst-plugin-scanner idea): a plugin that takes the child
// down is reported as refused, and the child is restarted for the remaining files.
#pragma once

#include <string>
#include <vector>

namespace acccheck::core {

struct ProbeResult {
  std::string file;
  bool loaded = false;
  std::string refusal;  // when !loaded
  std::string kind, name, version, abi, torch_version, description, status;
};

// Parent side: probes `files` in `acccheck plugins --probe-devices ...` children.
std::vector<ProbeResult> probe_devices_in_child(const std::vector<std::string>& files, int timeout_seconds);

// Child side: loads each file, configures it from its YAML, asks available(); prints one line per
// step on stdout (flushed) so the parent knows which file was in progress if the child dies.
// `files` = {"-"}: read the files from stdin, one per line (what the parent sends).
int run_probe_child(const std::vector<std::string>& files);

}  // namespace acccheck::core
