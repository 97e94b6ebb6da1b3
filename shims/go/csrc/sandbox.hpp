// "sandbox": a Landlock ruleset for the filesystem (and TCP, where the
// kernel's Landlock ABI has it) and a seccomp filter that refuses network
// sockets, both built on the caller's thread, so that the child only hands
// them to the kernel (confine.cpp's child step).
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "confine_spec.hpp"
#include "unique_fd.hpp"

namespace sup {

class Sandbox {
 public:
  // extra_write: directories made for the child ("tmp"). terminal_fd: the
  // child's PTY slave, which stays writable by its path too (-1: none).
  // Throws LaunchError: SUP_ENOTSUP naming what is missing for a "strict"
  // sandbox the kernel cannot fully enforce; the open's error for a listed
  // path that cannot be opened.
  Sandbox(const SandboxSpec& spec, const std::vector<std::string>& extra_write, int terminal_fd);

  // -1 when Landlock is not used (unavailable, best effort).
  int ruleset_fd() const noexcept { return ruleset_.get(); }
  // nullptr when network sockets are allowed.
  const sock_fprog* filter() const noexcept { return filter_.empty() ? nullptr : &program_; }
  void append_json(std::string& out) const;

 private:
  void build_ruleset(const SandboxSpec& spec, const std::vector<std::string>& extra_write, int terminal_fd);
  void build_filter();
  void add_path(const std::string& path, const std::string& key, unsigned long long access, bool must_exist);
  void add_fd(int fd, unsigned long long access);

  int abi_ = 0;
  unsigned long long handled_fs_ = 0;
  bool network_asked_ = false;  // "network": false
  bool network_refused_ = false;
  bool landlock_tcp_ = false;
  bool filesystem_ = false;
  std::vector<std::string> not_enforced_;
  UniqueFd ruleset_;
  std::vector<sock_filter> filter_;
  sock_fprog program_{};
};

}  // namespace sup
