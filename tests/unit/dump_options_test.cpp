// The dump's configuration (core/config/dump_options) and the streaming dump.json writer with its
// repair: torch-free parts of `acccheck dump`.
#include <filesystem>
#include <fstream>

#include <acccheck/record.hpp>

#include "config/dump_options.hpp"
#include "support/test_support.hpp"

using namespace acccheck;
using namespace acccheck::core;
using acccheck::test::read_file;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_dump_options(yaml, "c.yaml");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

ApiRecord tiny(const std::string& api) {
  ApiRecord r;
  r.api = api;
  Argument a;
  a.kind = Argument::Kind::scalar;
  a.type_name = "int";
  a.value = Json::integer(3);
  r.args.push_back(a);
  r.has_args = r.has_kwargs = r.has_outputs = true;
  return r;
}

std::vector<std::string> read_back(const std::string& path) {
  std::vector<std::string> names;
  read_dump_json(path, [](const DumpHeader&) {}, [&](ApiRecord&& r) { names.push_back(r.entry_name()); });
  return names;
}

}  // namespace

TEST(DumpOptions, StepListsAndRanges) {
  auto s = parse_index_selection({"0, 2", "5-7"}, "--step");
  EXPECT_TRUE(s.contains(0));
  EXPECT_FALSE(s.contains(1));
  EXPECT_TRUE(s.contains(6));
  EXPECT_FALSE(s.contains(8));
  EXPECT_EQ(s.last(), 7);
  EXPECT_EQ(s.text(), "0,2,5-7");
  EXPECT_TRUE(parse_index_selection({}, "x").all());
  EXPECT_TRUE(parse_index_selection({}, "x").contains(12345));
  EXPECT_THROW(parse_index_selection({"-1"}, "--step"), std::runtime_error);
  try {
    parse_index_selection({"2-x"}, "--step");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "--step: '2-x': expected a number >= 0 or a range 'a-b'");
  }
}

TEST(DumpOptions, MsprobeLayoutAndAcccheckKeys) {
  auto o = parse_dump_options("dump_path: /d\ntask: tensor\nstep: [1, \"3-4\"]\nrank: [0]\nlevel: L1\n"
                              "tensor:\n  list: [relu, Aten.addmm.0.forward]\n  scope: []\n"
                              "stack: raw\nqueue_size: 8\nexit_after_last_step: true\n",
                              "c.yaml");
  EXPECT_EQ(o.dump_path, "/d");
  EXPECT_TRUE(o.tensor_mode());
  EXPECT_EQ(o.steps.text(), "1,3-4");
  EXPECT_EQ(o.ranks.text(), "0");
  EXPECT_EQ(o.list, (std::vector<std::string>{"relu", "Aten.addmm.0.forward"}));
  EXPECT_EQ(o.stack, StackMode::raw);
  EXPECT_EQ(o.queue_size, 8u);
  EXPECT_TRUE(o.exit_after_last_step);
  // What the launcher hands to the engine reads back the same.
  auto back = parse_dump_options(dump_options_to_yaml(o), "env");
  EXPECT_EQ(back.dump_path, o.dump_path);
  EXPECT_EQ(back.steps.text(), o.steps.text());
  EXPECT_EQ(back.list, o.list);
  EXPECT_EQ(back.stack, o.stack);
  EXPECT_EQ(back.queue_size, o.queue_size);
  EXPECT_TRUE(back.exit_after_last_step);
}

TEST(DumpOptions, ErrorsNameTheFileLineAndKey) {
  EXPECT_EQ(error_of("dump_path: x\nsteps: [1]\n").substr(0, 40), "c.yaml: line 2: 'steps': unknown dump op");
  EXPECT_EQ(error_of("stack: sometimes\n"), "c.yaml: line 1: 'stack': expected off, python, raw or full, found 'sometimes'");
  EXPECT_EQ(error_of("queue_size: 0\n"), "c.yaml: line 1: 'queue_size': expected a whole number > 0, found '0'");
  EXPECT_EQ(error_of("exit_after_last_step: maybe\n"),
            "c.yaml: line 1: 'exit_after_last_step': expected true or false, found 'maybe'");
  EXPECT_EQ(error_of("statistics:\n  lists: [a]\n"), "c.yaml: line 2: 'statistics.lists': unknown key (expected list, scope or black_list)");
  EXPECT_EQ(error_of("- a\n- b\n"), "c.yaml: expected a mapping of dump options");
  EXPECT_EQ(error_of("step: [\"x\"]\n"), "c.yaml: line 1: 'step': 'x': expected a number >= 0 or a range 'a-b'");
  DumpOptions o;
  try {
    validate_dump_options(o, "acccheck dump");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "acccheck dump: dump_path: expected the output folder (--dump-path DIR)");
  }
  o.dump_path = "d";
  o.scope = {"a"};
  EXPECT_THROW(validate_dump_options(o, "x"), std::runtime_error);
}

