// Source locations. A Source is one file's text (shared by every range into it); a SourceRange is
// a byte span of it. Diagnostics print `file:line:col`, the line and a caret under the range;
// ranges recorded by the tracer know only the file, line and column Python reported.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace ampjit {

class Source {
 public:
  // `col_offset`: columns the text was dedented by (a method's source): added to every column
  // reported, so locations are the user's.
  Source(std::string text, std::string filename, int first_line = 1, int col_offset = 0);
  // The source of an indented block (a method, a nested def): dedented by the first line's
  // indentation, with that as the column offset. Lines indented less (a flush-left docstring
  // line) lose only their own indentation.
  static std::shared_ptr<const Source> dedented(const std::string& text, std::string filename,
                                                int first_line = 1);
  int col_offset() const { return col_offset_; }
  const std::string& text() const { return text_; }
  const std::string& filename() const { return filename_; }
  // 1-based line and column of a byte offset.
  std::pair<int, int> line_col(size_t offset) const;
  std::string line_text(int line) const;  // without the newline
  size_t offset_of(int line, int col) const;

 private:
  std::string text_;
  std::string filename_;
  int first_line_;
  int col_offset_ = 0;
  std::vector<size_t> line_starts_;
};

struct SourceRange {
  std::shared_ptr<const Source> source;
  size_t start = 0, end = 0;
  // For ranges without source text (traced code): file and position only.
  std::string file;
  int line = 0, col = 0;

  SourceRange() = default;
  SourceRange(std::shared_ptr<const Source> s, size_t b, size_t e)
      : source(std::move(s)), start(b), end(e) {}
  static SourceRange location(std::string file, int line, int col = 1) {
    SourceRange r;
    r.file = std::move(file);
    r.line = line;
    r.col = col;
    return r;
  }

  bool valid() const { return source != nullptr || line > 0; }
  std::string filename() const { return source ? source->filename() : file; }
  int start_line() const { return source ? source->line_col(start).first : line; }
  int start_col() const { return source ? source->line_col(start).second : col; }
  std::string location_str() const;  // "file.py:3:8"
  // "file.py:3:8\n    y = x + 1\n        ~~~~~" (the caret line spans the range on its first line)
  std::string highlight() const;
};

}  // namespace ampjit
