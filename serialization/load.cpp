// torch.load for C++ (see load.h).
#include "serialization/load.h"

#include "runtime/error.h"
#include "serialization/archive.h"
#include "serialization/unpickler.h"
#include "serialization/zip_archive.h"

namespace ampjit {

namespace {

IValue load_archive(const serialization::ZipReader& z, const std::string& what) {
  AMPJIT_CHECK(!z.has("constants.pkl"),
               "{} is a TorchScript archive (torch.jit.save); load it with torch.jit.load", what);
  AMPJIT_CHECK(z.has("data.pkl"), "{} has no data.pkl record: it is not a torch.save archive",
               what);
  serialization::UnpickleHooks hooks;
  hooks.storage = serialization::archive_storages(z);
  return serialization::unpickle(z.read("data.pkl"), hooks, what + ": data.pkl");
}

}  // namespace

IValue load(const std::string& path) {
  return load_archive(serialization::ZipReader::open_file(path), path);
}

IValue load_bytes(std::string bytes, const std::string& what) {
  return load_archive(serialization::ZipReader::from_bytes(std::move(bytes), what), what);
}

}  // namespace ampjit
