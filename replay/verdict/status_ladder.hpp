// run_ut's own verdict for one float output (run-ut.md §6.3-§6.4): cosine similarity, maximum
// absolute error, then the 双百 / 双千 / 双万 relative-error ratios, stopping at the first rule
// that decides. Fills the columns it reached and returns the status with its message.
#pragma once

#include <string>

#include <acccheck/metric.hpp>

#include "details_columns.hpp"

namespace acccheck::replay {

// `out` holds the values after the bfloat16 → float32 conversion the reference makes; its
// device_dtype is the dtype before it. Writes 余弦相似度, 最大绝对误差, 双百/双千/双万 into `row`
// and appends to `message`; returns pass / Warning / error.
std::string status_ladder(const OutputPair& out, DetailsRow& row, std::string& message);

}  // namespace acccheck::replay
