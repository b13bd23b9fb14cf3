// What `hark serve` is started with: the models, the address, the pools and every limit.
// Plain data; the CLI fills it (cli/serve_command.cpp), tests fill it directly.
#pragma once
#include <string>
#include <vector>

#include "hark/hark.hpp"

namespace hark::server {

struct ModelSpec {
  std::string name;  // what the `model` field picks
  std::string path;  // a ggml .bin file
};

struct ServerOptions {
  std::vector<ModelSpec> models;  // the first is the default (also answers OpenAI's "whisper-1")
  std::string host = "127.0.0.1";
  int port = 8080;            // 0: any free port (HttpServer::port() says which)
  int parallel = 1;           // states per model: requests that run at once on it
  int threads = 0;            // compute threads per state; 0: the machine's cores / parallel (at least 1)
  int queue_size = 16;        // requests that may wait for a state (all models); more get 503
  double max_upload_mb = 25;  // bodies above this get 413 (OpenAI's limit is 25 MB), as the bytes arrive
  double max_audio_sec = 0;   // longer audio gets 413; 0: no limit
  double timeout_sec = 0;     // a request still unanswered after this gets 504; 0: none
  // Slow clients (slowloris): the longest wait for a request's next bytes, the time its request
  // line and headers may take in all, and the average rate its body must keep. A realtime
  // session silent for read_timeout_sec is closed.
  double read_timeout_sec = 30;
  double header_timeout_sec = 10;
  double min_body_rate = 1024;        // bytes per second; 0: none
  double upload_timeout_sec = 600;    // a request's whole body must arrive within this
  double keep_alive_timeout_sec = 5;  // an idle keep-alive connection is closed after this
  // A request's head: its target (414 above), header lines (431) and bytes in all (431).
  size_t max_uri_bytes = 8192;
  size_t max_headers = 100;
  size_t max_header_bytes = 32768;
  double shutdown_grace_sec = 10;     // on stop: running jobs may finish this long, then are aborted
  std::vector<std::string> api_keys;  // non-empty: every route but /health needs one (Bearer)
  std::string cors_origin;            // non-empty: CORS headers with this origin ("*" for any)
  // POST /load may load a model from a path only when the path is one of these files or lies
  // directly in one of these folders (after resolving links); empty: paths are refused.
  std::vector<std::string> load_allow;
  std::string vad_model;  // Silero model for requests that ask for vad (whisper.cpp's -vm); "": none
  // A request's batch_size (the batched long-audio pipeline, which needs vad_model) may be at most
  // this: each chunk of a batch holds its own cross-attention cache (base 18 MB, large 245 MB) in
  // the state, which keeps it for later requests.
  int max_batch_size = 8;
  // Every request starts from these (a request's fields change them): -l, -nf, -bs, ... Language
  // "auto" detects it, as OpenAI's API does when none is given.
  TranscribeParams decoding = [] {
    TranscribeParams p;
    p.language = "auto";
    return p;
  }();
  bool access_log = false;  // one JSON line per request on stderr
  bool ui = true;           // the web page at / (server/ui/); false (--no-ui): 404
  bool flash_attn = true;
  KvCacheType cross_kv_type = KvCacheType::F16;  // ContextParams::cross_kv_type of every model
  bool use_gpu = true;
};

}  // namespace hark::server
