// core/io/regular_file.hpp: what the dump engine's source reader and run_ut's .pt reader rely on —
// a regular file read whole or up to a bound, and everything else (a FIFO with no writer, a folder,
// a missing file, a symbolic link under O_NOFOLLOW) refused at once, never waited on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "io/regular_file.hpp"
#include "support/test_support.hpp"

using acccheck::core::RegularFile;

TEST(RegularFile, ReadsARegularFileWholeOrUpToTheBound) {
  acccheck::test::TempDir dir;
  const std::string f = dir / "a.bin";
  const std::string text("line 1\nline 2\0tail", 18);  // a NUL inside: bytes, not a C string
  acccheck::test::write_file(f, text);
  RegularFile whole(f);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole.size(), 18u);
  EXPECT_EQ(whole.read_string(1 << 20), text);
  const std::vector<char> bytes = whole.read_bytes(1 << 20);  // again from the start
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), text);
  EXPECT_EQ(RegularFile(f).read_string(6), "line 1");
  EXPECT_EQ(RegularFile(f).read_bytes(0).size(), 0u);

  const std::string empty = dir / "empty";
  acccheck::test::write_file(empty, "");
  RegularFile e(empty);
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(e.read_string(100), "");
}

TEST(RegularFile, AFifoAFolderAndAMissingFileAreRefusedWithoutWaiting) {
  acccheck::test::TempDir dir;
  const std::string fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  RegularFile p(fifo);  // a blocking open would wait here for a writer that never comes
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.error(), 0);  // opened, then refused for its kind
  EXPECT_EQ(p.read_string(100), "");

  RegularFile folder(dir.path());
  EXPECT_FALSE(folder.ok());
  EXPECT_EQ(folder.error(), 0);

  RegularFile missing(dir / "nothing");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), ENOENT);
  EXPECT_TRUE(missing.read_bytes(100).empty());
}

TEST(RegularFile, ASymbolicLinkIsFollowedOnlyWhenAllowed) {
  acccheck::test::TempDir dir;
  const std::string target = dir / "t.pt", link = dir / "l.pt";
  acccheck::test::write_file(target, "xyz");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(RegularFile(link).read_string(10), "xyz");
  RegularFile refused(link, O_NOFOLLOW);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), ELOOP);
}

TEST(RegularFile, AFileThatShrankAfterTheOpenGivesWhatIsLeft) {
  acccheck::test::TempDir dir;
  const std::string f = dir / "s";
  acccheck::test::write_file(f, "0123456789");
  RegularFile r(f);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(::truncate(f.c_str(), 4), 0);
  EXPECT_EQ(r.size(), 10u);  // what fstat said at the open
  EXPECT_EQ(r.read_string(100), "0123");
}
