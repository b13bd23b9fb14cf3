// Realtime transcription over a WebSocket (GET /v1/realtime): the client streams PCM frames as
// binary messages and gets the realtime transcriber's partial and final results back as JSON text
// messages, on a connection the HTTP server handed over (server/http_server.h).
//
// The protocol (README "Realtime over WebSocket"):
//   upgrade   GET /v1/realtime?model=..&language=..&sample_rate=..&format=s16le|f32le&... with
//             Authorization: Bearer KEY (or ?api_key=KEY) when the server has keys; refused with
//             an HTTP status and OpenAI's error body (401, 400 a bad option, 404 no such model,
//             503 + Retry-After when every state of the model is busy, 426 not an upgrade).
//   client -> binary frames of PCM (whole sample frames); text {"type":"session.update", key: value}
//             (before the first audio), {"type":"stop"} (finish: the rest is transcribed).
//   server -> {"type":"session.started", ...}, {"type":"transcript.partial"|"transcript.final", ...
//             the transcriber's event}, {"type":"error","error":{...}} (the session goes on), and
//             last {"type":"session.done", ...}, then a close frame.
// A session holds one state of its model's pool from the upgrade to the end, so sessions and HTTP
// jobs share --parallel. A client that goes away (or stays silent past --read-timeout) has its
// transcription aborted.
#pragma once
#include <functional>
#include <string_view>

#include "service.h"

namespace hark::server {

struct SessionLimits {
  double header_timeout_s = 10;  // the upgrade request must arrive within this
  double idle_timeout_s = 30;    // a session with no message for this long is closed
  size_t max_message_bytes = 4 << 20;
};

// Serves one session on the connected socket `fd` until it ends; does not close fd. `preread`:
// the bytes of the connection the HTTP server has read already (the upgrade request's head),
// read before the socket. on_end(status, audio_s) reports it once for the access log and
// metrics: 101 for a session that was upgraded, else the HTTP status it was refused with.
void serve_realtime_session(Service& svc, int fd, const SessionLimits& limits,
                            const std::function<void(int status, double audio_s)>& on_end,
                            std::string_view preread = {});

}  // namespace hark::server
