// Zip archives through libzip (Note [Zip archives] in zip_archive.h).
#include "serialization/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "runtime/error.h"

namespace ampjit::serialization {

namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

// A record name that stays inside the archive's top folder.
bool safe_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos)
    return false;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

struct ZipReader::Impl {
  std::string what;
  std::shared_ptr<const void> keep;  // the bytes an archive opened from memory reads in place
  zip_t* archive = nullptr;
  std::string prefix;
  std::vector<std::string> records;
  std::vector<zip_uint64_t> index;  // the zip entry of each record
  mutable std::mutex mu;            // a libzip archive is not safe for concurrent reads

  ~Impl() {
    if (archive) zip_discard(archive);
  }

  void scan() {
    const zip_int64_t n = zip_get_num_entries(archive, 0);
    AMPJIT_CHECK(n >= 0, "{}: not a readable zip archive", what);
    AMPJIT_CHECK(static_cast<uint64_t>(n) <= kMaxRecords,
                 "{}: the archive holds {} records, more than ampjit reads ({})", what, n,
                 kMaxRecords);
    AMPJIT_CHECK(n > 0, "{}: the zip archive is empty (torch's archives hold data.pkl)", what);
    std::set<std::string, std::less<>> seen;
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* raw = zip_get_name(archive, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
      AMPJIT_CHECK(raw, "{}: record {} has no readable name", what, i);
      const std::string name = raw;
      AMPJIT_CHECK(safe_name(name), "{}: the record name '{}' leaves the archive", what, name);
      const size_t slash = name.find('/');
      AMPJIT_CHECK(slash != std::string::npos && slash > 0,
                   "{}: the record '{}' is not under a top folder (torch's archives keep every "
                   "record under one)",
                   what, name);
      const std::string top = name.substr(0, slash + 1);
      if (i == 0) prefix = top;
      AMPJIT_CHECK(top == prefix, "{}: the records '{}' and '{}' are under different top folders",
                   what, prefix, name);
      if (name.size() == top.size() || name.back() == '/') continue;  // a folder entry
      std::string rec = name.substr(top.size());
      AMPJIT_CHECK(seen.insert(rec).second, "{}: the record '{}' appears twice", what, name);
      records.push_back(std::move(rec));
      index.push_back(static_cast<zip_uint64_t>(i));
    }
  }

  zip_uint64_t entry(std::string_view record) const {
    for (size_t i = 0; i < records.size(); ++i)
      if (records[i] == record) return index[i];
    throw Error(fmt::format("{}: the archive has no record '{}{}'", what, prefix, record));
  }
};

ZipReader::ZipReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ZipReader::ZipReader(ZipReader&&) noexcept = default;
ZipReader& ZipReader::operator=(ZipReader&&) noexcept = default;
ZipReader::~ZipReader() = default;

ZipReader ZipReader::open_file(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->what = path;
  int err = 0;
  impl->archive = zip_open(path.c_str(), ZIP_RDONLY, &err);
  AMPJIT_CHECK(impl->archive, "{}: cannot open as a zip archive ({})", path, zip_error_text(err));
  impl->scan();
  return ZipReader(std::move(impl));
}

ZipReader ZipReader::from_bytes(std::string bytes, std::string what) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  const std::string_view view(*owned);
  return from_view(view, std::move(owned), std::move(what));
}

ZipReader ZipReader::from_view(std::string_view bytes, std::shared_ptr<const void> keep,
                               std::string what) {
  auto impl = std::make_unique<Impl>();
  impl->what = std::move(what);
  impl->keep = std::move(keep);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  AMPJIT_CHECK(src, "{}: {}", impl->what, zip_error_strerror(&error));
  impl->archive = zip_open_from_source(src, ZIP_RDONLY, &error);
  if (!impl->archive) {
    const std::string text = zip_error_strerror(&error);
    zip_source_free(src);
    zip_error_fini(&error);
    throw Error(fmt::format("{}: cannot open as a zip archive ({})", impl->what, text));
  }
  zip_error_fini(&error);
  impl->scan();
  return ZipReader(std::move(impl));
}

