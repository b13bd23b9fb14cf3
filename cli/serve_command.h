// `hark serve`: an HTTP server for OpenAI's audio API and whisper.cpp's server API (server/).
//
//   hark serve -m MODEL [-m NAME=MODEL ...] [--host 127.0.0.1] [--port 8080] [--parallel N] [-t N]
//              [--queue-size N] [--max-upload-mb MB] [--max-audio-sec S] [--timeout S]
//              [--api-key KEY ...] [--cors ORIGIN] [--load-allow PATH ...] [-l LANG] [-nf] ...
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "server/options.h"

struct ServeCommandOptions {
  std::vector<std::string> models;  // PATH or NAME=PATH
  bool no_fallback = false;
  bool no_gpu = false, no_flash_attn = false;
  hark::server::ServerOptions server;
};

CLI::App* add_serve_command(CLI::App& app, ServeCommandOptions& o);
// Exit code: 0 after a graceful stop once `interrupted` turns true (SIGTERM, SIGINT).
int run_serve(ServeCommandOptions& o, const std::atomic<bool>& interrupted);
