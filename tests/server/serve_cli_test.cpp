// `hark serve` as a process: it prints where it listens (--port 0: a free port), answers, and on
// SIGTERM stops accepting, finishes, and exits 0; a bad model or port is a clear error, exit 1/2.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "server_test_util.h"
#include "vad/vad_test_util.h"

namespace hark::server::testing {
namespace {

using hark::testing::cli_path;

// A child process running `hark serve ARGS`, its stdout read line by line.
struct ServeProcess {
  pid_t pid = -1;
  FILE* out = nullptr;
  explicit ServeProcess(const std::vector<std::string>& args) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      close(fds[1]);
      std::vector<std::string> all = {cli_path(), "serve"};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    out = fdopen(fds[0], "r");
  }
  ~ServeProcess() {
    if (pid > 0 && !exited) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (out) fclose(out);
  }
  std::string line() {
    char buf[1024];
    return out && fgets(buf, sizeof buf, out) ? std::string(buf) : std::string();
  }
  // Exit code, or -1 when killed by a signal.
  int wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    exited = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  bool exited = false;
};

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cli_path().empty() || !fs::exists(cli_path())) GTEST_SKIP() << "the hark binary was not built";
  }
};

TEST_F(ServeCli, AnswersThenExitsZeroOnSigterm) {
  ServeProcess p({"-m", micro_model(), "--port", "0", "-t", "1", "--no-fallback", "--parallel", "2"});
  const std::string first = p.line();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first, m, std::regex("listening on http://127\\.0\\.0\\.1:(\\d+)"))) << first;
  EXPECT_TRUE(first.find("models: micro") != std::string::npos) << first;
  const int port = std::stoi(m[1]);
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav()));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // SIGTERM under load (more requests than the 2 states: some run, some wait): every request is
  // answered, finished within the grace (200) or refused as the server stops (503), then exit 0.
  constexpr int kClients = 5;
  std::vector<int> during(kClients, -1);     // the status each request got; 0: no answer
  const std::string clip = tones_wav(20.0);  // written once, before the clients read it
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k)
    clients.emplace_back([&, k] {
      httplib::Client c2("127.0.0.1", port);
      c2.set_read_timeout(120, 0);
      auto r2 = c2.Post("/v1/audio/transcriptions", form(clip));
      during[static_cast<size_t>(k)] = r2 ? r2->status : 0;
    });
  // Until the server holds every request (2 running, 3 queued), so none is still connecting
  // when it stops listening; 20 s of audio keeps them there meanwhile.
  for (int i = 0; i < 2000; ++i) {
    auto hh = c.Get("/health");
    if (!hh || hh->body.find("\"jobs_queued\":3,\"jobs_running\":2") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(p.pid, SIGTERM);
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(p.wait(), 0);
  for (int status : during) EXPECT_TRUE(status == 200 || status == 503) << status;
  EXPECT_FALSE(httplib::Client("127.0.0.1", port).Get("/health"));
}

// -m takes an official model name, found in $HARK_MODELS (as the CLI and the bindings do).
TEST_F(ServeCli, TakesAnOfficialModelNameFromTheModelsFolder) {
  const fs::path dir = scratch() / "serve-models";
  fs::create_directories(dir);
  fs::copy_file(micro_model(), dir / "ggml-tiny.en.bin", fs::copy_options::overwrite_existing);
  const char* old = std::getenv("HARK_MODELS");
  const std::string kept = old ? old : "";
  ::setenv("HARK_MODELS", dir.c_str(), 1);  // the child inherits it
  ServeProcess p({"-m", "tiny.en", "--port", "0", "-t", "1"});
  ServeProcess missing({"-m", "base.en", "--port", "0"});
  old ? (void)::setenv("HARK_MODELS", kept.c_str(), 1) : (void)::unsetenv("HARK_MODELS");
  const std::string first = p.line();
  EXPECT_TRUE(std::regex_search(first, std::regex("listening on http://127\\.0\\.0\\.1:\\d+"))) << first;
  kill(p.pid, SIGTERM);
  EXPECT_EQ(p.wait(), 0);
  EXPECT_EQ(missing.wait(), 1);  // stderr says how to download it (find_model's message)
}

// --vad-model is loaded at start: a missing file or a Whisper model there fails the start (exit 1,
// nothing listening), not the first request with vad=true; a name from hark download is found in
// the models folder, as transcribe's -vm finds it.
TEST_F(ServeCli, TheVadModelIsCheckedAtStart) {
  ServeProcess missing({"-m", micro_model(), "--port", "0", "--vad-model", (scratch() / "no-vad.bin").string()});
  EXPECT_EQ(missing.line(), "");
  EXPECT_EQ(missing.wait(), 1);
  ServeProcess wrong({"-m", micro_model(), "--port", "0", "--vad-model", micro_model()});
  EXPECT_EQ(wrong.line(), "");
  EXPECT_EQ(wrong.wait(), 1);
  const std::string vad = hark::testing::silero_model_path();
  if (vad.empty()) GTEST_SKIP() << "../shared/vad not found: the start with a real VAD model is not checked";
  const fs::path dir = scratch() / "serve-vad-models";
  fs::create_directories(dir);
  fs::copy_file(vad, dir / "ggml-silero-v6.2.0.bin", fs::copy_options::overwrite_existing);
  const char* old = std::getenv("HARK_MODELS");
  const std::string kept = old ? old : "";
  ::setenv("HARK_MODELS", dir.c_str(), 1);  // the child inherits it
  ServeProcess named({"-m", micro_model(), "--port", "0", "-t", "1", "--vad-model", "silero-v6.2.0"});
  old ? (void)::setenv("HARK_MODELS", kept.c_str(), 1) : (void)::unsetenv("HARK_MODELS");
  const std::string first = named.line();
  EXPECT_TRUE(std::regex_search(first, std::regex("listening on http://127\\.0\\.0\\.1:\\d+"))) << first;
  kill(named.pid, SIGTERM);
  EXPECT_EQ(named.wait(), 0);
}

TEST_F(ServeCli, AMissingModelIsAClearError) {
  ServeProcess p({"-m", (scratch() / "nope.bin").string(), "--port", "0"});
  EXPECT_EQ(p.line(), "");
  EXPECT_EQ(p.wait(), 1);
}

// --cross-kv-type q8_0: every model's states keep an 8-bit cross-attention cache and answer.
TEST_F(ServeCli, ServesWithAQuantizedCrossCache) {
  ServeProcess p({"-m", micro_model(), "--port", "0", "-t", "1", "--no-fallback", "--cross-kv-type", "q8_0"});
  const std::string first = p.line();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first, m, std::regex("listening on http://127\\.0\\.0\\.1:(\\d+)"))) << first;
  httplib::Client c("127.0.0.1", std::stoi(m[1]));
  c.set_read_timeout(120, 0);
  auto r = c.Post("/v1/audio/transcriptions", form(tones_wav()));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  kill(p.pid, SIGTERM);
  EXPECT_EQ(p.wait(), 0);
}

