#include "http_server.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "connection_probe.h"
#include "form_parser.h"
#include "http_text.h"
#include "realtime_session.h"
#include "responses.h"
#include "ui_assets.h"

namespace hark::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {

using Seconds = std::chrono::duration<double>;
Clock::duration after(double s) { return std::chrono::duration_cast<Clock::duration>(Seconds(std::max(0.0, s))); }

bool whisper_cpp_route(std::string_view path) { return path == "/inference" || path == "/load"; }
bool realtime_route(std::string_view path) { return path == "/v1/realtime" || path == "/realtime"; }

// OpenAI's model object, and what a client (the page at /) needs to offer the model's options:
// its languages (none but English for an .en model, so no translation) and whether the server
// can skip silence (vad).
json model_json(const ModelPool& m, bool vad) {
  json languages = json::array();
  const int n = m.info().multilingual ? language_count() : 1;
  for (int i = 0; i < n; ++i) languages.push_back({{"code", language_code_at(i)}, {"name", language_name_at(i)}});
  return {{"id", m.name()},
          {"object", "model"},
          {"created", 0},
          {"owned_by", "hark"},
          {"multilingual", m.info().multilingual},
          {"languages", languages},
          {"vad", vad}};
}

// An answer before it is written: status, headers, body.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // close the connection after it (a body left unread, a broken request)
};

Reply error_reply(const ApiError& e, bool whisper_cpp) {
  Reply r;
  r.status = e.status;
  r.body = whisper_cpp ? whisper_cpp_error_json(e) : openai_error_json(e);
  if (e.retry_after_s > 0) r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_s));
  if (e.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

Reply closing_error(int status, const std::string& msg, std::string_view path = {}) {
  Reply r = error_reply(ApiError(status, msg, status >= 500 ? "server_error" : "invalid_request_error"),
                        whisper_cpp_route(path));
  r.close = true;
  return r;
}

// What the raw head says before Beast parses it: the things Beast accepts or cannot report and
// a server on the open internet must refuse (RFC 9112's smuggling rules among them).
struct HeadCheck {
  int status = 0;  // 0: fine
  std::string why;
};

// A header line of this name (any case), its colon next or after white space.
bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size() + 1) return false;
  const char after = line[name.size()];
  return iequals(line.substr(0, name.size()), name) && (after == ':' || after == ' ' || after == '\t');
}

HeadCheck check_head(std::string_view head, const ServerOptions& o) {
  const size_t eol = head.find("\r\n");
  const std::string_view request_line = head.substr(0, eol);
  // Method SP target SP version: the target's length, before anything else.
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return {400, "malformed request line"};
  if (sp2 - sp1 - 1 > o.max_uri_bytes)
    return {414, "the request target is longer than " + std::to_string(o.max_uri_bytes) + " bytes (--max-uri-bytes)"};
  size_t lines = 0, content_lengths = 0;
  bool chunked = false, transfer_encoding = false;
  std::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    const size_t e = rest.find("\r\n");
    const std::string_view line = rest.substr(0, e);
    rest = e == std::string_view::npos ? std::string_view() : rest.substr(e + 2);
    if (line.empty()) break;
    if (line[0] == ' ' || line[0] == '\t') return {400, "a folded header line (obs-fold is not accepted)"};
    if (++lines > o.max_headers)
      return {431, "more than " + std::to_string(o.max_headers) + " header lines (--max-headers)"};
    if (iequals_prefix(line, "content-length")) ++content_lengths;
    if (iequals_prefix(line, "transfer-encoding")) {
      transfer_encoding = true;
      std::string v(line.substr(line.find(':') + 1));
      for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      chunked = v.find("chunked") != std::string::npos;
    }
  }
  if (content_lengths > 1) return {400, "more than one Content-Length"};
  if (content_lengths && transfer_encoding) return {400, "both Content-Length and Transfer-Encoding"};
  if (transfer_encoding && !chunked) return {400, "a Transfer-Encoding other than chunked"};
  return {};
}

