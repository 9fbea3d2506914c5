// Source text and ranges (see source_range.h).
#include "runtime/ir/source_range.h"

#include <string_view>
#include <vector>

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

namespace {
// The length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  const size_t n = b < 0x80           ? 1
                   : (b >> 5) == 0x6  ? 2
                   : (b >> 4) == 0xE  ? 3
                   : (b >> 3) == 0x1E ? 4
                                      : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

// A source line as a terminal shows it, one column per character: control bytes (a NUL among
// them) and bytes that are not UTF-8 become '?', so the line prints whole and the caret under it
// lines up. display_col[k] is the column of byte k (and of the end, k = size).
struct DisplayLine {
  std::string text;
  std::vector<int> display_col;
};
DisplayLine display(std::string_view line) {
  DisplayLine d;
  int col = 0;
  for (size_t i = 0; i < line.size();) {
    const size_t n = utf8_length(line, i);
    const unsigned char b = static_cast<unsigned char>(line[i]);
    const bool printable = n > 1 || (n == 1 && (b >= 0x20 || b == '\t') && b != 0x7F);
    const size_t take = printable ? n : 1;
    for (size_t k = 0; k < take; ++k) d.display_col.push_back(col);
    d.text += printable ? std::string(line.substr(i, n)) : std::string("?");
    ++col;
    i += take;
  }
  d.display_col.push_back(col);
  return d;
}
}  // namespace

std::string SourceRange::highlight() const {
  std::string out = location_str();
  if (!source) return out;
  const auto [l, c] = source->line_col(start);
  const DisplayLine line = display(source->line_text(l));
  const auto [el, ec] = source->line_col(std::max(end, start + 1) - 1);
  const auto at = [&](int byte_col) {  // 0-based byte column within the shown text -> display
    const size_t k =
        static_cast<size_t>(std::clamp(byte_col, 0, static_cast<int>(line.display_col.size()) - 1));
    return line.display_col[k];
  };
  const int first = c - source->col_offset() - 1;  // 0-based, within the (dedented) text shown
  const int last =
      el == l ? ec - source->col_offset() - 1 : static_cast<int>(line.display_col.size()) - 2;
  const int from = at(first);
  const int width = std::max(1, at(last + 1) - from);
  out += "\n" + line.text + "\n" + std::string(static_cast<size_t>(from), ' ') +
         std::string(static_cast<size_t>(width), '~');
  return out;
}

}  // namespace ampjit
