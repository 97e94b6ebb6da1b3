// Test helpers: an owning handle, JSON access to results, clocks, and ways to
// see what a child left running.
#pragma once

#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sup.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace suptest {

// The reason cgroup mode cannot run here, or "" when it can: a trial spawn.
inline std::string cgroup_unavailable() {
  sup_proc* p = nullptr;
  char err[SUP_ERRBUF_SIZE] = "";
  int rc = sup_spawn_ex("{\"argv\": [\"true\"], \"contain\": \"cgroup\"}", &p, err, sizeof err);
  if (rc == 0) {
    sup_poll(p, -1);
    sup_release(p);
    return "";
  }
  return std::string(sup_strerror(rc)) + ": " + err;
}

// The cgroup2 mount point, from mountinfo ("" when there is none).
inline std::string cgroup2_mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    size_t dash = line.find(" - cgroup2 ");
    if (dash == std::string::npos) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    return point;
  }
  return "";
}

inline double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Escapes a string for a JSON spec.
inline std::string q(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// {"argv": ["sh", "-c", script], <extra>}
inline std::string sh(const std::string& script, const std::string& extra = "") {
  std::string spec = "{\"argv\": [\"sh\", \"-c\", " + q(script) + "]";
  if (!extra.empty()) spec += ", " + extra;
  return spec + "}";
}

// Shell that starts `sleep 30` in the background, ignoring SIGTERM, and only
// goes on once the trap is in place (through a FIFO), then runs `then`.
inline std::string term_ignoring_sleeper(const std::string& then) {
  return "d=$(mktemp -d); mkfifo $d/ready; (trap '' TERM; echo >$d/ready; exec sleep 30) & "
         "read x <$d/ready; rm -r $d; " + then;
}

struct Json {
  std::unique_ptr<cJSON, decltype(&cJSON_Delete)> root{nullptr, cJSON_Delete};
  const cJSON* get(const char* key) const { return cJSON_GetObjectItemCaseSensitive(root.get(), key); }
  const cJSON* get(const char* a, const char* b) const { return cJSON_GetObjectItemCaseSensitive(get(a), b); }
  std::string str(const char* key) const {
    const cJSON* v = get(key);
    return cJSON_IsString(v) ? v->valuestring : std::string("<not a string>");
  }
  double num(const char* key) const {
    const cJSON* v = get(key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1e9;
  }
  // signals_sent[index].at_ms in whole microseconds, or -1 if there is none.
  // The result gives three decimals; the difference of two of them as doubles
  // can fall a rounding error short of the whole milliseconds it is
  // (64.002 - 14.002 < 50.0), and a grace ended on time would look early.
  int64_t signal_at_us(int index) const {
    const cJSON* at = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(get("signals_sent"), index), "at_ms");
    return cJSON_IsNumber(at) ? std::llround(at->valuedouble * 1000) : -1;
  }
};

inline Json parse(const char* text) {
  Json j;
  if (text != nullptr) j.root.reset(cJSON_Parse(text));
  return j;
}

// An owning handle: released (and so reaped) when the test ends.
class Proc {
 public:
  explicit Proc(const std::string& spec) {
    char err[512] = "";
    rc_ = sup_spawn_ex(spec.c_str(), &p_, err, sizeof err);
    error_ = err;
  }
  ~Proc() { sup_release(p_); }
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  sup_proc* get() const { return p_; }
  int rc() const { return rc_; }
  const std::string& error() const { return error_; }
  bool wait(int timeout_ms = 10000) { return sup_poll(p_, timeout_ms) == 1; }
  Json result() const { return parse(sup_result(p_)); }
  std::string output(int stream) const {
    size_t len = 0;
    const char* data = sup_result_output(p_, stream, &len);
    return data ? std::string(data, len) : std::string();
  }

 private:
  sup_proc* p_ = nullptr;
  int rc_ = 0;
  std::string error_;
};

// Spawns or fails the test.
#define SPAWN(var, spec)                                   \
  suptest::Proc var(spec);                                 \
  ASSERT_EQ(var.rc(), 0) << var.error();                   \
  ASSERT_NE(var.get(), nullptr)

inline int count_dir(const char* path) {
  int n = 0;
  if (DIR* d = opendir(path)) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

inline int open_fds() { return count_dir("/proc/self/fd") - 1; /* the DIR's own fd */ }
inline int threads() { return count_dir("/proc/self/task"); }

// True while pid runs (a zombie, one being reaped (X), or a pid gone is not
// running). Orphans end up under this machine's init, which may never reap
// them.
inline bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

// How late the scheduler runs this process's threads while it lives: a thread
// that sleeps 2 ms at a time and keeps the longest oversleep. A bound on how
// late sup may act is its promise plus what the scheduler explains: a loaded
// machine that kept this thread waiting 300 ms kept sup's threads waiting
// too, so a deadline met late by as much is not sup's lateness.
class SchedulerLag {
 public:
  SchedulerLag() : thread_([this] { run(); }) {}
  ~SchedulerLag() {
    stop_ = true;
    thread_.join();
  }
  SchedulerLag(const SchedulerLag&) = delete;
  SchedulerLag& operator=(const SchedulerLag&) = delete;
  double max_ms() const { return max_ms_.load(); }
  // ms late allowed on top of a promise: `base` for sup's own work (more
  // under a sanitizer) plus a few scheduler delays in series (a timer's
  // wake-up, the loop's turn, the signal's delivery).
  double allowance(double base) const { return base + 4 * max_ms(); }

 private:
  void run() {
    while (!stop_) {
      const double start = now_ms();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const double late = now_ms() - start - 2;
      if (late > max_ms_.load()) max_ms_ = late;
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<double> max_ms_{0};
  std::thread thread_;
};

inline bool eventually(const std::function<bool()>& pred, int timeout_ms = 2000) {
  double end = now_ms() + timeout_ms;
  while (now_ms() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

// Reads stdout until `marker` has come (the child started its handlers), or
// the time is up. Through sup_output_read and sup_output_wait only: unlike
// sup_poll, they leave the child's watches to the loop.
inline bool wait_for_output(sup_proc* p, const std::string& marker, int timeout_ms = 5000) {
  std::string seen;
  uint64_t pos = 0;
  char buf[4096];
  const double end = now_ms() + timeout_ms;
  while (seen.find(marker) == std::string::npos) {
    if (now_ms() > end) return false;
    size_t n = 0;
    if (sup_output_read(p, SUP_STDOUT, &pos, buf, sizeof buf, &n) != 0) return false;
    seen.append(buf, n);
    if (n == 0) sup_output_wait(p, pos, SUP_POS_IGNORE, 100);
  }
  return true;
}

// Empty if it cannot be read: a /proc file whose process ends while it is
// read fails with ESRCH, which libstdc++ throws.
inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  try {
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return std::string();
  }
}

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/suptest.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path_).c_str()); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs this test binary again with only the tests `filter` names and
// `marker`=1 added to its environment (the tests it names skip without it),
// as the leader of a new session whose controlling terminal and stdin is a
// PTY made here; its output stays the test's. Expects it to exit 0 within
// `seconds`, the master drained meanwhile (a hang-up would end its session).
inline void rerun_on_own_terminal(const std::string& filter, const char* marker, int seconds) {
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  std::string gtest_filter = "--gtest_filter=" + filter;
  char* argv[] = {self, gtest_filter.data(), nullptr};
  // Its environment is this one's plus the marker, made before the fork.
  std::string set_marker = std::string(marker) + "=1";
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(set_marker.data());
  env.push_back(nullptr);
  pid_t host = fork();
  if (host == 0) {
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) != 0 || dup2(slave, 0) < 0) _exit(126);
    close(master);
    close(slave);
    execve(self, argv, env.data());
    _exit(127);
  }
  ASSERT_GT(host, 0);
  close(slave);
  fcntl(master, F_SETFL, O_NONBLOCK);
  int status = 0;
  for (int i = 0; i < seconds * 100; ++i) {
    if (waitpid(host, &status, WNOHANG) == host) break;
    char buf[256];
    (void)!read(master, buf, sizeof buf);
    usleep(10000);
  }
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the host on the terminal failed (its output is above)";
}

}  // namespace suptest
