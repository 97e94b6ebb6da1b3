// Whether the child waits for input it cannot get (input_wait.hpp): the
// verdict from what each look at the tree found (proc_look.hpp), kept between
// looks, and when the loop looks next.
#include "input_wait.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "sup.h"
#include "unique_fd.hpp"

namespace sup {

void InputWait::note_input() noexcept {
  last_input_at_.store(now_ns(), std::memory_order_release);
  inputs_.fetch_add(1, std::memory_order_acq_rel);
}

bool InputWait::lock_for_look(std::unique_lock<std::mutex>& lock, bool blocking) noexcept {
  if (blocking) {
    lock.lock();
    return true;
  }
  if (lock.try_lock()) return true;
  // A caller is looking: its look stands for this one, and the loop's next
  // comes kMinGap after, not at once again (its deadline is past).
  const Nanos retry = now_ns() - kInterval + kMinGap;
  if (look_at_.load(std::memory_order_acquire) < retry) look_at_.store(retry, std::memory_order_release);
  return false;
}

int InputWait::stands(uint64_t output_total, Nanos now) {
  // Asked again within a few ms (a caller polling): the last look stands.
  const uint64_t inputs = inputs_.load(std::memory_order_acquire);
  if (state_ != State::unknown && now - last_look_at_ < kMinGap && output_total == output_total_ &&
      inputs == inputs_seen_)
    return verdict();
  // Nothing in the tree has run since the last look saw all of it: every
  // thread is where it was, and so is the verdict (a read per thread, not
  // the tree's walk). Input written since may have woken a reader that has
  // not run yet: then the whole look.
  if (!tree_.empty() && output_total == output_total_ && inputs == inputs_seen_ && none_ran(tree_)) {
    std::vector<std::pair<pid_t, uint64_t>> readers = readers_;
    judge(seen_, readers, output_total, now_ns());
    return verdict();
  }
  return kWholeLook;
}

int InputWait::look_if_still(uint64_t output_total) {
  if (cannot_wait()) return 0;
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (!lock_for_look(lock, /*blocking=*/false)) return -1;
  return stands(output_total, now_ns());
}

int InputWait::look(GroupIndex& groups, pid_t pid, int cgroup_dir, uint64_t output_total, bool blocking) {
  if (cannot_wait()) return 0;  // no /proc read: nothing there can wait
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (!lock_for_look(lock, blocking)) return -1;
  const Nanos now = now_ns();
  const int stood = stands(output_total, now);
  if (stood != kWholeLook) return stood;
  Look l(stdin_);
  UniqueFd proc(open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!proc.valid()) {
    l.set_blind();
  } else {
    // The tree: the cgroup's processes; or the main process's descendants
    // (cheap: a few files), and the rest of its group, which only a scan of
    // every process finds (a millisecond on a busy machine), shared by
    // every child's looks and taken at most once per kGroupScanEvery.
    std::vector<pid_t> members;
    if (cgroup_dir >= 0) {
      cgroup_members(cgroup_dir, members);
    } else {
      const bool walked = descendants(proc.get(), pid, members);
      if (!walked) members.push_back(pid);  // the scan finds the rest
      std::vector<pid_t> strays;
      Nanos scanned_at = 0;
      if (group_members(groups, proc.get(), pid, members, strays, kGroupScanEvery, scanned_at)) {
        strays_ = std::move(strays);
        strays_scanned_at_ = scanned_at;
      }
    }
    int count = 0;
    for (pid_t member : members) {
      if (++count > kMaxProcesses) l.set_cut();
      if (count > kMaxProcesses || !l.process(proc.get(), member, 0)) break;
    }
    // Still of the group (the pid may be another's by now).
    for (pid_t stray : strays_)
      if (std::find(members.begin(), members.end(), stray) == members.end()) {
        if (++count > kMaxProcesses) l.set_cut();
        if (count > kMaxProcesses || !l.process(proc.get(), stray, pid)) break;
      }
  }
  seen_ = l.seen();
  // Only a tree known whole stands for later looks while nothing in it
  // runs. A process or thread started after the listing that missed it
  // but before its starter's run was read leaves no trace in that run: a
  // look is whole only when every thread it saw is the previous look's,
  // with the same run, so that nothing ran, and nothing started, between
  // the two. In group mode a member whose parent ended is found by the
  // scan alone: the scan must be newer than the previous look too.
  std::vector<ThreadRun> threads = std::move(l.threads);
  std::sort(threads.begin(), threads.end(), [](const ThreadRun& a, const ThreadRun& b) { return a.tid < b.tid; });
  const bool still = std::equal(threads.begin(), threads.end(), last_threads_.begin(), last_threads_.end(),
                                [](const ThreadRun& a, const ThreadRun& b) { return a.tid == b.tid && a.ran == b.ran; });
  const bool whole = l.complete() && !threads.empty() && still && (cgroup_dir >= 0 || strays_scanned_at_ > full_look_at_);
  tree_.clear();
  if (whole) tree_ = threads;
  last_threads_ = std::move(threads);
  full_look_at_ = now;
  judge(seen_, l.readers, output_total, now_ns());
  return verdict();
}

Nanos InputWait::second_look_in() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  // A reader seen for the first time, not fed lately: one more look after
  // kSettle tells whether it stays asleep.
  if (state_ != State::candidate || since_ != last_look_at_) return 0;
  const Nanos fed = std::max(last_fed_at_, last_input_at_.load(std::memory_order_acquire));
  if (fed != 0 && since_ + kSettle - fed < kFedWindow) return 0;
  return kSettle;
}

