// "contain": "cgroup": nothing a child started outlives its supervision.
// Skipped, with the reason, where no writable cgroup v2 hierarchy exists.
#include <glob.h>
#include <sys/stat.h>

#include <atomic>
#include <set>
#include <sstream>

#include "helpers.hpp"

namespace {

using suptest::Proc;

using suptest::cgroup_unavailable;

#define REQUIRE_CGROUP()                                                        \
  do {                                                                          \
    std::string why = cgroup_unavailable();                                     \
    if (!why.empty()) GTEST_SKIP() << "no writable cgroup v2 hierarchy: " << why; \
  } while (0)

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

using suptest::cgroup2_mount;

// This process's children's cgroups (c<N>) under its host directories.
std::vector<std::string> child_cgroups(pid_t host = getpid()) {
  std::string own;
  std::ifstream groups("/proc/" + std::to_string(host) + "/cgroup");
  std::string line;
  while (std::getline(groups, line))
    if (line.compare(0, 3, "0::") == 0) own = line.substr(3);
  std::string base = cgroup2_mount() + (own == "/" ? "" : own);
  return glob_paths(base + "/sup-" + std::to_string(host) + "-*/c*");
}

std::vector<pid_t> read_pids(const std::string& path) {
  std::vector<pid_t> pids;
  std::istringstream in(suptest::read_file(path));
  pid_t pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// The shell waits until each of these files holds a pid.
std::string await_files(const std::vector<std::string>& files) {
  std::string cond;
  for (const auto& f : files) cond += (cond.empty() ? "" : " || ") + std::string("[ ! -s ") + f + " ]";
  return "while " + cond + "; do sleep 0.01; done; ";
}

TEST(Contain, SpecErrors) {
  for (const char* spec : {"{\"argv\": [\"true\"], \"contain\": \"jail\"}", "{\"argv\": [\"true\"], \"contain\": 1}",
                           "{\"argv\": [\"true\"], \"contain\": \"cgroup\", \"cgroup_parent\": \"rel/path\"}",
                           "{\"argv\": [\"true\"], \"contain\": \"cgroup\", \"cgroup_parent\": 5}",
                           "{\"argv\": [\"true\"], \"cgroup_parent\": \"/sys/fs/cgroup\"}"}) {
    Proc p(spec);
    EXPECT_EQ(p.rc(), SUP_EINVAL) << spec;
    EXPECT_NE(p.error().find("spec: c"), std::string::npos) << p.error();
  }
}

TEST(Contain, CgroupWhereThereIsNoneIsNotSupported) {
  Proc p("{\"argv\": [\"true\"], \"contain\": \"cgroup\", \"cgroup_parent\": \"/tmp\"}");
  EXPECT_EQ(p.rc(), SUP_ENOTSUP);
  EXPECT_NE(p.error().find("\"/tmp\" is not on a cgroup v2 hierarchy"), std::string::npos) << p.error();
  EXPECT_EQ(p.get(), nullptr);
}

TEST(Contain, AutoFallsBackToTheGroupAndSaysWhy) {
  SPAWN(p, "{\"argv\": [\"true\"], \"contain\": \"auto\", \"cgroup_parent\": \"/tmp\"}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("contained"), "group");
  EXPECT_NE(r.str("contain_fallback").find("not on a cgroup v2 hierarchy"), std::string::npos);
  EXPECT_TRUE(cJSON_IsNull(r.get("leftovers_ended")));
  EXPECT_TRUE(cJSON_IsNull(r.get("tree_cpu")));
  EXPECT_EQ(sup_result_contained(p.get()), SUP_CONTAIN_GROUP);
  EXPECT_EQ(sup_result_leftovers_ended(p.get()), SUP_ENODATA);
  double user = -1, sys = -1;
  EXPECT_EQ(sup_result_tree_cpu(p.get(), &user, &sys), SUP_ENODATA);
}

TEST(Contain, GroupModeIsTheDefault) {
  SPAWN(p, "{\"argv\": [\"true\"]}");
  ASSERT_TRUE(p.wait());
  auto r = p.result();
  EXPECT_EQ(r.str("contained"), "group");
  EXPECT_TRUE(cJSON_IsNull(r.get("contain_fallback")));
  EXPECT_TRUE(cJSON_IsNull(r.get("cgroup_left")));
  EXPECT_EQ(sup_result_contained(p.get()), SUP_CONTAIN_GROUP);
}

TEST(Contain, AccessorsCheckTheirHandle) {
  EXPECT_EQ(sup_result_contained(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_leftovers_ended(nullptr), SUP_EINVAL);
  EXPECT_EQ(sup_result_tree_cpu(nullptr, nullptr, nullptr), SUP_EINVAL);
  SPAWN(p, suptest::sh("sleep 5"));
  EXPECT_EQ(sup_result_contained(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_leftovers_ended(p.get()), SUP_EBUSY);
  EXPECT_EQ(sup_result_tree_cpu(p.get(), nullptr, nullptr), SUP_EBUSY);
}

// A child starts a setsid'd grandchild that keeps stdout and a
// double-forked daemon that holds no pipe, then exits 0: both are ended
// with it, counted, and nothing of its cgroup is left.
TEST(Contain, LeftoversOutsideTheGroupAreEnded) {
  REQUIRE_CGROUP();
  suptest::TempDir dir;
  const std::string a = dir.file("a"), b = dir.file("b");
  std::string script = "setsid sh -c 'echo $$ > " + a + "; exec sleep 30' & "
                       "(setsid sh -c 'echo $$ > " + b + "; exec sleep 30' </dev/null >/dev/null 2>&1 &); " +
                       await_files({a, b}) + "echo started; exit 0";
  SPAWN(p, suptest::sh(script, "\"contain\": \"cgroup\""));
  ASSERT_TRUE(p.wait(20000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "exited");
  EXPECT_EQ(r.num("exit_code"), 0);
  EXPECT_FALSE(cJSON_IsTrue(r.get("forced_kill")));
  EXPECT_EQ(r.str("contained"), "cgroup");
  EXPECT_EQ(r.num("leftovers_ended"), 2);
  EXPECT_TRUE(cJSON_IsNull(r.get("cgroup_left")));
  EXPECT_TRUE(cJSON_IsNull(r.get("contain_fallback")));
  EXPECT_EQ(p.output(SUP_STDOUT), "started\n");
  std::vector<pid_t> pids = read_pids(a);
  for (pid_t pid : read_pids(b)) pids.push_back(pid);
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(suptest::running(pid)) << pid;
  EXPECT_TRUE(child_cgroups().empty());
  EXPECT_EQ(sup_result_contained(p.get()), SUP_CONTAIN_CGROUP);
  EXPECT_EQ(sup_result_leftovers_ended(p.get()), 2);
  double user = -1, sys = -1;
  EXPECT_EQ(sup_result_tree_cpu(p.get(), &user, &sys), 0);
  EXPECT_GE(user, 0);
  EXPECT_GE(sys, 0);
  ASSERT_TRUE(cJSON_IsObject(r.get("tree_cpu")));
}

// The tree's CPU counts the descendants', where rusage has the main
// process's only.
TEST(Contain, TreeCpuCountsDescendants) {
  REQUIRE_CGROUP();
  // A grandchild counts to 200,000 (a few hundred ms of CPU in a shell);
  // the main process waits for its mark, but is not its parent (the
  // subshell between them exits), so none of its CPU is in the main
  // process's rusage.
  suptest::TempDir dir;
  const std::string done = dir.file("done");
  SPAWN(p, suptest::sh("(sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo > " + done + "' &); " +
                           "while [ ! -e " + done + " ]; do sleep 0.05; done",
                       "\"contain\": \"cgroup\""));
  ASSERT_TRUE(p.wait(20000));
  double user = 0, sys = 0, main_user = 0, main_sys = 0;
  ASSERT_EQ(sup_result_tree_cpu(p.get(), &user, &sys), 0);
  ASSERT_EQ(sup_result_rusage(p.get(), &main_user, &main_sys, nullptr), 0);
  // (The grandchild may still be exiting when the main process sees its
  // mark: how many leftovers were ended is not this test's question.)
  EXPECT_GT(user + sys, main_user + main_sys + 50) << sup_result(p.get());
}

// The interrupt reaches a child that left the group (setsid): it gets its
// grace and exits cleanly within it.
TEST(Contain, InterruptReachesASetsidChild) {
  REQUIRE_CGROUP();
  suptest::TempDir dir;
  const std::string s = dir.file("s"), t = dir.file("t");
  std::string script = "setsid sh -c 'trap \"echo got >> " + t + "; exit 0\" TERM; echo $$ > " + s +
                       "; while :; do sleep 0.01; done' & " + await_files({s}) + "echo ready; wait";
  SPAWN(p, suptest::sh(script, "\"contain\": \"cgroup\", \"grace_ms\": 10000"));
  ASSERT_TRUE(suptest::wait_for_output(p.get(), "ready"));
  const double t0 = suptest::now_ms();
  EXPECT_EQ(sup_interrupt(p.get()), 0);
  ASSERT_TRUE(p.wait(20000));
  auto r = p.result();
  EXPECT_EQ(r.str("outcome"), "interrupted");
  EXPECT_EQ(suptest::read_file(t), "got\n");
  // It exited by itself within the grace: no SIGKILL was needed for it.
  EXPECT_LT(suptest::now_ms() - t0, 9000);
  EXPECT_FALSE(cJSON_IsTrue(r.get("forced_kill")));
  for (pid_t pid : read_pids(s)) EXPECT_FALSE(suptest::running(pid));
  EXPECT_TRUE(child_cgroups().empty());
}

// Abort and release of a running contained tree: nothing left, no
// directory left.
TEST(Contain, ReleaseOfARunningTreeLeavesNothing) {
  REQUIRE_CGROUP();
  suptest::TempDir dir;
  const std::string a = dir.file("a");
  pid_t daemon = 0;
  {
    SPAWN(p, suptest::sh("(setsid sh -c 'echo $$ > " + a + "; exec sleep 30' </dev/null >/dev/null 2>&1 &); " +
                             await_files({a}) + "echo ready; exec sleep 30",
                         "\"contain\": \"cgroup\""));
    ASSERT_TRUE(suptest::wait_for_output(p.get(), "ready"));
    std::vector<pid_t> pids = read_pids(a);
    ASSERT_EQ(pids.size(), 1u);
    daemon = pids[0];
    ASSERT_TRUE(suptest::running(daemon));
  }
  EXPECT_FALSE(suptest::running(daemon));
  EXPECT_TRUE(child_cgroups().empty());
}

// A spawn that fails after its cgroup was made (exec, cwd) leaves no
// directory behind.
TEST(Contain, FailedSpawnsLeaveNoCgroup) {
  REQUIRE_CGROUP();
  for (const char* spec : {"{\"argv\": [\"/etc/passwd\"], \"contain\": \"cgroup\"}",
                           "{\"argv\": [\"true\"], \"cwd\": \"/nonexistent\", \"contain\": \"cgroup\"}"}) {
    Proc p(spec);
    EXPECT_LT(p.rc(), 0) << spec;
    EXPECT_TRUE(child_cgroups().empty()) << spec;
  }
}

// 1,000 contained spawns and releases from 8 threads, half of them still
// running a tree at release: no cgroup, fd, thread or zombie is left.
TEST(Contain, ManyCyclesLeaveNothing) {
  REQUIRE_CGROUP();
  // The trial spawn's handle is freed by the loop after its release.
  suptest::eventually([] {
    const int fds = suptest::open_fds();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return suptest::open_fds() == fds;
  });
  const int fds_before = suptest::open_fds();
  const int threads_before = suptest::threads();
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < 125; ++i) {
        const bool running = (i + t) % 2 == 0;
        std::string spec = running ? suptest::sh("setsid sleep 30 & sleep 30", "\"contain\": \"cgroup\"")
                                   : "{\"argv\": [\"true\"], \"contain\": \"cgroup\"}";
        sup_proc* p = nullptr;
        if (sup_spawn(spec.c_str(), &p) != 0) {
          ++failures;
          continue;
        }
        if (!running && sup_poll(p, 20000) != 1) ++failures;
        if (!running && sup_result_contained(p) != SUP_CONTAIN_CGROUP) ++failures;
        sup_release(p);
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(child_cgroups().empty());
  // The loop frees released handles (and closes their descriptors) after
  // sup_release has returned.
  EXPECT_TRUE(suptest::eventually([&] { return suptest::open_fds() == fds_before; }, 5000))
      << suptest::open_fds() << " fds, " << fds_before << " before";
  EXPECT_EQ(suptest::threads(), threads_before);
  // No zombie child of ours.
  int zombies = 0;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      std::string stat = suptest::read_file(std::string("/proc/") + e->d_name + "/stat");
      size_t close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state;
      pid_t ppid;
      rest >> state >> ppid;
      if (ppid == getpid() && state == 'Z') ++zombies;
    }
    closedir(d);
  }
  EXPECT_EQ(zombies, 0);
}

}  // namespace