TEST(StreamingDumpJsonWriter, EveryWrittenEntrySurvivesAnUnfinishedFile) {
  TempDir dir;
  std::string path = dir / "dump.json";
  {
    StreamingDumpJsonWriter w(path, DumpHeader{});
    w.write(tiny("Aten.relu.0"));
    w.write(tiny("Aten.relu.1"));
    // No finish(): the program died here.
  }
  EXPECT_THROW(read_back(path), std::exception) << "an unfinished file is not JSON yet";
  DumpRepair r = repair_dump_json(path);
  EXPECT_TRUE(r.was_unfinished);
  EXPECT_EQ(r.entries, 2u);
  EXPECT_EQ(r.dropped_bytes, 0u);
  EXPECT_EQ(read_back(path), (std::vector<std::string>{"Aten.relu.0.forward", "Aten.relu.1.forward"}));
  // Repairing again leaves the file as it is.
  std::string once = read_file(path);
  EXPECT_FALSE(repair_dump_json(path).was_unfinished);
  EXPECT_EQ(read_file(path), once);
}

TEST(StreamingDumpJsonWriter, EntriesReachTheFileAtFlushOrPastTheByteBound) {
  TempDir dir;
  std::string path = dir / "dump.json";
  StreamingDumpJsonWriter w(path, DumpHeader{});
  const std::size_t head = read_file(path).size();
  w.write(tiny("Aten.relu.0"));
  w.write(tiny("Aten.relu.1"));
  EXPECT_EQ(read_file(path).size(), head) << "written only when the caller flushes";
  w.flush();
  const std::size_t two = read_file(path).size();
  EXPECT_GT(two, head);
  EXPECT_NE(read_file(path).find("\"Aten.relu.1.forward\""), std::string::npos);
  w.flush();  // nothing pending: nothing changes
  EXPECT_EQ(read_file(path).size(), two);
  // Past kFlushBytes the writer does not wait for the caller.
  const std::size_t per_entry = (two - head) / 2;
  std::size_t n = 2;
  while ((n - 2) * per_entry < StreamingDumpJsonWriter::kFlushBytes + per_entry) w.write(tiny("Aten.relu." + std::to_string(n++)));
  EXPECT_GE(read_file(path).size(), head + StreamingDumpJsonWriter::kFlushBytes);
  w.finish();
  EXPECT_EQ(read_back(path).size(), n);
}

TEST(StreamingDumpJsonWriter, RepairCutsTheEntryInFlightAndMatchesAFinishedFile) {
  TempDir dir;
  std::string finished = dir / "finished.json", cut = dir / "cut.json";
  {
    StreamingDumpJsonWriter w(finished, DumpHeader{});
    w.write(tiny("Aten.relu.0"));
    w.finish();
  }
  {
    StreamingDumpJsonWriter w(cut, DumpHeader{});
    w.write(tiny("Aten.relu.0"));
    w.write(tiny("Aten.relu.1"));
  }
  std::string text = read_file(cut);
  write_file(cut, text.substr(0, text.size() - 30));  // half of the second entry
  DumpRepair r = repair_dump_json(cut);
  EXPECT_EQ(r.entries, 1u);
  EXPECT_GT(r.dropped_bytes, 0u);
  EXPECT_EQ(read_file(cut), read_file(finished)) << "a repaired file is byte for byte what finish() writes";
  // Nothing but the header: an empty data object.
  {
    StreamingDumpJsonWriter w(cut, DumpHeader{});
  }
  EXPECT_EQ(repair_dump_json(cut).entries, 0u);
  EXPECT_TRUE(read_back(cut).empty());
}

