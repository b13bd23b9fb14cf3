// The hark command line, run as a user would: the built binary (HARK_CLI_PATH, or $HARK_CLI to test
// another build) on a micro test model, checking exit codes, stdout, stderr and the files written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audio/audio.h"
#include "cli/cli_test_util.h"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "transcribe/micro_model.h"

namespace hark {
namespace {

namespace fs = std::filesystem;

using testing::cli_path;
using testing::CliRun;
using testing::read_file;
using testing::shell_quote;

class Cli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = new fs::path(fs::path(tmp && *tmp ? tmp : "/tmp") / ("hark-cli-test-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    write_test_model(o, model());
    // 4 s of tones with a pause: enough for a window and a few segments, quick on the micro model.
    audio::WavWriter w(wav(), audio::kSampleRate);
    std::vector<float> a(4 * audio::kSampleRate);
    for (size_t i = 0; i < a.size(); ++i) {
      const double t = static_cast<double>(i) / audio::kSampleRate;
      a[i] = static_cast<float>((std::fmod(t, 2.0) < 1.5 ? 0.3 : 0.0) * std::sin(2 * M_PI * (200 + 30 * t) * t));
    }
    w.write(a.data(), a.size());
    w.close();
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (cli_path().empty() || !fs::exists(cli_path())) GTEST_SKIP() << "the hark binary was not built";
  }

  static std::string model() { return (*dir_ / "micro.bin").string(); }
  static std::string wav() { return (*dir_ / "tones.wav").string(); }
  static const fs::path& dir() { return *dir_; }

  // Runs `hark ARGS` (already quoted as needed), capturing stdout, stderr and the exit code.
  static CliRun hark(const std::string& args) { return testing::run_cli(args, *dir_); }

  static fs::path* dir_;
};
fs::path* Cli::dir_ = nullptr;

bool contains(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

// ---- info ----------------------------------------------------------------------------------------

TEST_F(Cli, InfoPrintsTheHyperParameters) {
  const CliRun r = hark("info " + shell_quote(model()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, model())) << r.out;
  for (const char* line :
       {"n_vocab         51865", "n_audio_state   64", "n_audio_head    2", "n_audio_layer   2", "n_text_state    64",
        "n_text_layer    2", "n_mels          80", "weight type     f16", "languages       multilingual"})
    EXPECT_TRUE(contains(r.out, line)) << "missing \"" << line << "\" in\n" << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(Cli, InfoOnAMissingFileNamesIt) {
  const std::string missing = (dir() / "no-such-model.bin").string();
  const CliRun r = hark("info " + shell_quote(missing));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "hark: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, missing)) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(Cli, InfoOnAHeaderOnlyFileNamesIt) {
  const std::string header = testing::model_header_path("for-tests-ggml-tiny.bin");
  if (header.empty()) GTEST_SKIP() << "../shared/model-headers not found";
  const CliRun r = hark("info " + shell_quote(header));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "hark: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, header)) << r.err;
  EXPECT_TRUE(contains(r.err, "no tensor data")) << r.err;
}

// ---- usage errors ----------------------------------------------------------------------------------

TEST_F(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(hark("").code, 2);  // no subcommand
  EXPECT_EQ(hark("--bogus").code, 2);
  EXPECT_EQ(hark("frobnicate").code, 2);
  CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) + " --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--bogus")) << r.err;
  EXPECT_EQ(hark("transcribe -nf " + shell_quote(wav())).code, 2);       // no model
  EXPECT_EQ(hark("transcribe -nf -m " + shell_quote(model())).code, 2);  // no input
  r = hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) + " -o srt,docx");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "docx")) << r.err;
  EXPECT_EQ(hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) + " -t many").code, 2);
  EXPECT_EQ(hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) + " --offset-ms -5").code, 2);
  r = hark("transcribe -nf -m " + shell_quote(model()) + " a.wav b.wav --output-file x");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--output-file")) << r.err;
  EXPECT_EQ(hark("info").code, 2);
}

TEST_F(Cli, HelpAndVersionSucceed) {
  CliRun r = hark("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "transcribe")) << r.out;
  r = hark("transcribe -nf --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "--output-file")) << r.out;
  r = hark("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.out, "hark")) << r.out;
}

// ---- transcribe ------------------------------------------------------------------------------------

TEST_F(Cli, TranscribeANonAudioFileNamesIt) {
  const fs::path text = dir() / "notes.txt";
  std::ofstream(text) << "these are not audio samples\n";
  const CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " -o srt " + shell_quote(text.string()));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "hark: error: ")) << r.err;
  EXPECT_TRUE(contains(r.err, text.string())) << r.err;
  EXPECT_FALSE(fs::exists(text.string() + ".srt"));
}

TEST_F(Cli, TranscribeWithAMissingModelNamesIt) {
  const std::string missing = (dir() / "absent.bin").string();
  const CliRun r = hark("transcribe -nf -m " + shell_quote(missing) + " " + shell_quote(wav()));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, missing)) << r.err;
}

