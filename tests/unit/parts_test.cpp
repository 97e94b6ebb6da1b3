// The parts of a child's supervision, tested from the inside without a
// child: containment (lib/containment.hpp) in group mode, the host's
// terminal lent to a child (lib/foreground.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "containment.hpp"
#include "foreground.hpp"
#include "unique_fd.hpp"

namespace {

using sup::Containment;
using sup::ContainOutcome;

TEST(Containment, GroupModeReachesNobodyBeyondTheGroup) {
  Containment c;
  c.set(nullptr, "");
  EXPECT_FALSE(c.in_cgroup());
  EXPECT_EQ(c.cgroup_dir(), -1);
  EXPECT_EQ(c.cgroup(), nullptr);
  // Our own pid: were anything sent, this test would have it.
  EXPECT_EQ(c.signal(SIGUSR2, SIGCONT, getpid(), true), 0);
  EXPECT_EQ(c.signal(SIGKILL, 0, getpid(), false), 0);
}

TEST(Containment, GroupModeEndsNoTree) {
  Containment c;
  c.end_tree(getpid());
  EXPECT_FALSE(c.tree_ended());
  ContainOutcome r;
  c.close(getpid(), r);
  EXPECT_EQ(r.contained, SUP_CONTAIN_GROUP);
  EXPECT_FALSE(r.leftovers_ended);
  EXPECT_FALSE(r.tree_cpu);
  EXPECT_FALSE(r.contain_fallback);
  EXPECT_FALSE(r.cgroup_left);
}

TEST(Containment, AutoInGroupModeSaysWhy) {
  Containment c;
  c.set(nullptr, "no cgroup2 mount");
  ContainOutcome r;
  c.close(getpid(), r);
  ASSERT_TRUE(r.contain_fallback);
  EXPECT_EQ(*r.contain_fallback, "no cgroup2 mount");
}

TEST(Containment, AFallBackAfterTheCloneReplacesTheReason) {
  Containment c;
  c.set(nullptr, "");
  c.fall_back_to_group("clone3 refused CLONE_INTO_CGROUP");
  EXPECT_FALSE(c.in_cgroup());
  ContainOutcome r;
  c.close(getpid(), r);
  EXPECT_EQ(r.contained, SUP_CONTAIN_GROUP);
  ASSERT_TRUE(r.contain_fallback);
  EXPECT_EQ(*r.contain_fallback, "clone3 refused CLONE_INTO_CGROUP");
}

TEST(Containment, TheResultKeysAsJson) {
  Containment c;
  ContainOutcome r;
  std::string out;
  c.append_json(out, r);
  EXPECT_EQ(out,
            ", \"contained\": \"group\", \"leftovers_ended\": null, \"tree_cpu\": null, \"contain_fallback\": null, "
            "\"cgroup_left\": null, \"host_death\": \"main_process\"");
  r.contained = SUP_CONTAIN_CGROUP;
  r.leftovers_ended = 2;
  r.tree_cpu = sup::TreeCpu{1500, 250};
  r.contain_fallback = "a \"quoted\" reason";
  r.cgroup_left = "/sys/fs/cgroup/x";
  c.set_host_death(sup::HostDeath::tree);
  EXPECT_EQ(c.host_death(), sup::HostDeath::tree);
  out.clear();
  c.append_json(out, r);
  EXPECT_EQ(out,
            ", \"contained\": \"cgroup\", \"leftovers_ended\": 2, \"tree_cpu\": {\"user_ms\": 1.500, \"sys_ms\": 0.250}, "
            "\"contain_fallback\": \"a \\\"quoted\\\" reason\", \"cgroup_left\": \"/sys/fs/cgroup/x\", "
            "\"host_death\": \"tree\"");
}

TEST(HostTerminal, NothingLentNothingHandedBack) {
  sup::HostTerminal t;
  EXPECT_FALSE(t.grant().asked);
  t.lend(sup::UniqueFd(), 0);
  EXPECT_FALSE(t.lent());
  t.hand_back(getpgrp());
  EXPECT_FALSE(t.lent());
}

TEST(HostTerminal, TheGrantAsItWent) {
  sup::HostTerminal t;
  t.set_grant(sup::ForegroundGrant{true, sup::kLeftForeground});
  EXPECT_TRUE(t.grant().asked);
  EXPECT_STREQ(t.grant().refused, sup::kLeftForeground);
}

TEST(HostTerminal, HandedBackOnceAndClosed) {
  // Not a terminal: nobody's foreground, so nothing is given back, and the
  // descriptor is closed all the same.
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  sup::HostTerminal t;
  t.lend(sup::UniqueFd(fd), getpgrp());
  EXPECT_TRUE(t.lent());
  t.hand_back(getpgrp());
  EXPECT_FALSE(t.lent());
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

}  // namespace
