// If the host dies, its children die with it: with SIGKILL, the main
// process at least (PR_SET_PDEATHSIG); with the sentinel, every supervised
// tree within a second (cgroup mode: every process; group mode: the main
// processes and their groups), and nothing of the host is left after.
#include <glob.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <sstream>

#include "helpers.hpp"

extern char** environ;

namespace {

struct Tree {
  pid_t shell, group_sleep, setsid_sleep;
};

// Starts a helper host (SUP_HOST_HELPER unless named) with args, and
// `extra_env` added to the environment; returns its pid.
pid_t start_host(std::vector<std::string> args, const char* helper = SUP_HOST_HELPER,
                 const std::vector<std::string>& extra_env = {}) {
  args.insert(args.begin(), helper);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // extra_env replaces an inherited variable of the same name: ld.so takes
  // the last LD_LIBRARY_PATH of the environment, not the first as getenv.
  std::vector<std::string> env_storage(extra_env);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const std::string& x : extra_env)
      if (entry.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0) replaced = true;
    if (!replaced) env_storage.push_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t host = 0;
  EXPECT_EQ(posix_spawn(&host, helper, nullptr, nullptr, argv.data(), envp.data()), 0);
  return host;
}

void kill_host(pid_t host) {
  kill(host, SIGKILL);
  int status;
  waitpid(host, &status, 0);
}

using suptest::cgroup2_mount;

// The host's sup directories, in the cgroup this test (and so the host)
// runs in.
std::vector<std::string> host_dirs(pid_t host) {
  std::string own;
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line))
    if (line.compare(0, 3, "0::") == 0) own = line.substr(3);
  std::string pattern = cgroup2_mount() + (own == "/" ? "" : own) + "/sup-" + std::to_string(host) + "-*";
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// Whether pid leads a session of its own: the sentinel's second half, not
// its first (which exits at once) nor its second before setsid().
bool leads_session(pid_t pid) {
  std::string stat = suptest::read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t end = stat.rfind(')');
  if (end == std::string::npos) return false;
  std::istringstream fields(stat.substr(end + 1));
  char state = 0;
  pid_t ppid = 0, pgrp = 0, session = 0;
  return static_cast<bool>(fields >> state >> ppid >> pgrp >> session) && session == pid;
}

// The running sentinel of host, or 0.
pid_t sentinel_of(pid_t host) {
  const std::string want = std::string("sup-sentinel") + '\0' + std::to_string(host) + '\0';
  pid_t found = 0;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      std::string cmdline = suptest::read_file(std::string("/proc/") + e->d_name + "/cmdline");
      if (cmdline.size() < want.size() || cmdline.compare(cmdline.size() - want.size(), want.size(), want) != 0)
        continue;
      pid_t pid = std::atoi(e->d_name);
      if (suptest::running(pid) && leads_session(pid)) found = pid;
    }
    closedir(d);
  }
  return found;
}

using suptest::cgroup_unavailable;

// Starts a host supervising `count` trees; fills trees once all run.
// Reads the `count` trees the host wrote to path (whole, by rename) once
// it has, and checks each runs.
void read_trees(const std::string& path, int count, std::vector<Tree>& trees) {
  EXPECT_TRUE(suptest::eventually([&] { return !suptest::read_file(path).empty(); }, 30000));
  std::istringstream in(suptest::read_file(path));
  Tree t;
  size_t before = trees.size();
  while (in >> t.shell >> t.group_sleep >> t.setsid_sleep) trees.push_back(t);
  EXPECT_EQ(trees.size() - before, static_cast<size_t>(count));
  for (size_t i = before; i < trees.size(); ++i) {
    EXPECT_TRUE(suptest::running(trees[i].shell));
    EXPECT_TRUE(suptest::running(trees[i].group_sleep));
    EXPECT_TRUE(suptest::running(trees[i].setsid_sleep));
  }
}

// Starts a host supervising `count` trees; fills trees once all run. With
// `then` ("exec", "again"), the host does that once dir's "pids.go" exists.
pid_t host_with_trees(const suptest::TempDir& dir, const char* contain, int count, std::vector<Tree>& trees,
                      const char* then = nullptr, const char* helper = SUP_HOST_HELPER,
                      const std::vector<std::string>& extra_env = {}) {
  std::string pid_file = dir.file("pids");
  std::vector<std::string> args = {pid_file, contain, std::to_string(count)};
  if (then != nullptr) args.push_back(then);
  pid_t host = start_host(args, helper, extra_env);
  read_trees(pid_file, count, trees);
  return host;
}

