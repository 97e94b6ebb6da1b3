// The child's environment as plan_launch builds it (launch_plan.cpp), tested
// from the inside with more variables than an exec could carry: the inherited
// entries keep their order less those the spec names, duplicates included,
// and the spec's values follow in spec order. Its speed is measured in
// tests/bench (bench_env), not asserted here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launch.hpp"
#include "spec.hpp"

extern char** environ;

namespace {

// Makes environ the given entries for the test's length.
class FakeEnviron {
 public:
  explicit FakeEnviron(std::vector<std::string> entries) : entries_(std::move(entries)) {
    for (auto& e : entries_) pointers_.push_back(e.data());
    pointers_.push_back(nullptr);
    saved_ = environ;
    environ = pointers_.data();
  }
  ~FakeEnviron() { environ = saved_; }

 private:
  std::vector<std::string> entries_;
  std::vector<char*> pointers_;
  char** saved_;
};

sup::Spec spec_with(std::vector<std::pair<std::string, std::optional<std::string>>> env, bool clear = false) {
  sup::Spec spec;
  spec.argv = {"/bin/true"};
  spec.env = std::move(env);
  spec.env_clear = clear;
  return spec;
}

TEST(EnvMerge, OrderOverridesRemovalsAndDuplicatesAtScale) {
  constexpr size_t kInherited = 100000;
  std::vector<std::string> inherited;
  for (size_t i = 0; i < kInherited; ++i) inherited.push_back("V" + std::to_string(i) + "=" + std::to_string(i));
  // The host's environ may hold a name twice (putenv, a raw execve): both
  // go when the spec names it, both stay when it does not.
  inherited.push_back("DUP=first");
  inherited.push_back("KEEP=a");
  inherited.push_back("DUP=second");
  inherited.push_back("KEEP=b");
  inherited.push_back("NOEQUALS");  // no name a spec could set: kept as is
  FakeEnviron fake(inherited);

  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  // Every third inherited variable overridden, every third+1 removed, in
  // reverse order so that spec order and inherited order differ.
  for (size_t i = kInherited; i-- > 0;) {
    if (i % 3 == 0) env.emplace_back("V" + std::to_string(i), "new" + std::to_string(i));
    if (i % 3 == 1) env.emplace_back("V" + std::to_string(i), std::nullopt);
  }
  env.emplace_back("DUP", "spec");
  env.emplace_back("ABSENT", std::nullopt);  // removing what is not there is nothing
  for (size_t i = 0; i < 1000; ++i) env.emplace_back("NEW" + std::to_string(i), "n");

  sup::LaunchPlan plan = sup::plan_launch(spec_with(env));
  std::vector<std::string> expected;
  for (size_t i = 0; i < kInherited; ++i)
    if (i % 3 == 2) expected.push_back("V" + std::to_string(i) + "=" + std::to_string(i));
  expected.insert(expected.end(), {"KEEP=a", "KEEP=b", "NOEQUALS"});
  for (size_t i = kInherited; i-- > 0;)
    if (i % 3 == 0) expected.push_back("V" + std::to_string(i) + "=new" + std::to_string(i));
  expected.push_back("DUP=spec");
  for (size_t i = 0; i < 1000; ++i) expected.push_back("NEW" + std::to_string(i) + "=n");
  ASSERT_EQ(plan.env_storage.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(plan.env_storage[i], expected[i]) << "at " << i;
  // envp is the same entries, NULL-terminated.
  ASSERT_EQ(plan.envp.size(), expected.size() + 1);
  EXPECT_EQ(plan.envp.back(), nullptr);
  EXPECT_EQ(std::string(plan.envp[0]), expected[0]);
}

TEST(EnvMerge, ClearedEnvironmentIsExactlyTheSpecsValues) {
  FakeEnviron fake({"PATH=/nonexistent", "HOME=/root"});
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  for (size_t i = 0; i < 100000; ++i) env.emplace_back("C" + std::to_string(i), i % 2 ? std::optional<std::string>("x") : std::nullopt);
  sup::LaunchPlan plan = sup::plan_launch(spec_with(env, /*clear=*/true));
  ASSERT_EQ(plan.env_storage.size(), 50000u);
  EXPECT_EQ(plan.env_storage.front(), "C1=x");
  EXPECT_EQ(plan.env_storage.back(), "C99999=x");
}

TEST(EnvMerge, ValueWithEqualsSignsAndEmptyValues) {
  FakeEnviron fake({"A=1=2", "B=", "C=3"});
  sup::LaunchPlan plan = sup::plan_launch(spec_with({{"B", std::nullopt}, {"A", "x=y"}, {"D", ""}}));
  EXPECT_EQ(plan.env_storage, (std::vector<std::string>{"C=3", "A=x=y", "D="}));
}

}  // namespace