// SIGTERM while clients hold connections (a slow upload, an idle keep-alive, a stalled head): the
// process exits 0 within the grace and a second, whatever they do.
TEST_F(ServeCli, SigtermEndsWithinTheGraceWhateverClientsDo) {
  ServeProcess p({"-m", micro_model(), "--port", "0", "-t", "1", "--shutdown-grace", "1"});
  const std::string first = p.line();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first, m, std::regex("listening on http://127\\.0\\.0\\.1:(\\d+)"))) << first;
  const int port = std::stoi(m[1]);
  RawConnection slow(port), idle(port), stalled(port);
  slow.send_all(
      "POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
      "boundary=b\r\nContent-Length: 5000000\r\n\r\n--b\r\n");
  stalled.send_all("GET /heal");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  kill(p.pid, SIGTERM);
  EXPECT_EQ(p.wait(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
}

// Two servers on one port: the second fails at start, naming the port (never shares it).
TEST_F(ServeCli, APortInUseIsAnErrorAtStart) {
  ServeProcess p({"-m", micro_model(), "--port", "0", "-t", "1"});
  const std::string first = p.line();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first, m, std::regex("listening on http://127\\.0\\.0\\.1:(\\d+)"))) << first;
  ServeProcess second({"-m", micro_model(), "--port", m[1].str(), "-t", "1"});
  EXPECT_EQ(second.line(), "");
  EXPECT_EQ(second.wait(), 1);
  kill(p.pid, SIGTERM);
  EXPECT_EQ(p.wait(), 0);
}

TEST_F(ServeCli, BadFlagsAreUsageErrors) {
  ServeProcess p({"-m", micro_model(), "--port", "70000"});
  EXPECT_EQ(p.wait(), 2);
  ServeProcess q({"--port", "0"});  // no model
  EXPECT_EQ(q.wait(), 2);
  ServeProcess r({"-m", micro_model(), "--port", "0", "--read-timeout", "0"});
  EXPECT_EQ(r.wait(), 2);
  ServeProcess h({"-m", micro_model(), "--port", "0", "--header-timeout", "-1"});
  EXPECT_EQ(h.wait(), 2);
  ServeProcess b({"-m", micro_model(), "--port", "0", "--min-body-rate", "fast"});
  EXPECT_EQ(b.wait(), 2);
  ServeProcess k({"-m", micro_model(), "--port", "0", "--cross-kv-type", "q4_0"});
  EXPECT_EQ(k.wait(), 2);
}

}  // namespace
}  // namespace hark::server::testing
