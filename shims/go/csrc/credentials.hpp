// Who the child runs as ("user", "group", "groups"): names resolved on the
// caller's thread, the switch made in the child with raw system calls, and
// the host's dumpable flag kept across it.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "confine_spec.hpp"

namespace sup {

struct Credentials {
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  // setgroups(2) is made only when set: with "groups", or with "user"
  // (that user's groups, as login and su give them), so that a root host's
  // own supplementary groups (root's group 0 among them) never reach a
  // child that was asked to run as someone else.
  std::optional<std::vector<gid_t>> groups;
  bool any() const noexcept { return uid || gid || groups; }
};

// Resolves names (getpwnam_r, getgrnam_r, getgrouplist). "user" alone also
// gives its primary group and its groups; "group" alone changes only the
// group. Throws SpecError naming the key for a name that does not exist.
Credentials resolve_credentials(const ConfineSpec& spec);

// The uid the child will run as: the one asked for, else the host's.
uid_t child_uid(const Credentials& c) noexcept;

// A uid change in the child changes the dumpable flag of the memory it
// shares with the host until exec (the vfork-style clone): the kernel sets
// it for the whole mm, so the host would become non-dumpable (no core, no
// ptrace, /proc/self owned by root). Saved before the clone and restored
// after; spawns that switch ids are serialized here so that one spawn's
// saved value is never another's cleared one.
class DumpableKeeper {
 public:
  explicit DumpableKeeper(bool active);
  ~DumpableKeeper();
  DumpableKeeper(const DumpableKeeper&) = delete;
  DumpableKeeper& operator=(const DumpableKeeper&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  int saved_ = -1;
};

}  // namespace sup
