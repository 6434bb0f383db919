// Statistics of the dump engine (dump-format.md §2.5) against hand-computed numbers.
#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <string>
#include <limits>
#include <vector>

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <gtest/gtest.h>

#include "engine/tensor_statistics.hpp"

using acccheck::Statistic;
using acccheck::capture::fill_statistics;

namespace {

acccheck::capture::Statistics stats_of(const at::Tensor& t) {
  acccheck::capture::Statistics s;
  at::Tensor pending;
  fill_statistics(t, s, &pending);
  EXPECT_FALSE(pending.defined()) << "CPU tensors are computed at once";
  return s;
}

}  // namespace

TEST(TensorStatistics, FloatTensor) {
  // [1, -2, 3, 4]: max 4, min -2, mean 6/4 = 1.5, norm sqrt(1+4+9+16) = sqrt(30).
  auto s = stats_of(at::tensor({1.0f, -2.0f, 3.0f, 4.0f}));
  EXPECT_EQ(s.max.value, 4.0);
  EXPECT_EQ(s.min.value, -2.0);
  EXPECT_EQ(s.mean.value, 1.5);
  EXPECT_EQ(s.norm.value, static_cast<double>(static_cast<float>(std::sqrt(30.0))));
  EXPECT_EQ(s.max.kind, Statistic::Kind::number);
}

TEST(TensorStatistics, LongerThanTheVectorLanesAndNonContiguous) {
  // 0..19 (20 elements: two lanes of 8 plus a tail of 4): mean 9.5, norm sqrt(sum k^2) = sqrt(2470).
  at::Tensor t = at::arange(20, at::kFloat);
  auto s = stats_of(t);
  EXPECT_EQ(s.max.value, 19.0);
  EXPECT_EQ(s.min.value, 0.0);
  EXPECT_EQ(s.mean.value, 9.5);
  EXPECT_EQ(s.norm.value, static_cast<double>(static_cast<float>(std::sqrt(2470.0))));
  // A transposed view: the same elements, so the same statistics.
  auto v = stats_of(t.reshape({4, 5}).t());
  EXPECT_EQ(v.mean.value, 9.5);
  EXPECT_EQ(v.max.value, 19.0);
}

TEST(TensorStatistics, ManyBlocksOfLanesAndATail) {
  // k/8 for k = 0..1612: three blocks of 512 elements (64 lanes each) and a tail of 77. Every
  // partial sum is a multiple of 1/8 below 2^11, exact in float: mean = 1612/16 = 100.75 exactly,
  // max 201.5, min 0, norm sqrt(sum k^2) / 8 with sum k^2 = 1612 * 1613 * 3225 / 6.
  constexpr std::int64_t n = 3 * 512 + 77;
  at::Tensor t = at::arange(n, at::kFloat) / 8;
  auto s = stats_of(t);
  EXPECT_EQ(s.max.value, 201.5);
  EXPECT_EQ(s.min.value, 0.0);
  EXPECT_EQ(s.mean.value, 100.75);
  EXPECT_FLOAT_EQ(static_cast<float>(s.norm.value), static_cast<float>(std::sqrt(1612.0 * 1613 * 3225 / 6) / 8));
  // A NaN in the second block, and an extreme value in the last lane of the third: both seen.
  t[600] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(stats_of(t).mean.value));
  at::Tensor u = at::arange(n, at::kFloat) / 8;
  u[3 * 512 - 1] = -1000.0f;
  EXPECT_EQ(stats_of(u).min.value, -1000.0);
}

TEST(TensorStatistics, HalfMeanIsRoundedToHalf) {
  // mean of [0.1, 0.2] in fp16: 0.1→0.0999755859375, 0.2→0.199951171875; mean 0.14996337890625
  // rounds to the nearest fp16 0.1500244140625.
  auto s = stats_of(at::tensor({0.1f, 0.2f}).to(at::kHalf));
  EXPECT_EQ(s.mean.value, static_cast<double>(static_cast<float>(at::Half(0.14996337890625f))));
  EXPECT_EQ(s.max.value, static_cast<double>(static_cast<float>(at::Half(0.2f))));
}