// Where one request is while a thread other than the I/O thread works on it: the answer (whole,
// or a stream of server-sent events), handed back to the connection's coroutine, which waits on
// `wake` (cancelled when there is something new).
struct Exchange : std::enable_shared_from_this<Exchange> {
  explicit Exchange(asio::any_io_executor ex) : wake(ex, Clock::time_point::max()) {}
  std::mutex mu;
  asio::steady_timer wake;
  bool head_ready = false;  // reply holds the answer's head (and, unless streaming, its body)
  bool streaming = false;   // the body is the events in `chunks`, then the end
  bool finished = false;    // nothing more will come
  Reply reply;
  std::deque<std::string> chunks;
  double audio_s = 0;

  // From the working thread: something changed; the connection's coroutine looks.
  void notify() {
    asio::post(wake.get_executor(), [self = shared_from_this()] { self->wake.cancel(); });
  }
};

// A connection's socket and its deadline. Beast's tcp_stream closes the socket when a deadline
// passes; this one cancels the pending operation instead, so the server can still answer 408.
struct Conn : std::enable_shared_from_this<Conn> {
  explicit Conn(tcp::socket s) : sock(std::move(s)), timer(sock.get_executor()) {}
  tcp::socket sock;
  asio::steady_timer timer;
  uint64_t generation = 0;
  bool timed_out = false;
  bool answering = false;  // a whole request is in, its answer not yet written (stop waits for it)

  tcp::socket& socket() { return sock; }
  // From now, operations still pending after `d` are cancelled (and timed_out set).
  void expires_after(Clock::duration d) {
    timed_out = false;
    timer.expires_after(d);
    timer.async_wait([w = weak_from_this(), g = ++generation](beast::error_code ec) {
      if (ec) return;  // re-armed or gone: never touches a connection that may have ended
      const auto c = w.lock();
      if (!c || c->generation != g) return;
      c->timed_out = true;
      beast::error_code ignored;
      c->sock.cancel(ignored);
    });
  }
  void expires_never() {
    ++generation;
    timer.cancel();
  }
  // An operation's error as the deadline's when the deadline cancelled it.
  void classify(beast::error_code& ec) const {
    if (ec == asio::error::operation_aborted && timed_out) ec = beast::error::timeout;
  }
};

}  // namespace

struct HttpServer::Impl {
  Service& svc;
  // (Declared before the io_context: the connections' coroutine frames it destroys last use them.)
  // The open connections' sockets, to close them all at stop (I/O thread only).
  std::set<Conn*> open;
  std::atomic<int> n_open{0};
  std::atomic<bool> closing{false};  // stopping: connections end after the answer they owe
  // Threads working for a request or a realtime session (waited for at stop).
  std::mutex work_mu;
  std::condition_variable work_cv;
  int working = 0;
  std::atomic<bool> draining{false};
  std::atomic<long long> next_id{1};
  int port = -1;
  bool stopped = false;
  asio::io_context ioc{1};
  // Keeps the I/O thread running until stop() ends it, also once no connection is left.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running{ioc.get_executor()};
  tcp::acceptor acceptor{ioc};
  std::thread io_thread;

  explicit Impl(Service& s) : svc(s) {}
  const ServerOptions& opt() const { return svc.options(); }
  // A file of the page at / (nullptr with --no-ui).
  const UiAsset* ui_asset(std::string_view path) const { return opt().ui ? find_ui_asset(path) : nullptr; }

  // A thread for work off the I/O thread, counted so stop() waits for it.
  template <typename F>
  void spawn(F&& f) {
    {
      std::lock_guard<std::mutex> lock(work_mu);
      ++working;
    }
    std::thread([this, f = std::forward<F>(f)]() mutable {
      f();
      std::lock_guard<std::mutex> lock(work_mu);
      --working;
      work_cv.notify_all();
    }).detach();
  }

