// `hark download`: an official whisper.cpp model into the models folder, resumable and verified.
//
//   hark download NAME [--dir DIR] [--base-url URL] [--force] [--sha1 HEX] [--stall-timeout S]
//   hark download --list [--dir DIR]
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <string>

struct DownloadCommandOptions {
  std::string name;
  std::string dir;
  std::string base_url;
  std::string sha1;
  bool list = false;
  bool force = false;
  bool quiet = false;
  bool print_progress = false;  // -pp: percentage lines even when stderr is not a terminal
  long stall_timeout_s = 60;
  long connect_timeout_s = 30;
};

CLI::App* add_download_command(CLI::App& app, DownloadCommandOptions& o);
// After parsing: a name or --list, a known name, a well-formed --sha1. Throws CLI::ValidationError.
void check_download_options(const DownloadCommandOptions& o);
// Exit code; throws hark::Error when the download fails. `interrupted` stops it (the .part is kept).
int run_download(const DownloadCommandOptions& o, const std::atomic<bool>& interrupted);