// After the host's end: within 1 s none of `pids` runs.
void expect_ended_within_1s(const std::vector<pid_t>& pids, double since) {
  bool ended = suptest::eventually([&] {
    for (pid_t pid : pids)
      if (suptest::running(pid)) return false;
    return true;
  }, 5000);
  const double took = suptest::now_ms() - since;
  EXPECT_TRUE(ended);
  EXPECT_LT(took, 1000) << "the trees took " << took << " ms to end";
  for (size_t i = 0; i < pids.size(); ++i) EXPECT_FALSE(suptest::running(pids[i])) << pids[i] << ", #" << i;
}

TEST(HostDeath, ChildrenDieWithTheHost) {
  suptest::TempDir dir;
  std::string pid_file = dir.file("pid");
  pid_t host = start_host({pid_file});
  pid_t child = 0;
  ASSERT_TRUE(suptest::eventually([&] {
    std::string s = suptest::read_file(pid_file);
    if (s.empty() || s.back() != '\n') return false;
    child = std::stoi(s);
    return true;
  }, 5000));
  ASSERT_TRUE(suptest::running(child));
  kill_host(host);
  EXPECT_TRUE(suptest::eventually([&] { return !suptest::running(child); }, 2000));
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0; }, 5000));
}

// Cgroup mode: 20 trees of 3 processes, one of them setsid'd: all 60 end
// within 1 s of the host's SIGKILL; 5 s later neither the sentinel nor the
// host's cgroup directory is left.
TEST(HostDeath, EveryContainedTreeEndsWithTheHost) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why;
  suptest::TempDir dir;
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, "cgroup", 20, trees);
  ASSERT_EQ(trees.size(), 20u);
  EXPECT_NE(sentinel_of(host), 0);
  EXPECT_EQ(host_dirs(host).size(), 1u);
  std::vector<pid_t> all;
  for (const Tree& t : trees) all.insert(all.end(), {t.shell, t.group_sleep, t.setsid_sleep});
  const double t0 = suptest::now_ms();
  kill_host(host);
  expect_ended_within_1s(all, t0);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0 && host_dirs(host).empty(); }, 5000))
      << "sentinel " << sentinel_of(host) << ", " << host_dirs(host).size() << " directories";
}

// Group mode: the main processes and their groups end within 1 s. The
// setsid'd sleeps are beyond a group's reach (the test ends them).
TEST(HostDeath, EveryGroupEndsWithTheHost) {
  suptest::TempDir dir;
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, "group", 20, trees);
  ASSERT_EQ(trees.size(), 20u);
  std::vector<pid_t> grouped;
  for (const Tree& t : trees) grouped.insert(grouped.end(), {t.shell, t.group_sleep});
  const double t0 = suptest::now_ms();
  kill_host(host);
  expect_ended_within_1s(grouped, t0);
  for (const Tree& t : trees) kill(t.setsid_sleep, SIGKILL);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0; }, 5000));
}

// An exec is the host's end too: the sentinel's end of the socket closes
// with it (close-on-exec).
TEST(HostDeath, ExecEndsEveryContainedTree) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why;
  suptest::TempDir dir;
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, "cgroup", 3, trees, "exec");
  ASSERT_EQ(trees.size(), 3u);
  std::vector<pid_t> all;
  for (const Tree& t : trees) all.insert(all.end(), {t.shell, t.group_sleep, t.setsid_sleep});
  const double t0 = suptest::now_ms();
  std::ofstream(dir.file("pids.go")).put('\n');
  expect_ended_within_1s(all, t0);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0 && host_dirs(host).empty(); }, 5000));
  kill_host(host);
}

