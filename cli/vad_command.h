// `hark vad`: speech segments of audio files with the Silero VAD (whisper.cpp's -vm model).
//
//   hark vad -vm MODEL FILE... [--threshold P] [--min-speech-ms N] [--min-silence-ms N]
//            [--max-speech-s S] [--pad-ms N] [--overlap S] [-t N] [--json] [--probs] [--bench]
//            [--upstream-context]
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "hark/hark.hpp"

struct VadCommandOptions {
  std::string model;
  std::vector<std::string> files;
  hark::VadOptions vad;
  int threads = 1;
  bool json = false;
  bool probs = false;  // also print every frame's probability
  bool bench = false;  // time the network: frames per second over the files
  bool upstream_context = false;
};

CLI::App* add_vad_command(CLI::App& app, VadCommandOptions& o);

// The flags of the segment options (VadOptions, with its checks and defaults), under the names a
// command gives them, in VadOptions' order: threshold, min speech, min silence, max speech, pad,
// overlap (CLI11 names: "--long,--other" gives one option two spellings). `hark vad` takes
// `hark transcribe`'s --vad-* spellings and its own shorter ones.
struct VadOptionNames {
  const char* threshold;
  const char* min_speech;
  const char* min_silence;
  const char* max_speech;
  const char* pad;
  const char* overlap;
  const char* overlap_help;
};
void add_vad_options(CLI::App* cmd, hark::VadOptions& v, const VadOptionNames& names);
// Exit code; throws hark::Error for a model or file that cannot be read.
int run_vad(const VadCommandOptions& o);
