// libFuzzer harness: arbitrary bytes as a zip archive (serialization::ZipReader, Note [Zip
// archives]). Bytes the reader rejects must be an Error; an archive it opens has every record
// read with a bound, and a record it reads holds exactly the size it declares. Any other
// exception, a mismatch, a crash, a sanitizer report or an allocation past libFuzzer's limit is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/error.h"
#include "serialization/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  try {
    serialization::ZipReader z = serialization::ZipReader::from_bytes(
        std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
    for (const std::string& r : z.records()) {
      try {
        const uint64_t declared = z.size(r);
        const std::string bytes = z.read(r, uint64_t{1} << 24);
        if (bytes.size() != declared) {
          std::fprintf(stderr, "fuzz_zip_archive: record %s read %zu of %llu bytes\n", r.c_str(),
                       bytes.size(), static_cast<unsigned long long>(declared));
          std::abort();
        }
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