  void log(long long id, std::string_view method, std::string_view route, int status, double audio_s,
           Clock::time_point start) {
    svc.metrics().count_request(std::string(route), status);
    if (!opt().access_log) return;
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    const std::string line =
        json{{"id", id},           {"method", std::string(method)}, {"route", std::string(route)}, {"status", status},
             {"audio_s", audio_s}, {"ms", std::round(ms * 10) / 10}}
            .dump(-1, ' ', false, json::error_handler_t::replace);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(tcp::socket socket);
  asio::awaitable<bool> write(Conn& stream, Reply& r, unsigned version, bool keep_alive);

  // The answer to a request whose head and body are read (on the I/O thread when cheap, else on a
  // thread of its own through `ex`).
  void handle(const http::request<http::string_body>& req, const std::string& path, std::string_view query, int fd,
              Exchange& ex);
  Reply transcribe(const http::request<http::string_body>& req, std::string_view query, bool whisper_cpp,
                   bool translate, int fd, Exchange& ex);
  std::optional<ApiError> unauthorized(const http::request<http::string_body>& req) const;
  std::optional<ApiError> foreign_origin(const http::request<http::string_body>& req) const;
};

HttpServer::HttpServer(Service& service) : impl_(std::make_unique<Impl>(service)) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const { return impl_->port; }

std::optional<ApiError> HttpServer::Impl::unauthorized(const http::request<http::string_body>& req) const {
  if (opt().api_keys.empty()) return std::nullopt;
  const std::string auth(req[http::field::authorization]);
  const std::string bearer = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
  if (svc.accepts_key(bearer)) return std::nullopt;
  return ApiError(
      401, auth.empty() ? "You didn't provide an API key (Authorization: Bearer KEY)" : "Incorrect API key provided",
      "invalid_request_error", "", "invalid_api_key");
}

// Without API keys, a page from another site could make a visitor's browser change this server's
// state or spend its compute (a form POST needs no CORS preflight): POSTs must come from the
// server's own origin or the one --cors allows. Clients that are not browsers send no Origin.
std::optional<ApiError> HttpServer::Impl::foreign_origin(const http::request<http::string_body>& req) const {
  if (!opt().api_keys.empty()) return std::nullopt;
  const std::string origin(req[http::field::origin]);
  if (origin.empty()) return std::nullopt;
  const std::string host(req[http::field::host]);
  const std::string& allow = opt().cors_origin;
  if (allow == "*" || origin == allow || origin == "http://" + host || origin == "https://" + host) return std::nullopt;
  return ApiError(403, "origin " + origin + " may not use this route here (--cors ORIGIN allows one)",
                  "permission_error", "", "origin_not_allowed");
}

asio::awaitable<bool> HttpServer::Impl::write(Conn& stream, Reply& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "hark");
  res.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) res.set(k, v);
  const std::string& cors = opt().cors_origin;
  if (!cors.empty()) {
    res.set(http::field::access_control_allow_origin, cors);
    res.set(http::field::access_control_allow_methods, "GET, POST, OPTIONS");
    res.set(http::field::access_control_allow_headers, "Authorization, Content-Type");
    res.set(http::field::vary, "Origin");
  }
  res.keep_alive(keep_alive && !r.close);
  res.body() = std::move(r.body);
  res.prepare_payload();
  beast::error_code ec;
  stream.expires_after(after(opt().read_timeout_sec));
  co_await http::async_write(stream.socket(), res, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec && !res.keep_alive()) {
    // Lingering close: what the client still sends (the body of an upload refused after its
    // head) is read and dropped for a moment, so the client reads this answer instead of a reset.
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    const auto until = Clock::now() + std::chrono::seconds(2);
    std::vector<char> sink(16384);
    size_t dropped = 0;
    beast::error_code rec;
    while (!rec && dropped < (64u << 20) && Clock::now() < until) {
      stream.expires_after(until - Clock::now());
      dropped +=
          co_await stream.socket().async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, rec));
    }
    co_return true;
  }
  co_return !ec;
}

