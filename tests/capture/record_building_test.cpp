// The writer thread's half of a capture: a flat record → the ApiRecord written to dump.json, with
// msprobe's element encoding and tensor file names (dump-format.md §2.4, §2.6).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <acccheck/json.hpp>

#include "engine/record_building.hpp"

using acccheck::Argument;
using acccheck::Direction;
using acccheck::Statistic;
using acccheck::capture::ArgSlot;
using acccheck::capture::build_api_record;
using acccheck::capture::CapturedRecord;
using acccheck::capture::FlatValue;
using acccheck::capture::OpInfo;
using acccheck::capture::Section;

namespace {

using K = FlatValue::Kind;

// aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1, ScalarType? dtype=None), the last
// argument made up for the test.
void describe_add(OpInfo& op) {
  op.op_name = "aten::add";
  op.overload = "Tensor";
  op.kept = true;
  op.api_name = "Aten.add";
  op.args = {{"self", false, ArgSlot::Meaning::plain, c10::nullopt},
             {"other", false, ArgSlot::Meaning::plain, c10::nullopt},
             {"alpha", true, ArgSlot::Meaning::plain, c10::IValue(1)},
             {"dtype", true, ArgSlot::Meaning::dtype, c10::IValue()}};
}

FlatValue value(K kind, Section section = Section::args, std::uint16_t slot = 0) {
  FlatValue v;
  v.kind = kind;
  v.section = section;
  v.slot = slot;
  return v;
}

FlatValue tensor(CapturedRecord& c, std::vector<std::int64_t> shape, Section section, std::uint16_t slot = 0) {
  FlatValue v = value(K::tensor, section, slot);
  v.dtype = c10::ScalarType::Half;
  v.requires_grad = true;
  v.at = static_cast<std::uint32_t>(c.dims.size());
  v.count = static_cast<std::uint32_t>(shape.size());
  c.dims.insert(c.dims.end(), shape.begin(), shape.end());
  v.stats.max = Statistic::of_float32(2.5f);
  v.stats.min = Statistic::of_float32(-1.0f);
  v.stats.mean = Statistic::of_float32(0.5f);
  v.stats.norm = Statistic::of_float32(3.0f);
  return v;
}

}  // namespace

TEST(RecordBuilding, AForwardCallWithPositionalKeywordAndNestedValues) {
  OpInfo op;
  describe_add(op);
  CapturedRecord c;
  c.op = &op;
  c.call = 3;
  c.values.push_back(tensor(c, {2, 3}, Section::args, 0));
  FlatValue list = value(K::list, Section::args, 1);  // other: [1.5, [True, None]]
  list.count = 2;
  c.values.push_back(list);
  FlatValue real = value(K::real);
  real.real = 1.5;
  c.values.push_back(real);
  FlatValue inner = value(K::list);
  inner.count = 2;
  c.values.push_back(inner);
  FlatValue yes = value(K::boolean);
  yes.integer = 1;
  c.values.push_back(yes);
  c.values.push_back(value(K::none));
  FlatValue dtype = value(K::dtype, Section::kwargs, 3);
  dtype.integer = static_cast<std::int64_t>(c10::ScalarType::BFloat16);
  c.values.push_back(dtype);
  c.values.push_back(tensor(c, {4}, Section::outputs));

  auto r = build_api_record(c, /*tensor_names=*/false);
  EXPECT_EQ(r.entry_name(), "Aten.add.3.forward");
  EXPECT_EQ(r.op_name, "aten::add");
  EXPECT_EQ(r.op_overload, "Tensor");
  EXPECT_TRUE(r.has_args && r.has_kwargs && r.has_outputs);
  EXPECT_FALSE(r.extra.find("acccheck_replayable")) << "replayable ops carry no mark";
  ASSERT_EQ(r.args.size(), 2u);
  EXPECT_EQ(r.arg_names, (std::vector<std::string>{"self", "other"}));
  const auto& spec = r.args[0].tensor;
  EXPECT_EQ(r.args[0].kind, Argument::Kind::tensor);
  EXPECT_EQ(spec.dtype, "torch.float16");
  EXPECT_EQ(spec.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_TRUE(spec.requires_grad);
  EXPECT_EQ(spec.max.value, 2.5);
  EXPECT_EQ(spec.norm.value, 3.0);
  EXPECT_TRUE(spec.data_name.empty()) << "statistics mode: no file names";
  ASSERT_EQ(r.args[1].kind, Argument::Kind::list);
  ASSERT_EQ(r.args[1].items.size(), 2u);
  EXPECT_EQ(r.args[1].items[0].type_name, "float");
  EXPECT_EQ(r.args[1].items[0].value.as_double(), 1.5);
  ASSERT_EQ(r.args[1].items[1].items.size(), 2u);
  EXPECT_EQ(r.args[1].items[1].items[0].type_name, "bool");
  EXPECT_EQ(r.args[1].items[1].items[1].kind, Argument::Kind::none);
  ASSERT_EQ(r.kwargs.size(), 1u);
  EXPECT_EQ(r.kwargs[0].first, "dtype");
  EXPECT_EQ(r.kwargs[0].second.kind, Argument::Kind::dtype);
  EXPECT_EQ(r.kwargs[0].second.value.as_string(), "torch.bfloat16");
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].tensor.shape, (std::vector<std::int64_t>{4}));
}

