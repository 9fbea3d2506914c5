// Zip archives (Note [Zip archives] in serialization/zip_archive.h): what ZipWriter writes,
// ZipReader reads back under its top folder, from bytes and from a file; missing records, bounds,
// truncated and foreign bytes and bad names are errors that name the archive and the record.
#include <gmock/gmock.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "runtime/error.h"
#include "serialization/archive.h"
#include "serialization/load.h"
#include "serialization/unpickler.h"
#include "serialization/zip_archive.h"

namespace ampjit::serialization {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string sample() {
  ZipWriter w("model");
  w.add("data.pkl", std::string("\x80\x02N.", 4));
  w.add("data/0", std::string(1000, '\x7f'));
  w.add("code/__torch__/m.py", "def forward(self, x):\n    return x\n");
  w.add("empty", "");
  return w.finish();
}

TEST(ZipArchive, WhatTheWriterWritesTheReaderReads) {
  const ZipReader z = ZipReader::from_bytes(sample());
  EXPECT_EQ(z.prefix(), "model/");
  EXPECT_THAT(z.records(), ElementsAre("data.pkl", "data/0", "code/__torch__/m.py", "empty"));
  EXPECT_TRUE(z.has("data/0"));
  EXPECT_FALSE(z.has("data/1"));
  EXPECT_EQ(z.size("data/0"), 1000u);
  EXPECT_EQ(z.read("data/0"), std::string(1000, '\x7f'));
  EXPECT_EQ(z.read("empty"), "");
  EXPECT_EQ(z.read("code/__torch__/m.py"), "def forward(self, x):\n    return x\n");
}

TEST(ZipArchive, FromAFile) {
  const std::string path = ::testing::TempDir() + "ampjit_zip_test.pt";
  {
    std::ofstream out(path, std::ios::binary);
    const std::string bytes = sample();
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const ZipReader z = ZipReader::open_file(path);
  EXPECT_EQ(z.read("data.pkl"), std::string("\x80\x02N.", 4));
  std::remove(path.c_str());
  EXPECT_THAT(error_of([] { ZipReader::open_file("/nonexistent/ampjit.pt"); }),
              HasSubstr("/nonexistent/ampjit.pt: cannot open as a zip archive"));
}

TEST(ZipArchive, ReadsAreBoundedAndRecordsMustExist) {
  const ZipReader z = ZipReader::from_bytes(sample(), "sample.pt");
  EXPECT_THAT(error_of([&] { z.read("data/0", 999); }),
              HasSubstr("sample.pt: record 'data/0' holds 1000 bytes, more than the 999 expected"));
  EXPECT_THAT(error_of([&] { z.read("data/9"); }),
              HasSubstr("sample.pt: the archive has no record 'model/data/9'"));
  EXPECT_THAT(error_of([&] { z.size("nope"); }), HasSubstr("no record 'model/nope'"));
}

TEST(ZipArchive, TruncatedAndForeignBytesAreErrors) {
  const std::string bytes = sample();
  EXPECT_THAT(error_of([] { ZipReader::from_bytes("", "empty.pt"); }),
              HasSubstr("empty.pt: the zip archive is empty"));
  for (size_t cut : {size_t{10}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_THAT(error_of([&] { ZipReader::from_bytes(bytes.substr(0, cut), "cut.pt"); }),
                HasSubstr("cut.pt: cannot open as a zip archive"))
        << cut;
  EXPECT_THAT(error_of([] { ZipReader::from_bytes("\x80\x02}q\x00.", "legacy.pt"); }),
              HasSubstr("legacy.pt: cannot open as a zip archive"));
  // A corrupted byte inside a stored record's data: the CRC check reports it on read.
  std::string bad = bytes;
  const size_t at = bad.find(std::string(1000, '\x7f'));
  ASSERT_NE(at, std::string::npos);
  bad[at + 500] = 'x';
  const ZipReader z = ZipReader::from_bytes(bad, "crc.pt");
  EXPECT_THAT(error_of([&] { z.read("data/0"); }), HasSubstr("crc.pt: record 'data/0' is corrupt"));
}

TEST(ZipArchive, TheWriterRefusesNamesOutsideItsFolder) {
  EXPECT_THAT(error_of([] { ZipWriter("a/b"); }), HasSubstr("not a valid top folder name"));
  ZipWriter w("archive");
  for (const char* name : {"../x", "/abs", "a/../../x", ""})
    EXPECT_THAT(error_of([&] { w.add(name, "x"); }), HasSubstr("is not a valid record name"))
        << name;
}

// torch.save's pickle of torch.arange(6.).view(2, 3)[1] (storage '0' of 6 floats, offset 3, size
// [3], stride [1]). Literals are split after each hex escape that a hex digit follows.
constexpr char kTensorPickleRaw[] =
    "\x80\x02"
    "ctorch._utils\n_rebuild_tensor_v2\n"
    "q\x00"
    "(("
    "X\x07\x00\x00\x00"
    "storage"
    "ctorch\nFloatStorage\n"
    "q\x01"
    "X\x01\x00\x00\x00"
    "0"
    "X\x03\x00\x00\x00"
    "cpu"
    "K\x06"
    "tQ"
    "K\x03"
    "K\x03"
    "\x85"
    "K\x01"
    "\x85"
    "\x89"
    "ccollections\nOrderedDict\n"
    ")RtR.";
const std::string kTensorPickle(kTensorPickleRaw, sizeof(kTensorPickleRaw) - 1);

TEST(Unpickler, RebuildsTensorsOverTheArchivesStorages) {
  ZipWriter w("archive");
  std::string floats(24, '\0');
  for (int i = 0; i < 6; ++i) {
    const float f = static_cast<float>(i);
    std::memcpy(floats.data() + 4 * i, &f, 4);
  }
  w.add("data/0", floats);
  const ZipReader z = ZipReader::from_bytes(w.finish());
  UnpickleHooks hooks;
  hooks.storage = archive_storages(z);
  ASSERT_EQ(kTensorPickle.size(), 130u);
  const Tensor t = unpickle(kTensorPickle, hooks, "t.pkl").to_tensor();
  EXPECT_EQ(t.shape_str(), "[3]");
  EXPECT_EQ(t.storage_offset(), 3);
  EXPECT_EQ(t.data<float>()[0], 3.0f);
  EXPECT_EQ(t.data<float>()[2], 5.0f);
  // Without a storage hook the reference is an error, as is a missing record.
  EXPECT_THAT(error_of([&] { unpickle(kTensorPickle, {}, "t.pkl"); }),
              HasSubstr("t.pkl: the pickle references a storage, and none is given"));
}

TEST(Load, ATorchSaveArchiveFromItsBytes) {
  ZipWriter w("state");
  constexpr char kDict[] = "\x80\x02}X\x01\x00\x00\x00wK\x07s.";  // {'w': 7}
  w.add("data.pkl", std::string(kDict, sizeof(kDict) - 1));
  w.add("version", "3\n");
  const IValue v = load_bytes(w.finish(), "state.pt");
  ASSERT_TRUE(v.is_dict());
  EXPECT_EQ(v.dict_obj()->find(IValue("w"))->to_int(), 7);
  ZipWriter ts("model");
  ts.add("data.pkl", "\x80\x02N.");
  ts.add("constants.pkl", "\x80\x02).");
  EXPECT_THAT(error_of([&] { load_bytes(ts.finish(), "model.pt"); }),
              HasSubstr("model.pt is a TorchScript archive (torch.jit.save); load it with "
                        "torch.jit.load"));
  EXPECT_THAT(error_of([] { load("/nonexistent/state.pt"); }),
              HasSubstr("/nonexistent/state.pt: cannot open as a zip archive"));
}

TEST(Unpickler, RefusesUnknownGlobalsAndBoundsNesting) {
  constexpr char kSystem[] =
      "\x80\x02"
      "cposix\nsystem\n"
      "X\x02\x00\x00\x00"
      "ls"
      "\x85R.";
  EXPECT_THAT(
      error_of([&] { unpickle(std::string_view(kSystem, sizeof(kSystem) - 1), {}, "evil"); }),
      HasSubstr("evil: the pickle names the global 'posix.system', which ampjit does not load"));
  const std::string deep =
      "\x80\x02" + std::string(kMaxNesting + 1, ']') + std::string(kMaxNesting, 'a') + ".";
  EXPECT_THAT(error_of([&] { unpickle(deep, {}, "deep"); }), HasSubstr("nest more than 1000 deep"));
  const std::string ok =
      "\x80\x02" + std::string(kMaxNesting - 1, ']') + std::string(kMaxNesting - 2, 'a') + ".";
  EXPECT_TRUE(unpickle(ok, {}, "ok").is_list());
  constexpr char kMisc[] =
      "\x80\x02"
      "(ctorch\ndevice\n"
      "X\x03\x00\x00\x00"
      "cpu"
      "\x85R"
      "ctorch\nbfloat16\nt.";
  const IValue v = unpickle(std::string_view(kMisc, sizeof(kMisc) - 1), {}, "misc");
  ASSERT_TRUE(v.is_tuple());
  EXPECT_TRUE(v.tuple_elems()[0].is_device());
  EXPECT_EQ(v.tuple_elems()[1].to_scalar_type(), ScalarType::BFloat16);
}

}  // namespace
}  // namespace ampjit::serialization
