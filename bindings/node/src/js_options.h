// Reading an options object from JavaScript with checks: every getter returns the default when
// the property is missing (or undefined), and throws Napi::TypeError naming the option, what it
// must be and what it was, so `transcribe(.., { beamSize: 'x' })` rejects with a message a
// user can act on instead of being silently ignored.
#pragma once
#include <napi.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace hark_node {

// "a string", "an object", "null", "undefined", "a number (NaN)", ...
std::string describe_js_type(const Napi::Value& v);

// options must be undefined, null or an object; `what` names the call for the message.
Napi::Object options_object(const Napi::Value& v, const char* what);

bool has_option(const Napi::Object& o, const char* name);
bool get_bool(const Napi::Object& o, const char* name, bool def);
// A finite number in [lo, hi].
double get_number(const Napi::Object& o, const char* name, double def, double lo, double hi);
// An integer in [lo, hi].
int64_t get_int(const Napi::Object& o, const char* name, int64_t def, int64_t lo, int64_t hi);
std::string get_string(const Napi::Object& o, const char* name, const std::string& def);
// An array of finite numbers (empty when absent).
std::vector<double> get_numbers(const Napi::Object& o, const char* name);
// A string among `allowed`.
std::string get_enum(const Napi::Object& o, const char* name, std::initializer_list<const char*> allowed,
                     const std::string& def);
// A function, or an empty Napi::Function when absent.
Napi::Function get_function(const Napi::Object& o, const char* name);

}  // namespace hark_node
