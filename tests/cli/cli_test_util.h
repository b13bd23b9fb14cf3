// Helpers shared by the tests that run the hark binary: where it is, and one run of it with its
// exit code and output captured.
#pragma once
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace hark::testing {

// The hark binary: $HARK_CLI, else the one this build made (empty when there is none).
inline std::string cli_path() {
  if (const char* env = std::getenv("HARK_CLI"); env && *env) return env;
#ifdef HARK_CLI_PATH
  return HARK_CLI_PATH;
#else
  return {};
#endif
}

// s as one word for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct CliRun {
  int code = -1;  // the exit status; -1 when it did not exit (a signal)
  std::string out, err;
};

// Runs `[env] hark ARGS` (ARGS already quoted as needed) through the shell, with stdout and
// stderr captured in files under `dir`.
inline CliRun run_cli(const std::string& args, const std::filesystem::path& dir, const std::string& env = "") {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = env + " " + shell_quote(cli_path()) + " " + args + " >" + shell_quote(out.string()) + " 2>" +
                          shell_quote(err.string());
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace hark::testing
