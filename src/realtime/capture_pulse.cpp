// The microphone through PulseAudio's simple API (libpulse-simple), device listing through its
// introspection API. Why PulseAudio rather than PortAudio: on Linux desktops the sound server is
// PulseAudio or PipeWire (which serves the same API), so capture through it gets device routing,
// resampling to 16 kHz mono and per-application volume from the server; the simple API is a
// blocking read, a few lines for what hark needs; and a null-sink daemon makes the capture path
// testable on a machine without sound hardware. PortAudio would add another layer over the same
// server. Built only when libpulse-dev is found (HARK_HAVE_PULSE); otherwise capture_supported()
// is false and opening a device says so.
#include <vector>

#include "realtime/audio_source.h"
#include "runtime/error.h"

#ifdef HARK_HAVE_PULSE
#include <pulse/error.h>
#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
#endif

namespace hark::realtime {

#ifdef HARK_HAVE_PULSE
namespace {

class PulseSource final : public ThreadedSource {
 public:
  explicit PulseSource(const std::string& device) : device_(device) {
    pa_sample_spec spec{};
    spec.format = PA_SAMPLE_S16LE;  // the server converts from whatever the device records
    spec.rate = 16000;
    spec.channels = 1;
    pa_buffer_attr attr{};
    attr.maxlength = uint32_t(-1);
    attr.fragsize = kChunkSamples * 2;  // small fragments: low latency, and stop() is quick
    int err = 0;
    const char* dev = device == "default" ? nullptr : device.c_str();
    pa_ = pa_simple_new(nullptr, "hark", PA_STREAM_RECORD, dev, "speech capture", &spec, nullptr, &attr, &err);
    HARK_CHECK(pa_ != nullptr, "no capture device: cannot open PulseAudio source '" + device +
                                   "': " + pa_strerror(err) +
                                   (err == PA_ERR_CONNECTIONREFUSED || err == PA_ERR_INVALIDSERVER
                                        ? " (no sound server running; is PulseAudio or PipeWire up?)"
                                    : err == PA_ERR_NOENTITY ? " (list devices with `hark stream --list-devices`)"
                                                             : ""));
  }
  ~PulseSource() override {
    stop();
    pa_simple_free(pa_);
  }
  std::string name() const override { return "pulse:" + device_; }
  bool live() const override { return true; }

 private:
  static constexpr size_t kChunkSamples = 320;  // 20 ms
  std::string run(const SampleSink& sink) override {
    std::vector<int16_t> pcm(kChunkSamples);
    std::vector<float> samples(kChunkSamples);
    while (!stopping()) {
      int err = 0;
      if (pa_simple_read(pa_, pcm.data(), pcm.size() * 2, &err) < 0)
        return name() + ": capture failed: " + pa_strerror(err);
      for (size_t i = 0; i < pcm.size(); ++i) samples[i] = float(pcm[i]) / 32768.0f;
      sink(samples);
    }
    return "";
  }
  std::string device_;
  pa_simple* pa_ = nullptr;
};

// Runs a mainloop until the context is ready, then until the source list has arrived.
struct Lister {
  std::vector<CaptureDevice> devices;
  std::string default_name;
  int pending = 0;
};

}  // namespace

std::shared_ptr<AudioSource> open_pulse_source(const std::string& device) {
  return std::make_shared<PulseSource>(device);
}

}  // namespace hark::realtime

namespace hark {

bool capture_supported() { return true; }

std::vector<CaptureDevice> list_capture_devices() {
  pa_mainloop* loop = pa_mainloop_new();
  pa_context* ctx = pa_context_new(pa_mainloop_get_api(loop), "hark");
  realtime::Lister l;
  std::string error;
  if (pa_context_connect(ctx, nullptr, PA_CONTEXT_NOFLAGS, nullptr) < 0) {
    error = pa_strerror(pa_context_errno(ctx));
  } else {
    for (;;) {  // until connected or failed
      const pa_context_state_t s = pa_context_get_state(ctx);
      if (s == PA_CONTEXT_READY) break;
      if (!PA_CONTEXT_IS_GOOD(s)) {
        error = pa_strerror(pa_context_errno(ctx));
        break;
      }
      pa_mainloop_iterate(loop, 1, nullptr);
    }
  }
  if (error.empty()) {
    l.pending = 2;
    pa_operation_unref(pa_context_get_server_info(
        ctx,
        [](pa_context*, const pa_server_info* i, void* u) {
          auto* l = static_cast<realtime::Lister*>(u);
          if (i && i->default_source_name) l->default_name = i->default_source_name;
          --l->pending;
        },
        &l));
    pa_operation_unref(pa_context_get_source_info_list(
        ctx,
        [](pa_context*, const pa_source_info* i, int eol, void* u) {
          auto* l = static_cast<realtime::Lister*>(u);
          if (eol) {
            --l->pending;
            return;
          }
          l->devices.push_back({i->name, i->description ? i->description : "", false});
        },
        &l));
    while (l.pending > 0 && pa_mainloop_iterate(loop, 1, nullptr) >= 0) {
    }
  }
  pa_context_disconnect(ctx);
  pa_context_unref(ctx);
  pa_mainloop_free(loop);
  HARK_CHECK(error.empty(), "cannot list capture devices: PulseAudio: " + error +
                                " (no sound server running; is PulseAudio or PipeWire up?)");
  for (CaptureDevice& d : l.devices) d.is_default = d.name == l.default_name;
  return l.devices;
}

}  // namespace hark

#else  // built without PulseAudio

std::shared_ptr<AudioSource> open_pulse_source(const std::string& device) {
  throw Error("no capture device: '" + device +
              "' cannot be opened, this hark was built without PulseAudio (install libpulse-dev and rebuild)");
}

}  // namespace hark::realtime

namespace hark {
bool capture_supported() { return false; }
std::vector<CaptureDevice> list_capture_devices() {
  throw Error("cannot list capture devices: this hark was built without PulseAudio (install libpulse-dev and rebuild)");
}
}  // namespace hark

#endif
