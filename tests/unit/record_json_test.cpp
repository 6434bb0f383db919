// dump.json / legacy / stack.json readers and writers: real files round-trip; bad files fail
// with one line naming file, entry and field.
#include <acccheck/record.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "support/test_support.hpp"

using namespace acccheck;
using acccheck::test::fixture;
using acccheck::test::read_file;
using acccheck::test::TempDir;
using acccheck::test::write_file;

namespace {
std::vector<ApiRecord> read_all(const std::string& path, DumpHeader* header = nullptr) {
  std::vector<ApiRecord> out;
  read_dump_json(path, [&](const DumpHeader& h) { if (header) *header = h; },
                 [&](ApiRecord&& r) { out.push_back(std::move(r)); });
  return out;
}

std::string error_of(const std::string& text) {
  TempDir d;
  write_file(d / "dump.json", text);
  try {
    read_all(d / "dump.json");
  } catch (const std::exception& e) {
    std::string s = e.what();
    auto pos = s.find(d / "dump.json");
    return pos == 0 ? "<file>" + s.substr((d / "dump.json").size()) : s;
  }
  return "<no error>";
}
}  // namespace

TEST(DumpJson, ReadsARealMsprobeDumpInFileOrder) {
  DumpHeader h;
  auto records = read_all(fixture("vectors/msprobe-dump-mlp/dump.json"), &h);
  EXPECT_EQ(h.task, "statistics");
  EXPECT_EQ(h.level, "L1");
  EXPECT_FALSE(h.dump_data_dir.has_value());
  ASSERT_EQ(records.size(), 20u);  // 14 forward, 6 backward
  std::size_t forward = 0;
  for (const auto& r : records) forward += r.direction == Direction::forward;
  EXPECT_EQ(forward, 14u);
  EXPECT_EQ(records[0].entry_name(), "Functional.linear.0.forward");
  ASSERT_EQ(records[0].args.size(), 3u);
  const TensorSpec& x = records[0].args[0].tensor;
  EXPECT_EQ(x.dtype, "torch.float32");
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{4, 16}));
  EXPECT_TRUE(records[0].is_recompute.has_value());
}

TEST(DumpJson, AcceptsBareInfinityAndNaN) {
  std::string text = R"({"task": "statistics", "level": "L1", "dump_data_dir": null, "data": {
    "Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4],
      "Max": Infinity, "Min": -Infinity, "Mean": NaN, "Norm": Infinity, "requires_grad": false}],
      "input_kwargs": {"dim": {"type": "int", "value": -1}}, "output": [null]}}})";
  TempDir d;
  write_file(d / "dump.json", text);
  auto records = read_all(d / "dump.json");
  ASSERT_EQ(records.size(), 1u);
  const TensorSpec& t = records[0].args[0].tensor;
  EXPECT_TRUE(std::isinf(t.max.value) && t.max.value > 0);
  EXPECT_TRUE(std::isinf(t.min.value) && t.min.value < 0);
  EXPECT_TRUE(std::isnan(t.mean.value));
  EXPECT_EQ(records[0].kwargs[0].first, "dim");
  EXPECT_EQ(records[0].kwargs[0].second.value.as_int(), -1);
}

TEST(DumpJson, RoundTripsTheRealDumpByteForByte) {
  const std::string src = fixture("vectors/msprobe-dump-mlp/dump.json");
  DumpHeader h;
  auto records = read_all(src, &h);
  TempDir d;
  DumpJsonWriter w(d / "dump.json", h);
  for (const auto& r : records) w.write(r);
  w.finish();
  EXPECT_EQ(read_file(d / "dump.json"), read_file(src));
}

TEST(DumpJson, StreamsModuleEntriesAway) {
  TempDir d;
  write_file(d / "dump.json", R"({"task": "statistics", "level": "mix", "dump_data_dir": null, "data": {
    "Module.conv1.Conv2d.forward.0": {"input_args": []},
    "Functional.relu.0.forward": {"input_args": [], "input_kwargs": {}, "output": []}}})");
  auto records = read_all(d / "dump.json");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].api, "Functional.relu.0");
}