TEST(TensorStatistics, IntegersBoolsScalarsEmptyNan) {
  auto i = stats_of(at::tensor({3, 5}, at::kLong));
  EXPECT_EQ(i.max.value, 5.0);
  EXPECT_EQ(i.mean.value, 4.0);
  EXPECT_EQ(i.norm.value, static_cast<double>(static_cast<float>(std::sqrt(34.0))));
  auto b = stats_of(at::tensor({1, 0}, at::kInt).to(at::kBool));
  EXPECT_EQ(b.max.kind, Statistic::Kind::boolean);
  EXPECT_EQ(b.max.value, 1.0);  // any
  EXPECT_EQ(b.min.value, 0.0);  // all
  EXPECT_FALSE(b.mean.present());
  EXPECT_FALSE(b.norm.present());
  auto z = stats_of(at::scalar_tensor(7, at::kLong));
  EXPECT_EQ(z.max.kind, Statistic::Kind::integer);
  EXPECT_EQ(z.norm.value, 7.0);
  auto e = stats_of(at::empty({0, 3}));
  EXPECT_FALSE(e.max.present());
  EXPECT_FALSE(e.norm.present());
  auto n = stats_of(at::tensor({1.0f, std::numeric_limits<float>::quiet_NaN()}));
  EXPECT_TRUE(std::isnan(n.max.value));
  EXPECT_TRUE(std::isnan(n.mean.value));
  auto inf = stats_of(at::tensor({1.0f, std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(inf.max.value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(inf.min.value, 1.0);
  auto c = stats_of(at::tensor({3.0f, 4.0f}).view({1, 2}).view(at::kComplexFloat));  // |3+4i| = 5
  EXPECT_EQ(c.max.value, 5.0);
  EXPECT_FALSE(c.norm.present()) << "msprobe writes no norm for complex tensors";
}

TEST(TensorStatistics, ReusedOnlyWhileTheElementsAreUnchanged) {
  // 1..1024 as 32 x 32 (a storage of two blocks: its statistics go through the table).
  at::Tensor x = at::arange(1, 1025, at::kFloat).reshape({32, 32});
  EXPECT_EQ(stats_of(x).mean.value, 512.5);
  EXPECT_EQ(stats_of(x.t()).mean.value, 512.5) << "a transposed view: the same elements";
  x.add_(1.0f);  // in place: the version counter moves, for the view too
  EXPECT_EQ(stats_of(x).mean.value, 513.5);
  EXPECT_EQ(stats_of(x.t()).max.value, 1025.0);
  // Half of the storage is not the same element set.
  EXPECT_EQ(stats_of(x.reshape({1024}).slice(0, 0, 512)).mean.value, 257.5);
  // Writing through data_ptr moves no version: the entry answers (which shows it is there). The
  // slice above took the data pointer's one entry: x's is made again first.
  EXPECT_EQ(stats_of(x).min.value, 2.0);
  x.data_ptr<float>()[0] = -7.0f;
  EXPECT_EQ(stats_of(x).min.value, 2.0) << "the entry of the unchanged version";
  // A new tensor at a reused address is never mistaken for a freed one.
  for (int i = 0; i < 50; ++i) {
    at::Tensor y = at::full({64}, static_cast<float>(i));
    ASSERT_EQ(stats_of(y).max.value, static_cast<double>(i));
  }
}

TEST(TensorStatistics, AnAliasWithAVersionCounterOfItsOwnIsNeverTakenForTheTensor) {
  // variable_data() (`.data` in Python) shares the storage but not the version counter: a write
  // through it leaves the tensor's version where it was. As in a dump, the in-place call's input
  // (the alias) is captured before it writes and its output after.
  at::Tensor p = at::ones({1024});  // more than a block: through the table
  EXPECT_EQ(stats_of(p).max.value, 1.0);
  for (float expected : {2.0f, 3.0f}) {
    at::Tensor alias = p.variable_data();
    EXPECT_EQ(stats_of(alias).max.value, expected - 1) << "the call's input";
    alias.add_(1.0f);
    EXPECT_EQ(stats_of(alias).max.value, expected) << "its output";
    EXPECT_EQ(stats_of(p).max.value, expected) << "p's version did not move, its elements did";
  }
  // The two counters are independent: equal numbers mean nothing across them.
  at::Tensor q = at::ones({1024});
  EXPECT_EQ(stats_of(q).max.value, 1.0);
  const auto captured_at = q._version();
  q.add_(1.0f);  // not captured
  at::Tensor alias = q.variable_data();  // a counter of its own, from 0
  while (alias._version() < captured_at) alias.add_(0.0f);  // the same number, other elements
  EXPECT_EQ(stats_of(alias).max.value, 2.0);
}

TEST(TensorStatistics, ADetachedAliasSharesTheEntryUntilEitherIsWritten) {
  // detach() shares the storage and the version counter (clip_grad_norm_ detaches every gradient
  // twice a step): its statistics are the entry's. (Writing through data_ptr moves no version,
  // which shows whether the entry answered.)
  at::Tensor g = at::full({1024}, 1.0f);
  EXPECT_EQ(stats_of(g).max.value, 1.0);
  g.data_ptr<float>()[0] = 9.0f;
  at::Tensor d = g.detach();
  EXPECT_EQ(stats_of(d).max.value, 1.0) << "the same counter at the same version: the entry answers";
  EXPECT_EQ(stats_of(d.detach().view({32, 32})).max.value, 1.0) << "a view of a detached alias too";
  d.add_(1.0f);  // in place through the alias: the shared counter moves, for g as well
  EXPECT_EQ(stats_of(g).max.value, 10.0);
  EXPECT_EQ(stats_of(d).max.value, 10.0);
  // A tensor whose counter died with it is never taken for a new one at the same address with the
  // same version number: the entry keeps its counter alive, so the new tensor's is another object.
  for (int i = 0; i < 50; ++i) {
    at::Tensor y = at::full({1024}, static_cast<float>(i));
    ASSERT_EQ(stats_of(y.detach()).max.value, static_cast<double>(i));
  }
}

TEST(TensorStatistics, ATensorOverAStorageSmallerThanABlockIsReadEachTime) {
  // Writing through data_ptr moves no version: a tensor whose statistics came from the table would
  // keep its old maximum. Below a block of the dtype's bytes, every read is a pass.
  for (std::int64_t n : {1, 32, 511}) {
    at::Tensor b = at::zeros({n});
    EXPECT_EQ(stats_of(b).max.value, 0.0);
    b.data_ptr<float>()[n - 1] = 3.0f;
    EXPECT_EQ(stats_of(b).max.value, 3.0) << n << " elements";
    EXPECT_EQ(stats_of(b.variable_data()).max.value, 3.0) << n << " elements, an alias";
  }
  // The size is the storage's, not the view's: a small view of a large storage is looked up (a
  // `.data` alias of a slice of it must replace the entry its base's slice had, as it does).
  at::Tensor big = at::zeros({1024});
  at::Tensor head = big.slice(0, 0, 8);
  EXPECT_EQ(stats_of(head).max.value, 0.0);
  big.data_ptr<float>()[0] = 3.0f;
  EXPECT_EQ(stats_of(head).max.value, 0.0) << "the entry of the unchanged version";
  // 511 bfloat16 elements are 1,022 bytes, a block of bfloat16 1,024: read each time; 512 are not.
  at::Tensor h = at::zeros({511}, at::kBFloat16);
  EXPECT_EQ(stats_of(h).max.value, 0.0);
  h.data_ptr<at::BFloat16>()[0] = at::BFloat16(2.0f);
  EXPECT_EQ(stats_of(h).max.value, 2.0);
  at::Tensor g = at::zeros({512}, at::kBFloat16);
  EXPECT_EQ(stats_of(g).max.value, 0.0);
  g.data_ptr<at::BFloat16>()[0] = at::BFloat16(2.0f);
  EXPECT_EQ(stats_of(g).max.value, 0.0) << "a block of bfloat16: through the table";
}

TEST(TensorStatistics, ElementsWrittenWithoutAVersionAreReadAfreshAndNotKept) {
  // Batch norm's running statistics change inside its kernel and keep their version
  // (Reuse::never): an entry for them would answer with old values.
  using acccheck::capture::Reuse;
  auto never = [](const at::Tensor& t) {
    acccheck::capture::Statistics s;
    at::Tensor pending;
    fill_statistics(t, s, &pending, false, Reuse::never);
    return s;
  };
  at::Tensor running = at::zeros({1024});
  EXPECT_EQ(stats_of(running).max.value, 0.0);  // an entry, as any capture makes
  running.data_ptr<float>()[5] = 4.0f;          // the kernel's write: no version moves
  EXPECT_EQ(stats_of(running).max.value, 0.0) << "the entry answers (which shows it is there)";
  EXPECT_EQ(never(running).max.value, 4.0) << "read afresh, whatever the table holds";
  running.data_ptr<float>()[6] = 5.0f;
  EXPECT_EQ(stats_of(running).max.value, 5.0) << "the entry was dropped, and none kept";
  running.data_ptr<float>()[7] = 6.0f;
  EXPECT_EQ(never(running).max.value, 6.0);
  running.data_ptr<float>()[8] = 7.0f;
  EXPECT_EQ(stats_of(running).max.value, 7.0) << "Reuse::never keeps nothing";
}

TEST(TensorStatistics, AParametersStatisticsOutliveAStepOfOtherTensors) {
  // The optimizer's update of a parameter is remembered, and the next forward pass reads the same
  // version: reused after a step's worth of other tensors. (Writing through data_ptr bumps no
  // version, which shows whether the statistics were computed again.)
  at::Tensor w = at::full({256, 256}, 1.0f);
  EXPECT_EQ(stats_of(w).max.value, 1.0);
  std::vector<at::Tensor> others;
  for (int i = 0; i < 150; ++i) {
    others.push_back(at::full({64, 64}, static_cast<float>(i)));
    ASSERT_EQ(stats_of(others.back()).max.value, static_cast<double>(i));
  }
  w.data_ptr<float>()[0] = 7.0f;  // invisible to the version counter
  EXPECT_EQ(stats_of(w).max.value, 1.0) << "recomputed: the statistics were forgotten";
  EXPECT_EQ(stats_of(w.t()).max.value, 1.0) << "a view of it shares the entry";
}

// The statistics of aten::zero_'s output are known without the pass: exactly what the pass over
// zeros gives (kind, value and float32-ness of each), for every dtype read in place, 0-d, a tensor
// longer than a block and one that is not dense. The tensor handed over holds ones: the known
// statistics are not read from its elements.
TEST(TensorStatistics, KnownZerosAreWhatThePassOverZerosGives) {
  auto expect_same = [](const acccheck::capture::HeldStatistic& known, const acccheck::capture::HeldStatistic& read,
                        const std::string& what) {
    EXPECT_EQ(known.kind, read.kind) << what;
    EXPECT_EQ(known.value, read.value) << what;
    EXPECT_EQ(std::signbit(known.value), std::signbit(read.value)) << what;
    EXPECT_EQ(known.float32, read.float32) << what;
  };
  for (at::ScalarType dtype : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kByte}) {
    for (std::vector<std::int64_t> shape : {std::vector<std::int64_t>{}, {4}, {3, 700}}) {
      for (bool strided : {false, true}) {
        if (strided && shape.size() < 2) continue;
        auto make = [&](double fill) {
          at::Tensor t = at::full(shape, fill, at::TensorOptions().dtype(dtype));
          return strided ? t.slice(1, 0, 700, 2) : t;  // every other column: not dense
        };
        const std::string what = std::string(c10::toString(dtype)) + " shape " + std::to_string(shape.size()) +
                                 "-d" + (strided ? " strided" : "");
        auto read = stats_of(make(0.0));
        acccheck::capture::Statistics known;
        at::Tensor pending;
        fill_statistics(make(1.0), known, &pending, /*zeros=*/true);
        expect_same(known.max, read.max, what + " max");
        expect_same(known.min, read.min, what + " min");
        expect_same(known.mean, read.mean, what + " mean");
        expect_same(known.norm, read.norm, what + " norm");
        EXPECT_EQ(read.max.value, 0.0) << what;
      }
    }
  }
}

// A tensor that is not dense (a slice, a strided window, an expanded tensor, a select) is read in
// place in row-major order: bit for bit the statistics of its contiguous() copy — which the engine
// made before, through the dispatcher — for every dtype read in place, with blocks and a tail.
TEST(TensorStatistics, NotDenseIsReadInPlaceAsItsContiguousCopy) {
  auto expect_same = [](const acccheck::capture::Statistics& a, const acccheck::capture::Statistics& b,
                        const std::string& what) {
    const acccheck::capture::HeldStatistic* x[] = {&a.max, &a.min, &a.mean, &a.norm};
    const acccheck::capture::HeldStatistic* y[] = {&b.max, &b.min, &b.mean, &b.norm};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(x[i]->kind, y[i]->kind) << what << " statistic " << i;
      EXPECT_EQ(std::memcmp(&x[i]->value, &y[i]->value, sizeof(double)), 0)
          << what << " statistic " << i << ": " << x[i]->value << " vs " << y[i]->value;
      EXPECT_EQ(x[i]->float32, y[i]->float32) << what << " statistic " << i;
    }
  };
  at::manual_seed(7);
  for (at::ScalarType dtype : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kShort,
                               at::kChar, at::kByte}) {
    at::Tensor base = (at::randn({6, 40, 37}) * 50).to(dtype);
    const std::vector<std::pair<std::string, at::Tensor>> views = {
        {"every other column", base.slice(2, 0, 37, 2)},
        {"a window", base.slice(0, 1, 5).slice(1, 3, 33).slice(2, 2, 30)},
        {"a window, transposed", base.slice(1, 0, 20).transpose(0, 2)},
        {"a select", base.select(2, 5)},
        {"a 1-d stride", base.flatten().slice(0, 0, 8880, 3)},
        {"expanded (stride 0)", base.select(0, 2).select(1, 4).unsqueeze(0).expand({30, 40})},
        {"a slice of 1-element rows", base.slice(2, 0, 1)},
    };
    for (const auto& [name, v] : views) {
      const std::string what = std::string(c10::toString(dtype)) + ", " + name;
      ASSERT_FALSE(v.is_non_overlapping_and_dense()) << what;
      expect_same(stats_of(v), stats_of(v.contiguous()), what);
    }
  }
  // Without an operator: with every dispatch key excluded any operator fails (contiguous(), which
  // the engine ran before, included).
  at::Tensor w = at::arange(600, at::kFloat).reshape({20, 30}).slice(1, 0, 30, 3);
  const auto want = stats_of(w.contiguous());
  {
    c10::impl::ExcludeDispatchKeyGuard no_operator(c10::DispatchKeySet(c10::DispatchKeySet::FULL));
    ASSERT_THROW((void)w.contiguous(), c10::Error) << "the guard must make an operator fail";
    acccheck::capture::Statistics got;
    at::Tensor pending;
    ASSERT_NO_THROW(fill_statistics(w, got, &pending)) << "an operator ran";
    expect_same(got, want, "under the guard");
  }
  // A NaN reached only through the strides is seen.
  at::Tensor f = at::zeros({8, 130});
  f[5][128] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(stats_of(f.slice(1, 0, 130, 2)).mean.value));
  EXPECT_FALSE(std::isnan(stats_of(f.slice(1, 1, 130, 2)).mean.value));
}

