// Reading the storages of a torch archive (Note [Zip archives], Note [Restricted unpickler]).
#pragma once
#include <functional>
#include <string>

#include "runtime/tensor.h"
#include "serialization/zip_archive.h"

namespace ampjit::serialization {

// The unpickler's storage hook over `archive`: reference (dtype, key, location, numel) reads
// record <folder>/<key> once (`data`; a TorchScript archive's constants.pkl uses `constants`)
// (later references share the tensor, so views saved together share their storage again), after
// checking that the record holds exactly numel elements. The location is not consulted: storages
// load on the CPU. The archive must outlive the hook.
std::function<Tensor(ScalarType, const std::string&, const std::string&, int64_t)> archive_storages(
    const ZipReader& archive, std::string folder = "data");

}  // namespace ampjit::serialization
