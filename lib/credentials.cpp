// Resolving "user", "group" and "groups" before the clone, and keeping the
// host's dumpable flag across a spawn that switches ids.
#include "credentials.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errno_text.hpp"
#include "spec.hpp"
#include "spec_value.hpp"

namespace sup {
namespace {

std::string lookup_error(int rc) {
  if (rc == 0) return "no such name";
  return errno_text(rc);
}

// The *_r lookups with a buffer grown on ERANGE (a group with many members
// outgrows any fixed size).
bool find_user(const std::string& name, const std::string& key, uid_t* uid, gid_t* gid) {
  std::vector<char> buf(1024);
  for (;;) {
    passwd pw{};
    passwd* found = nullptr;
    int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 24)) {
      buf.resize(buf.size() * 4);
      continue;
    }
    if (found == nullptr) spec_fail(key, "\"" + name + "\": " + lookup_error(rc));
    *uid = pw.pw_uid;
    *gid = pw.pw_gid;
    return true;
  }
}

gid_t find_group(const IdSpec& g, const std::string& key) {
  if (g.id) return *g.id;
  std::vector<char> buf(1024);
  for (;;) {
    group gr{};
    group* found = nullptr;
    int rc = getgrnam_r(g.name.c_str(), &gr, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 24)) {
      buf.resize(buf.size() * 4);
      continue;
    }
    if (found == nullptr) spec_fail(key, "\"" + g.name + "\": " + lookup_error(rc));
    return gr.gr_gid;
  }
}

// The name of a numeric uid, for its groups; empty when it has none.
std::string user_name(uid_t uid, gid_t* primary) {
  std::vector<char> buf(1024);
  for (;;) {
    passwd pw{};
    passwd* found = nullptr;
    int rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 24)) {
      buf.resize(buf.size() * 4);
      continue;
    }
    if (found == nullptr) return "";
    *primary = pw.pw_gid;
    return pw.pw_name;
  }
}

std::vector<gid_t> groups_of(const std::string& name, gid_t primary) {
  std::vector<gid_t> list(32);
  for (;;) {
    int n = static_cast<int>(list.size());
    if (getgrouplist(name.c_str(), primary, list.data(), &n) >= 0) {
      list.resize(static_cast<size_t>(n));
      return list;
    }
    list.resize(static_cast<size_t>(n) > list.size() ? static_cast<size_t>(n) : list.size() * 2);
  }
}

std::mutex g_dumpable_mu;

}  // namespace

Credentials resolve_credentials(const ConfineSpec& spec) {
  Credentials c;
  if (spec.user) {
    uid_t uid = 0;
    gid_t primary = 0;
    std::string name;
    // A numeric uid's passwd entry only gives its groups: not looked up
    // (NSS, files or a directory service) when the spec gives them all.
    const bool ids_given = spec.group && spec.groups;
    if (spec.user->id) {
      uid = *spec.user->id;
      // A uid with no passwd entry (a container's arbitrary uid) runs with
      // its own number as group and no other groups.
      if (!ids_given) name = user_name(uid, &primary);
      if (name.empty()) primary = uid;
    } else {
      find_user(spec.user->name, "user", &uid, &primary);
      name = spec.user->name;
    }
    c.uid = uid;
    c.gid = primary;
    if (!spec.groups) c.groups = name.empty() ? std::vector<gid_t>{primary} : groups_of(name, primary);
  }
  if (spec.group) c.gid = find_group(*spec.group, "group");
  if (spec.groups) {
    std::vector<gid_t> list;
    for (size_t i = 0; i < spec.groups->size(); ++i)
      list.push_back(find_group((*spec.groups)[i], "groups[" + std::to_string(i) + "]"));
    c.groups = std::move(list);
  }
  return c;
}

uid_t child_uid(const Credentials& c) noexcept { return c.uid ? *c.uid : geteuid(); }

DumpableKeeper::DumpableKeeper(bool active) {
  if (!active) return;
  lock_ = std::unique_lock<std::mutex>(g_dumpable_mu);
  saved_ = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

DumpableKeeper::~DumpableKeeper() {
  if (saved_ >= 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != saved_) prctl(PR_SET_DUMPABLE, saved_, 0, 0, 0);
}

}  // namespace sup
