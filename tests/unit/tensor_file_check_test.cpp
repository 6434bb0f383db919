// tensor_file_problem: the .pt bytes LibTorch's reader is allowed to see. Files are built here as
// torch.save lays them out (a stored zip, a protocol-2 pickle), then broken one opcode at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "support/build_config.hpp"
#include "tensor_file_check.hpp"

namespace {

using acccheck::replay::tensor_file_problem;

// ---- a stored zip ----------------------------------------------------------------------------
void put16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& s, std::uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

std::vector<char> zip(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out, directory;
  for (const auto& [name, data] : records) {
    const auto local = static_cast<std::uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20), put16(out, 0), put16(out, 0), put16(out, 0), put16(out, 0);  // version, flags, stored, time, date
    put32(out, 0), put32(out, static_cast<std::uint32_t>(data.size())), put32(out, static_cast<std::uint32_t>(data.size()));
    put16(out, static_cast<std::uint32_t>(name.size())), put16(out, 0);
    out += name + data;
    put32(directory, 0x02014b50);
    put16(directory, 20), put16(directory, 20), put16(directory, 0), put16(directory, 0), put16(directory, 0), put16(directory, 0);
    put32(directory, 0), put32(directory, static_cast<std::uint32_t>(data.size())), put32(directory, static_cast<std::uint32_t>(data.size()));
    put16(directory, static_cast<std::uint32_t>(name.size())), put16(directory, 0), put16(directory, 0);
    put16(directory, 0), put16(directory, 0), put32(directory, 0), put32(directory, local);
    directory += name;
  }
  const auto cd_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  put32(out, 0x06054b50);
  put16(out, 0), put16(out, 0), put16(out, static_cast<std::uint32_t>(records.size())), put16(out, static_cast<std::uint32_t>(records.size()));
  put32(out, static_cast<std::uint32_t>(directory.size())), put32(out, cd_offset), put16(out, 0);
  return {out.begin(), out.end()};
}

// ---- a pickle, opcode by opcode ----------------------------------------------------------------
struct Pickle {
  std::string s{"\x80\x02", 2};
  Pickle& op(char c) { return s += c, *this; }
  Pickle& global(const std::string& m, const std::string& n) { return s += "c" + m + "\n" + n + "\n", *this; }
  Pickle& str(const std::string& v) {
    s += 'X';
    put32(s, static_cast<std::uint32_t>(v.size()));
    return s += v, *this;
  }
  Pickle& int1(int v) { return s += 'K', s += static_cast<char>(v), *this; }
  Pickle& binput(int i) { return s += 'q', s += static_cast<char>(i), *this; }
  Pickle& binget(int i) { return s += 'h', s += static_cast<char>(i), *this; }
  Pickle& ints(const std::vector<int>& v) {
    op('(');
    for (int x : v) int1(x);
    return op('t');
  }
  // ('storage', torch.FloatStorage, '0', 'cpu', numel) BINPERSID
  Pickle& storage(int numel) { return op('(').str("storage").global("torch", "FloatStorage").str("0").str("cpu").int1(numel).op('t').op('Q'); }
  // What LibTorch's pickle_save writes for a float32 tensor, without the closing STOP.
  Pickle& tensor(int numel, const std::vector<int>& sizes, const std::vector<int>& strides, int offset = 0) {
    global("torch._utils", "_rebuild_tensor_v2").op('(').storage(numel).int1(offset).ints(sizes).ints(strides).op('\x89');
    return global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
  }
  std::string done() { return s + "."; }
};

std::vector<char> pt(const std::string& pickle, std::size_t storage_bytes = 24) {
  return zip({{"archive/data.pkl", pickle}, {"archive/data/0", std::string(storage_bytes, '\0')}, {"archive/version", "3\n"}});
}

std::string problem(const std::string& pickle, std::size_t storage_bytes = 24) { return tensor_file_problem(pt(pickle, storage_bytes)); }

