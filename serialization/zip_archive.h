// Zip archives: the container of torch.save and torch.jit.save files, read and written with
// libzip.
//
// Note [Zip archives]
// torch's archives are zip files whose records all sit under one top folder (`archive/` or the
// file's stem): `data.pkl`, `data/<key>` (a storage's raw bytes), `version`, and for TorchScript
// `constants.pkl` and `code/`. ZipReader opens one from a file or from bytes and reads records by
// their name below that folder. Every read is bounded, so a hostile archive costs at most what it
// declares and can back with data:
//  - a record's bytes are read in chunks, never allocated from its declared size alone;
//  - a compressed record may expand at most kMaxExpansion times its compressed size (a zip bomb
//    stops with an error when it passes that), and at most the caller's limit;
//  - the record count is capped (kMaxRecords), names must be relative, without `..`, unique, and
//    share one top folder.
// Errors name the archive and the record. ZipWriter writes records uncompressed (as torch does),
// under the top folder it is given.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ampjit::serialization {

inline constexpr uint64_t kMaxRecords = 1u << 20;
inline constexpr uint64_t kMaxExpansion = 1024;

class ZipReader {
 public:
  // `what` names the archive in errors (a path, or "<bytes>").
  static ZipReader open_file(const std::string& path);
  static ZipReader from_bytes(std::string bytes, std::string what = "<bytes>");
  // Over bytes the caller owns: `keep` holds them alive as long as the reader (no copy).
  static ZipReader from_view(std::string_view bytes, std::shared_ptr<const void> keep,
                             std::string what = "<bytes>");
  ZipReader(ZipReader&&) noexcept;
  ZipReader& operator=(ZipReader&&) noexcept;
  ~ZipReader();

  // The top folder, with its slash ("archive/").
  const std::string& prefix() const;
  // Record names below the top folder ("data.pkl", "data/0"), in archive order.
  const std::vector<std::string>& records() const;
  bool has(std::string_view record) const;
  // The record's declared (uncompressed) size; throws when there is no such record.
  uint64_t size(std::string_view record) const;
  // The record's bytes; throws when it is missing, corrupt, or larger than `max_bytes`.
  std::string read(std::string_view record, uint64_t max_bytes = UINT64_MAX) const;
  // The record's bytes into `dst`, which holds exactly `nbytes`: the record must be that size
  // (a storage read straight into its tensor, without a staging copy).
  void read_into(std::string_view record, void* dst, uint64_t nbytes) const;

 private:
  struct Impl;
  explicit ZipReader(std::unique_ptr<Impl> impl);
  uint64_t checked_size(uint64_t entry, std::string_view record, uint64_t max_bytes) const;
  std::unique_ptr<Impl> impl_;
};

class ZipWriter {
 public:
  // Records go under `top` + "/".
  explicit ZipWriter(std::string top);
  void add(std::string_view record, std::string bytes);
  // A record over bytes the caller keeps alive until finish() returns (a tensor's storage,
  // written without a copy).
  void add_view(std::string_view record, const void* data, size_t nbytes);
  // The archive's bytes.
  std::string finish() const;
  // The archive written to `path`.
  void finish_to_file(const std::string& path) const;

 private:
  struct Record {
    std::string name;
    std::string owned;
    const void* data = nullptr;
    size_t nbytes = 0;
  };
  // Adds every record to the open archive `za`; throws (after discarding it) on failure.
  void add_records(void* za) const;
  std::string top_;
  std::vector<Record> records_;
};

}  // namespace ampjit::serialization