void InputWait::judge(InputSeen seen, std::vector<std::pair<pid_t, uint64_t>>& readers, uint64_t output_total,
                      Nanos now) {
  const uint64_t inputs = inputs_.load(std::memory_order_acquire);
  const bool quiet = state_ != State::unknown && output_total == output_total_ && inputs == inputs_seen_;
  switch (seen) {
    case InputSeen::stopped:
      if (state_ != State::waiting) since_ = now;
      state_ = State::waiting;
      break;
    case InputSeen::reading: {
      bool woke = false;
      bool same = true;
      for (const auto& reader : readers) {
        const auto tid = reader.first;
        const auto& ran = reader.second;
        auto before = std::find_if(readers_.begin(), readers_.end(), [&](const auto& r) { return r.first == tid; });
        if (before == readers_.end())
          same = false;
        else if (before->second != ran)
          woke = true;
      }
      // A reader that woke was given something: it is being fed.
      if (woke) last_fed_at_ = now;
      const bool held = (state_ == State::candidate || state_ == State::waiting) && quiet && same && !woke;
      if (!held) {
        state_ = State::candidate;
        since_ = now;
        break;
      }
      const Nanos fed = std::max(last_fed_at_, last_input_at_.load(std::memory_order_acquire));
      if (state_ == State::candidate && now - since_ >= kSettle && (fed == 0 || now - fed >= kFedWindow))
        state_ = State::waiting;
      break;
    }
    case InputSeen::blind: state_ = State::blind; break;
    case InputSeen::busy:
    case InputSeen::elsewhere: state_ = State::not_waiting; break;
  }
  readers_ = std::move(readers);
  settling_.store(state_ == State::candidate, std::memory_order_release);
  output_total_ = output_total;
  inputs_seen_ = inputs;
  last_look_at_ = now;
  look_at_.store(now, std::memory_order_release);
  waiting_since_.store(state_ == State::waiting ? since_ : 0, std::memory_order_release);
}

int InputWait::verdict() const noexcept {
  if (state_ == State::waiting) return 1;
  if (state_ == State::blind) return SUP_EPERM;
  return 0;
}

Nanos InputWait::look_due(Nanos last_output) const noexcept {
  if (!asked() || cannot_wait()) return kNever;
  const Nanos look_at = look_at_.load(std::memory_order_acquire);
  const Nanos quiet_since = std::max(last_output, last_input_at_.load(std::memory_order_acquire));
  const Nanos quiet_for = look_at - quiet_since;  // at the last look
  Nanos next;
  if (look_at == 0 || quiet_for < kBrisk || settling_.load(std::memory_order_acquire)) {
    next = look_at + kInterval;
  } else {
    // Quiet for long: the gap grows with the silence, and falls on a
    // kGrid tick, so that the looks of many quiet children share a wake.
    next = look_at + std::min(kMaxGap, std::max(kInterval, quiet_for / 2));
    next += kGrid - next % kGrid;
  }
  next = std::max(next, last_output + kQuiet);
  const Nanos since = waiting_since_.load(std::memory_order_acquire);
  if (since != 0 && timeout_ > 0) next = std::min(next, since + timeout_);
  return next;
}

bool InputWait::timed_out(Nanos now) const noexcept {
  if (tty_stop_.timed_out(now)) return true;
  const Nanos since = waiting_since_.load(std::memory_order_acquire);
  return timeout_ > 0 && since != 0 && now - since >= timeout_;
}

std::optional<bool> InputWait::at_end(Nanos ended_at, Nanos last_output, bool exited_by_itself) noexcept {
  // A stop is certain where a look's verdict is inferred: it stands.
  if (tty_stop_.stopped_at_end(ended_at, last_output, exited_by_itself)) return true;
  if (!asked()) return std::nullopt;
  if (cannot_wait()) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::blind) return std::nullopt;
  // Never looked at (it ended within kQuiet of its last output): a main
  // process that exited by itself was not blocked; one that was ended may
  // have been.
  if (state_ == State::unknown) return exited_by_itself ? std::optional<bool>(false) : std::nullopt;
  if (state_ != State::waiting) return false;
  // Output read, or input written, after the last look and before the end:
  // it was not waiting any more when it ended.
  if (last_output > last_look_at_ && last_output <= ended_at) return false;
  const Nanos input_at = last_input_at_.load(std::memory_order_acquire);
  if (input_at > last_look_at_ && input_at <= ended_at) return false;
  return true;
}

}  // namespace sup