// A sentinel killed while its host lives is replaced at once, and so is
// its replacement: the trees started before and after still end with the
// host.
void replaced_sentinel_ends_every_tree(const char* contain) {
  suptest::TempDir dir;
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, contain, 5, trees, "again");
  ASSERT_EQ(trees.size(), 5u);
  // Twice: the replacement is watched as the first was.
  for (int round = 0; round < 2; ++round) {
    pid_t dying = sentinel_of(host);
    ASSERT_NE(dying, 0);
    kill(dying, SIGKILL);
    EXPECT_TRUE(suptest::eventually([&] {
      pid_t next = sentinel_of(host);
      return next != 0 && next != dying;
    }, 5000)) << "no new sentinel after the kill of " << dying << " (round " << round << ")";
  }
  // Its death ended nothing of the host's.
  for (const Tree& t : trees) EXPECT_TRUE(suptest::running(t.group_sleep));
  std::ofstream(dir.file("pids.go")).put('\n');
  read_trees(dir.file("pids.more"), 5, trees);
  ASSERT_EQ(trees.size(), 10u);
  const bool cgroup = std::string(contain) == "cgroup";
  std::vector<pid_t> ending;
  for (const Tree& t : trees) {
    ending.insert(ending.end(), {t.shell, t.group_sleep});
    if (cgroup) ending.push_back(t.setsid_sleep);
  }
  const double t0 = suptest::now_ms();
  kill_host(host);
  expect_ended_within_1s(ending, t0);
  for (const Tree& t : trees) kill(t.setsid_sleep, SIGKILL);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0 && host_dirs(host).empty(); }, 5000))
      << "sentinel " << sentinel_of(host) << ", " << host_dirs(host).size() << " directories";
}

TEST(HostDeath, AKilledSentinelIsReplacedForEveryGroup) { replaced_sentinel_ends_every_tree("group"); }

TEST(HostDeath, AKilledSentinelIsReplacedForEveryCgroup) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why;
  replaced_sentinel_ends_every_tree("cgroup");
}

// A host killed right after it made its cgroup directory (it stalls there:
// --stall-mkdir) leaves no directory behind: the sentinel holds the
// directory's record before it is made. Told after, the directory was left
// for good whenever the host died in between.
TEST(HostDeath, AHostKilledAsItMakesItsCgroupLeavesNoDirectory) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why;
  constexpr int kTries = 3;
  int left = 0;
  for (int i = 0; i < kTries; ++i) {
    pid_t host = start_host({"--spawn", "--stall-mkdir", R"({"argv": ["sleep", "60"], "contain": "cgroup"})"});
    EXPECT_TRUE(suptest::eventually([&] { return !host_dirs(host).empty(); }, 10000)) << "try " << i;
    kill_host(host);
    if (!suptest::eventually([&] { return host_dirs(host).empty(); }, 5000)) {
      ++left;
      for (const std::string& d : host_dirs(host)) {  // tidied up: killed, emptied, removed
        std::ofstream(d + "/cgroup.kill") << "1";
        suptest::eventually([&] { return rmdir((d + "/c0").c_str()) == 0 || errno == ENOENT; }, 2000);
        rmdir(d.c_str());
      }
    }
  }
  EXPECT_EQ(left, 0) << left << " of " << kTries << " hosts left their cgroup directory";
}

// A libsup.so with no sup-sentinel beside it (a copy, found first through
// LD_LIBRARY_PATH) preloads itself into true(1), which becomes the
// sentinel: as a module an interpreter loads with the library's sources
// compiled in would.
TEST(HostDeath, ALibraryWithoutItsProgramPreloadsItselfAsTheSentinel) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitized library cannot be preloaded into true(1), whose sanitizer runtime is missing";
#endif
  if (access(SUP_LIBEXECDIR "/sup-sentinel", X_OK) == 0)
    GTEST_SKIP() << "sup-sentinel is installed in " SUP_LIBEXECDIR ": it would be found";
  suptest::TempDir dir;
  const std::string libdir = dir.file("lib");
  ASSERT_EQ(mkdir(libdir.c_str(), 0755), 0);
  {
    std::ifstream from(SUP_LIBRARY_PATH, std::ios::binary);
    std::ofstream to(libdir + "/libsup.so.0", std::ios::binary);
    to << from.rdbuf();
    ASSERT_TRUE(from.good() && to.good()) << SUP_LIBRARY_PATH;
  }
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, "group", 2, trees, nullptr, SUP_HOST_HELPER, {"LD_LIBRARY_PATH=" + libdir});
  ASSERT_EQ(trees.size(), 2u);
  pid_t sentinel = sentinel_of(host);
  ASSERT_NE(sentinel, 0);
  char exe[4096] = {};
  ASSERT_GT(readlink(("/proc/" + std::to_string(sentinel) + "/exe").c_str(), exe, sizeof exe - 1), 0);
  EXPECT_TRUE(std::string(exe) == "/bin/true" || std::string(exe) == "/usr/bin/true") << exe;
  EXPECT_NE(suptest::read_file("/proc/" + std::to_string(sentinel) + "/maps").find(libdir), std::string::npos);
  std::vector<pid_t> ending;
  for (const Tree& t : trees) ending.insert(ending.end(), {t.shell, t.group_sleep});
  const double t0 = suptest::now_ms();
  kill_host(host);
  expect_ended_within_1s(ending, t0);
  for (const Tree& t : trees) kill(t.setsid_sleep, SIGKILL);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0; }, 5000));
}