const std::string& ZipReader::prefix() const {
  return impl_->prefix;
}
const std::vector<std::string>& ZipReader::records() const {
  return impl_->records;
}
bool ZipReader::has(std::string_view record) const {
  return std::find(impl_->records.begin(), impl_->records.end(), record) != impl_->records.end();
}

uint64_t ZipReader::size(std::string_view record) const {
  const zip_uint64_t i = impl_->entry(record);
  std::lock_guard<std::mutex> lock(impl_->mu);
  zip_stat_t st;
  AMPJIT_CHECK(zip_stat_index(impl_->archive, i, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE),
               "{}: cannot read the size of record '{}'", impl_->what, record);
  return st.size;
}

namespace {

// Reads record `i` (declared size `size`) into `dst` through libzip, in chunks, checking that it
// holds exactly `size` bytes.
void read_entry(zip_t* archive, zip_uint64_t i, std::string_view what, std::string_view record,
                char* dst, uint64_t size) {
  zip_file_t* f = zip_fopen_index(archive, i, 0);
  AMPJIT_CHECK(f, "{}: cannot open record '{}' ({})", what, record,
               zip_error_strerror(zip_get_error(archive)));
  uint64_t done = 0;
  char extra = 0;
  for (;;) {
    // Past the declared size, one more byte is asked for: a record that holds it is an error.
    char* at = done < size ? dst + done : &extra;
    const uint64_t want = done < size ? std::min<uint64_t>(size - done, uint64_t{1} << 26) : 1;
    const zip_int64_t got = zip_fread(f, at, want);
    if (got < 0) {
      const std::string text = zip_error_strerror(zip_file_get_error(f));
      zip_fclose(f);
      throw Error(fmt::format("{}: record '{}' is corrupt ({})", what, record, text));
    }
    if (got == 0) break;
    if (done >= size) {
      zip_fclose(f);
      throw Error(fmt::format("{}: record '{}' holds more bytes than the {} it declares", what,
                              record, size));
    }
    done += static_cast<uint64_t>(got);
  }
  zip_fclose(f);
  AMPJIT_CHECK(done == size, "{}: record '{}' is truncated: {} of {} bytes", what, record, done,
               size);
}

}  // namespace

uint64_t ZipReader::checked_size(uint64_t i, std::string_view record, uint64_t max_bytes) const {
  const std::string& what = impl_->what;
  zip_stat_t st;
  AMPJIT_CHECK(zip_stat_index(impl_->archive, i, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE) &&
                   (st.valid & ZIP_STAT_COMP_SIZE),
               "{}: cannot read the size of record '{}'", what, record);
  AMPJIT_CHECK(st.size <= max_bytes, "{}: record '{}' holds {} bytes, more than the {} expected",
               what, record, st.size, max_bytes);
  const uint64_t bound = st.comp_size > (UINT64_MAX - 4096) / kMaxExpansion
                             ? UINT64_MAX
                             : st.comp_size * kMaxExpansion + 4096;
  AMPJIT_CHECK(st.size <= bound,
               "{}: record '{}' declares {} bytes from {} compressed: more than {}x, refused as a "
               "zip bomb",
               what, record, st.size, st.comp_size, kMaxExpansion);
  return st.size;
}

std::string ZipReader::read(std::string_view record, uint64_t max_bytes) const {
  const zip_uint64_t i = impl_->entry(record);
  std::lock_guard<std::mutex> lock(impl_->mu);
  const uint64_t size = checked_size(i, record, max_bytes);
  // The declared size is bounded by the archive (stored) or by the expansion limit (compressed).
  std::string out(static_cast<size_t>(size), '\0');
  read_entry(impl_->archive, i, impl_->what, record, out.data(), size);
  return out;
}