asio::awaitable<void> HttpServer::Impl::accept_loop() {
  for (;;) {
    beast::error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      // E.g. out of descriptors for a moment: wait a little rather than spin, then go on.
      asio::steady_timer pause(ioc, std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    asio::co_spawn(ioc, serve(std::move(socket)), asio::detached);
  }
}

// One connection: requests one after the other (keep-alive, pipelining) until it closes.
asio::awaitable<void> HttpServer::Impl::serve(tcp::socket socket) {
  const auto conn = std::make_shared<Conn>(std::move(socket));
  Conn& stream = *conn;
  open.insert(&stream);
  ++n_open;
  struct Forget {
    Impl* self;
    Conn* s;
    ~Forget() {
      self->open.erase(s);
      --self->n_open;
    }
  } forget{this, &stream};
  beast::flat_buffer buf;
  const ServerOptions& o = opt();
  const size_t head_limit = o.max_header_bytes + o.max_uri_bytes + 16;
  const uint64_t body_limit = static_cast<uint64_t>(o.max_upload_mb * 1024 * 1024) + 64 * 1024;  // + form overhead
  bool first = true;
  beast::error_code ec;
  for (;;) {
    // ---- the head: wait for its first byte, then until the empty line, within the limits ----
    const auto idle_deadline = first ? after(o.header_timeout_sec) : after(o.keep_alive_timeout_sec);
    first = false;
    auto skip_blank_lines = [&] {  // RFC 9112: empty lines before a request are ignored
      while (buf.size() >= 2 && std::string_view(static_cast<const char*>(buf.data().data()), 2) == "\r\n")
        buf.consume(2);
    };
    skip_blank_lines();
    if (buf.size() == 0) {
      stream.expires_after(idle_deadline);
      const size_t n =
          co_await stream.socket().async_read_some(buf.prepare(8192), asio::redirect_error(asio::use_awaitable, ec));
      stream.classify(ec);
      if (ec) co_return;  // closed, or idle for too long
      buf.commit(n);
      skip_blank_lines();
    }
    const auto start = Clock::now();
    const long long id = next_id++;
    stream.expires_after(after(o.header_timeout_sec));
    size_t head_len = 0;
    size_t scanned = 0;
    for (;;) {
      const std::string_view have(static_cast<const char*>(buf.data().data()), buf.size());
      const size_t at = have.find("\r\n\r\n", scanned > 3 ? scanned - 3 : 0);
      if (at != std::string_view::npos) {
        head_len = at + 4;
        break;
      }
      scanned = have.size();
      if (have.size() > head_limit) {
        Reply r = closing_error(431, "the request head is larger than " + std::to_string(o.max_header_bytes) +
                                         " bytes (--max-header-bytes)");
        co_await write(stream, r, 11, false);
        log(id, "", "", 431, 0, start);
        co_return;
      }
      const size_t n =
          co_await stream.socket().async_read_some(buf.prepare(8192), asio::redirect_error(asio::use_awaitable, ec));
      stream.classify(ec);
      if (ec == beast::error::timeout) {
        Reply r = closing_error(408, "the request head was not sent in time (--header-timeout)");
        co_await write(stream, r, 11, false);
        log(id, "", "", 408, 0, start);
        co_return;
      }
      if (ec) co_return;
      buf.commit(n);
    }
    const std::string head(static_cast<const char*>(buf.data().data()), head_len);
    if (const HeadCheck hc = check_head(head, o); hc.status != 0) {
      Reply r = closing_error(hc.status, hc.why);
      co_await write(stream, r, 11, false);
      log(id, "", "", hc.status, 0, start);
      co_return;
    }
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(head_len + 1));
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // counted below, as it arrives
    parser.eager(false);
    const size_t used = parser.put(asio::buffer(head), ec);
    if (ec || !parser.is_header_done() || used != head_len) {
      Reply r = closing_error(400, std::string("malformed request head (") + (ec ? ec.message() : "incomplete") + ")");
      co_await write(stream, r, 11, false);
      log(id, "", "", 400, 0, start);
      co_return;
    }
    auto& req = parser.get();
    const std::string_view target(req.target().data(), req.target().size());
    const std::string path(target.substr(0, target.find('?')));
    const std::string_view query =
        target.find('?') == std::string_view::npos ? std::string_view() : target.substr(target.find('?') + 1);
    const std::string method(req.method_string());
    const bool whisper_cpp = whisper_cpp_route(path);
    auto refuse = [&](const ApiError& e) -> asio::awaitable<void> {
      Reply r = error_reply(e, whisper_cpp);
      r.close = true;  // its body (if any) is left unread
      co_await write(stream, r, req.version(), false);
      log(id, method, path, e.status, 0, start);
    };
    if (req.version() >= 11 && req[http::field::host].empty()) {
      co_await refuse(ApiError(400, "an HTTP/1.1 request needs a Host header"));
      co_return;
    }

    // ---- the realtime WebSocket: the connection goes to a session thread, head included ----
    if (realtime_route(path)) {
      std::string preread(static_cast<const char*>(buf.data().data()), buf.size());
      beast::error_code rc;
      stream.expires_never();
      const int fd = stream.socket().release(rc);
      if (rc || fd < 0) co_return;
      SessionLimits sl;
      sl.header_timeout_s = o.header_timeout_sec;
      sl.idle_timeout_s = o.read_timeout_sec;
      spawn([this, fd, sl, preread = std::move(preread), start, id] {
        serve_realtime_session(
            svc, fd, sl, [&](int status, double audio_s) { log(id, "GET", "/v1/realtime", status, audio_s, start); },
            preread);
        ::close(fd);
      });
      co_return;
    }
    buf.consume(head_len);

    // ---- before the body: the key, the origin, the size ----
    // The health check and the page (which asks for the key itself) need no key.
    const bool health = path == "/health";
    const bool open_route = health || (req.method() == http::verb::get && ui_asset(path));
    if (req.method() == http::verb::options) {
      Reply r;
      r.status = o.cors_origin.empty() ? 405 : 204;
      r.close = !parser.is_done();
      r.content_type = "text/plain";
      if (!co_await write(stream, r, req.version(), req.keep_alive()) || r.close || !req.keep_alive()) co_return;
      log(id, method, path, r.status, 0, start);
      if (!parser.is_done()) co_return;
      continue;
    }
    if (!open_route) {
      if (auto e = unauthorized(req)) {
        co_await refuse(*e);
        co_return;
      }
    }
    if (req.method() == http::verb::post) {  // every route that changes state or spends compute
      if (auto e = foreign_origin(req)) {
        co_await refuse(*e);
        co_return;
      }
    }
    if (const auto cl = parser.content_length(); cl && *cl > body_limit) {
      co_await refuse(ApiError(413,
                               "the request body (" + std::to_string(*cl) +
                                   " bytes) is larger than this server takes (" +
                                   std::to_string(static_cast<long long>(o.max_upload_mb)) + " MB, --max-upload-mb)",
                               "invalid_request_error", "", "request_too_large"));
      co_return;
    }

    // ---- the body, counted and timed as it arrives ----
    if (!parser.is_done()) {
      if (req[http::field::expect] == "100-continue") {
        static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        stream.expires_after(after(o.read_timeout_sec));
        co_await asio::async_write(stream.socket(), asio::buffer(kContinue),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return;
      }
      parser.eager(true);
      const auto body_start = Clock::now();
      const auto upload_deadline = body_start + after(o.upload_timeout_sec);
      uint64_t received = 0;
      bool need_more = buf.size() == 0;
      while (!parser.is_done()) {
        if (need_more) {
          const auto now = Clock::now();
          if (now >= upload_deadline) {
            co_await refuse(ApiError(408, "the request body was not sent in time (--upload-timeout)"));
            co_return;
          }
          stream.expires_after(std::min(after(o.read_timeout_sec), upload_deadline - now));
          const size_t n = co_await stream.socket().async_read_some(buf.prepare(65536),
                                                                    asio::redirect_error(asio::use_awaitable, ec));
          stream.classify(ec);
          if (ec == beast::error::timeout) {
            co_await refuse(ApiError(408, "the request body was not sent in time (--read-timeout, --upload-timeout)"));
            co_return;
          }
          if (ec) co_return;  // the client went away mid-body
          buf.commit(n);
          received += n;
          // The body's average rate, once it has had --read-timeout to get going.
          const double elapsed = std::chrono::duration<double>(Clock::now() - body_start).count();
          if (o.min_body_rate > 0 && elapsed > o.read_timeout_sec &&
              static_cast<double>(received) / elapsed < o.min_body_rate) {
            co_await refuse(ApiError(408, "the request body arrives slower than this server takes (--min-body-rate)"));
            co_return;
          }
        }
        const size_t n = parser.put(buf.data(), ec);
        buf.consume(n);
        if (ec == http::error::need_more) {
          ec = {};
          need_more = true;
          continue;
        }
        if (ec) {
          co_await refuse(ApiError(400, "malformed request body (" + ec.message() + ")"));
          co_return;
        }
        need_more = buf.size() == 0;
        if (req.body().size() > body_limit) {
          co_await refuse(ApiError(413,
                                   "the request body is larger than this server takes (" +
                                       std::to_string(static_cast<long long>(o.max_upload_mb)) +
                                       " MB, --max-upload-mb)",
                                   "invalid_request_error", "", "request_too_large"));
          co_return;
        }
      }
    }

    // ---- the answer ----
    const bool keep_alive = req.keep_alive() && !closing;
    stream.answering = true;
    const auto exchange = std::make_shared<Exchange>(stream.socket().get_executor());
    Exchange& ex = *exchange;
    const bool heavy =
        req.method() == http::verb::post && (path == "/v1/audio/transcriptions" || path == "/v1/audio/translations" ||
                                             path == "/inference" || path == "/load");
    const int fd = stream.socket().native_handle();
    if (!heavy) {
      handle(req, path, query, fd, ex);
    } else {
      spawn([this, &req, path, query, fd, exchange] { handle(req, path, query, fd, *exchange); });
      // Wait for the head (and body) or the events, writing events as they come.
      bool head_written = false;
      bool alive = true;
      bool streaming = false;
      for (;;) {
        std::deque<std::string> chunks;
        bool finished, head_ready;
        {
          std::lock_guard<std::mutex> lock(ex.mu);
          chunks.swap(ex.chunks);
          finished = ex.finished;
          head_ready = ex.head_ready;
          streaming = ex.streaming;
        }
        if (streaming && head_ready && alive) {
          if (!head_written) {
            std::string h =
                "HTTP/1.1 200 OK\r\nServer: hark\r\nContent-Type: text/event-stream\r\n"
                "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n";
            if (!o.cors_origin.empty()) h += "Access-Control-Allow-Origin: " + o.cors_origin + "\r\nVary: Origin\r\n";
            h += keep_alive ? "\r\n" : "Connection: close\r\n\r\n";
            stream.expires_after(after(o.read_timeout_sec));
            co_await asio::async_write(stream.socket(), asio::buffer(h), asio::redirect_error(asio::use_awaitable, ec));
            alive = !ec;
            head_written = true;
          }
          for (const std::string& c : chunks) {
            if (!alive || c.empty()) continue;
            char size[24];
            std::snprintf(size, sizeof size, "%zx\r\n", c.size());
            const std::string framed = size + c + "\r\n";
            stream.expires_after(after(o.read_timeout_sec));
            co_await asio::async_write(stream.socket(), asio::buffer(framed),
                                       asio::redirect_error(asio::use_awaitable, ec));
            alive = !ec;
          }
        }
        if (finished) break;
        {
          // A notify() while the events above were being written ran its wake-up with no wait
          // pending: what it announced is here, so look again instead of waiting for the next.
          std::lock_guard<std::mutex> lock(ex.mu);
          if (!ex.chunks.empty() || ex.finished || ex.head_ready != head_ready || ex.streaming != streaming) continue;
        }
        ex.wake.expires_at(Clock::time_point::max());
        co_await ex.wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      if (streaming) {
        if (alive) {
          static const std::string kEnd = "0\r\n\r\n";
          stream.expires_after(after(o.read_timeout_sec));
          co_await asio::async_write(stream.socket(), asio::buffer(kEnd),
                                     asio::redirect_error(asio::use_awaitable, ec));
          alive = !ec;
        }
        log(id, method, path, 200, ex.audio_s, start);
        stream.answering = false;
        if (!alive || !keep_alive || closing) co_return;
        continue;
      }
    }
    Reply r = std::move(ex.reply);
    const int status = r.status;
    const bool ok = co_await write(stream, r, req.version(), keep_alive);
    log(id, method, path, status, ex.audio_s, start);
    stream.answering = false;
    if (!ok || !keep_alive || r.close || closing) co_return;
  }
}

void HttpServer::Impl::handle(const http::request<http::string_body>& req, const std::string& path,
                              std::string_view query, int fd, Exchange& ex) {
  const bool whisper_cpp = whisper_cpp_route(path);
  const ServerOptions& o = opt();
  Reply r;
  try {
    if (draining && path != "/health")
      throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
    const http::verb m = req.method();
    if (const UiAsset* page = m == http::verb::get ? ui_asset(path) : nullptr) {
      r.content_type = std::string(page->content_type);
      r.body = std::string(page->bytes);
      for (const auto& [k, v] : ui_headers()) r.headers.emplace_back(k, v);
    } else if (path == "/health" && m == http::verb::get) {
      const Health h = svc.health();
      const auto def = svc.models().default_model();
      const bool ready = h.ready && !draining;
      r.status = ready ? 200 : 503;
      r.body = json{{"status", ready ? "ok" : "shutting down"},
                    {"ready", ready},
                    {"models", h.models},
                    {"default_model", def ? def->name() : ""},
                    {"jobs_running", h.running},
                    {"jobs_queued", h.queued}}
                   .dump();
    } else if (path == "/metrics" && m == http::verb::get) {
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      r.body = svc.metrics_text();
    } else if (path == "/v1/models" && m == http::verb::get) {
      json data = json::array();
      for (const auto& mp : svc.models().all()) data.push_back(model_json(*mp, !o.vad_model.empty()));
      r.body = json{{"object", "list"}, {"data", data}}.dump();
    } else if (path.rfind("/v1/models/", 0) == 0 && path.size() > 11 && m == http::verb::get) {
      const std::string id = percent_decode(path.substr(11), false);
      bool found = false;
      for (const auto& mp : svc.models().all())
        if (mp->name() == id) {
          r.body = model_json(*mp, !o.vad_model.empty()).dump();
          found = true;
        }
      if (!found)
        throw ApiError(404, "The model '" + id + "' does not exist", "invalid_request_error", "model",
                       "model_not_found");
    } else if (m == http::verb::post &&
               (path == "/v1/audio/transcriptions" || path == "/v1/audio/translations" || path == "/inference")) {
      r = transcribe(req, query, whisper_cpp, path == "/v1/audio/translations", fd, ex);
      if (ex.streaming) return;  // transcribe() finished the exchange itself
    } else if (m == http::verb::post && path == "/load") {
      Form form = parse_form(std::string(req[http::field::content_type]), req.body());
      parse_query(query, form);
      const std::string* model = form.get("model");
      if (!model) throw bad_field("model", "model: no 'model' field in the request");
      svc.load(*model);
      r.content_type = "text/plain; charset=utf-8";
      r.body = "Load was successful!";  // whisper-server's answer
    } else {
      static const std::set<std::string> known = {
          "/health",    "/metrics", "/v1/models", "/v1/audio/transcriptions", "/v1/audio/translations",
          "/inference", "/load"};
      if (known.count(path) || path.rfind("/v1/models/", 0) == 0)
        throw ApiError(405, "method not allowed: " + std::string(req.method_string()) + " " + path);
      throw ApiError(404, "no such route: " + std::string(req.method_string()) + " " + path);
    }
  } catch (const ApiError& e) {
    r = error_reply(e, whisper_cpp);
  } catch (const std::exception& e) {
    r = error_reply(ApiError(500, e.what(), "server_error"), whisper_cpp);
  }
  std::lock_guard<std::mutex> lock(ex.mu);
  ex.reply = std::move(r);
  ex.head_ready = true;
  ex.finished = true;
  ex.notify();
}

// One transcription request, either API; with stream=true OpenAI's server-sent events go to
// `ex` as they come (and the exchange is finished here).
Reply HttpServer::Impl::transcribe(const http::request<http::string_body>& req, std::string_view query,
                                   bool whisper_cpp, bool translate, int fd, Exchange& ex) {
  const ServerOptions& o = opt();
  const auto deadline = o.timeout_sec > 0 ? Clock::now() + after(o.timeout_sec) : Clock::time_point::max();
  auto probe = std::make_shared<ConnectionProbe>(fd);
  auto gone = [probe] { return probe->closed(); };
  Form form = parse_form(std::string(req[http::field::content_type]), req.body());
  parse_query(query, form);
  TranscriptionRequest tr =
      whisper_cpp ? parse_inference_form(form, o.decoding) : parse_openai_form(form, translate, o.decoding);
  auto p = std::make_shared<Prepared>(svc.prepare(std::move(tr), deadline, gone));
  p->request.audio = {};  // the upload is decoded; nothing may point into the request after this
  {
    std::lock_guard<std::mutex> lock(ex.mu);
    ex.audio_s = p->audio_s;
  }
  if (!p->request.stream) {
    const Transcript t = svc.run(*p, deadline, gone, {});
    const Body b = render_transcript(p->request, t, p->audio_s);
    Reply r;
    r.content_type = b.content_type;
    r.body = b.text;
    return r;
  }
  auto send = [&ex](std::string ev) {
    std::lock_guard<std::mutex> lock(ex.mu);
    ex.chunks.push_back(std::move(ev));
    ex.notify();
  };
  {
    std::lock_guard<std::mutex> lock(ex.mu);
    ex.streaming = true;
    ex.head_ready = true;
    ex.notify();
  }
  std::string sent;
  const bool verbose = p->request.format == Format::VerboseJson;
  size_t next_id = 0;  // the segment's index in the transcript (verbose_json's id)
  try {
    const Transcript t = svc.run(*p, deadline, gone, [&](const NewSegments& ns) {
      for (const Segment& seg : ns.segments) {
        // The first delta without its leading space, so the deltas add up to the text.
        std::string d =
            sent.empty() ? seg.text.substr(std::min(seg.text.find_first_not_of(' '), seg.text.size())) : seg.text;
        const size_t id = next_id++;
        if (d.empty() && !verbose) continue;
        sent += d;
        send(verbose ? sse_segment_delta(p->request, d, id, seg) : sse_delta(d));
      }
    });
    send(verbose ? sse_done_verbose(p->request, t, p->audio_s) : sse_done(plain_text(t)));
  } catch (const ApiError& e) {
    send(sse_error(e));
  }
  p->lease.reset();  // the state is free before the connection winds down
  std::lock_guard<std::mutex> lock(ex.mu);
  ex.finished = true;
  ex.notify();
  return {};
}

void HttpServer::start() {
  Impl& s = *impl_;
  // A client that goes away mid-answer must not kill the process: writes then fail with EPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const ServerOptions& o = s.opt();
  beast::error_code ec;
  const auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": not an IP address");
  const tcp::endpoint ep(address, static_cast<unsigned short>(o.port));
  s.acceptor.open(ep.protocol(), ec);
  // SO_REUSEADDR only (restart while old connections linger in TIME_WAIT); never SO_REUSEPORT,
  // so a second server on a port in use fails here instead of sharing it.
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(ep, ec);
  if (ec == asio::error::address_in_use)
    throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                ": the port is in use by another program (pick another with --port)");
  if (!ec) s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (" + ec.message() +
                "; in use, or not an address here)");
  s.port = s.acceptor.local_endpoint().port();
  asio::co_spawn(s.ioc, s.accept_loop(), asio::detached);
  s.io_thread = std::thread([&s] { s.ioc.run(); });
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (s.stopped || !s.io_thread.joinable()) return;
  s.stopped = true;
  // Draining: /health and new requests answer 503 while running jobs finish.
  s.draining = true;
  s.svc.drain(after(s.opt().shutdown_grace_sec));
  {
    // Request threads end once their jobs ended or were aborted (drain did that) and their
    // answers are handed over; realtime sessions once they see the server stopping (they close
    // with 1001, their job aborted when the grace is over). Both are bounded by their deadlines.
    std::unique_lock<std::mutex> lock(s.work_mu);
    s.work_cv.wait(lock, [&s] { return s.working == 0; });
  }
  // Then the connections close: at once those reading (uploads in progress are cut, idle
  // keep-alives end), after their answer those writing one, for at most a second more.
  auto close_all = [&s](bool only_idle) {
    std::promise<void> done;
    asio::post(s.ioc, [&s, &done, only_idle] {
      beast::error_code ec;
      s.acceptor.close(ec);
      for (Conn* c : s.open)
        if (!only_idle || !c->answering) c->socket().close(ec);
      done.set_value();
    });
    done.get_future().wait();
  };
  s.closing = true;
  close_all(true);
  for (int i = 0; i < 100 && s.n_open > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  close_all(false);
  s.keep_running.reset();
  s.ioc.stop();
  s.io_thread.join();
}

}  // namespace hark::server