TEST(RecordBuilding, TensorModeNamesEveryTensorAsMsprobeDoes) {
  OpInfo op;
  describe_add(op);
  op.replayable = false;
  CapturedRecord c;
  c.op = &op;
  c.call = 0;
  c.values.push_back(tensor(c, {1}, Section::args, 0));
  c.values.push_back(tensor(c, {1}, Section::args, 5));  // past the schema: a vararg
  c.values.push_back(tensor(c, {1}, Section::kwargs, 2));
  FlatValue list = value(K::list, Section::outputs);
  list.count = 2;
  c.values.push_back(list);
  c.values.push_back(tensor(c, {2}, Section::outputs));
  c.values.push_back(tensor(c, {3}, Section::outputs));
  auto r = build_api_record(c, /*tensor_names=*/true);
  EXPECT_EQ(r.args[0].tensor.data_name, "Aten.add.0.forward.input.0.pt");
  EXPECT_EQ(r.args[1].tensor.data_name, "Aten.add.0.forward.input.1.pt");
  EXPECT_EQ(r.arg_names, (std::vector<std::string>{"self", "arg5"}));
  EXPECT_EQ(r.kwargs[0].first, "alpha");
  EXPECT_EQ(r.kwargs[0].second.tensor.data_name, "Aten.add.0.forward.kwargs.alpha.pt");
  EXPECT_EQ(r.outputs[0].items[0].tensor.data_name, "Aten.add.0.forward.output.0.0.pt");
  EXPECT_EQ(r.outputs[0].items[1].tensor.data_name, "Aten.add.0.forward.output.0.1.pt");
  ASSERT_TRUE(r.extra.find("acccheck_replayable"));
  EXPECT_FALSE(r.extra.find("acccheck_replayable")->as_bool());

  CapturedRecord b;  // its backward half: gradients in, gradients out, no operator
  b.op = &op;
  b.call = 0;
  b.direction = Direction::backward;
  b.values.push_back(tensor(b, {2}, Section::grad_inputs));
  b.values.push_back(value(K::none, Section::grad_outputs));  // an input without gradient
  b.values.push_back(tensor(b, {1}, Section::grad_outputs));
  auto g = build_api_record(b, /*tensor_names=*/true);
  EXPECT_EQ(g.entry_name(), "Aten.add.0.backward");
  EXPECT_TRUE(g.op_name.empty());
  EXPECT_FALSE(g.has_args);
  ASSERT_EQ(g.grad_inputs.size(), 1u);
  ASSERT_EQ(g.grad_outputs.size(), 2u);
  EXPECT_EQ(g.grad_inputs[0].tensor.data_name, "Aten.add.0.backward.input.0.pt");
  EXPECT_EQ(g.grad_outputs[0].kind, Argument::Kind::none);
  EXPECT_EQ(g.grad_outputs[1].tensor.data_name, "Aten.add.0.backward.output.1.pt");
}

namespace {

// What the SDK's dump.json writer writes for the record built as a tree (dump_json_entry).
std::string sdk_text(const CapturedRecord& c, bool names) {
  auto r = build_api_record(c, names);
  std::string out;
  acccheck::write_json(out, acccheck::Json::string(r.entry_name()), 1, 2);
  out += ": ";
  acccheck::write_json(out, acccheck::record_to_json(r), 1, 2);
  return out;
}

void expect_same_text(const CapturedRecord& c, bool names, const std::vector<std::string>& expected_names = {}) {
  std::string text;
  std::vector<std::string> tensor_names;
  acccheck::capture::append_entry_json(c, names, text, &tensor_names);
  EXPECT_EQ(text, sdk_text(c, names));
  EXPECT_EQ(tensor_names, expected_names);
}

}  // namespace

