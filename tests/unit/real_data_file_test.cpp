// read_real_data_file (replay/worker/tensor_file_check): where run_ut and repro read a dump's real
// data from, checked before a byte is read — inside the dump's folder, a regular file, no NUL in
// the name, no larger than the tensor the dump describes allows (issue 25, item 7).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "tensor_file_check.hpp"

namespace fs = std::filesystem;
using acccheck::replay::dtype_item_size;
using acccheck::replay::read_real_data_file;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {
std::string refusal(const std::string& folder, const std::string& name, std::uint64_t expected = 64, bool outside = false) {
  try {
    read_real_data_file(folder, name, expected, outside);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(read)";
}
}  // namespace

TEST(RealDataFile, AFileInsideTheFolderIsReadWhole) {
  TempDir t;
  fs::create_directories(t / "d/sub");
  write_file(t / "d/sub/x.pt", "0123456789");
  const auto bytes = read_real_data_file(t / "d", "sub/x.pt", 10, false);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "0123456789");
}

TEST(RealDataFile, PathsOutsideTheFolderAreRefusedUnlessAllowed) {
  TempDir t;
  fs::create_directories(t / "d");
  write_file(t / "outside.pt", "x");
  const std::string d = t / "d";
  EXPECT_EQ(refusal(d, "../outside.pt"), d + "/../outside.pt: outside the dump's folder " + d +
                                             " (run_ut --allow-outside-dump reads it anyway)");
  EXPECT_EQ(refusal(d, t / "outside.pt"), t / "outside.pt" + ": outside the dump's folder " + d +
                                              " (run_ut --allow-outside-dump reads it anyway)");
  // A link inside the folder to a file outside it is outside too.
  fs::create_symlink(t / "outside.pt", t / "d/link.pt");
  EXPECT_EQ(refusal(d, "link.pt"), d + "/link.pt: outside the dump's folder " + d + " (run_ut --allow-outside-dump reads it anyway)");
  EXPECT_EQ(refusal(d, "../outside.pt", 64, true), "(read)");
}

TEST(RealDataFile, NulNamesFifosDevicesAndFoldersAreNeverOpened) {
  TempDir t;
  const std::string d = t.path();
  EXPECT_EQ(refusal(d, std::string("../../dev/zero\0.pt", 18)), d + ": field 'data_name' holds a NUL byte (a file name never does)");
  EXPECT_EQ(refusal(d, "x.npy"), d + "/x.npy: real data must be a .pt file");
  EXPECT_EQ(refusal(d, "missing.pt"), d + "/missing.pt: tensor file missing (named by field 'data_name')");
  ASSERT_EQ(::mkfifo((t / "fifo.pt").c_str(), 0600), 0);
  EXPECT_EQ(refusal(d, "fifo.pt"), d + "/fifo.pt: not a regular file (a FIFO, a device or a folder); not read");
  fs::create_directories(t / "folder.pt");
  EXPECT_EQ(refusal(d, "folder.pt"), d + "/folder.pt: not a regular file (a FIFO, a device or a folder); not read");
}

TEST(RealDataFile, AFileFarLargerThanItsTensorIsRefusedBeforeReading) {
  TempDir t;
  // 20 GB, sparse: nothing is allocated on disk, and nothing must be read.
  { std::ofstream(t / "big.pt"); }
  ASSERT_EQ(::truncate((t / "big.pt").c_str(), 20'000'000'000LL), 0);
  EXPECT_EQ(refusal(t.path(), "big.pt", 1024), t / "big.pt" + ": 20000000000 bytes for a tensor of 1024 bytes (its shape and "
                                                     "dtype in the dump); refused before reading");
  // The bound: 4 × the tensor + 64 MiB (a saved view of a larger storage stays under it).
  ASSERT_EQ(::truncate((t / "big.pt").c_str(), 4 * 1024 + (64 << 20)), 0);
  EXPECT_EQ(read_real_data_file(t.path(), "big.pt", 1024, false).size(), 4u * 1024 + (64u << 20));
}

TEST(RealDataFile, ItemSizesOfTheDumpsDtypes) {
  EXPECT_EQ(dtype_item_size("torch.bfloat16"), 2u);
  EXPECT_EQ(dtype_item_size("torch.float32"), 4u);
  EXPECT_EQ(dtype_item_size("torch.complex128"), 16u);
  EXPECT_EQ(dtype_item_size("torch.float8_e5m2"), 1u);
  EXPECT_EQ(dtype_item_size("torch.something_new"), 8u);
}
