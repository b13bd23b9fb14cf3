// hark: offline speech-to-text with Whisper models, the C++ API.
//
// A Context is one loaded model: its weights memory-mapped once, read-only, shared. A State is
// what one running job needs (KV cache, compute memory, a backend with its own threads). Every
// transcription is a Job with an id that any thread can abort. Errors throw hark::Error with a
// message naming what was wrong (file, field, offset, expected/found).
//
//   auto ctx = hark::Context::load("ggml-tiny.bin");
//   hark::Transcript t = ctx->transcribe(hark::load_audio("talk.mp3"));
//   for (const auto& s : t.segments) printf("%s\n", s.text.c_str());
//
// Thread safety: everything here may be called from any thread. A Context serves many jobs at
// once; a State runs one job at a time. Nothing prints to stderr unless set_log_callback says so.
// This header is the umbrella: each concept has a header of its own (below), and everything the
// front ends (CLI, server, bindings) need is among them; nothing internal is. The C API (hark.h)
// offers the same.
#pragma once

#include "hark/audio.hpp"     // load_audio, decode_audio, PCM to 16 kHz mono
#include "hark/context.hpp"   // Context, State, ContextParams, ModelInfo, BenchResult
#include "hark/error.hpp"     // hark::Error
#include "hark/jobs.hpp"      // Job, jobs::create/abort
#include "hark/log.hpp"       // set_log_callback
#include "hark/models.hpp"    // official models by name: registry, models folder, download_model
#include "hark/output.hpp"    // to_txt, to_srt, to_vtt, to_json, to_csv, to_lrc
#include "hark/params.hpp"    // TranscribeParams, DetectLanguageParams
#include "hark/quantize.hpp"  // model conversion: quantize_model
#include "hark/realtime.hpp"  // streaming transcription of live audio
#include "hark/results.hpp"   // Transcript, Segment, Word, Timings, LanguageDetection
#include "hark/system.hpp"    // version, system_info, devices, languages
#include "hark/vad.hpp"       // voice activity detection: VadModel, VadStream, energy_vad
