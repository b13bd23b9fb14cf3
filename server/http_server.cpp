#include "http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "connection_probe.h"
#include "connection_server.h"
#include "realtime_session.h"
#include "responses.h"

namespace hark::server {
namespace {

using nlohmann::json;

// What the access log and metrics need of the request this worker thread is answering. httplib
// runs a request's pre-routing handler, handler, content provider and logger on one thread.
struct RequestInfo {
  Clock::time_point start{};
  long long id = 0;
  double audio_s = 0;
};
thread_local RequestInfo t_info;
std::atomic<long long> g_next_id{1};

bool whisper_cpp_route(const std::string& path) { return path == "/inference" || path == "/load"; }

void reply_error(httplib::Response& res, const ApiError& e, bool whisper_cpp) {
  res.status = e.status;
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  res.set_content(whisper_cpp ? whisper_cpp_error_json(e) : openai_error_json(e), "application/json");
}

Form form_of(const httplib::Request& req) {
  Form f;
  for (const auto& [name, part] : req.files) {
    if (name == "file" && !f.has_file) {
      f.has_file = true;
      f.file = part.content;
      f.filename = part.filename;
    } else {
      f.fields.emplace(name, part.content);
    }
  }
  for (const auto& [k, v] : req.params) f.fields.emplace(k, v);  // url-encoded forms
  return f;
}

json model_json(const std::string& name) {
  return {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "hark"}};
}

}  // namespace

HttpServer::HttpServer(Service& service) : svc_(service), http_(std::make_unique<ConnectionServer>()) { routes(); }

HttpServer::~HttpServer() { stop(); }

