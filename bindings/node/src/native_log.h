// hark's log (hark::set_log_callback) delivered to JavaScript: whisper.rn's toggleNativeLog and
// addNativeLogListener. hark logs from whatever thread is working; each message is queued to the
// JS thread and handed to one JS sink function (index.js fans it out to the listeners).
#pragma once
#include <napi.h>

namespace hark_node {

// setLogSink(fn | null): fn(level: 'debug'|'info'|'warn'|'error', text) receives hark's log from
// now on; null turns it off (the default: hark prints nothing).
Napi::Value set_log_sink(const Napi::CallbackInfo& info);

// Turns the log off when the environment goes away (registered by the addon's init).
void stop_log_on_exit(Napi::Env env);

}  // namespace hark_node
