// Boost.Process peer: peer_boost {spawn|capture} COUNT, printing one BENCH
// line (see ../README.md). spawn runs /bin/true with stdout and stderr on
// bp::pipe objects read to EOF; capture reads SUP_BENCH_WRITER's stdout
// through bp::pipe::read. Boost.Process 1.74 starts children with fork()
// unless bp::posix::use_vfork is passed; the peer keeps the default, as a
// program written from the documentation would.
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/version.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bp = boost::process;

namespace {

constexpr unsigned long long kWarmup = 5;
constexpr int kReadChunk = 64 * 1024;

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}

std::uint64_t drain(bp::pipe &p) {
  static char buf[kReadChunk];
  std::uint64_t total = 0;
  for (;;) {
    int n = p.read(buf, kReadChunk);
    if (n <= 0) return total;
    total += static_cast<std::uint64_t>(n);
  }
}

void spawn_true() {
  bp::pipe out, err;
  bp::child c(bp::exe = "/bin/true", bp::std_in < bp::null, bp::std_out > out,
              bp::std_err > err);
  drain(out);
  drain(err);
  c.wait();
  if (c.exit_code() != 0) {
    std::fprintf(stderr, "peer_boost: /bin/true exited %d\n", c.exit_code());
    std::exit(1);
  }
}

std::uint64_t capture(const char *writer, const std::string &count) {
  bp::pipe out;
  bp::child c(bp::exe = writer, bp::args = {count}, bp::std_in < bp::null,
              bp::std_out > out);
  std::uint64_t total = drain(out);
  c.wait();
  if (c.exit_code() != 0) {
    std::fprintf(stderr, "peer_boost: writer exited %d\n", c.exit_code());
    std::exit(1);
  }
  return total;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s {spawn|capture} COUNT\n", argv[0]);
    return 2;
  }
  char *end = nullptr;
  unsigned long long count = std::strtoull(argv[2], &end, 10);
  if (*argv[2] == '\0' || *end != '\0' || count == 0) {
    std::fprintf(stderr, "peer_boost: bad count '%s'\n", argv[2]);
    return 2;
  }
  char version[32];
  std::snprintf(version, sizeof version, "%d.%d.%d", BOOST_VERSION / 100000,
                BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100);

  try {
    if (std::strcmp(argv[1], "spawn") == 0) {
      std::vector<double> samples;
      samples.reserve(count);
      for (unsigned long long i = 0; i < count + kWarmup; i++) {
        double t0 = now_us();
        spawn_true();
        if (i >= kWarmup) samples.push_back(now_us() - t0);
      }
      std::printf("BENCH impl=boost version=%s mode=spawn count=%llu samples_us=",
                  version, count);
      for (std::size_t i = 0; i < samples.size(); i++)
        std::printf(i ? ",%.2f" : "%.2f", samples[i]);
      std::printf("\n");
      return 0;
    }
    if (std::strcmp(argv[1], "capture") == 0) {
      const char *writer = std::getenv("SUP_BENCH_WRITER");
      if (writer == nullptr || *writer == '\0') {
        std::fprintf(stderr, "peer_boost: SUP_BENCH_WRITER is not set\n");
        return 2;
      }
      double t0 = now_us();
      std::uint64_t got = capture(writer, argv[2]);
      double secs = (now_us() - t0) / 1e6;
      if (got != count) {
        std::fprintf(stderr, "peer_boost: read %llu of %llu bytes\n",
                     static_cast<unsigned long long>(got), count);
        return 1;
      }
      std::printf("BENCH impl=boost version=%s mode=capture count=%llu "
                  "bytes=%llu seconds=%.6f\n",
                  version, count, static_cast<unsigned long long>(got), secs);
      return 0;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "peer_boost: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "peer_boost: unknown mode '%s'\n", argv[1]);
  return 2;
}
