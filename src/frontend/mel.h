// Log-mel spectrogram: Whisper's input features, computed as OpenAI's reference computes them in
// transcribe() (`log_mel_spectrogram(audio, n_mels, padding=N_SAMPLES)`):
//
//   1. 30 s of zeros are appended to the 16 kHz audio (so the last window has a full tail).
//   2. STFT with center=True: the padded signal is reflect-padded by 200 samples at each end,
//      framed every 160 samples with a 400-sample periodic Hann window, DFT length 400 -> 201
//      bins; power |X|^2. torch.stft yields 1 + L/160 frames; the last is dropped, so
//      n_frames = L/160 with L = n + 480000.
//   3. mel = filters (n_mels x 201) . power, per frame.
//   4. log10(max(mel, 1e-10)), then everything below (global max - 8) is raised to it, the max
//      being taken over the whole padded spectrogram; then (x + 4) / 4.
//
// The transform runs in double precision; Whisper's float32 result agrees to ~1e-5.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace hark::frontend {

inline constexpr int kSampleRate = 16000;
inline constexpr int kNFft = 400;                                       // 25 ms window
inline constexpr int kHop = 160;                                        // 10 ms
inline constexpr int kNFreq = kNFft / 2 + 1;                            // 201 bins
inline constexpr int kWindowFrames = 3000;                              // one 30 s encoder window
inline constexpr size_t kWindowSamples = size_t(kWindowFrames) * kHop;  // 480000

// Mel filterbank: n_mels rows of kNFreq weights, row-major. A model file supplies its own.
struct MelFilters {
  int n_mels = 0;
  std::vector<float> weights;  // n_mels * kNFreq
};

// The filterbank librosa.filters.mel(sr=sample_rate, n_fft=n_fft, n_mels=n_mels) builds with its
// defaults (Slaney mel scale, fmin 0, fmax sr/2, "slaney" area normalisation), which is what
// Whisper's stored filters are. For tests and tools; transcription uses the model's filters.
MelFilters slaney_mel_filters(int n_mels, int sample_rate = kSampleRate, int n_fft = kNFft);

// A log-mel spectrogram, mel-major: data[m * n_frames + t] (frames innermost, the encoder's
// layout).
struct LogMel {
  int n_mels = 0;
  size_t n_frames = 0;          // content frames + the frames of the appended padding
  size_t n_content_frames = 0;  // n_samples / 160: the frames the audio itself accounts for
  std::vector<float> data;
  bool aborted = false;  // should_stop said so before it was complete; data is then empty

  float at(int mel, size_t frame) const { return data[size_t(mel) * n_frames + frame]; }
};

// Computes the spectrogram of `n` samples of 16 kHz mono audio with `pad_samples` zeros appended
// (Whisper's 30 s by default; 0 gives plain torch.stft framing). Frames are split over
// `n_threads` threads; the output is bit-identical for any thread count.
// Throws hark::Error for n == 0 (no audio is a caller bug, not a silent spectrogram), a NaN/Inf
// sample (with its index), filters that are not n_mels x 201 or hold non-finite values,
// n_threads < 1, or more than 8 hours of audio.
// `should_stop`, when given, is polled every 64 frames (~0.1 ms of work): an hour of audio takes
// most of a second, and a job's abort must not wait for it.
LogMel log_mel_spectrogram(const float* samples, size_t n, const MelFilters& filters, int n_threads,
                           size_t pad_samples = kWindowSamples, const std::function<bool()>& should_stop = {});

// The 3000-frame encoder input starting at frame `seek`, as Whisper's transcribe() cuts it:
// frames [seek, min(seek + frames, seek + 3000, n_content_frames)) of `mel`, then zeros (the
// value 0 after normalisation, exactly what its pad_or_trim appends) up to 3000 frames. `frames`
// cuts a window short at the end of a clip (clip_timestamps). Layout as LogMel.
std::vector<float> mel_window(const LogMel& mel, size_t seek, size_t frames = kWindowFrames);

}  // namespace hark::frontend
