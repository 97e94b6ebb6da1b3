// The JSON spec of one child, parsed and validated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "confine_spec.hpp"

namespace sup {

// fd: the host's descriptor Spec::host_fd[0] ("stdin": {"fd": N}).
enum class StdinMode { null_device, inherit, data, pipe, fd };
enum class TimeoutAction { interrupt, kill };
// Where a child's stdout or stderr goes (routing.cpp). stdout_stream: stderr
// shares stdout's pipe or descriptor; fd: the host's descriptor
// Spec::host_fd[1] or [2] ({"fd": N}).
enum class Route { pipe, tee, inherit, null_device, stdout_stream, fd };
// "contain": "group", "cgroup" or "auto" (cgroup when possible, else group).
enum class ContainMode { group, cgroup, automatic };

struct Spec {
  std::vector<std::string> argv;
  std::optional<std::string> cwd;
  // In spec order; a nullopt value removes the variable.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  StdinMode stdin_mode = StdinMode::null_device;
  std::string stdin_data;  // exact bytes, from "data" or "base64"
  int64_t idle_timeout_ms = 0;
  // 0: off; else the limit before the first byte, and the idle clock starts there.
  int64_t first_output_timeout_ms = 0;
  int64_t max_runtime_ms = 0;
  // 0: off; else end the child once it has waited for input this long.
  int64_t input_wait_timeout_ms = 0;
  // 0: off; else end the child once its main process has been stopped by
  // SIGTTIN or SIGTTOU this long.
  int64_t tty_stop_timeout_ms = 0;
  int64_t grace_ms = 5000;
  int interrupt_signal = 15;
  TimeoutAction on_timeout = TimeoutAction::interrupt;
  // kKeepAllOutput: "max_output_bytes": null, every byte kept.
  uint64_t max_output_bytes = 16u << 20;
  uint64_t backpressure_bytes = 0;
  bool tty_foreground = false;
  Route stdout_route = Route::pipe;
  Route stderr_route = Route::pipe;
  // The environment is exactly env: nothing is inherited.
  bool env_clear = false;
  // "require_sentinel": refuse the spawn (SUP_ENOTSUP) where no sentinel
  // would end the child's tree with the host.
  bool require_sentinel = false;
  ContainMode contain = ContainMode::group;
  std::optional<std::string> cgroup_parent;
  // "pty": the child's 0, 1 and 2 are a new pseudo-terminal of this size.
  bool pty = false;
  int pty_rows = 24;
  int pty_cols = 80;
  // "keep_ignored_signals": the host's SIG_IGN dispositions stay in the
  // child, except the signals of "reset_signals" (bit sig - 1), which get
  // SIG_DFL (child_signals.hpp).
  bool keep_ignored_signals = false;
  uint64_t reset_signals = 0;
  // By the child's number 0, 1, 2: the host's descriptor a stream given as
  // {"fd": N} gets (StdinMode::fd, Route::fd); -1 otherwise.
  int host_fd[3] = {-1, -1, -1};
  // "fds": child descriptor (>= 3, unique) -> host descriptor, in spec order.
  std::vector<std::pair<int, int>> extra_fds;
  // "limits", "sandbox", "user", "group", "groups" (confine_spec.cpp).
  ConfineSpec confine;
};

// "max_output_bytes": null.
constexpr uint64_t kKeepAllOutput = UINT64_MAX;

// Thrown for a malformed spec; what() names the key and the problem.
struct SpecError {
  std::string message;
};

// Parses and validates; throws SpecError.
Spec parse_spec(const char* json);

}  // namespace sup
