// The web page `hark serve` answers at / (server/ui/: HTML, CSS, JS), built into the binary by
// cmake/embed_files.cmake, so the page always matches the server that serves it and a copied or
// installed `hark` needs no files beside it. Looked up by URL path; the headers every page answer
// carries (a strict Content-Security-Policy: scripts and styles from this server only).
#pragma once
#include <string_view>
#include <utility>
#include <vector>

namespace hark::server {

struct EmbeddedFile {
  std::string_view path;  // relative to server/ui/: "index.html", "app.js", ...
  std::string_view bytes;
};
const std::vector<EmbeddedFile>& embedded_files();  // generated

struct UiAsset {
  std::string_view content_type;
  std::string_view bytes;
};
// "/" is the page; "/ui/NAME" its other files. nullptr for anything else.
const UiAsset* find_ui_asset(std::string_view url_path);

// Headers for every answer of the page's files.
const std::vector<std::pair<std::string_view, std::string_view>>& ui_headers();

}  // namespace hark::server
