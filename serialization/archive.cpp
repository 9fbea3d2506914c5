// Reading the storages of a torch archive (see archive.h).
#include "serialization/archive.h"

#include <memory>
#include <unordered_map>

#include "runtime/error.h"

namespace ampjit::serialization {

std::function<Tensor(ScalarType, const std::string&, const std::string&, int64_t)> archive_storages(
    const ZipReader& archive, std::string folder) {
  auto loaded = std::make_shared<std::unordered_map<std::string, Tensor>>();
  return [&archive, loaded, folder = std::move(folder)](ScalarType dtype, const std::string& key,
                                                        const std::string&,
                                                        int64_t numel) -> Tensor {
    if (auto it = loaded->find(key); it != loaded->end()) {
      const Tensor& t = it->second;
      AMPJIT_CHECK(t.dtype() == dtype && t.numel() == numel,
                   "{}: storage '{}/{}' is referenced as {} elements of {} and as {} of {}",
                   archive.prefix(), folder, key, t.numel(), dtype_name(t.dtype()), numel,
                   dtype_name(dtype));
      return t;
    }
    const std::string record = folder + "/" + key;
    AMPJIT_CHECK(archive.has(record), "the archive refers to the storage '{}', which it lacks",
                 record);
    const uint64_t item = itemsize(dtype);
    AMPJIT_CHECK(numel >= 0 && static_cast<uint64_t>(numel) <= UINT64_MAX / item,
                 "storage '{}' declares {} elements", record, numel);
    const uint64_t nbytes = static_cast<uint64_t>(numel) * item;
    const uint64_t have = archive.size(record);
    AMPJIT_CHECK(have == nbytes,
                 "storage '{}' declares {} elements of {} ({} bytes) but its record holds {} bytes",
                 record, numel, dtype_name(dtype), nbytes, have);
    Tensor t = Tensor::empty({&numel, 1}, dtype);
    archive.read_into(record, t.raw_data(), nbytes);  // straight into the tensor
    loaded->emplace(key, t);
    return t;
  };
}

}  // namespace ampjit::serialization
