// compare's outputs are a set: a result file and its details file appear together or not at all,
// whatever fails (a full disk) or stops the run (SIGINT/SIGTERM); earlier outputs are never damaged.
// Issue 11, item 2.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "support/test_support.hpp"
#include "verdict/details_columns.hpp"

extern char** environ;

namespace fs = std::filesystem;
using acccheck::test::read_file;
using acccheck::test::run_acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

std::string header_line() {
  std::string h;
  for (auto c : acccheck::replay::kDetailsColumns) h += (h.empty() ? "" : ",") + std::string(c);
  return h + "\r\n";
}

// n benchmark-standard APIs.
std::string details_file(std::size_t n) {
  std::string s = header_line();
  for (std::size_t i = 0; i < n; ++i)
    s += "Functional.softmax." + std::to_string(i) +
         ".forward.output.0,torch.float32,torch.float16,\"(4, 4)\",0.99999,0.0001, , , , ,0.01,0.001,0.0,0.01,0.001, , , , , , ,pass,\r\n";
  return s;
}

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> t;
  if (!fs::exists(dir)) return t;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) t.push_back(e.path().string());
  return t;
}

// A small tmpfs at `dir`, unmounted at destruction; skipped() when this user cannot mount.
struct SmallDisk {
  std::string dir;
  bool mounted = false;
  SmallDisk(std::string d, const char* size) : dir(std::move(d)) {
    fs::create_directories(dir);
    mounted = geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted) ::umount(dir.c_str());
  }
};

}  // namespace

TEST(CompareOutputs, AFullDiskLeavesNeitherFileAndEarlierOutputsIntact) {
  TempDir t;
  SmallDisk disk(t / "disk", "96k");
  if (!disk.mounted) GTEST_SKIP() << "needs root to mount a small tmpfs (disk-full case not exercised)";
  write_file(t / "npu-small.csv", details_file(2));
  write_file(t / "gpu-small.csv", details_file(2));
  write_file(t / "npu-big.csv", details_file(2000));
  write_file(t / "gpu-big.csv", details_file(2000));
  auto first = run_acccheck({"compare", "-npu", t / "npu-small.csv", "-gpu", t / "gpu-small.csv", "-o", disk.dir,
                             "--timestamp", "20250101000000"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string result = disk.dir + "/api_precision_compare_result_20250101000000.csv";
  std::string details = disk.dir + "/api_precision_compare_details_20250101000000.csv";
  std::string result_before = read_file(result), details_before = read_file(details);
  ASSERT_FALSE(result_before.empty());
  for (const char* stamp : {"20250101000000", "20250202000000"}) {
    auto full = run_acccheck({"compare", "-npu", t / "npu-big.csv", "-gpu", t / "gpu-big.csv", "-o", disk.dir,
                              "--timestamp", stamp});
    EXPECT_EQ(full.exit_code, 4) << full.err;
    EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
    EXPECT_EQ(read_file(result), result_before);    // the earlier pair, untouched
    EXPECT_EQ(read_file(details), details_before);
    EXPECT_TRUE(temporaries(disk.dir).empty());
  }
  EXPECT_FALSE(fs::exists(disk.dir + "/api_precision_compare_result_20250202000000.csv"));  // no lone result file
  EXPECT_FALSE(fs::exists(disk.dir + "/api_precision_compare_details_20250202000000.csv"));
}

TEST(CompareOutputs, SigtermRemovesTheTemporaries) {
  TempDir t;
  write_file(t / "npu.csv", details_file(300000));
  write_file(t / "gpu.csv", details_file(300000));
  std::vector<std::string> args_s{ACCCHECK_BINARY, "compare", "-npu", t / "npu.csv", "-gpu", t / "gpu.csv",
                                  "-o", t / "out", "--timestamp", "20250101000000"};
  std::vector<char*> argv;
  for (auto& a : args_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Wait for the temporaries, however slow the start (ASan, a loaded machine), or for the end.
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 12000 && temporaries(t / "out").empty() && !exited; ++i) {
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(exited) << "the run finished before it could be interrupted";
  ASSERT_FALSE(temporaries(t / "out").empty()) << "no temporaries after 60 s";
  ::kill(pid, SIGTERM);
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);  // the default action after the cleanup
  EXPECT_TRUE(temporaries(t / "out").empty());
  EXPECT_FALSE(fs::exists(t / "out/api_precision_compare_result_20250101000000.csv"));
}
