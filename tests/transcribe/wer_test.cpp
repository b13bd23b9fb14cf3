// Accuracy on real speech: when ../shared/models/ holds a real Whisper model, every clip in
// ../shared/audio/ (x.wav with its reference transcript x.txt) is transcribed and its word error
// rate must stay under the clip's threshold: the number in x.wer beside it when present, else the
// README's 15% for tiny-class models. Without a model the test is skipped, saying why.
//
// Word error rate: (substitutions + deletions + insertions) / reference words, after both texts
// are normalised the same way (lower case, punctuation dropped, "mr." read as "mister", ...).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hark/hark.hpp"
#include "model/model_test_util.h"

namespace hark {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> normalized_words(const std::string& text) {
  std::string s;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '\'' || u >= 0x80)
      s += static_cast<char>(std::tolower(u));
    else
      s += ' ';  // punctuation and hyphens separate words
  }
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) {
    w.erase(std::remove(w.begin(), w.end(), '\''), w.end());  // "don't" == "dont"
    if (w == "mr")
      w = "mister";
    else if (w == "mrs")
      w = "missus";
    else if (w == "dr")
      w = "doctor";
    if (!w.empty()) words.push_back(w);
  }
  return words;
}

// Levenshtein distance over words, divided by the reference length.
double word_error_rate(const std::vector<std::string>& ref, const std::vector<std::string>& hyp) {
  if (ref.empty()) return hyp.empty() ? 0.0 : 1.0;
  std::vector<size_t> prev(hyp.size() + 1), cur(hyp.size() + 1);
  for (size_t j = 0; j <= hyp.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= ref.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= hyp.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ref[i - 1] == hyp[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return static_cast<double>(prev[hyp.size()]) / static_cast<double>(ref.size());
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(WordErrorRate, CountsEditsOverNormalizedWords) {
  EXPECT_EQ(normalized_words("Mr. John Dashwood, had-then!"),
            (std::vector<std::string>{"mister", "john", "dashwood", "had", "then"}));
  const auto ref = normalized_words("he was not an ill disposed young man");
  EXPECT_DOUBLE_EQ(word_error_rate(ref, normalized_words("He was not an ill-disposed young man.")), 0.0);
  EXPECT_DOUBLE_EQ(word_error_rate(ref, normalized_words("he was an ill disposed young man")), 1.0 / 8);  // deletion
  EXPECT_DOUBLE_EQ(word_error_rate(ref, normalized_words("he was not an ill disposed old young man")), 1.0 / 8);
  EXPECT_DOUBLE_EQ(word_error_rate(ref, normalized_words("she was not an ill disposed young man")), 1.0 / 8);
  EXPECT_DOUBLE_EQ(word_error_rate(ref, {}), 1.0);
}

TEST(RealSpeech, WordErrorRateUnderEachClipsThreshold) {
  const std::string shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "no ../shared folder beside the repository";
  std::vector<fs::path> models;
  std::error_code ec;
  if (fs::is_directory(fs::path(shared) / "models", ec))
    for (const auto& e : fs::directory_iterator(fs::path(shared) / "models"))
      if (e.path().extension() == ".bin") models.push_back(e.path());
  if (models.empty())
    GTEST_SKIP() << "no real Whisper model (*.bin) in " << shared << "/models; the word error rate check needs one";
  std::vector<fs::path> clips;
  for (const auto& e : fs::directory_iterator(fs::path(shared) / "audio", ec))
    if (e.path().extension() == ".wav" && fs::exists(fs::path(e.path()).replace_extension(".txt")))
      clips.push_back(e.path());
  if (clips.empty()) GTEST_SKIP() << "no clips with transcripts in " << shared << "/audio";
  std::sort(models.begin(), models.end());
  std::sort(clips.begin(), clips.end());

  for (const fs::path& model : models) {
    auto ctx = Context::load(model.string());
    for (const fs::path& clip : clips) {
      double threshold = 0.15;
      if (const fs::path w = fs::path(clip).replace_extension(".wer"); fs::exists(w))
        threshold = std::stod(read_text(w));
      TranscribeParams p;
      p.language = "en";  // the clips are English
      const Transcript t = ctx->transcribe(load_audio(clip.string()), p);
      std::string hyp;
      for (const Segment& s : t.segments) hyp += s.text + " ";
      const double wer =
          word_error_rate(normalized_words(read_text(fs::path(clip).replace_extension(".txt"))), normalized_words(hyp));
      std::printf("  %s on %s: WER %.1f%% (threshold %.0f%%): %s\n", model.filename().c_str(), clip.filename().c_str(),
                  100 * wer, 100 * threshold, hyp.c_str());
      EXPECT_LE(wer, threshold) << model << " on " << clip << "\nheard: " << hyp;
    }
  }
}

}  // namespace
}  // namespace hark
