// A loopback HTTP server for the download tests (cpp-httplib, in-process, a free port): serves one
// file under a name, honours "Range: bytes=N-", and can misbehave on purpose: ignore Range, cut
// the connection halfway, stall, corrupt a byte. Nothing here touches the network beyond 127.0.0.1.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hark::testing {

class FileServer {
 public:
  enum class Mode { Normal, IgnoreRange, CutHalfOnce, Stall };

  FileServer(std::string name, std::string body) : name_(std::move(name)), body_(std::move(body)) {
    server_.Get("/" + name_, [this](const httplib::Request& req, httplib::Response& res) {
      // httplib would cut the response to the Range itself; this server answers ranges on its own
      // (and may ignore them), so the parsed ranges are dropped. The Request is not a const object.
      const_cast<httplib::Request&>(req).ranges.clear();
      serve(req, res);
    });
    // Short socket timeouts: a stalled or closed transfer must not hold the server's shutdown.
    server_.set_keep_alive_timeout(1);
    server_.set_read_timeout(1);
    server_.set_write_timeout(1);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FileServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  FileServer(const FileServer&) = delete;
  FileServer& operator=(const FileServer&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void set_mode(Mode m) { mode_ = m; }
  void set_body(std::string body) { body_ = std::move(body); }
  // A header sent with every answer (Hugging Face's X-Linked-Etag, say). Before the requests.
  void add_header(std::string name, std::string value) { headers_.emplace_back(std::move(name), std::move(value)); }
  int requests() const { return requests_; }
  // The Range start of each request (0 without one).
  std::vector<size_t> range_starts() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return range_starts_;
  }

 private:
  void serve(const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    size_t start = 0;
    const std::string range = req.get_header_value("Range");
    if (!range.empty() && range.rfind("bytes=", 0) == 0) start = std::stoul(range.substr(6));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      range_starts_.push_back(start);
    }
    for (const auto& [name, value] : headers_) res.set_header(name, value);
    if (mode_ == Mode::IgnoreRange) start = 0;
    if (start > 0) {
      if (start >= body_.size()) {
        res.status = 416;
        return;
      }
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(start) + "-" + std::to_string(body_.size() - 1) + "/" +
                                          std::to_string(body_.size()));
    }
    const std::string part = body_.substr(start);
    const Mode mode = mode_;
    if (mode == Mode::CutHalfOnce) mode_ = Mode::Normal;
    // The length announced is the whole part's; the provider may send less (a cut) or stall.
    res.set_content_provider(part.size(), "application/octet-stream",
                             [this, part, mode](size_t offset, size_t, httplib::DataSink& sink) {
                               if (mode == Mode::CutHalfOnce) {
                                 if (offset > 0) return false;  // after half: the connection is closed
                                 sink.write(part.data(), part.size() / 2);
                                 return true;
                               }
                               if (mode == Mode::Stall) {
                                 if (offset == 0) sink.write(part.data(), 16);
                                 while (!stopping_ && sink.is_writable())
                                   std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                 return false;
                               }
                               sink.write(part.data() + offset, part.size() - offset);
                               return true;
                             });
  }

  std::string name_;
  std::string body_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<Mode> mode_{Mode::Normal};
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mutex_;
  std::vector<size_t> range_starts_;
  std::vector<std::pair<std::string, std::string>> headers_;
};

}  // namespace hark::testing