// The writer thread encodes records straight to text (append_entry_json); the bytes must be those
// of the ApiRecord → Json → text path, value kind by value kind.
TEST(RecordBuilding, TextEncodingIsTheSdkWritersBytesForEveryKindOfValue) {
  OpInfo op;
  describe_add(op);
  op.args.push_back({"name \"quoted\"\n", true, ArgSlot::Meaning::plain, c10::nullopt});
  CapturedRecord c;
  c.op = &op;
  c.call = 12;
  FlatValue t = tensor(c, {2, 3}, Section::args, 0);
  t.stats.max = Statistic::of(0.1);  // a float64 statistic: Python's repr digits
  t.stats.min = {Statistic::Kind::integer, -7.0};
  t.stats.mean = Statistic{};  // null
  t.stats.norm = Statistic::of_float32(std::numeric_limits<float>::infinity());
  c.values.push_back(t);
  FlatValue scalar_tensor = tensor(c, {}, Section::args, 1);  // 0-d: "shape": []
  scalar_tensor.stats.max = {Statistic::Kind::boolean, 1.0};
  scalar_tensor.stats.min = {Statistic::Kind::boolean, 0.0};
  c.values.push_back(scalar_tensor);
  FlatValue list = value(K::list, Section::args, 2);
  list.count = 9;
  c.values.push_back(list);
  FlatValue i = value(K::integer);
  i.integer = -9007199254740993;
  c.values.push_back(i);
  FlatValue r = value(K::real);
  r.real = std::nan("");
  c.values.push_back(r);
  FlatValue s = value(K::string);
  s.at = 0;
  c.strings.push_back("tab\there \"q\" \\ é 𝄞");
  c.values.push_back(s);
  FlatValue layout = value(K::layout);
  layout.integer = static_cast<std::int64_t>(c10::Layout::Strided);
  c.values.push_back(layout);
  FlatValue format = value(K::memory_format);
  format.integer = static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast);
  c.values.push_back(format);
  FlatValue device = value(K::device);
  device.integer = static_cast<std::int64_t>(c10::DeviceType::CPU);
  device.real = -1;
  c.values.push_back(device);
  FlatValue complex = value(K::complex);
  complex.real = 1.25;
  complex.imag = -1e-300;
  c.values.push_back(complex);
  FlatValue empty = value(K::list);  // []
  c.values.push_back(empty);
  c.values.push_back(value(K::none));
  FlatValue dtype = value(K::dtype, Section::kwargs, 3);
  dtype.integer = static_cast<std::int64_t>(c10::ScalarType::Float);
  c.values.push_back(dtype);
  FlatValue odd = value(K::boolean, Section::kwargs, 4);  // a keyword whose name needs escaping
  c.values.push_back(odd);
  c.values.push_back(tensor(c, {4}, Section::args, 7));  // a vararg past the schema, after the keywords
  c.values.push_back(tensor(c, {1, 1}, Section::outputs));
  expect_same_text(c, false);
  // The names by ordinal (the order the tensors were encoded in): the vararg's is the third.
  expect_same_text(c, true,
                   {"Aten.add.12.forward.input.0.pt", "Aten.add.12.forward.input.1.pt",
                    "Aten.add.12.forward.input.3.pt", "Aten.add.12.forward.output.0.pt"});

  op.replayable = false;  // "acccheck_replayable": false after acccheck_op
  CapturedRecord nothing;  // no values at all: [], {}, [] and "aten::add.Tensor()"
  nothing.op = &op;
  expect_same_text(nothing, false);
  nothing.direction = Direction::backward;
  expect_same_text(nothing, true);

  CapturedRecord b;
  b.op = &op;
  b.call = 1;
  b.direction = Direction::backward;
  b.values.push_back(tensor(b, {2}, Section::grad_inputs));
  b.values.push_back(value(K::none, Section::grad_outputs));
  FlatValue grads = value(K::list, Section::grad_outputs);
  grads.count = 2;
  b.values.push_back(grads);
  b.values.push_back(tensor(b, {1}, Section::args));
  b.values.push_back(tensor(b, {3}, Section::args));
  expect_same_text(b, true,
                   {"Aten.add.1.backward.input.0.pt", "Aten.add.1.backward.output.1.0.pt",
                    "Aten.add.1.backward.output.1.1.pt"});
}
