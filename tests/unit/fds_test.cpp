// Any descriptor of the host's as the child's: "stdin", "stdout", "stderr"
// as {"fd": N} and "fds" (child -> host), checked from inside the child (the
// same file, seekable, nothing else open), the host's flags unchanged, the
// permutations, the errors; and "max_output_bytes": null keeping every byte.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "helpers.hpp"

namespace {

using suptest::q;

// The child's view of its descriptors: on stderr, for every open one below
// 1024, "fd:dev:ino" (fstat, which follows nothing: the open file itself)
// and, for 1, 3 and 4, where /proc/self/fd says it points.
const char* kReport =
    "import os, sys\n"
    "seen = []\n"
    "for fd in range(1024):\n"
    "    try:\n"
    "        st = os.fstat(fd)\n"
    "    except OSError:\n"
    "        continue\n"
    "    seen.append('%d:%d:%d' % (fd, st.st_dev, st.st_ino))\n"
    "sys.stderr.write(' '.join(seen) + '\\n')\n";

std::string python(const std::string& script, const std::string& extra) {
  return "{\"argv\": [\"python3\", \"-c\", " + q(script) + "], " + extra + "}";
}

std::string identity(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return "<closed>";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// The child's report: child fd -> "dev:ino".
std::map<int, std::string> parse_report(const std::string& text) {
  std::map<int, std::string> out;
  std::istringstream words(text);
  std::string w;
  while (words >> w) {
    size_t colon = w.find(':');
    if (colon == std::string::npos) continue;
    out[std::stoi(w.substr(0, colon))] = w.substr(colon + 1);
  }
  return out;
}

std::set<int> keys(const std::map<int, std::string>& m) {
  std::set<int> out;
  for (const auto& kv : m) out.insert(kv.first);
  return out;
}

std::string routed(const suptest::Json& j, const char* stream) {
  const cJSON* v = j.get(stream, "routed");
  return cJSON_IsString(v) ? v->valuestring : "<none>";
}

// A file of the test's, open on a descriptor of its own (close-on-exec, as
// a library's would be), and its flags as the host set them.
struct HostFile {
  std::string path;
  int fd = -1;
  HostFile(const suptest::TempDir& dir, const std::string& name, const std::string& content = "",
           int flags = O_RDWR) {
    path = dir.file(name);
    std::ofstream(path) << content;
    int opened = open(path.c_str(), flags | O_CLOEXEC);
    // Above the numbers the tests give the child ("fds": 3, 4, 7, 9).
    fd = fcntl(opened, F_DUPFD_CLOEXEC, 20);
    close(opened);
  }
  ~HostFile() {
    if (fd >= 0) close(fd);
  }
  std::string content() const { return suptest::read_file(path); }
};

struct Flags {
  int fl, fd;
  explicit Flags(int n) : fl(fcntl(n, F_GETFL)), fd(fcntl(n, F_GETFD)) {}
  bool operator==(const Flags& o) const { return fl == o.fl && fd == o.fd; }
};

// A descriptor number nothing has open.
int closed_fd() {
  for (int n = 999983;; --n)
    if (fcntl(n, F_GETFD) < 0) return n;
}

// The permutation of the issue, with host descriptor 3 a file of the test's
// where 3 is free (the first test of the binary, before the library has any
// descriptor): the child's 1 is the host's 3, the child's 3 the host's 1,
// whatever order the copies need.
TEST(Fds, StdoutFromThreeAndThreeFromOne) {
  suptest::TempDir dir;
  HostFile file(dir, "three");
  int three = 3;
  bool own_three = false;
  if (fcntl(3, F_GETFD) < 0) {
    ASSERT_EQ(dup3(file.fd, 3, O_CLOEXEC), 3);
    own_three = true;
  } else {
    std::printf("host fd 3 is already open (%s): the permutation uses it as it is\n", identity(3).c_str());
  }
  ASSERT_GE(fcntl(1, F_GETFD), 0) << "the test needs a stdout";
  const Flags three_before(three), one_before(1);
  suptest::Proc p(python(kReport, "\"stdout\": {\"fd\": 3}, \"fds\": {\"3\": 1}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.num("exit_code"), 0) << p.output(SUP_STDERR);
  auto seen = parse_report(p.output(SUP_STDERR));
  EXPECT_EQ(keys(seen), (std::set<int>{0, 1, 2, 3})) << p.output(SUP_STDERR);
  EXPECT_EQ(seen[1], identity(3));
  EXPECT_EQ(seen[3], identity(1));
  EXPECT_EQ(routed(r, "stdout"), "fd");
  EXPECT_TRUE(Flags(three) == three_before);
  EXPECT_TRUE(Flags(1) == one_before);
  if (own_three) close(3);
}

TEST(Fds, StdoutIsTheHostsFileAndSeekable) {
  suptest::TempDir dir;
  HostFile file(dir, "out");
  // A flag of the description the child must not clear, and one of the
  // host's table it cannot reach.
  ASSERT_EQ(fcntl(file.fd, F_SETFL, fcntl(file.fd, F_GETFL) | O_NONBLOCK), 0);
  const Flags before(file.fd);
  ASSERT_TRUE(before.fd & FD_CLOEXEC);
  const char* script =
      "import os, sys\n"
      "st = os.fstat(1)\n"
      "sys.stderr.write('%d:%d %s\\n' % (st.st_dev, st.st_ino, os.readlink('/proc/self/fd/1')))\n"
      "os.write(1, b'hello')\n"
      "os.lseek(1, 0, os.SEEK_SET)\n"
      "os.write(1, b'J')\n";
  suptest::Proc p(python(script, "\"stdout\": {\"fd\": " + std::to_string(file.fd) + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.num("exit_code"), 0) << p.output(SUP_STDERR);
  EXPECT_EQ(p.output(SUP_STDERR), identity(file.fd) + " " + file.path + "\n");
  EXPECT_EQ(file.content(), "Jello") << "the child seeks its stdout: a file, not a pipe";
  // One description: the child's seek and write moved the host's offset too.
  EXPECT_EQ(lseek(file.fd, 0, SEEK_CUR), 1);
  EXPECT_TRUE(Flags(file.fd) == before) << "O_NONBLOCK and FD_CLOEXEC as the host left them";
  EXPECT_EQ(routed(r, "stdout"), "fd");
  const cJSON* bytes = r.get("stdout", "bytes");
  ASSERT_TRUE(cJSON_IsNumber(bytes));
  EXPECT_EQ(bytes->valuedouble, 0) << "sup reads nothing of a descriptor it passes";
  EXPECT_EQ(routed(r, "stderr"), "pipe");
}

TEST(Fds, StdinIsTheHostsFileAndSeekable) {
  suptest::TempDir dir;
  HostFile file(dir, "in", "abcdef", O_RDONLY);
  const Flags before(file.fd);
  const char* script =
      "import os, sys\n"
      "st = os.fstat(0)\n"
      "os.lseek(0, 2, os.SEEK_SET)\n"
      "sys.stdout.write('%d:%d %s\\n' % (st.st_dev, st.st_ino, os.read(0, 100).decode()))\n";
  suptest::Proc p(python(script, "\"stdin\": {\"fd\": " + std::to_string(file.fd) + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0) << p.output(SUP_STDERR);
  EXPECT_EQ(p.output(SUP_STDOUT), identity(file.fd) + " cdef\n");
  EXPECT_TRUE(Flags(file.fd) == before);
}

TEST(Fds, StderrIntoStdoutIsTheSameDescriptor) {
  suptest::TempDir dir;
  HostFile file(dir, "both");
  suptest::Proc p(suptest::sh("echo out; echo err >&2; echo out2; test /proc/self/fd/1 -ef /proc/self/fd/2 || exit 3",
                              "\"stdout\": {\"fd\": " + std::to_string(file.fd) + "}, \"stderr\": \"stdout\""));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.num("exit_code"), 0);
  EXPECT_EQ(file.content(), "out\nerr\nout2\n") << "one description: one offset, the order kept";
  EXPECT_EQ(routed(r, "stdout"), "fd");
  EXPECT_EQ(routed(r, "stderr"), "stdout");
}

TEST(Fds, StderrAsItsOwnDescriptor) {
  suptest::TempDir dir;
  HostFile file(dir, "err");
  suptest::Proc p(suptest::sh("echo out; echo err >&2", "\"stderr\": {\"fd\": " + std::to_string(file.fd) + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(p.output(SUP_STDOUT), "out\n");
  EXPECT_EQ(file.content(), "err\n");
  EXPECT_EQ(routed(r, "stderr"), "fd");
}

TEST(Fds, PassFdsAndNothingElse) {
  suptest::TempDir dir;
  HostFile a(dir, "a"), b(dir, "b");
  int pipe_ends[2];
  ASSERT_EQ(pipe2(pipe_ends, O_CLOEXEC), 0);
  // Not close-on-exec, high up: a child that inherited the host's table
  // would have it, between and above the numbers it was given.
  const int stray = fcntl(a.fd, F_DUPFD, 600);
  ASSERT_GE(stray, 600);
  const Flags a_before(a.fd), b_before(b.fd), pipe_before(pipe_ends[1]);
  // pass_fds-style (same numbers) beside ExtraFiles-style (3, 4, ...), with
  // a gap (5, 6) that must stay closed.
  const std::string fds = "\"fds\": {\"3\": " + std::to_string(a.fd) + ", \"4\": " + std::to_string(pipe_ends[1]) +
                          ", \"7\": " + std::to_string(b.fd) + ", \"" + std::to_string(b.fd) + "\": " +
                          std::to_string(b.fd) + "}";
  std::string script = std::string(kReport) +
                       "os.write(3, b'to a')\n"
                       "os.write(4, b'to the pipe')\n"
                       "os.write(7, b'to b')\n";
  suptest::Proc p(python(script, fds));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  close(stray);
  close(pipe_ends[1]);
  EXPECT_EQ(p.result().num("exit_code"), 0) << p.output(SUP_STDERR);
  auto seen = parse_report(p.output(SUP_STDERR));
  std::set<int> expected{0, 1, 2, 3, 4, 7, b.fd};
  EXPECT_EQ(keys(seen), expected) << p.output(SUP_STDERR);
  EXPECT_EQ(seen[3], identity(a.fd));
  EXPECT_EQ(seen[7], identity(b.fd));
  EXPECT_EQ(seen[b.fd], identity(b.fd));
  EXPECT_EQ(a.content(), "to a");
  EXPECT_EQ(b.content(), "to b");
  char buf[64] = "";
  ssize_t n = read(pipe_ends[0], buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "to the pipe");
  close(pipe_ends[0]);
  EXPECT_TRUE(Flags(a.fd) == a_before);
  EXPECT_TRUE(Flags(b.fd) == b_before);
}

TEST(Fds, SwappedDescriptors) {
  // Each child number is the other's host number: neither copy may land
  // before the other has been taken.
  suptest::TempDir dir;
  HostFile a(dir, "a"), b(dir, "b");
  const std::string sa = std::to_string(a.fd), sb = std::to_string(b.fd);
  suptest::Proc p(python(kReport, "\"fds\": {\"" + sa + "\": " + sb + ", \"" + sb + "\": " + sa + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto seen = parse_report(p.output(SUP_STDERR));
  EXPECT_EQ(seen[a.fd], identity(b.fd)) << p.output(SUP_STDERR);
  EXPECT_EQ(seen[b.fd], identity(a.fd));
  EXPECT_EQ(seen.size(), 5u);
}

TEST(Fds, OneHostDescriptorMadeMany) {
  suptest::TempDir dir;
  HostFile a(dir, "a");
  const std::string sa = std::to_string(a.fd);
  suptest::Proc p(python(kReport, "\"stdin\": {\"fd\": " + sa + "}, \"stdout\": {\"fd\": " + sa + "}, \"fds\": {\"" +
                                      sa + "\": 2, \"3\": " + sa + ", \"9\": " + sa + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  auto seen = parse_report(p.output(SUP_STDERR));
  for (int fd : {0, 1, 3, 9}) EXPECT_EQ(seen[fd], identity(a.fd)) << fd << ": " << p.output(SUP_STDERR);
  // The child's a.fd is the host's 2 (the test's own stderr).
  EXPECT_EQ(seen[a.fd], identity(2));
}

TEST(Fds, WithPty) {
  suptest::TempDir dir;
  HostFile a(dir, "a");
  suptest::Proc p(suptest::sh("test -t 0 && test -t 1 && echo terminal; echo data >&3",
                              "\"pty\": true, \"fds\": {\"3\": " + std::to_string(a.fd) + "}"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.result().num("exit_code"), 0);
  EXPECT_NE(p.output(SUP_STDOUT).find("terminal"), std::string::npos) << p.output(SUP_STDOUT);
  EXPECT_EQ(a.content(), "data\n");
}

TEST(Fds, WithEveryContainMode) {
  const std::string no_cgroup = suptest::cgroup_unavailable();
  for (const char* mode : {"group", "auto", "cgroup"}) {
    SCOPED_TRACE(mode);
    if (std::string(mode) == "cgroup" && !no_cgroup.empty()) {
      std::printf("skipped \"contain\": \"cgroup\": %s\n", no_cgroup.c_str());
      continue;
    }
    suptest::TempDir dir;
    HostFile a(dir, "a"), out(dir, "out");
    suptest::Proc p(python(kReport + std::string("os.write(3, b'three')\n"),
                           "\"contain\": " + q(mode) + ", \"stdout\": {\"fd\": " + std::to_string(out.fd) +
                               "}, \"fds\": {\"3\": " + std::to_string(a.fd) + "}"));
    ASSERT_EQ(p.rc(), 0) << p.error();
    ASSERT_TRUE(p.wait());
    EXPECT_EQ(p.result().num("exit_code"), 0) << p.output(SUP_STDERR);
    auto seen = parse_report(p.output(SUP_STDERR));
    EXPECT_EQ(keys(seen), (std::set<int>{0, 1, 2, 3})) << p.output(SUP_STDERR);
    EXPECT_EQ(seen[1], identity(out.fd));
    EXPECT_EQ(a.content(), "three");
  }
}

TEST(Fds, AtTheDescriptorLimit) {
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur > 1 << 20) {
    std::printf("skipped: RLIMIT_NOFILE %llu is too high to test at\n", static_cast<unsigned long long>(files.rlim_cur));
    return;
  }
  suptest::TempDir dir;
  HostFile a(dir, "a"), b(dir, "b");
  const std::string top = std::to_string(files.rlim_cur - 1), sa = std::to_string(a.fd), sb = std::to_string(b.fd);
  {
    // The highest number the child may have: given as it is.
    suptest::Proc p(suptest::sh("[ /proc/self/fd/" + top + " -ef " + a.path + " ]",
                                "\"fds\": {\"" + top + "\": " + sa + "}"));
    ASSERT_EQ(p.rc(), 0) << p.error();
    ASSERT_TRUE(p.wait());
    EXPECT_EQ(p.result().num("exit_code"), 0);
  }
  // A swap there needs a free number above the highest child number, and
  // there is none: a clean failure, nothing left open.
  const int fds_before = suptest::open_fds();
  int rc = 0;
  sup_proc* other = nullptr;
  char err[SUP_ERRBUF_SIZE] = "";
  const std::string spec = "{\"argv\": [\"true\"], \"fds\": {\"" + top + "\": " + sa + ", \"" + sa + "\": " + sb +
                           ", \"" + sb + "\": " + sa + "}}";
  rc = sup_spawn_ex(spec.c_str(), &other, err, sizeof err);
  EXPECT_EQ(rc, -EINVAL) << err;
  EXPECT_EQ(std::string(err).rfind("fds: ", 0), 0u) << err;
  EXPECT_EQ(other, nullptr);
  // (The loop may still be closing what an earlier child left: fewer.)
  EXPECT_LE(suptest::open_fds(), fds_before);
}

// The spawn's error, or "" when it started.
std::string spawn_error(const std::string& spec, int* rc, int* part = nullptr) {
  sup_proc* p = nullptr;
  char err[SUP_ERRBUF_SIZE] = "";
  int failed = 0;
  *rc = sup_spawn_v2(spec.c_str(), &p, err, sizeof err, &failed);
  if (part != nullptr) *part = failed;
  if (*rc == 0) {
    sup_poll(p, -1);
    sup_release(p);
    return "";
  }
  return err;
}

TEST(Fds, BadSpecsNameTheKey) {
  const struct {
    const char* extra;
    const char* starts;
  } cases[] = {
      {"\"fds\": []", "spec: fds: "},
      {"\"fds\": {\"2\": 1}", "spec: fds.2: "},
      {"\"fds\": {\"0\": 1}", "spec: fds.0: "},
      {"\"fds\": {\"-3\": 1}", "spec: fds.-3: "},
      {"\"fds\": {\"x\": 1}", "spec: fds.x: "},
      {"\"fds\": {\"\": 1}", "spec: fds.: "},
      {"\"fds\": {\"3 \": 1}", "spec: fds.3 : "},
      {"\"fds\": {\"03\": 1}", "spec: fds.03: "},
      {"\"fds\": {\"99999999999\": 1}", "spec: fds.99999999999: "},
      {"\"fds\": {\"2147483647\": 1}", "spec: fds.2147483647: "},
      {"\"fds\": {\"3\": 1, \"3\": 2}", "spec: fds.3: "},
      {"\"fds\": {\"3\": -1}", "spec: fds.3: "},
      {"\"fds\": {\"3\": 1.5}", "spec: fds.3: "},
      {"\"fds\": {\"3\": \"1\"}", "spec: fds.3: "},
      {"\"fds\": {\"3\": 2147483648}", "spec: fds.3: "},
      {"\"stdout\": {\"fd\": -1}", "spec: stdout.fd: "},
      {"\"stdout\": {\"fd\": \"1\"}", "spec: stdout.fd: "},
      {"\"stdout\": {\"file\": 1}", "spec: stdout.file: "},
      {"\"stdout\": {}", "spec: stdout: "},
      {"\"stderr\": {\"fd\": 1, \"fd\": 2}", "spec: stderr.fd: "},
      {"\"stdin\": {\"fd\": 0.5}", "spec: stdin.fd: "},
      {"\"stdin\": {\"fd\": 0, \"data\": \"x\"}", "spec: stdin.data: "},
      {"\"max_output_bytes\": \"all\"", "spec: max_output_bytes: "},
      // Nothing sup reads: no silence limit can apply.
      {"\"stdout\": {\"fd\": 1}, \"stderr\": {\"fd\": 2}, \"idle_timeout_ms\": 100", "spec: idle_timeout_ms: "},
      {"\"stdout\": {\"fd\": 1}, \"stderr\": \"stdout\", \"first_output_timeout_ms\": 100",
       "spec: first_output_timeout_ms: "},
      {"\"pty\": true, \"stdout\": {\"fd\": 1}", "spec: stdout: "},
  };
  for (const auto& c : cases) {
    int rc = 0, part = 0;
    std::string err = spawn_error("{\"argv\": [\"true\"], " + std::string(c.extra) + "}", &rc, &part);
    EXPECT_EQ(rc, SUP_EINVAL) << c.extra << ": " << err;
    EXPECT_EQ(part, SUP_PART_SPEC) << c.extra;
    EXPECT_EQ(err.rfind(c.starts, 0), 0u) << c.extra << ": " << err;
  }
}

TEST(Fds, ADescriptorNotOpenIsEbadfNamingKeyAndNumber) {
  const int n = closed_fd();
  const std::string sn = std::to_string(n);
  const struct {
    std::string extra;
    std::string key;
  } cases[] = {
      {"\"stdin\": {\"fd\": " + sn + "}", "stdin.fd"},
      {"\"stdout\": {\"fd\": " + sn + "}", "stdout.fd"},
      {"\"stderr\": {\"fd\": " + sn + "}", "stderr.fd"},
      {"\"fds\": {\"5\": " + sn + "}", "fds.5"},
  };
  const int fds_before = suptest::open_fds();
  for (const auto& c : cases) {
    int rc = 0, part = 0;
    std::string err = spawn_error("{\"argv\": [\"true\"], " + c.extra + "}", &rc, &part);
    EXPECT_EQ(rc, SUP_EBADF) << c.extra << ": " << err;
    EXPECT_EQ(part, SUP_PART_SPEC);
    EXPECT_EQ(err, "spec: " + c.key + ": host descriptor " + sn + " is not open");
  }
  EXPECT_LE(suptest::open_fds(), fds_before) << "a refused spawn leaves nothing open";
}

TEST(Fds, NoSilenceLimitWithAStreamSupDoesNotRead) {
  // Still accepted where one stream is read: stdout a descriptor, stderr a pipe.
  suptest::TempDir dir;
  HostFile out(dir, "out");
  suptest::Proc p(suptest::sh("echo hi; echo there >&2",
                              "\"stdout\": {\"fd\": " + std::to_string(out.fd) + "}, \"idle_timeout_ms\": 10000"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait());
  EXPECT_EQ(p.output(SUP_STDERR), "there\n");
  EXPECT_EQ(out.content(), "hi\n");
}

// Lines "%015d\n", 16 bytes each, numbered from 1: n of them on stdout, and
// on stderr when both.
std::string numbered_lines(size_t n, bool both) {
  std::string script = "import sys\n"
                       "data = b''.join(b'%015d\\n' % i for i in range(1, " + std::to_string(n + 1) + "))\n"
                       "sys.stdout.buffer.write(data)\n"
                       "sys.stdout.flush()\n";
  if (both) script += "sys.stderr.buffer.write(data)\n";
  return script;
}

// 20 MiB on each stream: every byte must come back, in order.
TEST(KeepAllOutput, MoreThanSixteenMibKeptWhole) {
  const size_t lines = 20 * 1024 * 1024 / 16;
  suptest::Proc p(python(numbered_lines(lines, true), "\"max_output_bytes\": null"));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait(120000));
  auto r = p.result();
  EXPECT_EQ(r.num("exit_code"), 0);
  std::string expected;
  expected.reserve(lines * 16);
  char line[32];
  for (size_t i = 1; i <= lines; ++i) {
    std::snprintf(line, sizeof line, "%015zu\n", i);
    expected += line;
  }
  ASSERT_EQ(expected.size(), 20u << 20);
  for (int stream : {SUP_STDOUT, SUP_STDERR}) {
    const char* name = stream == SUP_STDOUT ? "stdout" : "stderr";
    SCOPED_TRACE(name);
    EXPECT_EQ(sup_output_total(p.get(), stream), static_cast<int64_t>(expected.size()));
    const std::string got = p.output(stream);
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << "the kept bytes differ from what the child wrote";
    EXPECT_TRUE(cJSON_IsFalse(r.get(name, "truncated")));
    const cJSON* omitted = r.get(name, "omitted_bytes");
    ASSERT_TRUE(cJSON_IsNumber(omitted));
    EXPECT_EQ(omitted->valuedouble, 0);
    const cJSON* bytes = r.get(name, "bytes");
    ASSERT_TRUE(cJSON_IsNumber(bytes));
    EXPECT_EQ(bytes->valuedouble, static_cast<double>(expected.size()));
    const cJSON* captured = r.get(name, "captured");
    ASSERT_TRUE(cJSON_IsString(captured));
    EXPECT_EQ(std::strlen(captured->valuestring), expected.size());
  }
  // A reader reads every byte from the start, too.
  std::string read;
  uint64_t pos = 0;
  std::vector<char> buf(1 << 20);
  size_t n = 0;
  while (sup_output_read(p.get(), SUP_STDOUT, &pos, buf.data(), buf.size(), &n) == 0 && n > 0) read.append(buf.data(), n);
  EXPECT_TRUE(read == expected);
}

TEST(KeepAllOutput, TheDefaultStillCuts) {
  // The same child without the key: the test above can tell the difference.
  suptest::Proc p(python(numbered_lines(20 * 1024 * 1024 / 16, false), "\"stderr\": \"pipe\""));
  ASSERT_EQ(p.rc(), 0) << p.error();
  ASSERT_TRUE(p.wait(120000));
  auto r = p.result();
  EXPECT_EQ(sup_output_total(p.get(), SUP_STDOUT), int64_t{20} << 20);
  EXPECT_EQ(p.output(SUP_STDOUT).size(), 16u << 20);
  EXPECT_TRUE(cJSON_IsTrue(r.get("stdout", "truncated")));
  const cJSON* omitted = r.get("stdout", "omitted_bytes");
  ASSERT_TRUE(cJSON_IsNumber(omitted));
  EXPECT_EQ(omitted->valuedouble, static_cast<double>((20u << 20) - (16u << 20)));
}

}  // namespace
