// The official whisper.cpp model files: names as whisper.cpp's download script lists them,
// published sizes and SHA-1 digests from its models/README.md, exact byte sizes as Hugging Face
// lists the files (a download of another length is refused). The README gives no size for the
// q5_1 / q8_0 files, the medium q5_0 ones and the Silero files: their sizes here are Hugging Face's
// bytes in MiB. No digest is published for those either: their downloads are checked against the
// SHA-256 that Hugging Face announces for the file (download.cpp). The tinydiarize file's exact
// length is not published: its download is checked by its SHA-1 alone.
#include <string>
#include <vector>

#include "hark/models.hpp"

namespace hark {

namespace {

constexpr const char* kBaseUrl = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";
// whisper.cpp's script fetches the tinydiarize model from its author's repository.
constexpr const char* kTdrzUrl = "https://huggingface.co/akashmjn/tinydiarize-whisper.cpp/resolve/main";
// whisper.cpp's download-vad-model script fetches the Silero files from here.
constexpr const char* kVadUrl = "https://huggingface.co/ggml-org/whisper-vad/resolve/main";

struct Row {
  const char* name;
  uint64_t size;
  const char* disk;
  const char* sha1;
};

// clang-format off
constexpr Row kRows[] = {
    {"tiny",                  77691713, "75 MiB",  "bd577a113a864445d4c299885e0cb97d4ba92b5f"},
    {"tiny.en",               77704715, "75 MiB",  "c78c86eb1a8faa21b369bcd33207cc90d64ae9df"},
    {"tiny-q5_1",             32152673, "31 MiB",  ""},
    {"tiny.en-q5_1",          32166155, "31 MiB",  ""},
    {"tiny-q8_0",             43537433, "42 MiB",  ""},
    {"base",                 147951465, "142 MiB", "465707469ff3a37a2b9b8d8f89f2f99de7299dac"},
    {"base.en",              147964211, "142 MiB", "137c40403d78fd54d454da0f9bd998f78703390c"},
    {"base-q5_1",             59707625, "57 MiB",  ""},
    {"base.en-q5_1",          59721011, "57 MiB",  ""},
    {"base-q8_0",             81768585, "78 MiB",  ""},
    {"small",                487601967, "466 MiB", "55356645c2b361a969dfd0ef2c5a50d530afd8d5"},
    {"small.en",             487614201, "466 MiB", "db8a495a91d927739e50b3fc1cc4c6b8f6c2d022"},
    {"small.en-tdrz",                0, "465 MiB", "b6c6e7e89af1a35c08e6de56b66ca6a02a2fdfa1"},
    {"small-q5_1",           190085487, "181 MiB", ""},
    {"small.en-q5_1",        190098681, "181 MiB", ""},
    {"small-q8_0",           264464607, "252 MiB", ""},
    {"medium",              1533763059, "1.5 GiB", "fd9727b6e1217c2f614f9b698455c4ffd82463b4"},
    {"medium.en",           1533774781, "1.5 GiB", "8c30f0e44ce9560643ebd10bbe50cd20eafd3723"},
    {"medium-q5_0",          539212467, "514 MiB", ""},
    {"medium.en-q5_0",       539225533, "514 MiB", ""},
    {"medium-q8_0",          823369779, "785 MiB", ""},
    {"large-v1",            3094623691, "2.9 GiB", "b1caaf735c4cc1429223d5a74f0f4d0b9b59a299"},
    {"large-v2",            3094623691, "2.9 GiB", "0f4c8e34f21cf1a914c59d8b3ce882345ad349d6"},
    {"large-v2-q5_0",       1080732091, "1.1 GiB", "00e39f2196344e901b3a2bd5814807a769bd1630"},
    {"large-v2-q8_0",       1656129691, "1.5 GiB", ""},
    {"large-v3",            3095033483, "2.9 GiB", "ad82bf6a9043ceed055076d0fd39f5f186ff8062"},
    {"large-v3-q5_0",       1081140203, "1.1 GiB", "e6e2ed78495d403bef4b7cff42ef4aaadcfea8de"},
    {"large-v3-turbo",      1624555275, "1.5 GiB", "4af2b29d7ec73d781377bfd1758ca957a807e941"},
    {"large-v3-turbo-q5_0",  574041195, "547 MiB", "e050f7970618a659205450ad97eb95a18d69c9ee"},
    {"large-v3-turbo-q8_0",  874188075, "834 MiB", ""},
    // The Silero VAD models in whisper.cpp's format (--vad-model), from ggml-org's repository.
    {"silero-v6.2.0",           885098, "864 KiB", ""},
    {"silero-v5.1.2",           885098, "864 KiB", ""},
};
// clang-format on

std::vector<ModelEntry> make_registry() {
  std::vector<ModelEntry> r;
  for (const Row& row : kRows) {
    ModelEntry e;
    e.name = row.name;
    e.file_name = "ggml-" + e.name + ".bin";
    e.vad = e.name.rfind("silero", 0) == 0;
    const bool tdrz = e.name.find("tdrz") != std::string::npos;
    e.url = std::string(e.vad ? kVadUrl : tdrz ? kTdrzUrl : kBaseUrl) + "/" + e.file_name;
    e.size = row.size;
    e.disk = row.disk;
    e.sha1 = row.sha1;
    r.push_back(std::move(e));
  }
  return r;
}

}  // namespace

const std::vector<ModelEntry>& model_registry() {
  static const std::vector<ModelEntry> registry = make_registry();
  return registry;
}

const ModelEntry* find_model_entry(std::string_view name) {
  for (const ModelEntry& e : model_registry())
    if (name == e.name || name == e.file_name) return &e;
  return nullptr;
}

}  // namespace hark
