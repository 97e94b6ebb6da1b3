// Building the sandbox's Landlock ruleset and seccomp filter on the caller's
// thread. The system headers may predate the Landlock ABI of the running
// kernel, so the rights and structures of ABI 3 to 6 are spelled out here.
#include "sandbox.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "errno_text.hpp"
#include "json_text.hpp"
#include "launch.hpp"
#include "sup.h"

namespace sup {
namespace {

// The Landlock ABI's additions after ABI 2 (linux/landlock.h of 6.1).
constexpr unsigned long long kFsTruncate = 1ULL << 14;   // ABI 3
constexpr unsigned long long kFsIoctlDev = 1ULL << 15;   // ABI 5
constexpr unsigned long long kNetBindTcp = 1ULL << 0;    // ABI 4
constexpr unsigned long long kNetConnectTcp = 1ULL << 1;

constexpr unsigned long long kFsRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr unsigned long long kFsExec = LANDLOCK_ACCESS_FS_EXECUTE;
// Every right that changes the filesystem, and device ioctls (a terminal's
// TIOCSTI, a disk's ioctls).
constexpr unsigned long long kFsWrite =
    LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER | kFsTruncate | kFsIoctlDev;
// The rights a rule on a file (not a directory) may hold.
constexpr unsigned long long kFsFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                             LANDLOCK_ACCESS_FS_READ_FILE | kFsTruncate | kFsIoctlDev;
// A device the child may read, write and use as a terminal.
constexpr unsigned long long kFsDevice = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | kFsTruncate | kFsIoctlDev;

// What each ABI handles: ABI 1 has bits 0-12, 2 adds REFER, 3 TRUNCATE, 5
// IOCTL_DEV.
unsigned long long fs_rights(int abi) {
  unsigned long long all = (1ULL << 13) - 1;
  if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) all |= kFsTruncate;
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

// struct landlock_ruleset_attr as of ABI 6; the size passed says which
// fields the kernel reads.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#endif

}  // namespace

Sandbox::Sandbox(const SandboxSpec& spec, const std::vector<std::string>& extra_write, int terminal_fd) {
  network_asked_ = !spec.network;
  build_ruleset(spec, extra_write, terminal_fd);
  if (!spec.network) build_filter();
  if (spec.strict && !not_enforced_.empty()) {
    std::string missing;
    for (const std::string& m : not_enforced_) missing += (missing.empty() ? "" : "; ") + m;
    throw LaunchError{SUP_ENOTSUP, "sandbox.strict: cannot be fully enforced here: " + missing};
  }
}

void Sandbox::build_ruleset(const SandboxSpec& spec, const std::vector<std::string>& extra_write, int terminal_fd) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) {
    int err = errno;
    abi_ = 0;
    not_enforced_.push_back(std::string("filesystem: Landlock is not available (landlock_create_ruleset: ") +
                            errno_text(err) + (err == EOPNOTSUPP ? ", disabled at boot" : "") + ")");
    return;
  }
  abi_ = static_cast<int>(abi);
  const unsigned long long available = fs_rights(abi_);
  handled_fs_ = kFsWrite & available;
  if (spec.read) handled_fs_ |= kFsRead;
  if (spec.exec) handled_fs_ |= kFsExec;
  if (abi_ < 3) not_enforced_.push_back("filesystem: truncating files outside \"write\" (Landlock ABI 3 needed, this kernel has " + std::to_string(abi_) + ")");
  if (abi_ < 2) not_enforced_.push_back("filesystem: linking and renaming across directories (Landlock ABI 2 needed)");
  if (abi_ < 5) not_enforced_.push_back("filesystem: ioctls on devices (Landlock ABI 5 needed)");

  RulesetAttr attr{};
  attr.handled_access_fs = handled_fs_;
  size_t attr_size = sizeof attr.handled_access_fs;
  if (!spec.network && abi_ >= 4) {
    // Handled with no rule: every TCP bind and connect is refused, on any
    // socket, inherited ones included.
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    attr_size = offsetof(RulesetAttr, scoped);
    landlock_tcp_ = true;
  }
  // Without Landlock's TCP rules (ABI < 4) the seccomp filter still
  // refuses every new network socket; only a TCP socket the child is given
  // could connect ("landlock_tcp": false says so).
  long fd = syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (fd < 0) {
    int err = errno;
    throw LaunchError{-err, "sandbox: landlock_create_ruleset: " + errno_text(err)};
  }
  // Above stdio: a host that closed its own 0, 1 or 2 would otherwise get
  // it there, where the child's stdio replaces it before it is used.
  ruleset_ = above_stdio(UniqueFd(static_cast<int>(fd)));

  const unsigned long long write_rights = handled_fs_ & (kFsWrite | kFsRead);
  for (size_t i = 0; i < spec.write.size(); ++i)
    add_path(spec.write[i], "sandbox.write[" + std::to_string(i) + "]", write_rights, true);
  for (const std::string& path : extra_write) add_path(path, "sandbox.tmp", write_rights, true);
  if (spec.read)
    for (size_t i = 0; i < spec.read->size(); ++i)
      add_path((*spec.read)[i], "sandbox.read[" + std::to_string(i) + "]", handled_fs_ & kFsRead, true);
  if (spec.exec)
    for (size_t i = 0; i < spec.exec->size(); ++i)
      add_path((*spec.exec)[i], "sandbox.exec[" + std::to_string(i) + "]", handled_fs_ & (kFsExec | kFsRead), true);
  // Always usable: the null device, the controlling terminal by its name,
  // and the child's own terminal by its name (its descriptors, opened
  // before the restriction, keep their rights anyway).
  add_path("/dev/null", "", handled_fs_ & kFsDevice, false);
  add_path("/dev/tty", "", handled_fs_ & kFsDevice, false);
  if (terminal_fd >= 0) add_fd(terminal_fd, handled_fs_ & kFsDevice);
  filesystem_ = true;
}

