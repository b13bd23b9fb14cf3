// The server's counters and their Prometheus text exposition (GET /metrics): requests by route
// and status, errors, seconds of audio transcribed and of compute spent on it (their ratio is the
// real-time factor), windows decoded and how many of them fell back to a higher temperature (a
// rising share says the audio or the model fits badly, and costs compute), and the gauges the
// caller passes in (jobs running, queue length, models).
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace hark::server {

class Metrics {
 public:
  // route: one of the server's routes; anything else is counted as "other", so garbage paths
  // cannot grow the label set.
  void count_request(const std::string& route, int status);
  void add_transcription(double audio_s, double compute_s);
  void add_windows(long long windows, long long fallback_windows);  // a transcription's, when done
  void count_rejected(const std::string& reason);                   // queue_full, timeout, client_closed, ...

  std::string prometheus(int running, int queued, int models_loaded) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, long long> requests_;
  std::map<std::string, long long> rejected_;
  long long errors_ = 0;
  long long transcriptions_ = 0;
  double audio_s_ = 0, compute_s_ = 0;
  long long windows_ = 0, fallback_windows_ = 0;
};

}  // namespace hark::server
