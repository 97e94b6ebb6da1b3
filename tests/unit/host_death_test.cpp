// If the host dies, its children die with it.
#include <spawn.h>
#include <sys/wait.h>

#include "helpers.hpp"

extern char** environ;

namespace {

TEST(HostDeath, ChildrenDieWithTheHost) {
  suptest::TempDir dir;
  std::string pid_file = dir.file("pid");
  char* argv[] = {const_cast<char*>(SUP_HOST_HELPER), const_cast<char*>(pid_file.c_str()), nullptr};
  pid_t host;
  ASSERT_EQ(posix_spawn(&host, SUP_HOST_HELPER, nullptr, nullptr, argv, environ), 0);
  pid_t child = 0;
  ASSERT_TRUE(suptest::eventually([&] {
    std::string s = suptest::read_file(pid_file);
    if (s.empty() || s.back() != '\n') return false;
    child = std::stoi(s);
    return true;
  }, 5000));
  ASSERT_TRUE(suptest::running(child));
  kill(host, SIGKILL);
  int status;
  waitpid(host, &status, 0);
  EXPECT_TRUE(suptest::eventually([&] { return !suptest::running(child); }, 2000));
}

}  // namespace
