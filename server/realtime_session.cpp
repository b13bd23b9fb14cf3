#include "realtime_session.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "pcm_feeder.h"
#include "realtime_config.h"
#include "realtime_events.h"
#include "responses.h"

namespace hark::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using nlohmann::json;

class Session {
 public:
  Session(Service& svc, int fd, const SessionLimits& limits, std::string_view preread) : svc_(svc), limits_(limits) {
    // What the HTTP server read of the upgrade request already is read from here first.
    if (!preread.empty()) {
      auto room = buffer_.prepare(preread.size());
      std::memcpy(room.data(), preread.data(), preread.size());
      buffer_.commit(preread.size());
    }
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    tcp::socket sock(ioc_);
    boost::system::error_code ec;
    // The socket stays the HTTP server's to close: asio gets a duplicate. (Should dup fail, the
    // unopened socket fails the first read and the session ends there.)
    if (const int own = ::dup(fd); own >= 0) sock.assign(a.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), own, ec);
    ws_.emplace(std::move(sock));
  }

  ~Session() { end_transcriber(); }

  // Aborts a transcription still running and joins its threads (every event has been posted).
  void end_transcriber() {
    if (rt_ && rt_->running()) jobs::abort(rt_->job_id());
    feeder_.reset();  // joins: the transcriber has ended and every event was posted
    rt_.reset();
  }

  // Runs the session on this thread; returns the status for the log and the audio seconds.
  std::pair<int, double> run() {
    live_ = 1;
    asio::co_spawn(ioc_, main(), [](std::exception_ptr) {});
    ioc_.run();
    return {status_, audio_s_};
  }
  // Seconds spent transcribing (every slice's runs, partial ones included); after the session's
  // transcriber has ended.
  double compute_s() const { return compute_s_; }

 private:
  static constexpr double kMaxBacklogSec = 10;  // audio read ahead of the transcriber

  // Held by each of the session's coroutines: when the last one ends, so does run(), without
  // waiting for timers the WebSocket stream may still have armed.
  struct Alive {
    Session* s;
    ~Alive() {
      if (--s->live_ == 0) s->ioc_.stop();
    }
  };

  asio::awaitable<void> main() {
    Alive alive{this};
    try {
      if (!co_await handshake()) co_return;
      live_ += 2;
      asio::co_spawn(ioc_, writer(), [](std::exception_ptr) {});
      asio::co_spawn(ioc_, watch(), [](std::exception_ptr) {});
      co_await read_loop();
    } catch (const std::exception&) {
    }
    if (!ended_) {
      // The client is gone (or broke the protocol) before the transcription ended.
      if (rt_ && rt_->running()) {
        jobs::abort(rt_->job_id());
        svc_.metrics().count_rejected("client_closed");
      } else if (!rt_) {
        end_session({});
      }
    }
    // Reading is over: either the close handshake is done or the client is gone. Nothing more can
    // reach it, so the writer (and a close still waiting for an answer) ends at once.
    beast::error_code ec;
    beast::get_lowest_layer(*ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(*ws_).close();
  }

  // Reads the upgrade request and accepts it, or answers it with an HTTP error.
  asio::awaitable<bool> handshake() {
    auto& stream = beast::get_lowest_layer(*ws_);
    beast::error_code ec;
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(64 * 1024);
    stream.expires_after(std::chrono::milliseconds(static_cast<long>(limits_.header_timeout_s * 1000)));
    co_await http::async_read(stream, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      status_ = 408;
      co_return false;
    }
    http::request<http::string_body> req = parser.release();
    std::optional<ApiError> refused;
    try {
      if (!websocket::is_upgrade(req))
        throw ApiError(426, "this route is a WebSocket: connect with Upgrade: websocket (see README)",
                       "invalid_request_error", "", "upgrade_required");
      const auto query = query_of(std::string_view(req.target().data(), req.target().size()));
      std::string key;
      const std::string auth(req[http::field::authorization]);
      if (auth.rfind("Bearer ", 0) == 0) key = auth.substr(7);
      if (auto it = query.find("api_key"); key.empty() && it != query.end()) key = it->second;
      if (!svc_.accepts_key(key)) {
        ApiError e(
            401,
            key.empty() ? "You didn't provide an API key (Authorization: Bearer KEY)" : "Incorrect API key provided",
            "invalid_request_error", "", "invalid_api_key");
        throw e;
      }
      // Browsers send any page's WebSocket to any server (no CORS for WebSockets), so a page from
      // elsewhere could use a local server; only the origins --cors allows (or the server's own) may.
      const std::string origin(req[http::field::origin]);
      const std::string& allow = svc_.options().cors_origin;
      const std::string host(req[http::field::host]);
      const bool same_origin = origin == "http://" + host || origin == "https://" + host;
      if (!origin.empty() && allow != "*" && origin != allow && !same_origin)
        throw ApiError(403, "origin " + origin + " may not open realtime sessions here (--cors ORIGIN allows one)",
                       "permission_error", "", "origin_not_allowed");
      config_ = default_realtime_config(svc_.options());
      apply_realtime_config(config_, query, svc_.options(), true);
      lease_ = svc_.lease_for_session(config_.model);
    } catch (const ApiError& e) {
      refused = e;
    }
    if (refused) {  // (co_await is not allowed inside a catch block)
      const ApiError& e = *refused;
      http::response<http::string_body> res{static_cast<http::status>(e.status), req.version()};
      res.set(http::field::content_type, "application/json");
      if (e.retry_after_s > 0) res.set(http::field::retry_after, std::to_string(e.retry_after_s));
      if (e.status == 401) res.set(http::field::www_authenticate, "Bearer");
      res.keep_alive(false);
      res.body() = openai_error_json(e);
      res.prepare_payload();
      status_ = e.status;
      co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
      co_return false;
    }
    stream.expires_never();  // the websocket's own timeouts apply from here
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::milliseconds(static_cast<long>(limits_.header_timeout_s * 1000));
    t.idle_timeout = std::chrono::milliseconds(static_cast<long>(limits_.idle_timeout_s * 1000));
    t.keep_alive_pings = false;  // silence ends the session: a silent client holds a state
    ws_->set_option(t);
    ws_->read_message_max(limits_.max_message_bytes);
    co_await ws_->async_accept(req, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      status_ = 400;
      co_return false;
    }
    status_ = 101;
    send(dump_event({{"type", "session.started"},
                     {"model", lease_->model().name()},
                     {"format", config_.format == PcmFormat::S16LE ? "s16le" : "f32le"},
                     {"sample_rate", config_.sample_rate},
                     {"channels", config_.channels}}));
    co_return true;
  }

  asio::awaitable<void> read_loop() {
    asio::steady_timer pause(ioc_);
    for (;;) {
      beast::error_code ec;
      buffer_.clear();
      co_await ws_->async_read(buffer_, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;  // closed, reset, silent too long, or a message over the limit
      const bool text = ws_->got_text();
      const std::string_view bytes(static_cast<const char*>(buffer_.data().data()), buffer_.size());
      try {
        text ? on_text(bytes) : on_audio(bytes);
      } catch (const ApiError& e) {
        send(error_event(e));
      } catch (const std::exception& e) {  // a message no check foresaw: still an error event
        send(error_event(ApiError(400, std::string("the message could not be used: ") + e.what())));
      }
      // Backpressure: while the transcriber is far behind, stop reading (TCP holds the client).
      const auto backlog = static_cast<size_t>(kMaxBacklogSec * config_.sample_rate * config_.channels);
      while (feeder_ && feeder_->queued_samples() > backlog && !ended_) {
        pause.expires_after(std::chrono::milliseconds(10));
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
    }
  }

  void on_text(std::string_view bytes) {
    json msg = json::parse(bytes, nullptr, false);
    if (msg.is_discarded() || !msg.is_object())
      throw ApiError(400, "a text message must be a JSON object with a \"type\"", "invalid_request_error", "",
                     "invalid_json");
    const auto it = msg.find("type");
    if (it == msg.end() || !it->is_string())
      throw bad_field("type", "type: must be a string (session.update or stop), got " +
                                  (it == msg.end() ? std::string("none") : it->dump()));
    const std::string type = it->get<std::string>();
    if (type == "session.update") {
      if (rt_) throw bad_field("type", "session.update: the session is configured before its first audio frame");
      RealtimeConfig c = config_;
      apply_realtime_config(c, config_values_of(msg), svc_.options(), false);
      config_ = c;
      send(dump_event({{"type", "session.updated"}}));
    } else if (type == "stop") {
      begin_stop();
    } else {
      throw bad_field("type", "type: " + type + " is not session.update or stop");
    }
  }

  void on_audio(std::string_view bytes) {
    if (stopping_) throw bad_field("", "audio after stop: the session is finishing");
    const size_t frame = config_.bytes_per_frame();
    if (bytes.empty() || bytes.size() % frame != 0)
      throw ApiError(400,
                     "audio frame of " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                         std::to_string(frame) + "-byte sample frames (format " +
                         (config_.format == PcmFormat::S16LE ? "s16le" : "f32le") + ", " +
                         std::to_string(config_.channels) + " channel(s))",
                     "invalid_request_error", "", "invalid_audio_frame");
    std::vector<float> pcm(bytes.size() / (frame / config_.channels));
    if (config_.format == PcmFormat::S16LE) {
      for (size_t i = 0; i < pcm.size(); ++i) {
        int16_t v;
        std::memcpy(&v, bytes.data() + 2 * i, 2);
        pcm[i] = static_cast<float>(v) / 32768.0f;
      }
    } else {
      std::memcpy(pcm.data(), bytes.data(), bytes.size());
      for (float x : pcm)
        if (!std::isfinite(x))
          throw ApiError(400, "audio frame holds a NaN or infinite sample (format f32le)", "invalid_request_error", "",
                         "invalid_audio_frame");
    }
    if (!rt_ && !start_transcriber()) return;
    audio_s_ += static_cast<double>(pcm.size()) / config_.channels / config_.sample_rate;
    feeder_->push(std::move(pcm));
  }

  // false: the options did not work; the session has ended with an error event saying why.
  bool start_transcriber() {
    source_ = open_push_source(config_.live, config_.sample_rate, config_.channels);
    RealtimeOptions o = config_.realtime;
    o.transcribe = std::make_shared<TranscribeParams>(config_.transcribe);
    auto typer = std::make_shared<EventTyper>();
    auto sink = [this, typer](const RealtimeEvent& e) {
      std::string m = typer->message(e);
      last_event_ = EventTyper::event_json(e);   // the transcriber's thread only
      compute_s_ += e.process_time_ms / 1000.0;  // read after run(), once the thread has ended
      if (!m.empty()) asio::post(ioc_, [this, m = std::move(m)] { send(m); });
    };
    try {
      rt_ = RealtimeTranscriber::start(lease_->state(), source_, o, sink);
    } catch (const Error& e) {
      ApiError a = api_error_of(e);
      if (a.status == 400)
        a = ApiError(400, std::string("the session's options do not work: ") + e.what(), "invalid_request_error",
                     e.field(), "invalid_session");
      send(error_event(a));
      stopping_ = true;
      end_session({});
      return false;
    }
    feeder_ = std::make_unique<PcmFeeder>(
        source_, rt_.get(),
        [this](std::string why) {
          asio::post(ioc_, [this, why] {
            send(error_event(ApiError(400, why, "invalid_request_error", "", "invalid_audio_frame")));
          });
        },
        [this] { asio::post(ioc_, [this] { end_session(last_event_); }); });
    return true;
  }

  // The client's stop (or the server's): the audio already sent is transcribed, then done.
  void begin_stop() {
    if (stopping_) return;
    stopping_ = true;
    // The client now waits for the last results, which may take longer than --read-timeout: keep
    // the connection alive with pings (a client answers them by itself) instead of closing it.
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::milliseconds(static_cast<long>(limits_.header_timeout_s * 1000));
    t.idle_timeout = std::chrono::milliseconds(static_cast<long>(limits_.idle_timeout_s * 1000));
    t.keep_alive_pings = true;
    ws_->set_option(t);
    if (feeder_)
      feeder_->finish();
    else
      end_session({});
  }

  // The transcription ended: the last message, then the close frame.
  void end_session(json last) {
    if (ended_) return;
    ended_ = true;
    if (!last.is_object()) last = json::object();
    last["type"] = "session.done";
    send(dump_event(last));
    wake_.cancel();
  }

  void send(std::string m) {
    outbox_.push_back(std::move(m));
    wake_.cancel();
  }

  // Sends what is queued, in order, one write at a time; after session.done, the close frame.
  asio::awaitable<void> writer() {
    Alive alive{this};
    beast::error_code ec;
    for (;;) {
      while (!outbox_.empty()) {
        const std::string m = std::move(outbox_.front());
        outbox_.pop_front();
        ws_->text(true);
        co_await ws_->async_write(asio::buffer(m), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      }
      if (ended_) break;
      wake_.expires_at(asio::steady_timer::time_point::max());
      co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    const websocket::close_reason why =
        svc_.stopping() ? websocket::close_reason(websocket::close_code::going_away, "server shutting down")
                        : websocket::close_reason(websocket::close_code::normal, "session done");
    co_await ws_->async_close(why, asio::redirect_error(asio::use_awaitable, ec));
  }

  // Every 100 ms: a stopping server finishes the session, and aborts it once its grace is over.
  asio::awaitable<void> watch() {
    Alive alive{this};
    asio::steady_timer tick(ioc_);
    beast::error_code ec;
    while (!ended_) {
      tick.expires_after(std::chrono::milliseconds(100));
      co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (svc_.stopping()) begin_stop();
      if (svc_.grace_over() && rt_ && rt_->running()) jobs::abort(rt_->job_id());
    }
  }

  Service& svc_;
  SessionLimits limits_;
  asio::io_context ioc_{1};
  std::optional<websocket::stream<beast::tcp_stream>> ws_;
  beast::flat_buffer buffer_;
  asio::steady_timer wake_{ioc_};
  std::deque<std::string> outbox_;
  RealtimeConfig config_;
  std::unique_ptr<Lease> lease_;
  std::shared_ptr<PushSource> source_;
  std::unique_ptr<RealtimeTranscriber> rt_;
  std::unique_ptr<PcmFeeder> feeder_;
  json last_event_;
  bool stopping_ = false, ended_ = false;
  int live_ = 0;  // coroutines still running
  int status_ = 400;
  double audio_s_ = 0;
  double compute_s_ = 0;
};

}  // namespace

void serve_realtime_session(Service& svc, int fd, const SessionLimits& limits,
                            const std::function<void(int status, double audio_s)>& on_end, std::string_view preread) {
  std::pair<int, double> r{500, 0.0};
  double compute_s = 0;
  {
    Session s(svc, fd, limits, preread);
    r = s.run();
    s.end_transcriber();
    compute_s = s.compute_s();
  }  // the transcriber and the state are released before the session is reported
  // The session's audio counts in /metrics like a request's (seconds and real-time factor).
  if (r.second > 0) svc.metrics().add_transcription(r.second, compute_s);
  if (on_end) on_end(r.first, r.second);
}

}  // namespace hark::server
