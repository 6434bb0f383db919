// The CSV dialect of the reference: BOM, CRLF, quoted line breaks; errors name file and line.
#include <acccheck/csv.hpp>

#include "support/test_support.hpp"

using namespace acccheck;
using acccheck::test::TempDir;
using acccheck::test::write_file;

TEST(CsvReader, ReadsBomCrlfAndQuotedLineBreaks) {
  TempDir d;
  write_file(d / "a.csv", std::string(kUtf8Bom) + "A,B,C\r\nx,\"(4, 4)\",\"\nline1\nline2\n\"\r\n\"q\"\"uote\", ,\r\n");
  CsvReader r(d / "a.csv");
  std::vector<std::string> f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f, (std::vector<std::string>{"A", "B", "C"}));
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(r.record_line(), 2u);
  EXPECT_EQ(f, (std::vector<std::string>{"x", "(4, 4)", "\nline1\nline2\n"}));
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(r.record_line(), 6u);
  EXPECT_EQ(f, (std::vector<std::string>{"q\"uote", " ", ""}));
  EXPECT_FALSE(r.next(f));
}

TEST(CsvReader, ReportsAnUnterminatedQuoteWithItsLine) {
  TempDir d;
  write_file(d / "t.csv", "A,B\r\nx,\"open\r\n");
  CsvReader r(d / "t.csv");
  std::vector<std::string> f;
  ASSERT_TRUE(r.next(f));
  try {
    r.next(f);
    FAIL() << "expected CsvError";
  } catch (const CsvError& e) {
    EXPECT_EQ(std::string(e.what()), d / "t.csv" + ": line 2: unterminated quoted field (file truncated?)");
  }
}

TEST(CsvReader, RejectsInvalidUtf8) {
  TempDir d;
  write_file(d / "u.csv", "A,B\r\nx,\xff\xfe\r\n");
  CsvReader r(d / "u.csv");
  std::vector<std::string> f;
  ASSERT_TRUE(r.next(f));
  EXPECT_THROW(r.next(f), CsvError);
}

TEST(CsvReader, RefusesADirectory) {
  TempDir d;
  try {
    CsvReader r(d.path());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), d.path() + ": is a directory, expected a CSV file");
  }
}

TEST(CsvWriter, QuotesOnlyWhenNeeded) {
  std::string out;
  append_csv_record(out, {"Torch.sum.0", "(4, 4)", " ", "ERROR: a\nb\n", "say \"hi\""});
  EXPECT_EQ(out, "Torch.sum.0,\"(4, 4)\", ,\"ERROR: a\nb\n\",\"say \"\"hi\"\"\"\r\n");
}
