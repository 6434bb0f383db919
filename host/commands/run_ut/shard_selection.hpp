// Which shard of a dump this process replays: --shard K/N, or the rank and size that the launcher
// set — OpenMPI (OMPI_COMM_WORLD_RANK/SIZE), MPICH/Intel MPI (PMI_RANK/SIZE), Slurm
// (SLURM_PROCID/NTASKS), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX + --shard-count) — so
// mpirun, srun or a Job spread one dump over machines with no code of ours in between.
#pragma once

#include <optional>
#include <string>

namespace acccheck::host {

struct Shard {
  std::size_t index = 0, count = 1;
  std::string source;  // "--shard", "OpenMPI", ...
};

// Throws std::runtime_error for a malformed --shard or inconsistent variables.
Shard select_shard(const std::optional<std::string>& shard_option, std::optional<std::size_t> shard_count);

}  // namespace acccheck::host
