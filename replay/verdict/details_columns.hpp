// The 23 columns of accuracy_checking_details_<ts>.csv and the 4 of accuracy_checking_result_<ts>.csv,
// exactly as the reference writes them (run-ut.md §7).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace acccheck::replay {

inline constexpr std::array<std::string_view, 23> kDetailsColumns = {
    "API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度", "最大绝对误差", "双百指标", "双千指标",
    "双万指标", "二进制一致错误率", "误差均衡性", "均方根误差", "小值域错误占比", "相对误差最大值", "相对误差平均值",
    "inf/nan错误率", "相对误差错误率", "绝对误差错误率", "ULP误差最大值", "ULP误差平均值", "ULP误差大于阈值占比",
    "Status", "Message"};
inline constexpr std::array<std::string_view, 4> kResultColumns = {"API name", "Forward Test Success",
                                                                    "Backward Test Success", "Message"};

// Index of a details column, or -1.
int details_column_index(std::string_view column);

// One details row: every cell starts as the reference's blank (" ").
struct DetailsRow {
  std::vector<std::string> cells = std::vector<std::string>(kDetailsColumns.size(), " ");
  void set(std::string_view column, std::string text);
  std::string& name() { return cells[0]; }
  std::string& status() { return cells[21]; }
  std::string& message() { return cells[22]; }
  const std::string& status() const { return cells[21]; }
  const std::string& message() const { return cells[22]; }
};

}  // namespace acccheck::replay