// aten operators whose names hold "forward" or "backward" (a segmentation loss: cross_entropy on
// a 4-D input calls nll_loss2d_forward; --capture-backward-ops records convolution_backward): the
// entry's suffix is its direction. The reference's substring test refused the first as a malformed
// forward entry and run_ut stopped with exit 3.
TEST(DumpJson, OperatorNamesHoldingForwardOrBackwardSplitByTheirSuffix) {
  auto api_forward = split_entry_name("Aten.nll_loss2d_forward.0.forward", "f");
  ASSERT_TRUE(api_forward);
  EXPECT_EQ(api_forward->first, "Aten.nll_loss2d_forward.0");
  EXPECT_EQ(api_forward->second, Direction::forward);
  auto its_backward = split_entry_name("Aten.nll_loss2d_forward.0.backward", "f");
  ASSERT_TRUE(its_backward);
  EXPECT_EQ(its_backward->first, "Aten.nll_loss2d_forward.0");
  EXPECT_EQ(its_backward->second, Direction::backward);
  auto backward_op = split_entry_name("Aten.convolution_backward.0.forward", "f");
  ASSERT_TRUE(backward_op);
  EXPECT_EQ(backward_op->first, "Aten.convolution_backward.0");
  EXPECT_EQ(backward_op->second, Direction::forward);
  TempDir d;
  write_file(d / "dump.json", R"({"task": "statistics", "dump_data_dir": null, "data": {
    "Aten.nll_loss2d_forward.0.forward": {"input_args": [], "input_kwargs": {}, "output": []},
    "Aten.nll_loss2d_forward.0.backward": {"input": [], "output": []}}})");
  auto records = read_all(d / "dump.json");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].api, "Aten.nll_loss2d_forward.0");
  EXPECT_EQ(records[1].direction, Direction::backward);
}

TEST(DumpJson, MalformedInputsFailWithOneClearLine) {
  EXPECT_EQ(error_of("{\"data\": {"), "<file>: line 1, column 11: invalid JSON: Missing a name for object member.");
  EXPECT_EQ(error_of("{\"task\": \"statistics\"}"),
            "<file>: entry '<top>': field 'data': expected an object of API entries (key missing or null)");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forwardx": {}}})"),
            "<file>: entry 'Torch.sum.0.forwardx': field '<key>': expected an entry name ending in \".forward\"");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0": {}}})"),
            "<file>: entry 'Torch.sum.0': field '<key>': expected an entry name "
            "<Prefix>.<api>.<count>.forward|backward (unexpected name structure)");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "Max": 1, "Min": 0, "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].shape': expected a list of integers (key missing)");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "shape": [2, -1], "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].shape': expected a list of non-negative integers");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "shape": [2], "Max": "big", "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].Max': expected a number, true/false or null");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": 3}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args': expected a list");
}

// Dimensions of 2^32 and more (which the reader types as doubles, as RapidJSON did) are
// dimensions; what no tensor can have is named for what it is (issue 25, item 11).
TEST(DumpJson, LargeDimensionsAreReadAndImpossibleShapesNamed) {
  TempDir d;
  write_file(d / "dump.json", R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
      "dtype": "torch.float32", "shape": [4294967296, 3], "requires_grad": false}]}}})");
  auto rs = read_all(d / "dump.json");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].args[0].tensor.shape, (std::vector<std::int64_t>{4294967296LL, 3}));
  EXPECT_EQ(rs[0].args[0].tensor.numel(), 12884901888LL);
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "shape": [4611686018427387904, 4], "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].shape': expected dimensions below 2^53 "
            "(4611686018427387904 is larger than any tensor can be)");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "shape": [4294967296, 4294967296, 4], "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].shape': expected a shape of fewer than 2^63 "
            "elements (the product of [4294967296, 4294967296, 4] is larger)");
  EXPECT_EQ(error_of(R"({"data": {"Torch.sum.0.forward": {"input_args": [{"type": "torch.Tensor",
            "dtype": "torch.float32", "shape": [2.5], "requires_grad": false}]}}})"),
            "<file>: entry 'Torch.sum.0.forward': field 'input_args[0].shape': expected a list of non-negative integers");
}

