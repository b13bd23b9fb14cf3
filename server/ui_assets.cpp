#include "ui_assets.h"

#include <map>
#include <string>

namespace hark::server {
namespace {

std::string_view content_type_of(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

const std::map<std::string, UiAsset, std::less<>>& by_url() {
  static const auto table = [] {
    std::map<std::string, UiAsset, std::less<>> t;
    for (const EmbeddedFile& f : embedded_files()) {
      const UiAsset a{content_type_of(f.path), f.bytes};
      t["/ui/" + std::string(f.path)] = a;
      if (f.path == "index.html") t["/"] = a;
    }
    return t;
  }();
  return table;
}

}  // namespace

const UiAsset* find_ui_asset(std::string_view url_path) {
  const auto& t = by_url();
  auto it = t.find(url_path);
  return it == t.end() ? nullptr : &it->second;
}

const std::vector<std::pair<std::string_view, std::string_view>>& ui_headers() {
  // Scripts, styles and workers (the AudioWorklet) from this origin only, no inline script;
  // connections (fetch, the realtime WebSocket) to this origin; media from blob: URLs (the
  // dropped file and the recording played back); the page may not be framed by another site.
  static const std::vector<std::pair<std::string_view, std::string_view>> h = {
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; media-src 'self' blob:; worker-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-cache"},
  };
  return h;
}

}  // namespace hark::server
