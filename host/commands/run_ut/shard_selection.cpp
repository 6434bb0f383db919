#include "commands/run_ut/shard_selection.hpp"

#include <cstdlib>
#include <stdexcept>

namespace acccheck::host {

namespace {

std::optional<std::size_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (*end) throw std::runtime_error(std::string(name) + "='" + v + "': expected a whole number");
  return static_cast<std::size_t>(n);
}

Shard checked(std::size_t index, std::size_t count, std::string source) {
  if (count == 0 || index >= count)
    throw std::runtime_error(source + ": shard " + std::to_string(index) + " of " + std::to_string(count) +
                             " is out of range (expected 0 <= index < count)");
  return {index, count, std::move(source)};
}

}  // namespace

Shard select_shard(const std::optional<std::string>& option, std::optional<std::size_t> shard_count) {
  if (option) {
    auto slash = option->find('/');
    std::size_t pos1 = 0, pos2 = 0;
    std::size_t k = 0, n = 0;
    try {
      if (slash == std::string::npos) throw std::invalid_argument("");
      k = std::stoul(option->substr(0, slash), &pos1);
      n = std::stoul(option->substr(slash + 1), &pos2);
    } catch (const std::exception&) {
      throw std::runtime_error("--shard '" + *option + "': expected K/N, e.g. 0/4");
    }
    if (pos1 != slash || pos2 != option->size() - slash - 1)
      throw std::runtime_error("--shard '" + *option + "': expected K/N, e.g. 0/4");
    return checked(k, n, "--shard");
  }
  struct Launcher { const char* rank; const char* size; const char* name; };
  for (const Launcher& l : {Launcher{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OpenMPI"},
                            Launcher{"PMI_RANK", "PMI_SIZE", "PMI"}, Launcher{"SLURM_PROCID", "SLURM_NTASKS", "Slurm"}}) {
    auto rank = env_number(l.rank), size = env_number(l.size);
    if (rank && size) return checked(*rank, *size, l.name);
  }
  if (auto index = env_number("JOB_COMPLETION_INDEX")) {
    if (!shard_count)
      throw std::runtime_error("JOB_COMPLETION_INDEX is set (Kubernetes Indexed Job): give --shard-count N, the Job's completions");
    return checked(*index, *shard_count, "Kubernetes Indexed Job");
  }
  return {};
}

}  // namespace acccheck::host
