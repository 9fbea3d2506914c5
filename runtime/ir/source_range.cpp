// Source text and ranges (see source_range.h).
#include "runtime/ir/source_range.h"

#include <algorithm>

#include <fmt/format.h>

namespace ampjit {

Source::Source(std::string text, std::string filename, int first_line)
    : text_(std::move(text)), filename_(std::move(filename)), first_line_(first_line) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::pair<int, int> Source::line_col(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
  return {static_cast<int>(idx) + first_line_, static_cast<int>(offset - line_starts_[idx]) + 1};
}

std::string Source::line_text(int line) const {
  const int idx = line - first_line_;
  if (idx < 0 || static_cast<size_t>(idx) >= line_starts_.size()) return "";
  const size_t b = line_starts_[idx];
  size_t e = text_.find('\n', b);
  if (e == std::string::npos) e = text_.size();
  return text_.substr(b, e - b);
}

size_t Source::offset_of(int line, int col) const {
  const int idx = std::clamp(line - first_line_, 0, static_cast<int>(line_starts_.size()) - 1);
  return std::min(text_.size(), line_starts_[idx] + static_cast<size_t>(std::max(col, 1) - 1));
}

std::string SourceRange::location_str() const {
  return fmt::format("{}:{}:{}", filename(), start_line(), start_col());
}

std::string SourceRange::highlight() const {
  std::string out = location_str();
  if (!source) return out;
  const auto [l, c] = source->line_col(start);
  const std::string text = source->line_text(l);
  const auto [el, ec] = source->line_col(std::max(end, start + 1) - 1);
  const int width = el == l ? std::max(1, ec - c + 1) : std::max(1, static_cast<int>(text.size()) - c + 1);
  out += "\n" + text + "\n" + std::string(c - 1, ' ') + std::string(width, '~');
  return out;
}

}  // namespace ampjit