#ifdef SUP_HOST_HELPER_STATIC
// Runs the helper with --spawn (and --hidden) SPEC; returns what it printed.
std::string spawn_in_helper(const char* helper, bool hidden, const std::string& spec) {
  std::string cmd = std::string(helper) + " --spawn " + (hidden ? "--hidden " : "") + suptest::q(spec);
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    pclose(f);
  }
  return out;
}

// The sentinel of a host with libsup.a inside is that host's own
// executable, run again: no sup-sentinel is found from there.
void static_host_ends_every_tree(const char* contain) {
  suptest::TempDir dir;
  std::vector<Tree> trees;
  pid_t host = host_with_trees(dir, contain, 3, trees, nullptr, SUP_HOST_HELPER_STATIC);
  ASSERT_EQ(trees.size(), 3u);
  pid_t sentinel = sentinel_of(host);
  ASSERT_NE(sentinel, 0);
  char exe[4096] = {};
  ASSERT_GT(readlink(("/proc/" + std::to_string(sentinel) + "/exe").c_str(), exe, sizeof exe - 1), 0);
  EXPECT_STREQ(exe, SUP_HOST_HELPER_STATIC);
  const bool cgroup = std::string(contain) == "cgroup";
  std::vector<pid_t> ending;
  for (const Tree& t : trees) {
    ending.insert(ending.end(), {t.shell, t.group_sleep});
    if (cgroup) ending.push_back(t.setsid_sleep);
  }
  const double t0 = suptest::now_ms();
  kill_host(host);
  expect_ended_within_1s(ending, t0);
  for (const Tree& t : trees) kill(t.setsid_sleep, SIGKILL);
  EXPECT_TRUE(suptest::eventually([&] { return sentinel_of(host) == 0 && host_dirs(host).empty(); }, 5000))
      << "sentinel " << sentinel_of(host) << ", " << host_dirs(host).size() << " directories";
}

TEST(HostDeath, AStaticHostEndsEveryGroup) { static_host_ends_every_tree("group"); }

TEST(HostDeath, AStaticHostEndsEveryContainedTree) {
  std::string why = cgroup_unavailable();
  if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why;
  static_host_ends_every_tree("cgroup");
}

// The result says what dies with the host; "require_sentinel" refuses a
// spawn that only the main process's death would cover. Hidden: a static
// host with no /proc (a mount namespace of its own) cannot run itself
// again, and no sup-sentinel is installed beside it.
TEST(HostDeath, TheResultSaysWhatDiesWithTheHost) {
  EXPECT_EQ(sup_result_host_death(nullptr), SUP_EINVAL);
  std::string out = spawn_in_helper(SUP_HOST_HELPER, false, R"({"argv": ["true"], "require_sentinel": true})");
  EXPECT_NE(out.find("rc 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("host_death 1\n"), std::string::npos) << out;  // SUP_HOST_DEATH_TREE
  EXPECT_NE(out.find(R"("host_death": "tree")"), std::string::npos) << out;
  out = spawn_in_helper(SUP_HOST_HELPER_STATIC, false, R"({"argv": ["true"], "require_sentinel": true})");
  EXPECT_NE(out.find("host_death 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("host_death": "tree")"), std::string::npos) << out;

  if (access(SUP_LIBEXECDIR "/sup-sentinel", X_OK) == 0)
    GTEST_SKIP() << "sup-sentinel is installed in " SUP_LIBEXECDIR ": it cannot be hidden";
  out = spawn_in_helper(SUP_HOST_HELPER_STATIC, true, R"({"argv": ["true"]})");
  if (out.compare(0, 5, "skip ") == 0) GTEST_SKIP() << out;
  EXPECT_NE(out.find("rc 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("host_death 2\n"), std::string::npos) << out;  // SUP_HOST_DEATH_MAIN_PROCESS
  EXPECT_NE(out.find(R"("host_death": "main_process")"), std::string::npos) << out;
  out = spawn_in_helper(SUP_HOST_HELPER_STATIC, true, R"({"argv": ["true"], "require_sentinel": true})");
  EXPECT_NE(out.find("rc -95\n"), std::string::npos) << out;
  EXPECT_NE(out.find("detail require_sentinel: no sentinel runs"), std::string::npos) << out;
  EXPECT_NE(out.find("/proc/self/exe"), std::string::npos) << out;
}
#endif

}  // namespace
