// One table of bad transcription options (bad_options.json), each refused by the library's one
// check: the same message and the same category through the C++ API (hark::Error's code), the C
// API (the status and hark_last_error_code()), the CLI (exit 2, or 1 for what the model cannot
// do, and "[code]" after the message), and the server (its HTTP status and error code). The Node
// binding runs the same table (bindings/node/test/bad_options.test.js). The front ends only parse:
// none of them restates a range, so none can disagree with the library.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "hark/hark.h"
#include "hark/hark.hpp"
#include "server/server_test_util.h"

namespace hark::testing {
namespace {

using nlohmann::json;
namespace st = hark::server::testing;

json table() {
  std::ifstream f(std::string(HARK_SOURCE_DIR) + "/tests/frontends/bad_options.json");
  return json::parse(f)["rows"];
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}

// The model a row runs on: the micro model, or its English-only twin for what such a model cannot do.
std::string model_for(const json& row) {
  if (!row.value("english_only", false)) return st::micro_model();
  const auto p = st::scratch() / "micro-en.bin";
  if (!std::filesystem::exists(p)) {
    TestModelOptions o;
    test_model_preset("micro.en", &o.hparams);
    o.weight_type = DType::F16;
    write_test_model(o, p.string());
  }
  return p.string();
}

std::vector<float> audio() {
  const std::string wav = st::tones_wav(2.0);
  return decode_audio(wav.data(), wav.size());
}

// Sets one option of the table in C++'s TranscribeParams or C's hark_transcribe_params: the
// rows' fields have the same names in both; only the language's string differs in type.
template <typename P, typename SetLanguage>
void set_option(P& p, const std::string& field, const json& v, SetLanguage&& set_language) {
  if (field == "temperature")
    p.temperature = v.get<float>();
  else if (field == "temperature_inc")
    p.temperature_inc = v.get<float>();
  else if (field == "beam_size")
    p.beam_size = v.get<int>();
  else if (field == "best_of")
    p.best_of = v.get<int>();
  else if (field == "thold_pt")
    p.thold_pt = v.get<float>();
  else if (field == "max_len")
    p.max_len = v.get<int>();
  else if (field == "max_context")
    p.max_context = v.get<int>();
  else if (field == "language")
    set_language(v.get<std::string>());
  else if (field == "translate")
    p.translate = v.get<bool>();
  else if (field == "repetition_penalty")
    p.repetition_penalty = v.get<float>();
  else if (field == "no_repeat_ngram_size")
    p.no_repeat_ngram_size = v.get<int>();
  else if (field == "multilingual")
    p.multilingual = v.get<bool>();
  else
    FAIL() << "no field " << field;
}

TEST(BadOptions, SameMessageAndCodeThroughCppCCliAndServer) {
  const json rows = table();
  ASSERT_GE(rows.size(), 8u);
  const std::vector<float> samples = audio();
  const std::filesystem::path dir = st::scratch() / "bad-options";
  std::filesystem::create_directories(dir);
  const std::string wav_path = (dir / "tones.wav").string();
  { std::ofstream(wav_path, std::ios::binary) << st::tones_wav(2.0); }
  server::ServerOptions so = st::test_options();
  so.models.push_back({"micro.en", model_for(json{{"english_only", true}})});
  st::Running server(so);
  auto client = server.client();

  for (const json& row : rows) {
    const std::string field = row["field"], message = row["message"], code = row["code"];
    const bool unsupported = code == "unsupported";
    SCOPED_TRACE(field + " = " + value_text(row["value"]));
    const std::string model = model_for(row);

    // C++: hark::Error with the code and the field.
    {
      const auto ctx = Context::load(model);
      TranscribeParams p;
      p.temperature_inc = 0.0f;
      set_option(p, field, row["value"], [&](const std::string& l) { p.language = l; });
      try {
        ctx->transcribe(samples, p);
        ADD_FAILURE() << "C++: no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        EXPECT_STREQ(error_code_name(e.code()), code.c_str());
        EXPECT_EQ(e.field(), field);
      }
    }
    // C: the status for the code, the same message, the code by name.
    {
      hark_context* ctx = nullptr;
      ASSERT_EQ(hark_context_load(model.c_str(), nullptr, &ctx), HARK_OK) << hark_last_error();
      hark_transcribe_params p = hark_transcribe_default_params();
      p.temperature_inc = 0.0f;
      std::string keep;
      set_option(p, row["c"], row["value"], [&](const std::string& l) { p.language = (keep = l).c_str(); });
      hark_result* r = nullptr;
      EXPECT_EQ(hark_transcribe(ctx, samples.data(), samples.size(), &p, &r), HARK_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(hark_last_error()).find(message), std::string::npos) << hark_last_error();
      EXPECT_STREQ(hark_last_error_code(), code.c_str());
      EXPECT_EQ(r, nullptr);
      hark_context_free(ctx);
    }
    // The CLI: a bad value is a usage error (2), what the model cannot do an error (1).
    {
      // No -nf: it would override a bad --temperature-inc (the value is refused before any compute).
      std::string args =
          "transcribe -q -m " + shell_quote(model) + " " + shell_quote(wav_path) + " " + row["cli"].get<std::string>();
      if (!row["value"].is_boolean()) args += " " + shell_quote(value_text(row["value"]));
      const CliRun r = run_cli(args, dir);
      EXPECT_EQ(r.code, unsupported ? 1 : 2) << r.err;
      EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("[" + code + "]"), std::string::npos) << r.err;
      if (!unsupported) {
        EXPECT_NE(r.err.find("(" + row["cli"].get<std::string>() + ")"), std::string::npos) << r.err;
      }
    }
    // The server (whisper.cpp's /inference takes every one of these fields): 400, the same
    // message, the code.
    {
      httplib::MultipartFormDataItems form = st::form(st::tones_wav(2.0));
      form.push_back({row["server"].get<std::string>(), value_text(row["value"]), "", ""});
      form.push_back({"model", unsupported ? "micro.en" : "micro", "", ""});
      const auto res = client.Post("/inference", form);
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 400) << res->body;
      const json j = json::parse(res->body);
      EXPECT_NE(j.value("error", "").find(message), std::string::npos) << res->body;
      EXPECT_EQ(j.value("code", ""), code) << res->body;
    }
  }
}

}  // namespace
}  // namespace hark::testing
