// The C API: the library and the machine (version, system info, languages, log, devices).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

extern "C" {

const char* hark_version(void) { return hark::version(); }

const char* hark_system_info(void) {
  const char* s = "";
  guarded("hark_system_info", HARK_ERR_INTERNAL, [&] {
    static const std::string info = hark::system_info();  // fixed for the process
    s = info.c_str();
  });
  return s;
}

int hark_language_count(void) { return hark::language_count(); }

int hark_language_id(const char* code) {
  int id = -1;
  guarded("hark_language_id", HARK_ERR_INVALID_ARGUMENT, [&] {
    require(code != nullptr, "code is NULL");
    id = hark::language_id(code);
    require(id >= 0, std::string("unknown language '") + code + "'");
  });
  return id;
}

const char* hark_language_code(int id) {
  const char* code = nullptr;
  guarded("hark_language_code", HARK_ERR_INVALID_ARGUMENT, [&] {
    code = hark::language_code_at(id);
    require(code != nullptr,
            "id " + std::to_string(id) + " is out of range [0, " + std::to_string(hark::language_count()) + ")");
  });
  return code;
}

const char* hark_language_name(int id) {
  const char* name = nullptr;
  guarded("hark_language_name", HARK_ERR_INVALID_ARGUMENT, [&] {
    name = hark::language_name_at(id);
    require(name != nullptr,
            "id " + std::to_string(id) + " is out of range [0, " + std::to_string(hark::language_count()) + ")");
  });
  return name;
}

// ---- logging ----

hark_status hark_set_log_callback(hark_log_callback callback, void* user_data) {
  return guarded("hark_set_log_callback", HARK_ERR_INTERNAL, [&] {
    if (!callback) {
      hark::set_log_callback(nullptr);
      return;
    }
    hark::set_log_callback([callback, user_data](hark::LogLevel level, const std::string& message) {
      callback(static_cast<hark_log_level>(level), message.c_str(), user_data);
    });
  });
}

hark_status hark_set_log_level(hark_log_level min_level) {
  return guarded("hark_set_log_level", HARK_ERR_INTERNAL, [&] {
    const int l = enum_value(min_level);
    require(l >= HARK_LOG_DEBUG && l <= HARK_LOG_ERROR,
            "min_level " + std::to_string(l) + " is not a hark_log_level (0..3)");
    hark::set_log_level(static_cast<hark::LogLevel>(l));
  });
}

// ---- devices ----

int hark_device_count(void) {
  int n = -1;
  guarded("hark_device_count", HARK_ERR_INTERNAL, [&] { n = static_cast<int>(all_devices().size()); });
  return n;
}

hark_status hark_device_get(int index, hark_device_info* out, size_t out_size) {
  return guarded("hark_device_get", HARK_ERR_INTERNAL, [&] {
    const auto& d = all_devices();
    require(index >= 0 && static_cast<size_t>(index) < d.size(), "index " + std::to_string(index) +
                                                                     " is out of range (hark_device_count() is " +
                                                                     std::to_string(d.size()) + ")");
    write_out(out, out_size, kDeviceInfoV1, device_info(d[static_cast<size_t>(index)]));
  });
}

}  // extern "C"