// Numbers are converted by std::from_chars (json_builder.hpp), typed as RapidJSON typed them.
TEST(DumpJson, NumbersAreCorrectlyRoundedAndTypedAsBefore) {
  auto one = [](const std::string& text) { return parse_json("[" + text + "]", "numbers").items().front(); };
  EXPECT_EQ(one("0.1").as_double(), 0.1);
  EXPECT_EQ(one("1.9947922229766846").as_double(), 1.9947922229766846);
  EXPECT_EQ(one("2.2250738585072014e-308").as_double(), 2.2250738585072014e-308);
  EXPECT_EQ(one("5e-324").as_double(), 5e-324);  // the smallest subnormal
  EXPECT_EQ(one("123456789012345678901234567890").as_double(), 1.2345678901234568e29);
  EXPECT_TRUE(one("4294967295").is_integer());  // RapidJSON's Uint: an integer
  EXPECT_EQ(one("4294967295").as_int(), 4294967295);
  EXPECT_FALSE(one("4294967296").is_integer());  // its Uint64 event: a double
  EXPECT_EQ(one("4294967296").as_double(), 4294967296.0);
  EXPECT_EQ(one("-9223372036854775808").as_int(), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(one("-9223372036854775809").is_integer());
  EXPECT_TRUE(one("-0").is_integer());
  EXPECT_TRUE(std::signbit(one("-0.0").as_double()));
  EXPECT_EQ(one("1e-400").as_double(), 0.0);  // below the subnormals: 0, with its sign
  EXPECT_TRUE(std::signbit(one("-1e-400").as_double()));
  EXPECT_TRUE(std::isnan(one("NaN").as_double()));
  EXPECT_EQ(one("-Infinity").as_double(), -INFINITY);
  // A long zero significand: RapidJSON 1.1's full-precision strtod had undefined behaviour here.
  EXPECT_EQ(one("0." + std::string(120, '0')).as_double(), 0.0);
  EXPECT_EQ(one("0." + std::string(120, '0') + "1e100").as_double(), 1e-21);
  EXPECT_THROW(parse_json("[1e309]", "numbers"), std::runtime_error);  // too big: refused, as before
}

TEST(DumpJson, MissingFileNamesTheFile) {
  try {
    read_all("/nonexistent/dump.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/dump.json: cannot open: No such file or directory");
  }
}

TEST(LegacyDump, ReadsForwardAndBackwardInfo) {
  TempDir d;
  write_file(d / "forward_info_4242.json", R"({"Functional*linear*0": {"args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4, 8], "Max": 2.123, "Max_origin": 2.123, "Min": -1.875, "Min_origin": -1.875, "requires_grad": true}], "kwargs": {"bias": {"type": "NoneType", "value": null}}},
"Torch.sum.0": {"args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 16], "Max": 3.5, "Max_origin": Infinity, "Min": -2.01, "Min_origin": -2.01, "requires_grad": false}], "kwargs": {"dim": {"type": "int", "value": -1}}}})");
  write_file(d / "backward_info_4242.json", R"({"Functional.linear.0": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4, 16], "Max": 0.0625, "Max_origin": 0.0625, "Min": -0.0625, "Min_origin": -0.0625, "requires_grad": false}]})");
  std::vector<ApiRecord> out;
  read_legacy_dump(d / "forward_info_4242.json", d / "backward_info_4242.json",
                   [&](ApiRecord&& r) { out.push_back(std::move(r)); });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].api, "Functional.linear.0");  // '*' normalised to '.'
  EXPECT_EQ(out[0].kwargs[0].second.kind, Argument::Kind::none);
  EXPECT_TRUE(std::isinf(*out[1].args[0].tensor.max_origin));
  EXPECT_EQ(out[1].args[0].tensor.max.value, 3.5);
  EXPECT_EQ(out[2].direction, Direction::backward);
  ASSERT_EQ(out[2].grad_inputs.size(), 1u);
  EXPECT_EQ(out[2].grad_inputs[0].tensor.shape, (std::vector<std::int64_t>{4, 16}));
}

TEST(LegacyDump, WriterRoundTripsThroughTheReader) {
  TempDir d;
  write_file(d / "f.json", R"({"Functional.linear.0": {"args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4, 8], "Max": 2.123, "Max_origin": 2.123, "Min": -1.875, "Min_origin": -1.875, "requires_grad": true}], "kwargs": {"bias": {"type": "NoneType", "value": null}}},
