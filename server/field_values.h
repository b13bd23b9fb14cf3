// Reading one request value (a form field, a query parameter, a WebSocket config key) as a
// number, a whole number, a flag or a language, so every transport refuses a bad value the same
// way: ApiError 400 naming the field and what was wrong with it.
#pragma once
#include <string>

namespace hark::server {

// The value as the client is shown it in an error (quoted, cut after 40 characters).
std::string shown(const std::string& v);
std::string lower(std::string s);
double number(const std::string& field, const std::string& v, double lo, double hi);
int integer(const std::string& field, const std::string& v, int lo, int hi);
// true/1/yes/on or false/0/no/off/"".
bool boolean(const std::string& field, const std::string& v);
// A language code ("de"), OpenAI's name of one ("german"), or "auto"; returns the code. Anything
// else is passed on as it is: the library refuses an unknown language, naming it.
std::string language_of(const std::string& v);

}  // namespace hark::server
