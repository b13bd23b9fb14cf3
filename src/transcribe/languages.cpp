// The public face of the model's language table (hparams.h), so front ends (the C API's
// hark_language_*) can name and check languages without a table of their own.
#include <string>

#include "hark/hark.hpp"
#include "model/hparams.h"

namespace hark {

int language_count() { return kMaxLanguages; }

int language_id(std::string_view code) { return language_index(std::string(code)); }

const char* language_code_at(int id) { return language_code(id); }

const char* language_name_at(int id) { return language_name(id); }

}  // namespace hark
