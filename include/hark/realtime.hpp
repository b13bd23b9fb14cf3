// hark realtime transcription, the C++ API: live audio from a source (microphone, stdin, a file
// played in real time, or samples a binding pushes) cut into slices that are transcribed while the
// person is still talking, with whisper.rn's transcribeRealtime options and event shape.
//
//   auto ctx = hark::Context::load("ggml-tiny.en.bin");
//   hark::RealtimeOptions o;
//   o.audio_slice_sec = 10;
//   auto rt = hark::RealtimeTranscriber::start(*ctx, hark::open_capture_source("default"), o,
//       [](const hark::RealtimeEvent& e) { printf("%s\n", e.data.result.c_str()); });
//   ... rt->stop(); rt->wait();
//
// Sources deliver 16 kHz mono float in [-1, 1] (push and raw PCM sources convert other rates and
// channel counts). Events run on the transcriber's own thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hark/context.hpp"  // Context
#include "hark/export.h"
#include "hark/params.hpp"   // TranscribeParams
#include "hark/results.hpp"  // Segment

namespace hark {

// ---- audio sources ----
// Where live audio comes from. start() begins delivering 16 kHz mono chunks of any size to
// on_samples (on a thread of the source's, or the caller's for a push source); on_end is called
// once when the audio ends: error "" at the end of a stream or after stop(), a message when the
// source failed. stop() is idempotent and returns once no more callbacks will run.
class HARK_API AudioSource {
 public:
  using SampleSink = std::function<void(std::span<const float>)>;
  using EndSink = std::function<void(const std::string& error)>;
  virtual ~AudioSource() = default;
  virtual void start(SampleSink on_samples, EndSink on_end) = 0;
  virtual void stop() = 0;
  virtual std::string name() const = 0;
  // Live audio (a microphone) cannot wait: what finds the transcriber's ring full is dropped and
  // reported. Other sources (files, pipes, non-live pushes) are held back until there is room.
  virtual bool live() const = 0;
};

// A source a binding or test feeds by hand: push() delivers on the caller's thread; finish() ends
// the stream. Pushing before start() or after stop()/finish() is ignored.
class HARK_API PushSource : public AudioSource {
 public:
  // Interleaved float frames at the source's rate and channel count (a whole number of frames);
  // converted to 16 kHz mono (channels averaged, libsoxr) before delivery. Throws hark::Error for
  // a part frame or a NaN/Inf sample.
  virtual void push(std::span<const float> samples) = 0;
  virtual void finish() = 0;
};
// live: see AudioSource::live (a binding pushing microphone audio: true; a test or a file: false).
// sample_rate (1000..768000 Hz) and channels (1..256) of what push() takes; hark::Error otherwise.
HARK_API std::shared_ptr<PushSource> open_push_source(bool live = true, int sample_rate = 16000, int channels = 1);

// A file (any format load_audio reads) played at `speed` x real time (1: real time) in chunks of
// chunk_ms; speed 0: as fast as the consumer takes it (tests, batch).
HARK_API std::shared_ptr<AudioSource> open_file_source(const std::string& path, double speed = 1.0, int chunk_ms = 100);
// Raw PCM, signed 16-bit little-endian, interleaved, at sample_rate with `channels` (16 kHz mono
// by default; converted like push()), read from a file descriptor (0: stdin) until end of file.
// The descriptor is not closed.
HARK_API std::shared_ptr<AudioSource> open_pcm16_fd_source(int fd, int sample_rate = 16000, int channels = 1);

// A capture device (PulseAudio; PipeWire serves the same API). device: "default" or "" for the
// server's default source, or a source name from list_capture_devices(). Throws hark::Error
// saying why when there is no sound server or no such device, or when hark was built without
// PulseAudio (capture_supported() false).
HARK_API std::shared_ptr<AudioSource> open_capture_source(const std::string& device = "default");
HARK_API bool capture_supported();
struct CaptureDevice {
  std::string name;         // what open_capture_source takes
  std::string description;  // for people
  bool is_default = false;
};
// Throws hark::Error when no sound server can be reached.
HARK_API std::vector<CaptureDevice> list_capture_devices();

// ---- the streaming transcriber ----
// whisper.rn's TranscribeRealtimeOptions (names in comments), plus hark's own.
struct RealtimeOptions {
  double audio_sec = 30;          // realtimeAudioSec: capture stops after this much audio; <= 0: 30
  double audio_slice_sec = 0;     // realtimeAudioSliceSec: a slice's length; <= 0 or >= audio_sec: audio_sec
  double audio_min_sec = 1;       // realtimeAudioMinSec: a slice is not transcribed (partially) before this
  std::string audio_output_path;  // audioOutputPath: a WAV of everything captured ("" none)
  // Its samples: 32 (float, exactly what was fed in) or 16 (16-bit PCM, as whisper.rn writes it;
  // the Node binding's default). Anything else is refused.
  int audio_output_bits = 32;
  // Energy VAD (whisper.rn's useVad, vadMs, vadThold, vadFreqThold): a slice ends early at a pause.
  bool use_vad = false;
  int vad_ms = 2000;
  float vad_thold = 0.6f;
  float vad_freq_thold = 100.0f;
  // A Silero model instead (hark's): a slice ends after speech followed by vad_silence_ms of
  // non-speech, and a slice with no speech frame is finalised empty without being transcribed.
  std::string vad_model_path;
  float vad_threshold = 0.5f;
  int vad_silence_ms = 500;
  // With vad_model_path: also an event at each change of the VAD's verdict (RealtimeEvent::vad),
  // for a listener such as whisper.rn's onVad. Off: events are transcriptions only.
  bool vad_events = false;
  // hark's: partial results of the open slice at most every partial_sec of new audio (0: none).
  double partial_sec = 1.0;
  // Capture ring buffer; <= 0: 2 slices + 5 s. Audio that finds it full is dropped and reported
  // (event code kCodeOverflow); the saved WAV still has it.
  double ring_sec = 0;
  int n_threads = 0;  // transcription threads; 0: the context's
  // The base of every slice's transcription (language, ...). Its initial_prompt is used for the
  // first slice; each later slice gets the previous slice's text as prompt (prompt_previous_slice;
  // false: every slice gets initial_prompt).
  std::shared_ptr<const TranscribeParams> transcribe;
  bool prompt_previous_slice = true;
};

// One slice's transcription (whisper.rn's event.data): segment times from the start of the recording.
struct RealtimeData {
  std::string result;
  std::vector<Segment> segments;
};

struct RealtimeSlice {
  int index = 0;
  RealtimeData data;
  bool final = false;      // the slice closed: its text will not change
  int64_t t0 = 0, t1 = 0;  // its audio, 10 ms units from the start of the recording
  int code = 0;            // its last transcription: 0 ok, kCodeTranscribeFailed (with error) or kCodeAborted
  std::string error;
  double process_time_ms = 0;  // its last transcription's time
};

// whisper.rn's TranscribeRealtimeEvent.
struct RealtimeEvent {
  int job_id = 0;
  int code = 0;  // 0 ok; kCode* below otherwise, with error
  std::string error;
  bool is_capturing = true;
  bool is_stopped_by_action = false;  // the last event after stop()
  int slice_index = 0;                // the slice data belongs to
  RealtimeData data;
  double process_time_ms = 0;         // this slice's transcription
  double recording_time_ms = 0;       // audio captured so far
  std::vector<RealtimeSlice> slices;  // every slice so far, the open one last
  int64_t dropped_samples = 0;        // lost to ring overflow so far
  // Set only on VAD events (RealtimeOptions::vad_events), which carry no new transcription:
  // "speech_start", "speech_continue" (every 500 ms of speech) or "speech_end".
  std::string vad;
  float vad_confidence = 0;  // the speech probability (speech_end: 1 - it)
  int64_t vad_t = 0;         // where, 10 ms units from the start of the recording
};
inline constexpr int kCodeTranscribeFailed = -1;
inline constexpr int kCodeOverflow = -2;
inline constexpr int kCodeSourceFailed = -3;
// A slice whose transcription was abandoned by jobs::abort (whisper.rn's value for an aborted one).
inline constexpr int kCodeAborted = -999;

// One event as a JSON object on one line (camelCase keys as whisper.rn's).
HARK_API std::string to_json(const RealtimeEvent& e);

class HARK_API RealtimeTranscriber {
 public:
  using EventSink = std::function<void(const RealtimeEvent&)>;
  // Starts the source and the transcription thread (a State of its own on ctx, which must outlive
  // the transcriber). Throws hark::Error for bad options or a source/output that cannot start.
  static std::unique_ptr<RealtimeTranscriber> start(Context& ctx, std::shared_ptr<AudioSource> source,
                                                    const RealtimeOptions& options, EventSink on_event);
  // The same on the caller's state (e.g. one a server lends from a fixed pool, so a stream costs
  // no memory beyond the pool): it must outlive the transcriber and nothing else may use it
  // meanwhile. Its thread count applies unless options.n_threads names one.
  static std::unique_ptr<RealtimeTranscriber> start(State& state, std::shared_ptr<AudioSource> source,
                                                    const RealtimeOptions& options, EventSink on_event);
  virtual ~RealtimeTranscriber() = default;  // stops and waits
  // Ends capture; a transcription in progress runs to its end (never aborted), the audio already
  // captured is still transcribed, the last slice finalised, and the last event says
  // is_stopped_by_action. Returns at once; thread-safe.
  virtual void stop() = 0;
  // Closes the open slice where capture is now (whisper.rn's nextSlice): it is transcribed as a
  // final one and the next slice begins. Nothing happens when it holds no audio. Thread-safe.
  virtual void next_slice() = 0;
  virtual void wait() = 0;  // until the last event has been delivered
  virtual bool running() const = 0;
  // The stream's job: jobs::abort(id) (or abort_all) ends it at once instead: capture ends, the
  // transcription in progress is abandoned within a graph node, audio not yet transcribed is
  // dropped (the open slice is not finalised), and the last event says is_stopped_by_action.
  virtual int job_id() const = 0;
};

}  // namespace hark
