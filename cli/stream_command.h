// `hark stream`: live transcription of a capture device, stdin (raw s16le 16 kHz mono) or a file
// played at real-time speed, in slices (whisper.rn's transcribeRealtime).
//
//   hark stream -m MODEL [--capture default|DEVICE|-] [--pcm-rate HZ] [--pcm-channels N] [--file F]
//               [--slice-sec S] [--min-sec S]
//               [--max-sec S] [--vad energy|MODEL | -vm MODEL] [--save out.wav] [--json] [--list-devices]
#pragma once
#include <CLI/CLI.hpp>

#include <atomic>
#include <string>

struct StreamCommandOptions {
  std::string model;
  std::string capture = "default";  // a device, "default", or "-" for stdin
  std::string file;                 // instead of capture: played at --speed x real time
  double speed = 1.0;
  int pcm_rate = 16000, pcm_channels = 1;  // --capture -: what stdin's raw s16le holds
  double slice_sec = 10, min_sec = 1, max_sec = 300, partial_sec = 1;
  std::string vad;        // "energy" or a Silero model (a path, or a name from hark download)
  std::string vad_model;  // -vm: the Silero model, as transcribe spells it (the same as --vad MODEL)
  std::string save;       // WAV of everything captured
  std::string language = "en";
  bool no_fallback = false;  // whisper.cpp's -nf: each slice decoded once, at temperature 0
  int threads = 0;
  bool json = false;
  bool list_devices = false;
};

CLI::App* add_stream_command(CLI::App& app, StreamCommandOptions& o);
// Exit code. Stops (finishing the open slice) once `interrupted` turns true.
int run_stream(const StreamCommandOptions& o, const std::atomic<bool>& interrupted);
