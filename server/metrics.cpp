#include "metrics.h"

#include <cstdio>
#include <set>

namespace hark::server {
namespace {

const std::set<std::string> kRoutes = {"/v1/audio/transcriptions",
                                       "/v1/audio/translations",
                                       "/v1/models",
                                       "/inference",
                                       "/load",
                                       "/health",
                                       "/metrics",
                                       "/v1/realtime"};

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

void Metrics::count_request(const std::string& route, int status) {
  std::string r = route.starts_with("/v1/models") ? "/v1/models" : route;
  if (!kRoutes.count(r)) r = "other";
  std::lock_guard lock(mu_);
  ++requests_[{r, status}];
  if (status >= 400) ++errors_;
}

void Metrics::add_transcription(double audio_s, double compute_s) {
  std::lock_guard lock(mu_);
  ++transcriptions_;
  audio_s_ += audio_s;
  compute_s_ += compute_s;
}

void Metrics::add_windows(long long windows, long long fallback_windows) {
  std::lock_guard lock(mu_);
  windows_ += windows;
  fallback_windows_ += fallback_windows;
}

void Metrics::count_rejected(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++rejected_[reason];
}

std::string Metrics::prometheus(int running, int queued, int models_loaded) const {
  std::lock_guard lock(mu_);
  std::string o;
  o += "# HELP hark_requests_total HTTP requests answered, by route and status.\n";
  o += "# TYPE hark_requests_total counter\n";
  for (const auto& [k, n] : requests_)
    o += "hark_requests_total{route=\"" + k.first + "\",status=\"" + std::to_string(k.second) + "\"} " +
         std::to_string(n) + "\n";
  o += "# HELP hark_request_errors_total Requests answered with a status of 400 or more.\n";
  o += "# TYPE hark_request_errors_total counter\nhark_request_errors_total " + std::to_string(errors_) + "\n";
  o += "# HELP hark_requests_rejected_total Transcriptions refused or stopped before an answer, by reason.\n";
  o += "# TYPE hark_requests_rejected_total counter\n";
  for (const auto& [reason, n] : rejected_)
    o += "hark_requests_rejected_total{reason=\"" + reason + "\"} " + std::to_string(n) + "\n";
  o += "# HELP hark_transcriptions_total Transcriptions completed.\n";
  o += "# TYPE hark_transcriptions_total counter\nhark_transcriptions_total " + std::to_string(transcriptions_) + "\n";
  o += "# HELP hark_audio_seconds_total Seconds of audio transcribed.\n";
  o += "# TYPE hark_audio_seconds_total counter\nhark_audio_seconds_total " + num(audio_s_) + "\n";
  o += "# HELP hark_compute_seconds_total Seconds spent transcribing (model load excluded).\n";
  o += "# TYPE hark_compute_seconds_total counter\nhark_compute_seconds_total " + num(compute_s_) + "\n";
  o += "# HELP hark_windows_total 30 s windows (or batched chunks) decoded.\n";
  o += "# TYPE hark_windows_total counter\nhark_windows_total " + std::to_string(windows_) + "\n";
  o += "# HELP hark_fallback_windows_total Windows decoded again at a higher temperature (their text was "
       "repetitive or unsure).\n";
  o += "# TYPE hark_fallback_windows_total counter\nhark_fallback_windows_total " + std::to_string(fallback_windows_) +
       "\n";
  o += "# HELP hark_real_time_factor Compute seconds per second of audio over all transcriptions (< 1: faster than "
       "real time).\n";
  o += "# TYPE hark_real_time_factor gauge\nhark_real_time_factor " + num(audio_s_ > 0 ? compute_s_ / audio_s_ : 0) +
       "\n";
  o += "# HELP hark_jobs_running Transcriptions running now.\n";
  o += "# TYPE hark_jobs_running gauge\nhark_jobs_running " + std::to_string(running) + "\n";
  o += "# HELP hark_queue_length Requests waiting for a free state.\n";
  o += "# TYPE hark_queue_length gauge\nhark_queue_length " + std::to_string(queued) + "\n";
  o += "# HELP hark_models_loaded Models the server holds.\n";
  o += "# TYPE hark_models_loaded gauge\nhark_models_loaded " + std::to_string(models_loaded) + "\n";
  return o;
}

}  // namespace hark::server
