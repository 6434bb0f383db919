// The writer thread's half of a capture: a flat record → the ApiRecord written to dump.json, with
// msprobe's element encoding and tensor file names (dump-format.md §2.4, §2.6).
#include <gtest/gtest.h>

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
