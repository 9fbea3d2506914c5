// Source text and ranges (see source_range.h).
#include "runtime/ir/source_range.h"

#include <algorithm>

#include <fmt/format.h>

namespace ampjit {

std::shared_ptr<const Source> Source::dedented(const std::string& text, std::string filename,
                                               int first_line) {
  size_t indent = 0;
  while (indent < text.size() && (text[indent] == ' ' || text[indent] == '\t')) ++indent;
  if (indent == 0) return std::make_shared<const Source>(text, std::move(filename), first_line);
  std::string out;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    e = e == std::string::npos ? text.size() : e + 1;
    size_t k = 0;
    while (k < indent && b + k < e && (text[b + k] == ' ' || text[b + k] == '\t')) ++k;
    out.append(text, b + k, e - b - k);
    b = e;
  }
  return std::make_shared<const Source>(std::move(out), std::move(filename), first_line,
                                        static_cast<int>(indent));
}

Source::Source(std::string text, std::string filename, int first_line, int col_offset)
    : text_(std::move(text)),
      filename_(std::move(filename)),
      first_line_(first_line),
      col_offset_(col_offset) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::pair<int, int> Source::line_col(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
  return {static_cast<int>(idx) + first_line_,
          static_cast<int>(offset - line_starts_[idx]) + 1 + col_offset_};
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
  return std::min(text_.size(),
                  line_starts_[idx] + static_cast<size_t>(std::max(col - col_offset_, 1) - 1));
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
  const int col = c - source->col_offset();  // within the (dedented) text shown
  const int width =
      el == l ? std::max(1, ec - c + 1) : std::max(1, static_cast<int>(text.size()) - col + 1);
  out += "\n" + text + "\n" + std::string(static_cast<size_t>(std::max(col, 1) - 1), ' ') +
         std::string(width, '~');
  return out;
}

}  // namespace ampjit