TEST_F(Cli, TranscribePrintsSegmentsAndWritesEveryFormat) {
  const CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " -t 2 " + shell_quote(wav()) +
                        " -o txt,srt -o vtt -o json -o srt");
  ASSERT_EQ(r.code, 0) << r.err;

  // Console: one "[hh:mm:ss.mmm --> hh:mm:ss.mmm]  text" line a segment.
  const std::regex line_re(R"(\[\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\]  .*)");
  std::istringstream lines(r.out);
  std::string line;
  int n_lines = 0;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(std::regex_match(line, line_re)) << "line: " << line;
    ++n_lines;
  }

  const std::string base = wav();
  for (const char* ext : {".txt", ".srt", ".vtt", ".json"})
    ASSERT_TRUE(fs::exists(base + ext)) << base << ext << " not written";
  const nlohmann::json j = nlohmann::json::parse(read_file(base + ".json"));
  EXPECT_EQ(static_cast<int>(j["segments"].size()), n_lines);
  EXPECT_TRUE(j.contains("timings"));
  EXPECT_GT(j["timings"]["audio_seconds"].get<double>(), 3.9);
  EXPECT_EQ(read_file(base + ".vtt").rfind("WEBVTT\n\n", 0), 0u);
  const std::string srt = read_file(base + ".srt");
  if (n_lines > 0) {
    EXPECT_EQ(srt.rfind("1\n", 0), 0u) << srt;
  }

  // Timings and the files written go to stderr; no temporary files are left over.
  EXPECT_TRUE(contains(r.err, "real-time factor")) << r.err;
  EXPECT_TRUE(contains(r.err, "wrote " + base + ".srt")) << r.err;
  for (const auto& e : fs::directory_iterator(dir()))
    EXPECT_FALSE(contains(e.path().filename().string(), ".tmp")) << e.path();
  for (const char* ext : {".txt", ".srt", ".vtt", ".json"}) fs::remove(base + ext);
}

TEST_F(Cli, QuietOutputFileAndNoTimestamps) {
  const fs::path base = dir() / "out" / "talk";
  fs::create_directories(base.parent_path());
  const CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) +
                        " -q --no-timestamps -o txt --output-file " + shell_quote(base.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // quiet: nothing but the transcript
  EXPECT_FALSE(contains(r.out, "-->")) << r.out;
  EXPECT_TRUE(fs::exists(base.string() + ".txt"));
  EXPECT_FALSE(fs::exists(wav() + ".txt"));
  // The console has the same lines as the text file.
  EXPECT_EQ(r.out, read_file(base.string() + ".txt"));
}

TEST_F(Cli, FailedWritesLeaveNoFile) {
  // A folder that cannot be made (a file is where it would go): said before any transcribing.
  std::ofstream(dir() / "a-file") << "in the way\n";
  const fs::path base = dir() / "a-file" / "talk";
  const CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) +
                        " -q -o srt --output-file " + shell_quote(base.string()));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, base.string() + ".srt")) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir() / "a-file"));

  // The rename into place fails (a folder is in the way): the temporary file is removed, and a
  // file from an earlier run is left as it was.
  const fs::path clash = dir() / "clash";
  fs::create_directories(clash.string() + ".srt");
  std::ofstream(clash.string() + ".txt") << "earlier run\n";
  const CliRun r2 = hark("transcribe -nf -m " + shell_quote(model()) + " " + shell_quote(wav()) +
                         " -q -o srt,txt --output-file " + shell_quote(clash.string()));
  EXPECT_EQ(r2.code, 1);
  EXPECT_TRUE(contains(r2.err, clash.string() + ".srt")) << r2.err;
  EXPECT_EQ(read_file(clash.string() + ".txt"), "earlier run\n");
  for (const auto& e : fs::directory_iterator(dir()))
    EXPECT_FALSE(contains(e.path().filename().string(), ".tmp")) << e.path();
}

TEST_F(Cli, OneBadFileDoesNotStopTheOthers) {
  const fs::path bad = dir() / "broken.wav";
  std::ofstream(bad) << "RIFF but not really";
  const CliRun r = hark("transcribe -nf -m " + shell_quote(model()) + " -q -o txt " + shell_quote(bad.string()) + " " +
                        shell_quote(wav()));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, bad.string())) << r.err;
  EXPECT_FALSE(fs::exists(bad.string() + ".txt"));
  EXPECT_TRUE(fs::exists(wav() + ".txt"));
  fs::remove(wav() + ".txt");
}

}  // namespace
}  // namespace hark

// ---- bench and the job options --------------------------------------------------------------------

