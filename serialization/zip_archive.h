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

 private:
  struct Impl;
  explicit ZipReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ZipWriter {
 public:
  // Records go under `top` + "/".
  explicit ZipWriter(std::string top);
  void add(std::string_view record, std::string bytes);
  // The archive's bytes.
  std::string finish() const;

 private:
  std::string top_;
  std::vector<std::pair<std::string, std::string>> records_;
};

}  // namespace ampjit::serialization