"Torch.sum.0": {"args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 16], "Max": 3.5, "Max_origin": Infinity, "Min": -2.01, "Min_origin": -2.01, "requires_grad": false}], "kwargs": {"dim": {"type": "int", "value": -1}}}})");
  write_file(d / "b.json", R"({"Functional.linear.0": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4, 16], "Max": 0.0625, "Max_origin": 0.0625, "Min": -0.0625, "Min_origin": -0.0625, "requires_grad": false}]})");
  std::vector<ApiRecord> first, second;
  read_legacy_dump(d / "f.json", d / "b.json", [&](ApiRecord&& r) { first.push_back(std::move(r)); });
  write_legacy_dump(d / "f2.json", d / "b2.json", first);
  read_legacy_dump(d / "f2.json", d / "b2.json", [&](ApiRecord&& r) { second.push_back(std::move(r)); });
  ASSERT_EQ(second.size(), first.size());
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(record_to_json(second[i]), record_to_json(first[i])) << i;
  EXPECT_NE(read_file(d / "f2.json").find("\"Max_origin\": Infinity"), std::string::npos);
  EXPECT_NE(read_file(d / "f2.json").find("{\"type\": \"NoneType\", \"value\": null}"), std::string::npos);
}

TEST(StackJson, ReadsBothLayoutsAndWritesTheDeduplicatedOne) {
  auto stacks = read_stack_json(fixture("vectors/msprobe-dump-mlp/stack.json"));
  ASSERT_FALSE(stacks.empty());
  auto records = read_all(fixture("vectors/msprobe-dump-mlp/dump.json"));
  attach_stacks(records, stacks);
  ASSERT_FALSE(records[0].stack.empty());
  EXPECT_EQ(records[0].stack[0].rfind("File ", 0), 0u);
  TempDir d;
  write_stack_json(d / "stack.json", stacks);
  EXPECT_EQ(read_stack_json(d / "stack.json"), stacks);
  write_file(d / "old.json", R"J({"Functional.relu.0.forward": ["File a.py, line 1, in f, \n y = relu(x)"]})J");
  auto old = read_stack_json(d / "old.json");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].first, "Functional.relu.0.forward");
}

// Issue 11, item 6: 10,000 nested lists overflowed the stack of the recursive parser (SIGSEGV).
TEST(DumpJson, DeepNestingIsRefusedInOneLineNotACrash) {
  TempDir d;
  std::string deep = std::string(10000, '[') + std::string(10000, ']');
  write_file(d / "dump.json", "{\"task\": \"statistics\", \"data\": {\"Torch.cat.0.forward\": {\"input_args\": " + deep +
                                  ", \"input_kwargs\": {}}}}");
  try {
    read_dump_json(d / "dump.json", [](const DumpHeader&) {}, [](ApiRecord&&) {});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), d / "dump.json" + ": offset 579: nesting deeper than 512 levels (expected at most 512)");
  }
  EXPECT_THROW(parse_json(deep, "job"), std::runtime_error);
  // 400 levels, as msprobe may write, still parse.
  std::string ok = std::string(400, '[') + std::string(400, ']');
  EXPECT_NO_THROW(parse_json(ok, "job"));
}

// Our capture's statistics are float32 values: written short, read back as the same float32; a
// statistic read from a file (Statistic::of) keeps the double's digits, and a "float32" statistic
// that is not a float32 value falls back to them.
TEST(RecordJson, Float32StatisticsAreWrittenWithFloat32Digits) {
  ApiRecord r;
  r.api = "Aten.relu.0";
  r.has_args = r.has_kwargs = r.has_outputs = true;
  Argument a;
  a.kind = Argument::Kind::tensor;
  a.tensor.dtype = "torch.float32";
  a.tensor.shape = {2};
  a.tensor.max = Statistic::of_float32(1.9947922229766846f);
  a.tensor.min = Statistic::of(static_cast<double>(1.9947922229766846f));
  a.tensor.mean = Statistic{Statistic::Kind::number, 0.1, true};  // 0.1 is no float32 value
  a.tensor.norm = Statistic::of_float32(NAN);
  r.args.push_back(a);
  std::string text = to_json_text(record_to_json(r));
  EXPECT_NE(text.find("\"Max\": 1.9947922,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"Min\": 1.9947922229766846,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"Mean\": 0.1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"Norm\": NaN,"), std::string::npos) << text;
  Json back = parse_json(text, "record");
  const Json& spec = back.find("input_args")->items()[0];
  EXPECT_EQ(static_cast<float>(spec.find("Max")->as_double()), 1.9947922229766846f);
}