namespace hark {
namespace {

TEST_F(Cli, BenchPrintsFourFiguresAndWhisperRnsJson) {
  const CliRun r = hark("bench -t 1 -m " + shell_quote(model()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* label : {"encode", "decode", "batch", "prompt", "threads    1", "AVX"})
    EXPECT_TRUE(contains(r.out, label)) << "missing \"" << label << "\" in\n" << r.out;
  const CliRun j = hark("bench --json -t 1 -m " + shell_quote(model()));
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json a = nlohmann::json::parse(j.out);
  ASSERT_TRUE(a.is_array());
  ASSERT_EQ(a.size(), 6u);
  EXPECT_TRUE(a[0].is_string());
  EXPECT_EQ(a[1], 1);
  for (size_t i = 2; i < 6; ++i) {
    EXPECT_TRUE(a[i].is_number());
    EXPECT_GT(a[i].get<double>(), 0.0) << i;
  }
  EXPECT_EQ(hark("bench -m " + shell_quote((dir() / "missing.bin").string())).code, 1);
}

TEST_F(Cli, ProcessorsAndDeviceFlagsAreAccepted) {
  const CliRun one = hark("transcribe -nf -q -t 2 -m " + shell_quote(model()) + " " + shell_quote(wav()));
  ASSERT_EQ(one.code, 0) << one.err;
  // whisper.cpp's spellings: -ng, -nfa; -p 2 on 4 s of audio makes two 2 s parts.
  const CliRun r = hark("transcribe -nf -q -p 2 -ng -nfa -t 2 -m " + shell_quote(model()) + " " + shell_quote(wav()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_EQ(hark("transcribe -nf -p 0 -m " + shell_quote(model()) + " " + shell_quote(wav())).code, 2);
}

// --cross-kv-type q8_0 on transcribe and bench (which names it in its config line); an unknown
// type is a usage error, and q8_0 without the fused attention a load error that names both.
TEST_F(Cli, CrossKvTypeFlag) {
  const CliRun r =
      hark("transcribe -nf -q -t 2 --cross-kv-type q8_0 -m " + shell_quote(model()) + " " + shell_quote(wav()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  const CliRun b = hark("bench -t 1 --cross-kv-type q8_0 -m " + shell_quote(model()));
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_TRUE(contains(b.out, "CROSS_KV = q8_0")) << b.out;
  EXPECT_EQ(hark("transcribe -nf --cross-kv-type q4_0 -m " + shell_quote(model()) + " " + shell_quote(wav())).code, 2);
  const CliRun nfa =
      hark("transcribe -nf -q -nfa --cross-kv-type q8_0 -m " + shell_quote(model()) + " " + shell_quote(wav()));
  EXPECT_EQ(nfa.code, 1);
  EXPECT_TRUE(contains(nfa.err, "q8_0") && contains(nfa.err, "flash_attn")) << nfa.err;
}

TEST_F(Cli, DecodingFlagsWithWhisperCppSpellings) {
  const std::string m = " -m " + shell_quote(model()) + " " + shell_quote(wav());
  const CliRun a = hark("transcribe -nf -q -tp 0.4 -bo 2 --seed 5 -sns --suppress-regex " + shell_quote("[0-9]+") +
                        " --suppress-tokens 11,13 -mc 8 --prompt " + shell_quote("a glossary") +
                        " --carry-initial-prompt -nth 0.7 -lpt -1.5 --max-initial-ts 0.5 --max-tokens 20" + m);
  ASSERT_EQ(a.code, 0) << a.err;
  const CliRun b = hark("transcribe -nf -q -tp 0.4 -bo 2 --seed 5 -sns --suppress-regex " + shell_quote("[0-9]+") +
                        " --suppress-tokens 11,13 -mc 8 --prompt " + shell_quote("a glossary") +
                        " --carry-initial-prompt -nth 0.7 -lpt -1.5 --max-initial-ts 0.5 --max-tokens 20" + m);
  EXPECT_EQ(a.out, b.out) << "same seed, same text";
  EXPECT_EQ(hark("transcribe -q -tpi 0.5 -nf --no-suppress-nst --no-suppress-blank --no-context --single-segment "
                 "--max-tokens 20" +
                 m)
                .code,
            0);
  EXPECT_EQ(hark("transcribe -q -tpi 0.5 --best-of 2 --length-penalty 0.5 --max-tokens 20" + m).code, 0);
  // bad values: usage errors (2) where CLI11 checks them, clear run errors otherwise
  EXPECT_EQ(hark("transcribe -nf -tp -1" + m).code, 2);
  EXPECT_EQ(hark("transcribe -nf -bo 0" + m).code, 2);
  // beam search: whisper.cpp's -bs, OpenAI's --patience
  EXPECT_EQ(hark("transcribe -nf -q -bs 3 --patience 1.5 --max-tokens 12" + m).code, 0);
  EXPECT_EQ(hark("transcribe -nf -bs 0" + m).code, 2);
  EXPECT_EQ(hark("transcribe -nf --patience 0" + m).code, 2);
  // faster-whisper's options: the penalties, a temperature list, the low log-prob skip, clips.
  EXPECT_EQ(hark("transcribe -q --repetition-penalty 1.3 --no-repeat-ngram-size 3 --temperatures 0,0.5,0.9 "
                 "--logprob-low-threshold -20 --prompt-reset-temperature 0.3 --clip-timestamps 0,1.5 --max-tokens 12" +
                 m)
                .code,
            0);
  const CliRun clip = hark("transcribe -nf --clip-timestamps 0,-1" + m);
  EXPECT_NE(clip.code, 0);
  EXPECT_TRUE(contains(clip.err, "clip_timestamps")) << clip.err;
  const CliRun bad = hark("transcribe -nf --suppress-regex " + shell_quote("([") + m);
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(contains(bad.err, "suppress_regex")) << bad.err;
}

TEST_F(Cli, DetectLanguageNamesEachFilesLanguage) {
  const CliRun r = hark("transcribe -nf -dl -q -m " + shell_quote(model()) + " " + shell_quote(wav()));
  ASSERT_EQ(r.code, 0) << r.err;
  // "FILE: auto-detected language: xx (p = 0.123456)", and no transcript.
  EXPECT_TRUE(contains(r.out, wav() + ": auto-detected language: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "(p = 0.")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const CliRun past =
      hark("transcribe -nf --detect-language --offset-ms 60000 -m " + shell_quote(model()) + " " + shell_quote(wav()));
  EXPECT_EQ(past.code, 1);
  EXPECT_TRUE(contains(past.err, "past the end")) << past.err;
}

TEST_F(Cli, WordTimestampsAndJsonCompactOrFull) {
  const fs::path base = dir() / "words";
  const std::string m =
      " -m " + shell_quote(model()) + " " + shell_quote(wav()) + " --output-file " + shell_quote(base.string());
  // -oj: no tokens; words with --word-timestamps (the model's own heads).
  const CliRun a =
      hark("transcribe -nf -q --max-tokens 20 --word-timestamps --hallucination-silence-threshold 2 -oj" + m);
  ASSERT_EQ(a.code, 0) << a.err;
  nlohmann::json j = nlohmann::json::parse(read_file(base.string() + ".json"));
  bool any_words = false;
  for (const auto& s : j["segments"]) {
    EXPECT_FALSE(s.contains("tokens"));
    if (s.contains("words")) {
      any_words = true;
      std::string joined;
      for (const auto& w : s["words"]) {
        EXPECT_LE(w["start"].get<double>(), w["end"].get<double>());
        joined += w["word"].get<std::string>();
      }
      EXPECT_EQ(joined, s["text"].get<std::string>());
    }
  }
  EXPECT_TRUE(any_words) << j.dump(1);
  // -ojf: the tokens too; whisper.cpp's -dtw spelling with a preset that fits (top-n of 1 layer).
  const CliRun b = hark("transcribe -nf -q --max-tokens 20 -dtw top-n --dtw-n-top 1 -ojf" + m);
  ASSERT_EQ(b.code, 0) << b.err;
  j = nlohmann::json::parse(read_file(base.string() + ".json"));
  ASSERT_FALSE(j["segments"].empty());
  EXPECT_TRUE(j["segments"][0].contains("tokens"));
  EXPECT_TRUE(j["segments"][0].contains("words"));
  // A preset for another decoder shape, an unknown one: clear errors naming them.
  const CliRun c = hark("transcribe -nf -dtw large.v3" + m);
  EXPECT_EQ(c.code, 1);
  EXPECT_TRUE(contains(c.err, "large.v3")) << c.err;
  const CliRun d = hark("transcribe -nf -dtw huge" + m);
  EXPECT_EQ(d.code, 1);
  EXPECT_TRUE(contains(d.err, "unknown preset 'huge'")) << d.err;
  fs::remove(base.string() + ".json");
}

TEST_F(Cli, TokenTimestampsMaxLenTinydiarizeCsvAndLrc) {
  const std::string m = " -m " + shell_quote(model()) + " " + shell_quote(wav());
  const std::string base = wav();
  // whisper.cpp's spellings: -ml -sow -wt -tdrz -ocsv -olrc
  const CliRun r = hark("transcribe -nf -q -ml 8 -sow -wt 0.05 -tdrz --max-tokens 20 -ocsv -olrc -o json" + m);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = read_file(base + ".csv"), lrc = read_file(base + ".lrc");
  EXPECT_EQ(csv.rfind("start,end,text\n", 0), 0u) << csv;
  EXPECT_EQ(lrc.rfind("[by:hark]\n", 0), 0u) << lrc;
  const nlohmann::json j = nlohmann::json::parse(read_file(base + ".json"));
  EXPECT_EQ(static_cast<int>(std::count(csv.begin(), csv.end(), '\n')), 1 + static_cast<int>(j["segments"].size()));
  for (const auto& seg : j["segments"]) {
    EXPECT_TRUE(seg.contains("speaker_turn_next"));
    for (const auto& tok : seg["tokens"]) {  // -ml turns token timestamps on
      EXPECT_TRUE(tok.contains("t0")) << tok.dump();
      EXPECT_LE(tok["t1"].get<int64_t>(), seg["t1"].get<int64_t>());
    }
  }
  for (const char* ext : {".csv", ".lrc", ".json"}) fs::remove(base + ext);
  // --token-timestamps alone: the tokens are timed, the segments as without it.
  const CliRun t = hark("transcribe -nf -q --token-timestamps --max-tokens 20 -o json" + m);
  ASSERT_EQ(t.code, 0) << t.err;
  const nlohmann::json tj = nlohmann::json::parse(read_file(base + ".json"));
  for (const auto& seg : tj["segments"])
    for (const auto& tok : seg["tokens"]) EXPECT_TRUE(tok.contains("t0")) << tok.dump();
  fs::remove(base + ".json");
  // -tdrz on a tinydiarize-style model: the console marks turns as whisper.cpp's CLI does.
  {
    const std::string tdrz_model = (dir() / "tdrz.bin").string(), speech = (dir() / "speech.wav").string();
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro.en", &o.hparams));
    o.tdrz = true;
    write_test_model(o, tdrz_model);
    const std::vector<float> a = testing::speech_like_tones(30.0);
    audio::WavWriter w(speech, audio::kSampleRate, 1, audio::WavWriter::Format::kFloat32);
    w.write(a.data(), a.size());
    w.close();
    const std::string args = " -q -t 2 --max-tokens 48 -m " + shell_quote(tdrz_model) + " " + shell_quote(speech);
    const CliRun on = hark("transcribe -nf -tdrz" + args);
    ASSERT_EQ(on.code, 0) << on.err;
    EXPECT_TRUE(contains(on.out, " [SPEAKER_TURN]\n")) << on.out;
    const CliRun off = hark("transcribe -nf" + args);
    ASSERT_EQ(off.code, 0) << off.err;
    EXPECT_FALSE(contains(off.out, "SPEAKER_TURN")) << off.out;
  }
  // bad values
  EXPECT_EQ(hark("transcribe -nf -ml -1" + m).code, 2);
  EXPECT_EQ(hark("transcribe -nf -wt 1.5" + m).code, 2);
  const CliRun nan = hark("transcribe -nf -wt nan" + m);
  EXPECT_NE(nan.code, 0);
  EXPECT_TRUE(contains(nan.err, "thold_pt") || contains(nan.err, "word-thold")) << nan.err;
}

// ---- vad -----------------------------------------------------------------------------------------

TEST_F(Cli, VadPrintsWhisperCppsSegmentsAsTextAndJson) {
  const std::string shared = testing::shared_dir();
  const std::string model = shared + "/vad/silero-v6.2.0-ggml.bin", clip = shared + "/vad/vad-three-clips.wav";
  if (shared.empty() || !fs::exists(model) || !fs::exists(clip)) GTEST_SKIP() << "../shared/vad not found";
  const std::string args = " -vm " + shell_quote(model) + " " + shell_quote(clip);
  const CliRun text = hark("vad" + args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out, clip +
                          ": 3 speech segments\n[00:00:00.320 --> 00:00:06.910]\n"
                          "[00:00:08.550 --> 00:00:13.500]\n[00:00:14.180 --> 00:00:17.250]\n");
  const CliRun js = hark("vad --json --probs --min-silence-ms 2000 --pad-ms 0" + args);
  ASSERT_EQ(js.code, 0) << js.err;
  const nlohmann::json j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["file"], clip);
  EXPECT_EQ(j["frame_samples"], 512);
  ASSERT_EQ(j["segments"].size(), 1u);  // the pauses (1.2 s, 0.6 s) are under 2 s
  EXPECT_EQ(j["segments"][0]["start"], "00:00:00.350");
  EXPECT_EQ(j["probs"].size(), 547u);
  // --bench reports frames per second on stderr
  const CliRun b = hark("vad --bench -t 1" + args);
  EXPECT_TRUE(contains(b.err, "547 frames in")) << b.err;
  // errors: a Whisper model as the VAD model, a bad option value, no model
  const CliRun wrong = hark("vad -vm " + shell_quote(this->model()) + " " + shell_quote(clip));
  EXPECT_EQ(wrong.code, 1);
  EXPECT_TRUE(contains(wrong.err, "this is a Whisper model")) << wrong.err;
  EXPECT_EQ(hark("vad --threshold 1.5" + args).code, 2);
  EXPECT_EQ(hark("vad " + shell_quote(clip)).code, 2);
}

// stream takes the Silero model as transcribe spells it (-vm, a file or a name from hark
// download), the same as its own --vad MODEL; the two together are a usage error.
TEST_F(Cli, StreamTakesTheVadModelAsTranscribeDoes) {
  const std::string shared = testing::shared_dir();
  const std::string vad = shared + "/vad/silero-v6.2.0-ggml.bin", clip = shared + "/vad/vad-three-clips.wav";
  if (shared.empty() || !fs::exists(vad) || !fs::exists(clip)) GTEST_SKIP() << "../shared/vad not found";
  const fs::path models = dir() / "stream-models";
  fs::create_directories(models);
  fs::copy_file(vad, models / "ggml-silero-v6.2.0.bin", fs::copy_options::overwrite_existing);
  const std::string args = "stream -nf -m " + shell_quote(model()) + " --file " + shell_quote(clip) + " --speed 0 ";
  const CliRun by_vad = hark(args + "--vad " + shell_quote(vad));
  ASSERT_EQ(by_vad.code, 0) << by_vad.err;
  const CliRun by_name =
      testing::run_cli(args + "-vm silero-v6.2.0", dir(), "HARK_MODELS=" + shell_quote(models.string()));
  ASSERT_EQ(by_name.code, 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_vad.out);
  EXPECT_EQ(hark(args + "--vad energy -vm " + shell_quote(vad)).code, 2);
  const CliRun missing = hark(args + "-vm " + shell_quote((dir() / "no-vad.bin").string()));
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(contains(missing.err, "no-vad.bin")) << missing.err;
}

TEST_F(Cli, TranscribeWithVadUsesWhisperCppsFlags) {
  const std::string shared = testing::shared_dir();
  const std::string vad = shared + "/vad/silero-v6.2.0-ggml.bin", clip = shared + "/vad/vad-three-clips.wav";
  if (shared.empty() || !fs::exists(vad) || !fs::exists(clip)) GTEST_SKIP() << "../shared/vad not found";
  // 12 s of silence, then the clip: every segment must start after the silence.
  const std::string padded = (dir() / "late-speech.wav").string();
  {
    const std::vector<float> c = hark::load_audio(clip);
    std::vector<float> a(12 * audio::kSampleRate, 0.0f);
    a.insert(a.end(), c.begin(), c.end());
    audio::WavWriter w(padded, audio::kSampleRate);
    w.write(a.data(), a.size());
    w.close();
  }
  const std::string m = " -m " + shell_quote(model()) + " " + shell_quote(padded);
  const fs::path base = dir() / "vad";
  const CliRun r =
      hark("transcribe -nf --max-tokens 16 -oj --vad -vm " + shell_quote(vad) +
           " -vt 0.5 -vspd 250 -vsd 100 -vmsd 30 -vp 30 -vo 0.1 --output-file " + shell_quote(base.string()) + m);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "; vad ")) << r.err;  // the timings line says what the VAD cost
  const nlohmann::json j = nlohmann::json::parse(read_file(base.string() + ".json"));
  ASSERT_FALSE(j["segments"].empty());
  for (const auto& s : j["segments"]) EXPECT_GE(s["t0"].get<int64_t>(), 1200 + 32) << s.dump();
  // long spellings, and the errors: --vad without a model, a threshold out of range
  EXPECT_EQ(hark("transcribe -nf -q --max-tokens 8 --vad --vad-model " + shell_quote(vad) +
                 " --vad-threshold 0.6 "
                 "--vad-min-speech-duration-ms 100 --vad-min-silence-duration-ms 200 --vad-max-speech-duration-s 20 "
                 "--vad-speech-pad-ms 10 --vad-samples-overlap 0.2" +
                 m)
                .code,
            0);
  const CliRun nomodel = hark("transcribe -nf -q --vad" + m);
  EXPECT_EQ(nomodel.code, 2);  // a usage error, before anything is loaded
  EXPECT_TRUE(contains(nomodel.err, "--vad-model")) << nomodel.err;
  EXPECT_EQ(hark("transcribe -nf --vad -vm " + shell_quote(vad) + " -vt 1.5" + m).code, 2);

  // The batched pipeline: --batch-size with the VAD model; the same speech, times after the silence.
  const fs::path bbase = dir() / "batched";
  const CliRun b = hark("transcribe -nf --max-tokens 16 -oj --batch-size 4 -vm " + shell_quote(vad) +
                        " --output-file " + shell_quote(bbase.string()) + m);
  ASSERT_EQ(b.code, 0) << b.err;
  const nlohmann::json jb = nlohmann::json::parse(read_file(bbase.string() + ".json"));
  ASSERT_FALSE(jb["segments"].empty());
  for (const auto& s : jb["segments"]) EXPECT_GE(s["t0"].get<int64_t>(), 1200) << s.dump();
  EXPECT_EQ(hark("transcribe -nf --batch-size 0 -vm " + shell_quote(vad) + m).code, 2);
  EXPECT_EQ(hark("transcribe -nf --batch-size 33 -vm " + shell_quote(vad) + m).code, 2);
  const CliRun bnomodel = hark("transcribe -nf -q --batch-size 4" + m);
  EXPECT_NE(bnomodel.code, 0);
  EXPECT_TRUE(contains(bnomodel.err, "vad_model_path")) << bnomodel.err;
}

// ---- quantize --------------------------------------------------------------------------------

TEST_F(Cli, QuantizeWritesALoadableModelAndPrintsSizes) {
  const std::string out = (dir() / "micro-q5_0.bin").string();
  const CliRun r = hark("quantize " + shell_quote(model()) + " " + shell_quote(out) + " q5_0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(f16, ")) << r.out;
  EXPECT_TRUE(contains(r.out, "(q5_0, ")) << r.out;
  EXPECT_TRUE(contains(r.out, "MiB")) << r.out;
  EXPECT_EQ(r.err, "");  // no progress line when stderr is not a terminal
  const CliRun info = hark("info " + shell_quote(out));
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "weight type     q5_0")) << info.out;
  fs::remove(out);
}

TEST_F(Cli, QuantizeRefusesABadTypeOrInputAndWritesNothing) {
  const std::string out = (dir() / "never.bin").string();
  const CliRun bad_type = hark("quantize " + shell_quote(model()) + " " + shell_quote(out) + " q3_k");
  EXPECT_EQ(bad_type.code, 2);
  EXPECT_TRUE(contains(bad_type.err, "q3_k")) << bad_type.err;
  const std::string missing = (dir() / "missing.bin").string();
  const CliRun bad_in = hark("quantize " + shell_quote(missing) + " " + shell_quote(out) + " q8_0");
  EXPECT_EQ(bad_in.code, 1);
  EXPECT_TRUE(contains(bad_in.err, missing)) << bad_in.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

// ---- what a new user trips over (issue 38) ---------------------------------------------------------

TEST_F(Cli, TyposNameTheWordAndSuggestTheCommandOrOption) {
  const CliRun typo = hark("transcibe -m " + shell_quote(model()) + " " + shell_quote(wav()));
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.err, "'transcibe' is not a hark command; did you mean 'transcribe'?")) << typo.err;
  const CliRun far = hark("frobnicate");
  EXPECT_EQ(far.code, 2);
  EXPECT_TRUE(contains(far.err, "'frobnicate' is not a hark command")) << far.err;
  EXPECT_FALSE(contains(far.err, "did you mean")) << far.err;
  const CliRun option = hark("transcribe -m " + shell_quote(model()) + " --treads 2 " + shell_quote(wav()));
  EXPECT_EQ(option.code, 2);
  EXPECT_TRUE(contains(option.err, "did you mean --threads?")) << option.err;
  // hark help [COMMAND]
  const CliRun help = hark("help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "transcribe")) << help.out;
  const CliRun help_cmd = hark("help transcribe");
  EXPECT_EQ(help_cmd.code, 0);
  EXPECT_TRUE(contains(help_cmd.out, "--output-format")) << help_cmd.out;
}

TEST_F(Cli, VadOptionsAreUsageErrorsAndOneSpelling) {
  // --vad without a VAD model: exit 2 before any model is loaded (the model path is not even read).
  const CliRun no_model = hark("transcribe -m /nonexistent.bin --vad " + shell_quote(wav()));
  EXPECT_EQ(no_model.code, 2);
  EXPECT_TRUE(contains(no_model.err, "--vad-model")) << no_model.err;
  EXPECT_FALSE(contains(no_model.err, "nonexistent")) << no_model.err;
  EXPECT_FALSE(contains(no_model.err, "vad_model_path")) << no_model.err;
  // A VAD model that is neither a file nor a downloaded name: an error naming it (exit 1), once
  // the arguments are read (it aborted the process when it was looked up while parsing).
  const CliRun missing =
      hark("transcribe -m " + shell_quote(model()) + " -vm /nonexistent/vad.bin " + shell_quote(wav()));
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(contains(missing.err, "hark: error: /nonexistent/vad.bin: no such model file")) << missing.err;
  const CliRun stream = hark("stream");
  EXPECT_EQ(stream.code, 2);
  EXPECT_TRUE(contains(stream.err, "--model")) << stream.err;
  const std::string shared = testing::shared_dir();
  const std::string vad = shared + "/vad/silero-v6.2.0-ggml.bin", clip = shared + "/vad/vad-three-clips.wav";
  if (shared.empty() || !fs::exists(vad) || !fs::exists(clip)) GTEST_SKIP() << "../shared/vad not found";
  // -vm alone is a VAD asked for: the same transcript as with --vad.
  const std::string base = "transcribe -q -nf -m " + shell_quote(model()) + " -vm " + shell_quote(vad) + " ";
  const CliRun implied = hark(base + shell_quote(clip));
  const CliRun both = hark(base + "--vad " + shell_quote(clip));
  ASSERT_EQ(implied.code, 0) << implied.err;
  EXPECT_EQ(implied.out, both.out);
  // hark vad takes transcribe's spellings (and its own short ones).
  const CliRun a = hark("vad -vm " + shell_quote(vad) + " --vad-threshold 0.6 " + shell_quote(clip));
  const CliRun b = hark("vad -vm " + shell_quote(vad) + " --threshold 0.6 " + shell_quote(clip));
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(Cli, AModelOfTheWrongKindIsSaidAsSuch) {
  const std::string shared = testing::shared_dir();
  const std::string vad = shared + "/vad/silero-v6.2.0-ggml.bin";
  if (shared.empty() || !fs::exists(vad)) GTEST_SKIP() << "../shared/vad not found";
  const CliRun as_whisper = hark("transcribe -m " + shell_quote(vad) + " " + shell_quote(wav()));
  EXPECT_EQ(as_whisper.code, 1);
  EXPECT_TRUE(contains(as_whisper.err, "this is a Silero VAD model")) << as_whisper.err;
  EXPECT_FALSE(contains(as_whisper.err, "hyper-parameter")) << as_whisper.err;
  const CliRun as_vad = hark("vad -vm " + shell_quote(model()) + " " + shell_quote(wav()));
  EXPECT_EQ(as_vad.code, 1);
  EXPECT_TRUE(contains(as_vad.err, "this is a Whisper model")) << as_vad.err;
}

TEST_F(Cli, OutputFileAloneItsExtensionAndItsFolder) {
  const std::string base = "transcribe -q -nf -m " + shell_quote(model()) + " " + shell_quote(wav());
  // Alone: a text file, said.
  const fs::path alone = dir() / "res2";
  const CliRun r = hark(base + " --output-file " + shell_quote(alone.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(alone.string() + ".txt"));
  // res.srt with -o srt is res.srt, in a folder made for it.
  const fs::path named = dir() / "out" / "deeper" / "res.srt";
  const CliRun s = hark(base + " --output-file " + shell_quote(named.string()) + " -o srt");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_TRUE(fs::exists(named)) << named;
  EXPECT_FALSE(fs::exists(named.string() + ".srt"));
}

TEST_F(Cli, AutoLanguageIsSaidOnStderr) {
  const CliRun r = hark("transcribe -nf -l auto -m " + shell_quote(model()) + " " + shell_quote(wav()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, ": detected language: ")) << r.err;
}

// On a terminal the bar is one line that fits it, however long the file's path, and speaks of
// speed as "faster than real time". Run under script(1), which gives the command a terminal.
TEST_F(Cli, ProgressBarFitsANarrowTerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1) (Debian: bsdutils)";
  const fs::path deep = dir() / "a-rather-long-folder-name" / "and-another-one-below-it";
  fs::create_directories(deep);
  const fs::path audio = deep / "recording-of-a-long-meeting.wav";
  fs::copy_file(wav(), audio, fs::copy_options::overwrite_existing);
  const fs::path out = dir() / "pty.txt";
  const std::string inner = "stty cols 50; " + shell_quote(cli_path()) + " transcribe -nf -m " + shell_quote(model()) +
                            " " + shell_quote(audio.string());
  const std::string cmd = "script -qfc " + shell_quote(inner) + " /dev/null > " + shell_quote(out.string()) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string all = read_file(out.string());
  // Each redraw starts with "\r\x1b[K": the text after it up to the next \r or \n is one bar.
  size_t bars = 0;
  for (size_t at = all.find("\r\x1b[K"); at != std::string::npos; at = all.find("\r\x1b[K", at + 1)) {
    const size_t from = at + 4, to = all.find_first_of("\r\n", from);
    const std::string bar = all.substr(from, to == std::string::npos ? std::string::npos : to - from);
    if (bar.find(" [") == std::string::npos || bar.find('%') == std::string::npos) continue;  // a line after the bar
    ++bars;
    EXPECT_LE(bar.size(), 49u) << bar;
  }
  EXPECT_GT(bars, 0u) << all;
  EXPECT_FALSE(contains(all, "x real time")) << all;
}

// A usage error is said with its command ("hark transcribe: ..."), a missing argument also with
// the usage line (CLI11's own message names neither); a bare `hark` lists the commands and how to
// start. All exit 2.
TEST_F(Cli, UsageErrorsAreSaidWithTheirCommand) {
  const CliRun bare = hark("");
  EXPECT_EQ(bare.code, 2);
  EXPECT_TRUE(contains(bare.err, "Subcommands:") && contains(bare.err, "transcribe")) << bare.err;
  // ... and how to start: a model, a transcription, the server.
  EXPECT_TRUE(contains(bare.err, "Start with:\n  hark download base.en ")) << bare.err;
  EXPECT_FALSE(contains(hark("transcribe --help").out, "Start with:")) << "the commands' help stays their own";
  // Each command's missing argument: its name, the usage line, where the rest is.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"transcribe -m " + shell_quote(model()),
       "hark transcribe: FILE is required\nUsage: hark transcribe [OPTIONS] FILE...\n"
       "Run 'hark transcribe --help' for all its options."},
      {"quantize", "hark quantize: INPUT is required\nUsage: hark quantize [OPTIONS] INPUT OUTPUT TYPE"},
      {"stream", "hark stream: --model (-m) is required"},
      {"serve", "hark serve: --model is required\nUsage: hark serve [OPTIONS]"},
      // Other usage errors: the command, CLI11's message, where the rest is.
      {"transcribe -o docx -m " + shell_quote(model()) + " " + shell_quote(wav()),
       "hark transcribe: --output-format: docx not in {txt,srt,vtt,json,csv,lrc}\n"
       "Run 'hark transcribe --help' for all its options."},
      {"serve -m " + shell_quote(model()) + " --port 99999", "hark serve: --port: Value 99999 not in range"}};
  for (const auto& [args, said] : cases) {
    const CliRun r = hark(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_TRUE(contains(r.err, said)) << args << ": " << r.err;
  }
}

// A window decoded again at a higher temperature is said on the bar ("retrying 0:00-0:04 at
// T=0.5"), so a bar that stops moving says why; --print-progress gives it a line of its own.
TEST_F(Cli, FallbackIsSaidOnTheProgressBar) {
  const std::string args = " transcribe -tpi 0.5 -bo 1 -m " + shell_quote(model()) + " " + shell_quote(wav());
  const CliRun lines = hark(args.substr(1) + " -pp");
  ASSERT_EQ(lines.code, 0) << lines.err;
  EXPECT_TRUE(contains(lines.err, ": retrying 0:00-0:0")) << lines.err;
  EXPECT_TRUE(contains(lines.err, " at T=0.5\n")) << lines.err;
  EXPECT_TRUE(contains(lines.err, " at T=1.0\n")) << lines.err;
  const CliRun quiet = hark(args.substr(1) + " -nf -pp");
  EXPECT_FALSE(contains(quiet.err, "retrying")) << "no fallback, nothing retried: " << quiet.err;

  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1) (Debian: bsdutils)";
  const fs::path out = dir() / "pty-retry.txt";
  const std::string inner = "stty cols 100; " + shell_quote(cli_path()) + args;
  const std::string cmd = "script -qfc " + shell_quote(inner) + " /dev/null > " + shell_quote(out.string()) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string all = read_file(out.string());
  bool said = false;
  for (size_t at = all.find("\r\x1b[K"); at != std::string::npos; at = all.find("\r\x1b[K", at + 1)) {
    const size_t from = at + 4, to = all.find_first_of("\r\n", from);
    const std::string bar = all.substr(from, to == std::string::npos ? std::string::npos : to - from);
    if (bar.find(" [") == std::string::npos || bar.find('%') == std::string::npos) continue;  // a line after the bar
    if (contains(bar, "%  retrying 0:00-0:0") && contains(bar, " at T=")) said = true;
    EXPECT_LE(bar.size(), 99u) << bar;
  }
  EXPECT_TRUE(said) << all;
}

// `transcribe -` reads the audio from standard input (any format), as `stream --capture -` does.
TEST_F(Cli, TranscribeReadsStandardInput) {
  const std::string m = "transcribe -q -nf -m " + shell_quote(model());
  const CliRun file = hark(m + " " + shell_quote(wav()));
  const CliRun piped = hark(m + " - < " + shell_quote(wav()));
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.out, file.out);
  // Files written for it need a name.
  const CliRun unnamed = hark(m + " - -o srt < " + shell_quote(wav()));
  EXPECT_EQ(unnamed.code, 2);
  EXPECT_TRUE(contains(unnamed.err, "--output-file")) << unnamed.err;
  const CliRun empty = hark(m + " - < /dev/null");
  EXPECT_EQ(empty.code, 1);
  EXPECT_TRUE(contains(empty.err, "standard input was empty")) << empty.err;
}

// `transcribe --help` in groups, whisper.cpp's short flags shown as flags, every line in 100 columns.
TEST_F(Cli, HelpIsGroupedWithShortFlagsIn100Columns) {
  const CliRun r = hark("transcribe --help");
  ASSERT_EQ(r.code, 0);
  for (const char* group : {"Input and output:", "Language:", "Decoding:", "Timestamps and words:",
                            "Voice activity (VAD) and batching:", "Speed and threads:"})
    EXPECT_TRUE(contains(r.out, std::string("\n") + group + "\n")) << group;
  EXPECT_LT(r.out.find("Input and output:"), r.out.find("Speed and threads:"));
  EXPECT_TRUE(contains(r.out, "-nf,--no-fallback")) << r.out;
  EXPECT_TRUE(contains(r.out, "-vm,--vad-model")) << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  for (const char* cmd : {"--help", "vad --help", "serve --help", "stream --help"}) {
    const CliRun h = hark(cmd);
    EXPECT_EQ(h.code, 0) << cmd;
    std::istringstream l(h.out);
    for (std::string line; std::getline(l, line);) EXPECT_LE(line.size(), 100u) << cmd << ": " << line;
  }
}

}  // namespace
}  // namespace hark
