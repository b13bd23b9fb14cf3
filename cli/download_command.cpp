#include "download_command.h"

#include <cctype>
#include <cstdio>

#include "hark/models.hpp"
#include "progress.h"

CLI::App* add_download_command(CLI::App& app, DownloadCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("download", "Download an official whisper.cpp model (checked against its SHA-1)");
  cmd->add_option("NAME", o.name, "Model name: tiny, tiny.en, base, ..., large-v3-turbo-q5_0 (--list names them)");
  cmd->add_flag("--list", o.list, "List the official models, their sizes, and which are in the folder");
  cmd->add_option("--dir", o.dir,
                  "Models folder (default: $HARK_MODELS, else $XDG_CACHE_HOME/hark/models or ~/.cache/hark/models)");
  cmd->add_option("--base-url", o.base_url,
                  "Download from here instead (a mirror or a local server): URL/ggml-NAME.bin");
  cmd->add_option("--sha1", o.sha1, "Expected SHA-1 (40 hex digits) instead of the published one");
  cmd->add_flag("--force", o.force, "Download again even when the file is already there");
  cmd->add_option("--stall-timeout", o.stall_timeout_s, "Give up when no data comes for this many seconds (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--connect-timeout", o.connect_timeout_s, "Give up connecting after this many seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "Print only the model's path");
  cmd->add_flag("--print-progress", o.print_progress, "Percentage lines on stderr, also when it is not a terminal");
  return cmd;
}

namespace {

int list_models(const DownloadCommandOptions& o) {
  const std::string dir = o.dir.empty() ? hark::models_dir() : o.dir;
  std::printf("%-22s %9s  %-8s  %s\n", "name", "size", "sha1", ("in " + dir).c_str());
  for (const hark::ModelEntry& e : hark::model_registry()) {
    std::string present;
    try {
      present = hark::find_model(e.name, dir) == dir + "/" + e.file_name ? "yes" : "";
    } catch (const hark::Error&) {
    }
    std::printf("%-22s %9s  %-8s  %s\n", e.name.c_str(), e.disk.empty() ? "?" : e.disk.c_str(),
                e.sha1.empty() ? "none" : "yes", present.c_str());
  }
  return 0;
}

}  // namespace

void check_download_options(const DownloadCommandOptions& o) {
  if (o.list) return;
  if (o.name.empty()) throw CLI::ValidationError("NAME", "give a model name to download, or --list");
  if (!hark::find_model_entry(o.name))
    throw CLI::ValidationError("NAME", "unknown model '" + o.name + "' (hark download --list names the official ones)");
  if (!o.sha1.empty() &&
      (o.sha1.size() != 40 || o.sha1.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
    throw CLI::ValidationError("--sha1", "must be 40 hex digits, got '" + o.sha1 + "'");
}

int run_download(const DownloadCommandOptions& o, const std::atomic<bool>& interrupted) {
  if (o.list) return list_models(o);
  check_download_options(o);
  const hark::ModelEntry* e = hark::find_model_entry(o.name);

  hark::DownloadOptions d;
  d.dir = o.dir;
  d.base_url = o.base_url;
  for (char c : o.sha1) d.expected_sha1 += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  d.force = o.force;
  d.low_speed_time_s = o.stall_timeout_s;
  d.connect_timeout_s = o.connect_timeout_s;
  d.should_abort = [&] { return interrupted.load(); };
  // As transcribe's: a bar on a terminal, nothing extra when piped, a line each 10% with -pp;
  // nothing with -q.
  const ProgressMode mode = o.quiet            ? ProgressMode::Off
                            : o.print_progress ? ProgressMode::Lines
                                               : progress_mode_for_terminal(false);
  ProgressLine line(mode, e->file_name, 10);
  bool said_resume = false;
  d.on_progress = [&](const hark::DownloadProgress& p) {
    if (p.bytes_resumed > 0 && !said_resume && mode != ProgressMode::Off) {
      line.suspend();
      std::fprintf(stderr, "hark: resuming %s after %s\n", e->file_name.c_str(), format_bytes(p.bytes_resumed).c_str());
      said_resume = true;
    }
    if (p.waiting) {
      if (mode != ProgressMode::Off)
        std::fprintf(stderr, "hark: another download of %s is running; waiting for it\n", e->file_name.c_str());
      return;
    }
    if (p.verifying) {
      line.update(1.0);
      line.finish();
      if (mode != ProgressMode::Off) std::fprintf(stderr, "hark: checking the digest of %s\n", e->file_name.c_str());
      return;
    }
    std::string detail = format_bytes(p.bytes_done);
    if (p.bytes_total) detail += " of " + format_bytes(p.bytes_total);
    if (mode == ProgressMode::Bar) {
      if (p.bytes_per_second > 0) detail += ", " + format_bytes(static_cast<uint64_t>(p.bytes_per_second)) + "/s";
      if (p.seconds_left >= 0) detail += ", " + format_duration(p.seconds_left) + " left";
    }
    line.update(p.bytes_total ? double(p.bytes_done) / double(p.bytes_total) : 0.0, detail);
  };

  if (mode != ProgressMode::Off) {
    const std::string from = o.base_url.empty() ? e->url : o.base_url + " (" + e->file_name + ")";
    std::fprintf(stderr, "hark: downloading %s\n", from.c_str());
  }
  hark::DownloadResult r;
  try {
    r = hark::download_model(e->name, d);
  } catch (const hark::Error&) {
    line.suspend();
    if (interrupted.load()) {
      std::fprintf(stderr, "hark: interrupted; the partial download is kept, run again to resume\n");
      return 130;
    }
    throw;
  }
  line.finish();
  if (!o.quiet) {
    if (!r.downloaded)
      std::fprintf(stderr, "hark: %s is already there (--force downloads it again)\n", r.path.c_str());
    else if (r.verified)
      std::fprintf(stderr, "hark: saved %s (%s, verified: %s)\n", r.path.c_str(), format_bytes(r.bytes).c_str(),
                   r.verified_with.c_str());
    else
      std::fprintf(stderr,
                   "hark: saved %s (%s; NOT verified: no SHA-1 is published for %s and the server announced no "
                   "SHA-256; its SHA-1 is %s)\n",
                   r.path.c_str(), format_bytes(r.bytes).c_str(), e->name.c_str(), r.sha1.c_str());
  }
  std::printf("%s\n", r.path.c_str());
  return 0;
}