void HttpServer::routes() {
  const ServerOptions& o = svc_.options();
  ConnectionServer& s = *http_;
  // Enough workers that every running and queued request has one, plus a few for /health,
  // /metrics and requests that are refused at once.
  const size_t workers = o.models.size() * static_cast<size_t>(std::max(1, o.parallel)) +
                         static_cast<size_t>(std::max(0, o.queue_size)) + 4;
  s.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  s.set_payload_max_length(static_cast<size_t>(o.max_upload_mb * 1024 * 1024) + 64 * 1024);  // + form overhead
  ReadLimits limits;
  limits.read_timeout_s = o.read_timeout_sec;
  limits.header_timeout_s = o.header_timeout_sec;
  limits.min_body_rate = o.min_body_rate;
  s.set_read_limits(limits);
  s.set_keep_alive_timeout(5);
  // A realtime session holds one of its model's states, like a running request, so the worker
  // count above covers it too.
  s.set_upgrade_handler({"/v1/realtime", "/realtime"}, [this](int fd) {
    SessionLimits sl;
    sl.header_timeout_s = svc_.options().header_timeout_sec;
    sl.idle_timeout_s = svc_.options().read_timeout_sec;
    const auto start = Clock::now();
    serve_realtime_session(svc_, fd, sl, [this, start](int status, double audio_s) {
      svc_.metrics().count_request("/v1/realtime", status);
      if (!svc_.options().access_log) return;
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      const std::string line = json{{"id", g_next_id++}, {"method", "GET"},    {"route", "/v1/realtime"},
                                    {"status", status},  {"audio_s", audio_s}, {"ms", std::round(ms * 10) / 10}}
                                   .dump();
      std::fprintf(stderr, "%s\n", line.c_str());
    });
  });
  if (!o.cors_origin.empty())
    s.set_default_headers({{"Access-Control-Allow-Origin", o.cors_origin},
                           {"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                           {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                           {"Vary", "Origin"}});

  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    t_info = RequestInfo{Clock::now(), g_next_id++, 0};
    if (req.method == "OPTIONS") {  // CORS preflight: no key needed
      res.status = svc_.options().cors_origin.empty() ? 405 : 204;
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // API keys are checked in the handlers, after httplib has read the body: answering before
  // the upload is read would reset the connection under a client still sending it (the client
  // then sees a broken pipe instead of the 401).
  auto authorized = [this](const httplib::Request& req, httplib::Response& res) {
    const ServerOptions& opt = svc_.options();
    if (opt.api_keys.empty()) return true;
    const std::string auth = req.get_header_value("Authorization");
    const std::string bearer = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
    if (svc_.accepts_key(bearer)) return true;
    reply_error(res,
                ApiError(401,
                         auth.empty() ? "You didn't provide an API key (Authorization: Bearer KEY)"
                                      : "Incorrect API key provided",
                         "invalid_request_error", "", "invalid_api_key"),
                whisper_cpp_route(req.path));
    res.set_header("WWW-Authenticate", "Bearer");
    return false;
  };

  // One transcription request, either API; stream: OpenAI's server-sent events.
  auto transcribe = [this, authorized](const httplib::Request& req, httplib::Response& res, bool whisper_cpp,
                                       bool translate) {
    if (!authorized(req, res)) return;
    const ServerOptions& opt = svc_.options();
    const auto deadline =
        opt.timeout_sec > 0
            ? Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.timeout_sec))
            : Clock::time_point::max();
    // The worker's own socket when the ConnectionServer serves it (no search through the
    // process's descriptors, which other threads open and close meanwhile).
    const int sock = ConnectionServer::current_socket();
    auto probe = std::make_shared<ConnectionProbe>(
        sock >= 0 ? ConnectionProbe::on_socket(sock)
                  : ConnectionProbe::find(req.remote_addr, req.remote_port, req.local_port));
    auto write_failed = std::make_shared<std::atomic<bool>>(false);
    auto gone = [probe, write_failed] { return write_failed->load() || probe->closed(); };
    try {
      const Form form = form_of(req);
      TranscriptionRequest r =
          whisper_cpp ? parse_inference_form(form, opt.decoding) : parse_openai_form(form, translate, opt.decoding);
      auto p = std::make_shared<Prepared>(svc_.prepare(std::move(r), deadline, gone));
      p->request.audio = {};  // the upload is decoded; nothing may point into the request after this
      t_info.audio_s = p->audio_s;
      if (!p->request.stream) {
        const Transcript t = svc_.run(*p, deadline, gone, {});
        const Body b = render_transcript(p->request, t, p->audio_s);
        res.set_content(b.text, b.content_type);
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");  // proxies: pass events on as they come
      res.set_chunked_content_provider("text/event-stream", [this, p, deadline, gone, write_failed](
                                                                size_t, httplib::DataSink& sink) {
        auto send = [&](const std::string& ev) {
          if (!write_failed->load() && !sink.write(ev.data(), ev.size())) *write_failed = true;
        };
        std::string sent;
        try {
          const Transcript t = svc_.run(*p, deadline, gone, [&](const NewSegments& ns) {
            for (const Segment& seg : ns.segments) {
              // The first delta without its leading space, so the deltas add up to the text.
              std::string d =
                  sent.empty() ? seg.text.substr(std::min(seg.text.find_first_not_of(' '), seg.text.size())) : seg.text;
              if (d.empty()) continue;
              sent += d;
              send(sse_delta(d));
            }
          });
          send(sse_done(plain_text(t)));
        } catch (const ApiError& e) {
          send(sse_error(e));
        }
        p->lease.reset();  // the state is free before the connection winds down
        sink.done();
        return true;
      });
    } catch (const ApiError& e) {
      reply_error(res, e, whisper_cpp);
    }
  };

  s.Post("/v1/audio/transcriptions",
         [transcribe](const httplib::Request& q, httplib::Response& r) { transcribe(q, r, false, false); });
  s.Post("/v1/audio/translations",
         [transcribe](const httplib::Request& q, httplib::Response& r) { transcribe(q, r, false, true); });
  s.Post("/inference",
         [transcribe](const httplib::Request& q, httplib::Response& r) { transcribe(q, r, true, false); });

  s.Get("/v1/models", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    json data = json::array();
    for (const auto& m : svc_.models().all()) data.push_back(model_json(m->name()));
    res.set_content(json{{"object", "list"}, {"data", data}}.dump(), "application/json");
  });
  s.Get(R"(/v1/models/(.+))", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    const std::string id = req.matches[1];
    for (const auto& m : svc_.models().all())
      if (m->name() == id) return res.set_content(model_json(id).dump(), "application/json");
    reply_error(
        res,
        ApiError(404, "The model '" + id + "' does not exist", "invalid_request_error", "model", "model_not_found"),
        false);
  });

  s.Post("/load", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    try {
      const Form form = form_of(req);
      const std::string* model = form.get("model");
      if (!model) throw bad_field("model", "model: no 'model' field in the request");
      svc_.load(*model);
      res.set_content("Load was successful!", "text/plain; charset=utf-8");  // whisper-server's answer
    } catch (const ApiError& e) {
      reply_error(res, e, true);
    }
  });

  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const Health h = svc_.health();
    const auto def = svc_.models().default_model();
    res.status = h.ready ? 200 : 503;
    res.set_content(json{{"status", h.ready ? "ok" : "shutting down"},
                         {"ready", h.ready},
                         {"models", h.models},
                         {"default_model", def ? def->name() : ""},
                         {"jobs_running", h.running},
                         {"jobs_queued", h.queued}}
                        .dump(),
                    "application/json");
  });
  s.Get("/metrics", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    res.set_content(svc_.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });

  // Answers httplib made itself (no route, body too large, malformed request) get a body in the
  // route's error shape.
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string msg;
    if (ConnectionServer::request_timed_out()) {
      res.status = 408;
      msg = "the request was not sent in time (--read-timeout, --header-timeout, --min-body-rate)";
    } else if (res.status == 404)
      msg = "no such route: " + req.method + " " + req.path;
    else if (res.status == 413)
      msg = "the request is larger than this server takes (" + std::to_string(svc_.options().max_upload_mb) +
            " MB, --max-upload-mb)";
    else if (res.status == 405)
      msg = "method not allowed";
    else
      msg = "malformed request";
    reply_error(res, ApiError(res.status, msg, res.status >= 500 ? "server_error" : "invalid_request_error"),
                whisper_cpp_route(req.path));
  });
  s.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply_error(res, ApiError(500, what, "server_error"), whisper_cpp_route(req.path));
  });
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    svc_.metrics().count_request(req.path, res.status);
    if (svc_.options().access_log) {
      const double ms = t_info.start == Clock::time_point{}
                            ? 0.0
                            : std::chrono::duration<double, std::milli>(Clock::now() - t_info.start).count();
      const std::string line =
          json{{"id", t_info.id},      {"method", req.method},      {"route", req.path},
               {"status", res.status}, {"audio_s", t_info.audio_s}, {"ms", std::round(ms * 10) / 10}}
              .dump(-1, ' ', false, json::error_handler_t::replace);
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    t_info = RequestInfo{};
  });
}

