// hark::Error's codes: `classified` gives a subsystem's unclassified failures its code at the
// edge and leaves coded ones alone; each edge gives the code a caller can act on (a missing file
// is NotFound, a file that is no model CorruptData, audio of no known format Unsupported); and the
// server answers each code with its HTTP status.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "hark/hark.hpp"
#include "runtime/error.h"
#include "server/api_error.h"

namespace hark {
namespace {

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no hark::Error";
  return ErrorCode::Internal;
}

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("hark-error-codes-" + std::to_string(::getpid()) + "-" + name);
}

TEST(ErrorCodes, NamesAreTheWordsEveryFrontEndUses) {
  EXPECT_STREQ(error_code_name(ErrorCode::InvalidArgument), "invalid_argument");
  EXPECT_STREQ(error_code_name(ErrorCode::NotFound), "not_found");
  EXPECT_STREQ(error_code_name(ErrorCode::Unsupported), "unsupported");
  EXPECT_STREQ(error_code_name(ErrorCode::CorruptData), "corrupt_data");
  EXPECT_STREQ(error_code_name(ErrorCode::Io), "io");
  EXPECT_STREQ(error_code_name(ErrorCode::ResourceExhausted), "resource_exhausted");
  EXPECT_STREQ(error_code_name(ErrorCode::Aborted), "aborted");
  EXPECT_STREQ(error_code_name(ErrorCode::Internal), "internal");
  const Error plain("x");
  EXPECT_EQ(plain.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(plain.field(), "");
}

TEST(ErrorCodes, ClassifiedRecodesOnlyWhatHasNoCodeOfItsOwn) {
  try {
    classified(ErrorCode::CorruptData, "m.bin", [] { HARK_CHECK(false, "bad magic"); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::CorruptData);
    EXPECT_EQ(e.field(), "m.bin");
    EXPECT_STREQ(e.what(), "bad magic");
  }
  // Already coded (or naming a field): passes unchanged.
  EXPECT_EQ(code_of([] { classified(ErrorCode::CorruptData, "", [] { throw Error(ErrorCode::NotFound, "gone"); }); }),
            ErrorCode::NotFound);
  EXPECT_EQ(code_of([] {
              classified(ErrorCode::Internal, "",
                         [] { HARK_CHECK_AS(InvalidArgument, "temperature", false, "t < 0"); });
            }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(classified(ErrorCode::Internal, "", [] { return 7; }), 7);
}

TEST(ErrorCodes, FilesModelsAndAudioSayWhatIsWrong) {
  EXPECT_EQ(code_of([] { Context::load(scratch("none").string() + "/ggml-tiny.bin"); }), ErrorCode::NotFound);
  EXPECT_EQ(code_of([] { Context::load(std::filesystem::temp_directory_path().string()); }),
            ErrorCode::InvalidArgument);  // a folder
  const auto junk = scratch("junk.bin");
  std::ofstream(junk) << "this is no whisper model at all";
  try {
    Context::load(junk.string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::CorruptData);
    EXPECT_EQ(e.field(), junk.string());
  }
  EXPECT_EQ(code_of([] { find_model("no-such-model-name"); }), ErrorCode::NotFound);
  EXPECT_EQ(code_of([] { load_audio(scratch("none.wav").string()); }), ErrorCode::NotFound);
  EXPECT_EQ(code_of([] { decode_audio("not audio at all", 16); }), ErrorCode::Unsupported);
  // A float WAV whose second sample is NaN: a known format, broken data.
  std::string wav;
  auto u32 = [&](uint32_t v) { wav.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { wav.append(reinterpret_cast<const char*>(&v), 2); };
  const float samples[4] = {0.0f, std::nanf(""), 0.0f, 0.0f};
  wav += "RIFF";
  u32(36 + sizeof samples);
  wav += "WAVEfmt ";
  u32(16);
  u16(3);  // IEEE float
  u16(1);
  u32(16000);
  u32(16000 * 4);
  u16(4);
  u16(32);
  wav += "data";
  u32(sizeof samples);
  wav.append(reinterpret_cast<const char*>(samples), sizeof samples);
  EXPECT_EQ(code_of([&] { decode_audio(wav.data(), wav.size()); }), ErrorCode::CorruptData);
  EXPECT_EQ(code_of([] { decode_audio_data_uri("http://example.com/a.wav"); }), ErrorCode::CorruptData);
  const float pcm[4] = {0, 0, 0, 0};
  EXPECT_EQ(code_of([&] { pcm_f32_to_mono16k(pcm, 4, 0, 1); }), ErrorCode::InvalidArgument);  // the caller's rate
  std::filesystem::remove(junk);
}

TEST(ErrorCodes, TheServerAnswersEachCodeWithItsStatus) {
  using server::api_error_of;
  EXPECT_EQ(api_error_of(Error(ErrorCode::InvalidArgument, "t", "temperature")).status, 400);
  EXPECT_EQ(api_error_of(Error(ErrorCode::InvalidArgument, "t", "temperature")).param, "temperature");
  EXPECT_EQ(api_error_of(Error(ErrorCode::InvalidArgument, "t")).code, "invalid_argument");
  EXPECT_EQ(api_error_of(Error(ErrorCode::Unsupported, "t")).status, 400);
  EXPECT_EQ(api_error_of(Error(ErrorCode::NotFound, "t")).status, 404);
  EXPECT_EQ(api_error_of(Error(ErrorCode::ResourceExhausted, "t")).status, 503);
  EXPECT_GT(api_error_of(Error(ErrorCode::ResourceExhausted, "t")).retry_after_s, 0);
  // Not the client's fault: the server's own files, I/O, a bug.
  EXPECT_EQ(api_error_of(Error(ErrorCode::Internal, "t")).status, 500);
  EXPECT_EQ(api_error_of(Error(ErrorCode::CorruptData, "t")).status, 500);
  EXPECT_EQ(api_error_of(Error(ErrorCode::Io, "t")).status, 500);
  EXPECT_EQ(api_error_of(Error(ErrorCode::Internal, "t")).type, "server_error");
}

}  // namespace
}  // namespace hark