void ZipReader::read_into(std::string_view record, void* dst, uint64_t nbytes) const {
  const zip_uint64_t i = impl_->entry(record);
  std::lock_guard<std::mutex> lock(impl_->mu);
  const uint64_t size = checked_size(i, record, nbytes);
  AMPJIT_CHECK(size == nbytes, "{}: record '{}' holds {} bytes, not the {} expected", impl_->what,
               record, size, nbytes);
  read_entry(impl_->archive, i, impl_->what, record, static_cast<char*>(dst), size);
}

ZipWriter::ZipWriter(std::string top) : top_(std::move(top)) {
  AMPJIT_CHECK(!top_.empty() && safe_name(top_) && top_.find('/') == std::string::npos,
               "zip writer: '{}' is not a valid top folder name", top_);
}

void ZipWriter::add(std::string_view record, std::string bytes) {
  AMPJIT_CHECK(safe_name(record), "zip writer: '{}' is not a valid record name", record);
  records_.push_back(Record{top_ + "/" + std::string(record), std::move(bytes), nullptr, 0});
}

void ZipWriter::add_view(std::string_view record, const void* data, size_t nbytes) {
  AMPJIT_CHECK(safe_name(record), "zip writer: '{}' is not a valid record name", record);
  records_.push_back(Record{top_ + "/" + std::string(record), {}, data, nbytes});
}

void ZipWriter::add_records(void* handle) const {
  auto* za = static_cast<zip_t*>(handle);
  auto fail = [&](const std::string& what) {
    const std::string text = zip_error_strerror(zip_get_error(za));
    zip_discard(za);
    throw Error(fmt::format("zip writer: {}: {}", what, text));
  };
  for (const Record& r : records_) {
    const void* data = r.data ? r.data : r.owned.data();
    const size_t n = r.data ? r.nbytes : r.owned.size();
    zip_source_t* s = zip_source_buffer(za, data, n, 0);
    if (!s) fail("cannot add " + r.name);
    const zip_int64_t idx = zip_file_add(za, r.name.c_str(), s, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(s);
      fail("cannot add " + r.name);
    }
    if (zip_set_file_compression(za, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0) != 0)
      fail("cannot store " + r.name);
  }
}

void ZipWriter::finish_to_file(const std::string& path) const {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  AMPJIT_CHECK(za, "{}: cannot write a zip archive ({})", path, zip_error_text(err));
  add_records(za);
  if (zip_close(za) != 0) {
    const std::string text = zip_error_strerror(zip_get_error(za));
    zip_discard(za);
    throw Error(fmt::format("{}: cannot write the archive ({})", path, text));
  }
}

std::string ZipWriter::finish() const {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* target = zip_source_buffer_create(nullptr, 0, 0, &error);
  AMPJIT_CHECK(target, "zip writer: {}", zip_error_strerror(&error));
  zip_t* za = zip_open_from_source(target, ZIP_TRUNCATE, &error);
  if (!za) {
    zip_source_free(target);
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error("zip writer: " + text);
  }
  zip_error_fini(&error);
  zip_source_keep(target);
  try {
    add_records(za);
  } catch (...) {
    zip_source_free(target);
    throw;
  }
  if (zip_close(za) != 0) {
    const std::string text = zip_error_strerror(zip_get_error(za));
    zip_discard(za);
    zip_source_free(target);
    throw Error("zip writer: cannot finish the archive: " + text);
  }
  std::string out;
  zip_stat_t st;
  if (zip_source_stat(target, &st) != 0 || zip_source_open(target) != 0) {
    zip_source_free(target);
    throw Error("zip writer: cannot read the finished archive");
  }
  out.resize(st.size);
  const zip_int64_t got = zip_source_read(target, out.data(), out.size());
  zip_source_close(target);
  zip_source_free(target);
  AMPJIT_CHECK(got == static_cast<zip_int64_t>(out.size()),
               "zip writer: cannot read the finished archive");
  return out;
}

}  // namespace ampjit::serialization