void Sandbox::add_path(const std::string& path, const std::string& key, unsigned long long access, bool must_exist) {
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (!must_exist) return;
    throw LaunchError{-err, key + ": " + quoted(path) + ": " + errno_text(err), SUP_PART_SPEC};
  }
  UniqueFd owned(fd);
  add_fd(fd, access);
}

void Sandbox::add_fd(int fd, unsigned long long access) {
  struct stat st;
  if (fstat(fd, &st) != 0) throw LaunchError{-errno, "sandbox: fstat: " + errno_text(errno)};
  if (!S_ISDIR(st.st_mode)) access &= kFsFileRights;
  if (access == 0) return;
  landlock_path_beneath_attr rule{};
  rule.allowed_access = access;
  rule.parent_fd = fd;
  if (syscall(SYS_landlock_add_rule, ruleset_.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
    int err = errno;
    throw LaunchError{-err, "sandbox: landlock_add_rule: " + errno_text(err)};
  }
}

// Refuses, with EACCES, socket() for any family but AF_UNIX; io_uring_setup
// (its requests open sockets without passing through seccomp); on x86_64
// every x32 system call (a second table whose socket() this filter would not
// see); and the whole program if it runs under another architecture's
// calling convention (i386's int 0x80 has socketcall and other numbers).
void Sandbox::build_filter() {
#if defined(__x86_64__) || defined(__aarch64__)
  auto stmt = [this](uint16_t code, uint32_t k) { filter_.push_back(sock_filter{code, 0, 0, k}); };
  auto jump = [this](uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { filter_.push_back(sock_filter{code, jt, jf, k}); };
  const uint32_t refuse = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
  const uint32_t refuse_perm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  jump(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1);
  stmt(BPF_RET | BPF_K, refuse_perm);
#endif
#if defined(__NR_socketcall)
  jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_socketcall, 0, 1);
  stmt(BPF_RET | BPF_K, refuse_perm);
#endif
  jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1);
  stmt(BPF_RET | BPF_K, refuse_perm);
  jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  // socket(domain, ...): the low 32 bits of the first argument (both
  // architectures are little-endian), as the kernel reads an int.
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
  jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  stmt(BPF_RET | BPF_K, refuse);
  program_.len = static_cast<unsigned short>(filter_.size());
  program_.filter = filter_.data();
  network_refused_ = true;
#else
  not_enforced_.push_back("network: no seccomp filter for this architecture");
#endif
}

void Sandbox::append_json(std::string& out) const {
  out += "\"sandbox\": {\"landlock_abi\": ";
  append_decimal(out, abi_);
  out += ", \"filesystem\": ";
  out += filesystem_ ? "true" : "false";
  out += ", \"network\": ";
  out += !network_asked_ ? "null" : network_refused_ ? "true" : "false";
  out += ", \"landlock_tcp\": ";
  out += landlock_tcp_ ? "true" : "false";
  out += ", \"no_new_privs\": true, \"not_enforced\": [";
  for (size_t i = 0; i < not_enforced_.size(); ++i) {
    if (i > 0) out += ", ";
    append_json_string(out, not_enforced_[i]);
  }
  out += "]}";
}

}  // namespace sup