// A bool tensor's Max and Min are its any() and all(), read from its bytes: the same as the
// operators give for dense, transposed, sliced, expanded and 0-d tensors and for bytes other than
// 0 and 1 (true, for both), with no operator run (they fail under a guard excluding every key).
TEST(TensorStatistics, BoolTensorsAreScannedWithoutAnOperator) {
  at::Tensor columns = at::zeros({40, 70}, at::kBool);
  columns.slice(1, 0, 70, 2).fill_(true);  // even columns true, odd ones false
  at::Tensor big = at::zeros({3000}, at::kBool);
  big[2999] = true;
  const std::vector<std::pair<std::string, at::Tensor>> cases = {
      {"mixed", at::tensor({1, 0, 1}, at::kInt).to(at::kBool)},
      {"all true", at::ones({129}, at::kBool)},
      {"all false", at::zeros({129}, at::kBool)},
      {"0-d true", at::scalar_tensor(1, at::kBool)},
      {"0-d false", at::scalar_tensor(0, at::kBool)},
      {"transposed", columns.t()},
      {"even columns (all true, not dense)", columns.slice(1, 0, 70, 2)},
      {"odd columns (all false, not dense)", columns.slice(1, 1, 70, 2)},
      {"expanded", columns.select(0, 3).unsqueeze(0).expand({5, 70})},
      {"one true element at the end", big},
      {"bytes 0 and 2", at::tensor({0, 2}, at::kByte).view(at::kBool)},
      {"bytes 2 and 3", at::tensor({2, 3}, at::kByte).view(at::kBool)},
  };
  for (const auto& [name, t] : cases) {
    const bool any = t.any().item<bool>(), all = t.all().item<bool>();
    acccheck::capture::Statistics s;
    at::Tensor pending;
    {
      c10::impl::ExcludeDispatchKeyGuard no_operator(c10::DispatchKeySet(c10::DispatchKeySet::FULL));
      ASSERT_THROW((void)t.any(), c10::Error) << "the guard must make an operator fail";
      ASSERT_NO_THROW(fill_statistics(t, s, &pending)) << name << ": an operator ran";
    }
    EXPECT_EQ(s.max.kind, Statistic::Kind::boolean) << name;
    EXPECT_EQ(s.max.value, any ? 1.0 : 0.0) << name << " (any)";
    EXPECT_EQ(s.min.kind, Statistic::Kind::boolean) << name;
    EXPECT_EQ(s.min.value, all ? 1.0 : 0.0) << name << " (all)";
    EXPECT_FALSE(s.mean.present()) << name;
    EXPECT_FALSE(s.norm.present()) << name;
  }
  // The operators themselves, for the cases above that decide something.
  EXPECT_TRUE(columns.slice(1, 0, 70, 2).all().item<bool>());
  EXPECT_FALSE(columns.slice(1, 1, 70, 2).any().item<bool>());
  EXPECT_TRUE(at::tensor({2, 3}, at::kByte).view(at::kBool).all().item<bool>());
}