namespace {

// cpp-httplib 0.11 listens with a backlog of 5 (compiled into Debian's library), so a burst of
// clients connecting at once overflows the accept queue and some get reset before a worker can
// take them. On Linux, listen() on a socket that already listens sets a new backlog: find ours
// (the listening TCP socket bound to `port`) among the descriptors and give it room.
void widen_listen_backlog(int port) {
  rlimit lim{};
  const int max_fd =
      getrlimit(RLIMIT_NOFILE, &lim) == 0 ? static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 65536)) : 1024;
  for (int fd = 0; fd < max_fd; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port) ::listen(fd, SOMAXCONN);
  }
}

}  // namespace

void HttpServer::start() {
  // A client that goes away mid-answer must not kill the process: writes then fail with EPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  const ServerOptions& o = svc_.options();
  port_ = o.port == 0 ? http_->bind_to_any_port(o.host) : (http_->bind_to_port(o.host, o.port) ? o.port : -1);
  if (port_ < 0)
    throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (in use, or not an address here)");
  widen_listen_backlog(port_);
  thread_ = std::thread([this] { http_->listen_after_bind(); });
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (!http_->is_running() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::stop() {
  if (stopped_ || !thread_.joinable()) return;
  stopped_ = true;
  http_->stop();  // no new connections; the workers finish what they hold
  svc_.drain(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(svc_.options().shutdown_grace_sec)));
  thread_.join();
}

}  // namespace hark::server