TEST(TensorFileCheck, WhatTorchSaveAndPickleSaveWriteIsAccepted) {
  std::ifstream in(std::string(ACCCHECK_FIXTURES) + "/vectors/msprobe-dump-mlp-tensor/dump_tensor_data/Functional.relu.0.forward.input.0.pt",
                   std::ios::binary);
  ASSERT_TRUE(in);
  std::vector<char> msprobe((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(tensor_file_problem(msprobe), "");
  EXPECT_EQ(problem(Pickle().tensor(6, {2, 3}, {3, 1}).done()), "");
  EXPECT_EQ(problem(Pickle().tensor(6, {}, {}, 5).done()), "") << "a 0-d tensor on the storage's last element";
  EXPECT_EQ(problem(Pickle().tensor(1, {200, 7}, {0, 0}).done(), 4), "") << "an expanded tensor";
  EXPECT_EQ(problem(Pickle().tensor(0, {0, 3}, {3, 1}).done(), 0), "") << "an empty tensor";
}

// LibTorch 2.x / torch 2.x: a tensor with math bits gets a seventh argument, {'conj': True}.
TEST(TensorFileCheck, AMetadataDictOfMathBitsIsAccepted) {
  auto with_metadata = [](const std::function<void(Pickle&)>& dict) {
    Pickle p;
    p.global("torch._utils", "_rebuild_tensor_v2").op('(').storage(6).int1(0).ints({6}).ints({1}).op('\x89');
    p.global("collections", "OrderedDict").op(')').op('R');
    dict(p);
    return p.op('t').op('R').done();
  };
  EXPECT_EQ(problem(with_metadata([](Pickle& p) { p.op('}').op('(').str("conj").op('\x88').str("neg").op('\x89').op('u'); })), "");
  EXPECT_EQ(problem(with_metadata([](Pickle& p) { p.op('}').str("conj").op('\x88').op('s'); })), "");
  EXPECT_EQ(problem(with_metadata([](Pickle& p) { p.op('}').op('(').str("conj").op('u'); })),
            "SETITEMS on an odd number of values at byte 136 of the pickle");
  EXPECT_EQ(problem(with_metadata([](Pickle& p) { p.op('}').op('(').str("conj").int1(1).op('u'); })),
            "SETITEMS of other than string keys and bool values at byte 138 of the pickle");
  EXPECT_EQ(problem(with_metadata([](Pickle& p) { p.op(')').op('(').str("conj").op('\x88').op('u'); })),
            "SETITEMS without a dict below its MARK at byte 137 of the pickle");
  EXPECT_EQ(problem(Pickle().op('(').op('u').done()), "SETITEMS without a dict below its MARK at byte 3 of the pickle");
  EXPECT_EQ(problem(Pickle().op('u').done()), "SETITEMS without a MARK at byte 2 of the pickle");
  EXPECT_EQ(problem(Pickle().op('}').str("conj").op('s').done()), "SETITEM on 2 values at byte 12 of the pickle");
  EXPECT_EQ(problem(Pickle().int1(0).str("conj").op('\x88').op('s').done()),
            "SETITEM without a dict below its key and value at byte 14 of the pickle");
  EXPECT_EQ(problem(Pickle().op('}').str("conj").int1(1).op('s').done()),
            "SETITEM of other than string keys and bool values at byte 14 of the pickle");
  // torch.save({'a': tensor}): one record's worth of tensor, but in a dict.
  Pickle several;
  several.op('}').str("a").tensor(6, {6}, {1}).op('s');
  EXPECT_EQ(problem(several.done()), "SETITEM of a tensor into a dict (a file of several tensors, not one) at byte 134 of the pickle");
}

TEST(TensorFileCheck, AnOpcodeThatFindsTooFewValuesIsRefused) {
  EXPECT_EQ(problem(Pickle().int1(1).op('R').done()), "REDUCE on 1 values at byte 4 of the pickle");
  EXPECT_EQ(problem(Pickle().int1(1).op('t').done()), "TUPLE without a MARK at byte 4 of the pickle");
  EXPECT_EQ(problem(Pickle().int1(1).op('(').op('\x85').done()), "TUPLE1 on 0 values at byte 5 of the pickle")
      << "a value below the innermost mark is not the opcode's";
  EXPECT_EQ(problem(Pickle().op('Q').done()), "BINPERSID on an empty stack at byte 2 of the pickle");
  EXPECT_EQ(problem(Pickle().binput(0).done()), "BINPUT on an empty stack at byte 2 of the pickle");
  EXPECT_EQ(problem(Pickle().binget(3).done()), "memo index 3 read before it was written at byte 2 of the pickle");
}

TEST(TensorFileCheck, OnlyTheGlobalsAndOpcodesOfATensorAreAccepted) {
  EXPECT_EQ(problem(Pickle().global("builtins", "set").done()),
            "global builtins.set (not one torch.save writes for a tensor) at byte 2 of the pickle");
  EXPECT_EQ(problem(Pickle().op('(').op('l').done()), "opcode 0x6c (not one torch.save writes for a tensor) at byte 3 of the pickle");
  EXPECT_EQ(problem(Pickle().global("torch", "FloatStorage").op(')').op('R').done()),
            "REDUCE of a value that is not a function torch.save calls at byte 23 of the pickle");
  EXPECT_EQ(problem(Pickle().int1(0).op(')').op('R').done()), "REDUCE of a value that is not a function torch.save calls at byte 5 of the pickle")
      << "an integer is not a global, though LibTorch's stack holds globals as integers";
  EXPECT_EQ(problem(std::string("\x80\x03.", 3)), "pickle protocol 3 (LibTorch reads protocol 2)");
  std::string long1 = Pickle().s + std::string("\x8a\x04\x01\x00\x00\x00", 6) + ".";
  EXPECT_EQ(problem(long1), "an integer of 4 bytes (LibTorch reads 8-byte ones only) at byte 2 of the pickle");
}

TEST(TensorFileCheck, ThePickleMustEndWithOneTensor) {
  EXPECT_EQ(problem(Pickle().int1(1).done()), "the pickle ends with 1 values, not one tensor");
  EXPECT_EQ(problem(Pickle().tensor(6, {6}, {1}).int1(1).done()), "the pickle ends with 2 values, not one tensor");
  EXPECT_EQ(problem(Pickle().op('(').tensor(6, {6}, {1}).done()), "STOP with a MARK open at byte 128 of the pickle");
  EXPECT_EQ(problem(Pickle().tensor(6, {6}, {1}).s), "no STOP opcode");
}

TEST(TensorFileCheck, TheStorageMustHoldTheTensor) {
  EXPECT_EQ(problem(Pickle().tensor(7, {7}, {1}).done()), "a storage of 28 bytes in a record of 24 at byte 86 of the pickle");
  EXPECT_EQ(problem(Pickle().tensor(6, {3, 3}, {3, 1}).done()),
            "a view of the storage's elements up to index 8 in a storage of 24 bytes at byte 130 of the pickle");
  EXPECT_EQ(problem(Pickle().tensor(6, {6}, {1}, 1).done()),
            "a view of the storage's elements up to index 6 in a storage of 24 bytes at byte 126 of the pickle");
  EXPECT_EQ(problem(Pickle().tensor(6, {2, 3}, {3}).done()), "a tensor with 2 sizes and 1 strides at byte 128 of the pickle");
  std::string other_key = Pickle().tensor(6, {6}, {1}).done();
  other_key.replace(other_key.find(std::string("X\x01\0\0\0" "0", 6)), 6, std::string("X\x01\0\0\0" "9", 6));
  EXPECT_EQ(problem(other_key), "no record archive/data/9 for the storage at byte 86 of the pickle");
}

TEST(TensorFileCheck, TuplesNestOnlyAsDeepAsATensorsArguments) {
  Pickle deep;
  deep.int1(1);
  for (int i = 0; i < 5; ++i) deep.op('\x85');
  EXPECT_EQ(problem(deep.done()), "tuples nested more than 4 deep at byte 8 of the pickle");
}

TEST(TensorFileCheck, TheZipContainerIsCheckedFirst) {
  const std::string pickle = Pickle().tensor(6, {6}, {1}).done();
  EXPECT_EQ(tensor_file_problem(zip({{"a/data.pkl", pickle}, {"a/data.pkl", pickle}})), "two records named 'a/data.pkl'");
  EXPECT_EQ(tensor_file_problem(zip({{"data.pkl", pickle}})), "the first record 'data.pkl' is not inside an archive folder");
  EXPECT_EQ(tensor_file_problem(zip({{"a/version", "3\n"}, {"b/data.pkl", pickle}})), "no a/data.pkl record");
  std::vector<char> cut = pt(pickle);
  cut.resize(cut.size() - 30);
  EXPECT_EQ(tensor_file_problem(cut), "no zip end-of-central-directory record");
}

}  // namespace

// torch 2.x: dtypes without a typed storage class (uint16, float8, ...) as
// _rebuild_tensor_v3(UntypedStorage, offset, sizes, strides, requires_grad, hooks, dtype), as
// torch.save writes them; the layout says where acccheck's own reader finds the elements.
namespace {
Pickle& untyped_tensor(Pickle& p, int nbytes, const std::string& dtype, const std::vector<int>& sizes,
                       const std::vector<int>& strides, int offset = 0) {
  p.global("torch._utils", "_rebuild_tensor_v3").op('(');
  p.op('(').str("storage").global("torch.storage", "UntypedStorage").str("0").str("cpu").int1(nbytes).op('t').op('Q');
  p.int1(offset).ints(sizes).ints(strides).op('\x89').global("collections", "OrderedDict").op(')').op('R');
  return p.global("torch", dtype).op('t').op('R');
}
}  // namespace

TEST(TensorFileCheck, AnUntypedStorageWithItsDtypeIsAcceptedAndLaidOut) {
  acccheck::replay::TensorFileLayout layout;
  Pickle p;
  auto bytes = pt(untyped_tensor(p, 24, "uint16", {3, 2}, {1, 3}, 4).done());
  ASSERT_EQ(tensor_file_problem(bytes, layout), "");
  EXPECT_TRUE(layout.untyped);
  EXPECT_EQ(layout.record, "archive/data/0");
  EXPECT_EQ(layout.dtype, "uint16");
  EXPECT_EQ(layout.item_size, 2);
  EXPECT_EQ(layout.storage_offset, 4);
  EXPECT_EQ(layout.sizes, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(layout.strides, (std::vector<std::int64_t>{1, 3}));
  // The record's bytes begin after its local header (30 bytes) and its name, past data.pkl's record.
  const std::string pickle_name = "archive/data.pkl";
  EXPECT_EQ(layout.record_offset, 30 + pickle_name.size() + p.done().size() + 30 + std::string("archive/data/0").size());
  // A typed file leaves the layout empty: LibTorch reads it.
  ASSERT_EQ(tensor_file_problem(pt(Pickle().tensor(6, {2, 3}, {3, 1}).done()), layout), "");
  EXPECT_FALSE(layout.untyped);
}

TEST(TensorFileCheck, AnUntypedTensorMustLieInsideItsBytes) {
  // Where an error is found: the REDUCE that rebuilds the tensor (the pickle's last opcode before
  // STOP), or the GLOBAL naming an unknown dtype.
  auto at_reduce = [](const Pickle& p) { return " at byte " + std::to_string(p.s.size() - 1) + " of the pickle"; };
  // uint32: 4 bytes an element. 6 elements at offset 1 need 28 bytes: a 24-byte storage is too small.
  Pickle a;
  untyped_tensor(a, 24, "uint32", {6}, {1}, 1);
  EXPECT_EQ(problem(a.done(), 24), "a view of the storage's elements up to index 6 in a storage of 24 bytes" + at_reduce(a));
  Pickle b;
  EXPECT_EQ(problem(untyped_tensor(b, 24, "uint32", {6}, {1}, 0).done(), 24), "");
  Pickle c;
  untyped_tensor(c, 24, "float7_e1m1", {6}, {1});
  EXPECT_EQ(problem(c.done(), 24), "global torch.float7_e1m1 (not one torch.save writes for a tensor) at byte " +
                                       std::to_string(c.s.find("ctorch\nfloat7")) + " of the pickle");
  // v3 with a typed storage, and v3 without its dtype, are not what torch.save writes.
  Pickle d;
  d.global("torch._utils", "_rebuild_tensor_v3").op('(').storage(6).int1(0).ints({6}).ints({1}).op('\x89');
  d.global("collections", "OrderedDict").op(')').op('R').global("torch", "uint16").op('t').op('R');
  EXPECT_EQ(problem(d.done()), "_rebuild_tensor_v3 of a typed storage" + at_reduce(d));
  Pickle e;
  e.global("torch._utils", "_rebuild_tensor_v3").op('(').storage(6).int1(0).ints({6}).ints({1}).op('\x89');
  e.global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
  EXPECT_EQ(problem(e.done()), "_rebuild_tensor_v3 called with 6 arguments" + at_reduce(e));
}
