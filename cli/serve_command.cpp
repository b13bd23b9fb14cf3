#include "serve_command.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "model_options.h"
#include "server/http_server.h"
#include "server/model_pools.h"
#include "server/service.h"

CLI::App* add_serve_command(CLI::App& app, ServeCommandOptions& o) {
  hark::server::ServerOptions& s = o.server;
  CLI::App* cmd = app.add_subcommand("serve", "HTTP server: OpenAI's audio API and whisper.cpp's server API");
  cmd->add_option("-m,--model", o.models,
                  "Whisper model: PATH (named after the file: ggml-base.en.bin is base.en) or NAME=PATH; "
                  "repeat for several, the first is the default")
      ->required();
  cmd->add_option("--host", s.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", s.port, "Port to listen on (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--parallel", s.parallel, "States per model: requests transcribed at once on shared weights")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("-t,--threads", s.threads, "Compute threads per state (0: the cores shared by --parallel)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--queue-size", s.queue_size, "Requests that may wait for a free state; more get 503 + Retry-After")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option("--max-upload-mb", s.max_upload_mb, "Larger uploads get 413")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-audio-sec", s.max_audio_sec, "Longer audio gets 413 (0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--timeout", s.timeout_sec, "Seconds a request may take, queue included, before 504 (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--shutdown-grace", s.shutdown_grace_sec,
                  "On SIGTERM: seconds running jobs may take to finish before they are aborted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--read-timeout", s.read_timeout_sec,
                  "Seconds a client may pause while sending a request; a realtime session silent this long is closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--header-timeout", s.header_timeout_sec,
                  "Seconds a request's line and headers may take in all (slow clients get 408)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--min-body-rate", s.min_body_rate,
                  "Bytes per second an upload must average after --read-timeout (0: no floor)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--upload-timeout", s.upload_timeout_sec,
                  "Seconds a request's whole body may take to arrive (408 after)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--keep-alive-timeout", s.keep_alive_timeout_sec, "Seconds an idle keep-alive connection stays open")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-uri-bytes", s.max_uri_bytes, "Longest request target (414 above)")
      ->check(CLI::Range(size_t{64}, size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--max-headers", s.max_headers, "Most header lines a request may have (431 above)")
      ->check(CLI::Range(size_t{8}, size_t{10000}))
      ->capture_default_str();
  cmd->add_option("--max-header-bytes", s.max_header_bytes, "Most bytes a request's head may have (431 above)")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 24))
      ->capture_default_str();
  cmd->add_option("--api-key", s.api_keys, "Require Authorization: Bearer KEY (repeat for several keys)");
  cmd->add_option("--cors", s.cors_origin, "Send CORS headers allowing this origin ('*': any)");
  cmd->add_flag(
      "--no-ui", [&s](int64_t) { s.ui = false; }, "Serve no web page at / (the API only)");
  cmd->add_option("--load-allow", s.load_allow,
                  "POST /load may load a model file at this path, or any directly in this folder (repeat); "
                  "without it /load only switches between the models given with -m");
  add_vad_model_option(cmd, s.vad_model, "for requests with vad=true or batch_size > 1 (loaded at start)");
  cmd->add_option("--batch-size", s.decoding.batch_size,
                  "Default chunks decoded together (> 1: the batched long-audio pipeline; needs --vad-model)")
      ->check(CLI::Range(1, hark::kMaxBatchSize))
      ->capture_default_str();
  cmd->add_option(
         "--max-batch-size", s.max_batch_size,
         "Largest batch_size a request may ask for (each chunk of a batch holds its own cross-attention cache)")
      ->check(CLI::Range(1, hark::kMaxBatchSize))
      ->capture_default_str();
  cmd->add_option("-l,--language", s.decoding.language, "Default spoken language ('auto': detect)")
      ->capture_default_str();
  cmd->add_flag("--no-fallback", o.no_fallback, "No temperature fallback unless a request asks");
  cmd->add_option("--beam-size", s.decoding.beam_size, "Default beam size (1: greedy)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--best-of", s.decoding.best_of, "Default candidates at temperature > 0")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--access-log", s.access_log, "Print one JSON line per request on stderr");
  cmd->add_flag("--no-gpu", o.no_gpu, "Compute on the CPU even when a GPU device exists");
  cmd->add_flag("--no-flash-attn", o.no_flash_attn, "Plain attention graph instead of the fused one");
  add_cross_kv_option(cmd, s.cross_kv_type);
  return cmd;
}

int run_serve(ServeCommandOptions& o, const std::atomic<bool>& interrupted) {
  hark::server::ServerOptions& s = o.server;
  for (const std::string& m : o.models) {
    // NAME=PATH when the text before '=' is a plain name (a path with '=' in it has a '/' first).
    const size_t eq = m.find('=');
    if (eq != std::string::npos && eq > 0 && m.substr(0, eq).find('/') == std::string::npos)
      s.models.push_back({m.substr(0, eq), m.substr(eq + 1)});
    else
      s.models.push_back({hark::server::model_name_from_path(m), m});
  }
  if (o.no_fallback) s.decoding.temperature_inc = 0.0f;
  // A name from hark download (silero-v6.2.0) is its file in the models folder, as for transcribe.
  if (!s.vad_model.empty()) s.vad_model = hark::find_model(s.vad_model);
  s.use_gpu = !o.no_gpu;
  s.flash_attn = !o.no_flash_attn;

  hark::server::Service service(s);
  hark::server::HttpServer http(service);
  http.start();
  std::string names;
  for (const auto& m : s.models) names += (names.empty() ? "" : ", ") + m.name;
  std::printf("hark serve: listening on http://%s:%d (models: %s; %d parallel)\n", s.host.c_str(), http.port(),
              names.c_str(), s.parallel);
  std::fflush(stdout);
  while (!interrupted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::printf("hark serve: stopping (running jobs get %.0f s)\n", s.shutdown_grace_sec);
  std::fflush(stdout);
  http.stop();
  std::printf("hark serve: stopped\n");
  return 0;
}
