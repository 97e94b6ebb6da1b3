// Making a child's launch plan (launch_plan.hpp): execvp's PATH search done
// ahead, so that a missing command is reported by name, and the child's
// environment merged from the host's and the spec's.
#include "launch_plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>

extern char** environ;

namespace sup {
namespace {

// execvp's choice when PATH is unset.
constexpr const char* kDefaultPath = "/bin:/usr/bin";

const char* find_env(const std::vector<std::string>& env, const char* name) {
  size_t len = std::strlen(name);
  for (const auto& kv : env)
    if (kv.compare(0, len, name) == 0 && kv.size() > len && kv[len] == '=') return kv.c_str() + len + 1;
  return nullptr;
}

// The child's environment: the inherited entries in their order, less every
// one whose name the spec sets or removes (duplicates included), then the
// spec's values in spec order. One pass over each through a hash set of the
// spec's names: an erase per entry made 100,000 variables take a minute.
// Spec names are unique (spec.cpp refuses a name twice).
std::vector<std::string> merge_environment(char** inherited,
                                           const std::vector<std::pair<std::string, std::optional<std::string>>>& env) {
  std::unordered_set<std::string_view> named;
  named.reserve(env.size());
  for (const auto& entry : env) named.insert(entry.first);
  std::vector<std::string> out;
  size_t inherited_count = 0;
  for (char** e = inherited; e != nullptr && *e != nullptr; ++e) ++inherited_count;
  out.reserve(inherited_count + env.size());
  for (size_t i = 0; i < inherited_count; ++i) {
    const char* kv = inherited[i];
    const char* eq = std::strchr(kv, '=');
    // An entry without '=' has no name a spec could set: it stays.
    if (eq != nullptr && named.count(std::string_view(kv, static_cast<size_t>(eq - kv))) != 0) continue;
    out.emplace_back(kv);
  }
  for (const auto& [name, value] : env)
    if (value) out.push_back(name + "=" + *value);
  return out;
}

// execvp's search, done in the parent so that a missing command is reported
// by name before anything is cloned. Relative PATH entries are taken relative
// to the child's cwd, where the child's execve will resolve them.
std::string search_path(const std::string& name, const char* path_value,
                        const std::optional<std::string>& cwd) {
  std::string path = path_value != nullptr ? path_value : kDefaultPath;
  bool saw_unexecutable = false;
  bool saw_directory = false;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    begin = end + 1;
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    std::string on_disk = (cwd && candidate[0] != '/') ? *cwd + "/" + candidate : candidate;
    struct stat st;
    if (stat(on_disk.c_str(), &st) != 0) continue;
    // A directory is found but cannot be run: EACCES, as execvp says once
    // nothing later on PATH can be (argv[0] "." is one in every entry).
    if (S_ISDIR(st.st_mode)) {
      saw_directory = true;
      continue;
    }
    if (faccessat(AT_FDCWD, on_disk.c_str(), X_OK, AT_EACCESS) == 0) return candidate;
    saw_unexecutable = true;
  }
  if (saw_unexecutable)
    throw LaunchError{SUP_EACCES, "exec " + quoted(name) + ": found in PATH but not executable", SUP_PART_EXEC};
  if (saw_directory)
    throw LaunchError{SUP_EACCES, "exec " + quoted(name) + ": found in PATH only as a directory", SUP_PART_EXEC};
  // PATH may be long: shown shortened, so the detail fits SUP_ERRBUF_SIZE.
  std::string shown = quoted(path, 1500);
  throw LaunchError{SUP_ENOENT, "exec " + quoted(name) + ": not found in PATH (" + shown.substr(1, shown.size() - 2) + ")",
                    SUP_PART_EXEC};
}

}  // namespace

std::string quoted(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return "\"" + s + "\"";
  size_t half = max_bytes / 2;
  return "\"" + s.substr(0, half) + "..." + s.substr(s.size() - half) + "\"";
}

LaunchPlan plan_launch(const Spec& spec) {
  LaunchPlan plan;
  plan.argv0 = spec.argv[0];
  plan.cwd = spec.cwd;
  plan.tty_foreground = spec.tty_foreground;
  plan.terminal = spec.pty;
  plan.signals.keep_ignored = spec.keep_ignored_signals;
  plan.signals.reset = spec.reset_signals;

  const char* path_value = nullptr;
  if (!spec.env.empty() || spec.env_clear) {
    plan.env_storage = merge_environment(spec.env_clear ? nullptr : environ, spec.env);
    for (auto& kv : plan.env_storage) plan.envp.push_back(kv.data());
    plan.envp.push_back(nullptr);
    // With env_clear and no PATH in env: kDefaultPath, as execvp.
    path_value = find_env(plan.env_storage, "PATH");
  } else {
    path_value = getenv("PATH");
  }

  if (plan.argv0.find('/') != std::string::npos)
    plan.exec_path = plan.argv0;
  else
    plan.exec_path = search_path(plan.argv0, path_value, plan.cwd);

  plan.argv_storage = spec.argv;
  for (auto& arg : plan.argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  return plan;
}

}  // namespace sup
