#include "commands/compare/compare_summary.hpp"

#include <algorithm>
#include <iomanip>

namespace acccheck::host {

void CompareSummary::add_api(const std::string& api, const std::string& forward, const std::string& backward,
                             const std::string& message) {
  ++apis_;
  if (forward == "SKIP" || backward == "SKIP") skip_reasons_.add(api, message);
  ++forward_[forward == " " ? "-" : forward];
  ++backward_[backward == " " ? "-" : backward];
  if (forward == "error" || backward == "error") ++apis_error_;
  else if (forward == "Warning" || backward == "Warning") ++apis_warning_;
  if (forward == "SKIP") ++apis_skip_;
}

std::size_t CompareSummary::apis_with(const std::string& verdict) const {
  if (verdict == "error") return apis_error_;
  if (verdict == "Warning") return apis_warning_;
  if (verdict == "SKIP") return apis_skip_;
  return 0;
}

void CompareSummary::add_row(const std::string& row, const std::string& standard, Verdict verdict,
                             const std::string& metric, double severity) {
  static const std::string kNotJudged = "(skipped before judging)";
  auto it = by_standard_.find(standard.empty() ? kNotJudged : standard);
  if (it == by_standard_.end()) it = by_standard_.emplace(standard.empty() ? kNotJudged : standard, std::array<std::size_t, 4>{}).first;
  ++it->second[static_cast<std::size_t>(verdict)];
  if (verdict != Verdict::error) return;
  ++error_rows_;
  Worst w{row, standard, metric, severity};
  auto pos = std::upper_bound(worst_.begin(), worst_.end(), w,
                              [](const Worst& a, const Worst& b) { return a.severity > b.severity; });
  if (static_cast<std::size_t>(pos - worst_.begin()) >= worst_limit_) return;
  worst_.insert(pos, w);
  if (worst_.size() > worst_limit_) worst_.pop_back();
}

void CompareSummary::print(std::ostream& os) const {
  auto counts = [&](const std::map<std::string, std::size_t>& m) {
    std::string s;
    for (const char* k : {"pass", "Warning", "error", "SKIP", "-"}) {
      auto it = m.find(k);
      if (it == m.end()) continue;
      if (!s.empty()) s += ", ";
      s += std::string(k == std::string("-") ? "none" : k) + " " + std::to_string(it->second);
    }
    return s.empty() ? std::string("none") : s;
  };
  os << "compare: " << apis_ << " API result rows; " << apis_error_ << " with an error\n";
  os << "  forward:  " << counts(forward_) << "\n";
  os << "  backward: " << counts(backward_) << "\n";
  skip_reasons_.print(os);
  os << "  output rows by standard:\n";
  for (const auto& [standard, counts_by_verdict] : by_standard_) {
    std::map<std::string, std::size_t> m;
    for (auto v : {Verdict::pass, Verdict::warning, Verdict::error, Verdict::skip})
      if (counts_by_verdict[static_cast<std::size_t>(v)]) m[verdict_text(v)] = counts_by_verdict[static_cast<std::size_t>(v)];
    os << "    " << std::left << std::setw(28) << standard << counts(m) << "\n";
  }
  if (!worst_.empty()) {
    os << "  worst outputs, by how far past the threshold (" << worst_.size() << " of " << error_rows_ << " in error):\n";
    for (const auto& w : worst_) {
      os << "    " << w.row << "  " << w.standard;
      if (!w.metric.empty()) os << "  " << w.metric << " (severity " << std::setprecision(4) << w.severity << ")";
      os << "\n";
    }
  }
}

std::size_t CompareSummary::rows() const {
  std::size_t n = 0;
  for (const auto& [standard, counts] : by_standard_)
    for (auto c : counts) n += c;
  return n;
}

}  // namespace acccheck::host
