// The C API: official models by name, the models folder, downloads (hark/hark_models.h).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {

constexpr size_t kModelEntryV1 = offsetof(hark_model_entry, sha1) + sizeof(const char*);
constexpr size_t kDownloadParamsV1 = offsetof(hark_download_params, abort_user_data) + sizeof(void*);
static_assert(sizeof(hark_download_params) == kDownloadParamsV1, "must end on a pointer-sized field");
constexpr size_t kDownloadResultV1 = offsetof(hark_download_result, bytes_resumed) + sizeof(uint64_t);

thread_local std::string t_model_path;  // hark_models_dir, hark_find_model, hark_download_model

hark_download_params download_defaults() {
  hark_download_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  const hark::DownloadOptions d;
  p.connect_timeout_s = d.connect_timeout_s;
  p.low_speed_time_s = d.low_speed_time_s;
  p.low_speed_bytes = d.low_speed_bytes;
  return p;
}

std::string str_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

extern "C" {

int hark_model_count(void) { return static_cast<int>(hark::model_registry().size()); }

hark_status hark_model_at(int i, hark_model_entry* out, size_t out_size) {
  return guarded("hark_model_at", HARK_ERR_FAILED, [&] {
    const auto& reg = hark::model_registry();
    require(i >= 0 && static_cast<size_t>(i) < reg.size(),
            "i " + std::to_string(i) + " is out of range (0.." + std::to_string(reg.size() - 1) + ")");
    const hark::ModelEntry& e = reg[static_cast<size_t>(i)];  // the registry lives as long as the process
    hark_model_entry v;
    v.name = e.name.c_str();
    v.file_name = e.file_name.c_str();
    v.url = e.url.c_str();
    v.size = e.size;
    v.disk = e.disk.c_str();
    v.sha1 = e.sha1.c_str();
    v.vad = e.vad;
    write_out(out, out_size, kModelEntryV1, v);
  });
}

const char* hark_models_dir(void) {
  const char* r = nullptr;
  guarded("hark_models_dir", HARK_ERR_FAILED, [&] {
    t_model_path = hark::models_dir();
    r = t_model_path.c_str();
  });
  return r;
}

hark_status hark_find_model(const char* name_or_path, const char* dir, const char** out_path) {
  return guarded("hark_find_model", HARK_ERR_IO, [&] {
    require(out_path != nullptr, "out_path is NULL");
    *out_path = nullptr;
    require(name_or_path != nullptr, "name_or_path is NULL");
    t_model_path = hark::find_model(name_or_path, str_or_empty(dir));
    *out_path = t_model_path.c_str();
  });
}

hark_status hark_download_params_init(hark_download_params* params, size_t params_size) {
  return guarded("hark_download_params_init", HARK_ERR_FAILED, [&] {
    init_params(params, params_size, kDownloadParamsV1, download_defaults(), "hark_download_params");
  });
}

hark_status hark_download_model(const char* name, const hark_download_params* params, const char** out_path,
                                hark_download_result* out, size_t out_size) {
  return guarded("hark_download_model", HARK_ERR_FAILED, [&] {
    if (out_path) *out_path = nullptr;
    require(name != nullptr, "name is NULL");
    require(hark::find_model_entry(name) != nullptr,
            std::string("unknown model '") + name + "' (hark_model_at lists the official ones)");
    if (out)
      require(out_size >= kDownloadResultV1,
              "out_size " + std::to_string(out_size) + " is smaller than the struct; pass sizeof *out");
    const hark_download_params p =
        read_params(params, kDownloadParamsV1, download_defaults(), "hark_download_default_params");
    require(p.connect_timeout_s > 0,
            "params->connect_timeout_s must be > 0, got " + std::to_string(p.connect_timeout_s));
    require(p.low_speed_time_s >= 0,
            "params->low_speed_time_s must be >= 0, got " + std::to_string(p.low_speed_time_s));
    require(p.low_speed_bytes >= 1, "params->low_speed_bytes must be >= 1, got " + std::to_string(p.low_speed_bytes));
    const std::string sha1 = str_or_empty(p.expected_sha1);
    require(sha1.empty() || (sha1.size() == 40 && sha1.find_first_not_of("0123456789abcdef") == std::string::npos),
            "params->expected_sha1 must be 40 lower-case hex digits, got '" + sha1 + "'");
    hark::DownloadOptions d;
    d.dir = str_or_empty(p.dir);
    d.base_url = str_or_empty(p.base_url);
    d.expected_sha1 = sha1;
    d.expected_size = p.expected_size;
    d.force = p.force;
    d.connect_timeout_s = p.connect_timeout_s;
    d.low_speed_time_s = p.low_speed_time_s;
    d.low_speed_bytes = p.low_speed_bytes;
    if (p.progress_callback)
      d.on_progress = [&p](const hark::DownloadProgress& g) {
        if (g.waiting) return;  // no byte moved yet: another download of the file runs
        p.progress_callback(g.bytes_done, g.bytes_total, g.bytes_per_second, g.seconds_left, g.verifying,
                            p.progress_user_data);
      };
    if (p.abort_callback) d.should_abort = [&p] { return p.abort_callback(p.abort_user_data); };
    const hark::DownloadResult r = hark::download_model(name, d);
    t_model_path = r.path;
    if (out_path) *out_path = t_model_path.c_str();
    if (out) {
      hark_download_result v;
      std::memset(static_cast<void*>(&v), 0, sizeof v);
      v.downloaded = r.downloaded;
      v.verified = r.verified;
      v.bytes = r.bytes;
      v.bytes_resumed = r.bytes_resumed;
      v.verified_by_server = r.verified_with == "server's SHA-256";
      write_out(out, out_size, kDownloadResultV1, v);
    }
  });
}

}  // extern "C"
