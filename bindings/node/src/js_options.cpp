// Checked option getters (see the header).
#include "js_options.h"

#include <cmath>

namespace hark_node {

std::string describe_js_type(const Napi::Value& v) {
  switch (v.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "a boolean";
    case napi_number: return "a number (" + v.ToString().Utf8Value() + ")";
    case napi_string: return "a string";
    case napi_symbol: return "a symbol";
    case napi_function: return "a function";
    case napi_bigint: return "a bigint";
    case napi_object:
      if (v.IsArray()) return "an array";
      if (v.IsTypedArray()) return "a typed array";
      if (v.IsArrayBuffer()) return "an ArrayBuffer";
      return "an object";
    default: return "a value of another type";
  }
}

Napi::Object options_object(const Napi::Value& v, const char* what) {
  if (v.IsUndefined() || v.IsNull()) return Napi::Object::New(v.Env());
  if (!v.IsObject() || v.IsArray() || v.IsFunction())
    throw Napi::TypeError::New(v.Env(), std::string(what) + ": options must be an object, got " + describe_js_type(v));
  return v.As<Napi::Object>();
}

namespace {
Napi::Value get_present(const Napi::Object& o, const char* name) {
  Napi::Value v = o.Get(name);
  return v;
}
[[noreturn]] void bad(const Napi::Object& o, const char* name, const std::string& must, const Napi::Value& v) {
  throw Napi::TypeError::New(o.Env(),
                             "option '" + std::string(name) + "' must be " + must + ", got " + describe_js_type(v));
}
}  // namespace

bool has_option(const Napi::Object& o, const char* name) {
  const Napi::Value v = get_present(o, name);
  return !v.IsUndefined();
}

bool get_bool(const Napi::Object& o, const char* name, bool def) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined()) return def;
  if (!v.IsBoolean()) bad(o, name, "a boolean", v);
  return v.As<Napi::Boolean>().Value();
}

double get_number(const Napi::Object& o, const char* name, double def, double lo, double hi) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined()) return def;
  if (!v.IsNumber()) bad(o, name, "a number", v);
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d < lo || d > hi)
    bad(o, name,
        "a number in [" + Napi::Number::New(o.Env(), lo).ToString().Utf8Value() + ", " +
            Napi::Number::New(o.Env(), hi).ToString().Utf8Value() + "]",
        v);
  return d;
}

std::vector<double> get_numbers(const Napi::Object& o, const char* name) {
  const Napi::Value v = get_present(o, name);
  std::vector<double> out;
  if (v.IsUndefined()) return out;
  if (!v.IsArray()) bad(o, name, "an array of numbers", v);
  const Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) {
    const Napi::Value e = a.Get(i);
    if (!e.IsNumber() || !std::isfinite(e.As<Napi::Number>().DoubleValue()))
      bad(o, name, "an array of finite numbers", e);
    out.push_back(e.As<Napi::Number>().DoubleValue());
  }
  return out;
}

int64_t get_int(const Napi::Object& o, const char* name, int64_t def, int64_t lo, int64_t hi) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined()) return def;
  if (!v.IsNumber()) bad(o, name, "an integer", v);
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::floor(d) != d || d < double(lo) || d > double(hi))
    bad(o, name, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
  return int64_t(d);
}

std::string get_string(const Napi::Object& o, const char* name, const std::string& def) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined()) return def;
  if (!v.IsString()) bad(o, name, "a string", v);
  return v.As<Napi::String>().Utf8Value();
}

std::string get_enum(const Napi::Object& o, const char* name, std::initializer_list<const char*> allowed,
                     const std::string& def) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined()) return def;
  std::string list;
  for (const char* a : allowed) {
    if (!*a) continue;
    if (!list.empty()) list += ", ";
    list.append("'").append(a).append("'");
  }
  if (!v.IsString()) bad(o, name, "one of " + list, v);
  const std::string s = v.As<Napi::String>().Utf8Value();
  for (const char* a : allowed)
    if (*a && s == a) return s;
  throw Napi::TypeError::New(o.Env(),
                             "option '" + std::string(name) + "' must be one of " + list + ", got '" + s + "'");
}

Napi::Function get_function(const Napi::Object& o, const char* name) {
  const Napi::Value v = get_present(o, name);
  if (v.IsUndefined() || v.IsNull()) return Napi::Function();
  if (!v.IsFunction()) bad(o, name, "a function", v);
  return v.As<Napi::Function>();
}

}  // namespace hark_node