// The file is read in blocks (a long run's dump.json is gigabytes): an entry's end ("\n  }") split
// between two blocks is found once, wherever the split falls in it.
TEST(StreamingDumpJsonWriter, RepairFindsEveryEntryEndWhereverTheReadBlocksSplitIt) {
  TempDir dir;
  const std::string path = dir / "dump.json";
  { StreamingDumpJsonWriter w(path, DumpHeader{}); }  // the header alone, as a program that died at once
  const std::string head = read_file(path);          // up to and with `"data": {`
  const std::string second = ",\n  \"E.1\": {\n   \"x\": \"b\"\n  }";
  for (int split = -4; split <= 1; ++split) {
    // The first entry's "\n  }" starts `split` bytes from where the first block ends: the blocks
    // start where the entries do.
    const std::string open = "\n  \"E.0\": {\n   \"x\": \"";
    const auto end_at = static_cast<std::size_t>(static_cast<long>(kDumpJsonReadBlock) + split);  // from the body
    const std::string first = open + std::string(end_at - open.size() - 1, 'a') + "\"\n  }";
    ASSERT_EQ(first.size() - 4, end_at);
    const std::string text = head + first + second + ",\n  \"E.2\": {\n   \"x\": \"cut in fl";
    write_file(path, text);
    DumpRepair r = repair_dump_json(path);
    EXPECT_TRUE(r.was_unfinished);
    EXPECT_EQ(r.entries, 2u) << "split " << split;
    const std::string kept = head + first + second;
    EXPECT_EQ(r.dropped_bytes, text.size() - kept.size()) << "split " << split;
    EXPECT_TRUE(read_file(path) == kept + "\n }\n}") << "split " << split;
    EXPECT_TRUE(dump_json_finished(path));
    EXPECT_EQ(repair_dump_json(path).entries, 2u) << "a finished file's entries, counted in blocks";
  }
}

namespace {
// Bytes this process has read so far (read, pread and the like; /proc/self/io's rchar).
std::size_t bytes_read_by_this_process() {
  std::string io = read_file("/proc/self/io");
  std::size_t at = io.find("rchar: ");
  return at == std::string::npos ? 0 : std::stoull(io.substr(at + 7));
}
}  // namespace

// The host checks every dump.json of a dump when the program ends: a finished one is known from its
// header and its last bytes, not read through (the files of a long run are gigabytes; they were
// read whole, into memory twice over).
TEST(StreamingDumpJsonWriter, AFinishedFileIsRecognisedFromItsEndsWithoutReadingItThrough) {
  TempDir dir;
  const std::string small = dir / "small.json", big = dir / "big.json";
  {
    StreamingDumpJsonWriter w(small, DumpHeader{});
    w.write(tiny("Aten.relu.0"));
    w.finish();
  }
  const std::string text = read_file(small);
  // The same file with 256 MiB between its header and its entry: a hole, no disk used.
  const std::size_t body = text.find("\"data\": {") + 9;
  write_file(big, text.substr(0, body));
  std::filesystem::resize_file(big, body + (std::size_t{256} << 20));
  {
    std::ofstream out(big, std::ios::binary | std::ios::app);
    out << text.substr(body);
  }
  ASSERT_EQ(std::filesystem::file_size(big), text.size() + (std::size_t{256} << 20));
  const std::size_t before = bytes_read_by_this_process();
  ASSERT_GT(before, 0u) << "/proc/self/io counts this process's reads";
  EXPECT_TRUE(dump_json_finished(big));
  EXPECT_LT(bytes_read_by_this_process() - before, std::size_t{1} << 20);
  // Unfinished: cut inside the entry, it is not.
  write_file(small, text.substr(0, text.size() - 10));
  EXPECT_FALSE(dump_json_finished(small));
  EXPECT_EQ(repair_dump_json(small).entries, 0u);
  EXPECT_TRUE(dump_json_finished(small));
}

TEST(StreamingDumpJsonWriter, RefusesSymlinksAndForeignFiles) {
  TempDir dir;
  write_file(dir / "target", "keep");
  std::filesystem::create_symlink(dir / "target", dir / "link.json");
  try {
    StreamingDumpJsonWriter w(dir / "link.json", DumpHeader{});
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), dir / "link.json" + ": refusing to write through a symbolic link");
  }
  EXPECT_EQ(read_file(dir / "target"), "keep");
  write_file(dir / "other.json", "{\"a\": 1}");
  try {
    repair_dump_json(dir / "other.json");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("not a dump.json written by acccheck"), std::string::npos);
  }
  try {
    dump_json_finished(dir / "other.json");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()),
              dir / "other.json" + ": not a dump.json written by acccheck (no '\"data\": {' after the header)");
  }
  EXPECT_THROW(dump_json_finished(dir / "link.json"), std::runtime_error) << "a symbolic link is not followed";
  EXPECT_EQ(read_file(dir / "other.json"), "{\"a\": 1}");
}
