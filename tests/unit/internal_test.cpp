// The capture buffer and the JSON text writer, tested from the inside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "buffer_pool.hpp"
#include "capture.hpp"
#include "engine.hpp"
#include "json_text.hpp"
#include "signal_names.hpp"

namespace {

std::string numbered(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i % 26));
  return s;
}

TEST(Capture, UnderTheLimitKeepsEverything) {
  sup::Capture c(100, 0);
  c.append("hello ", 6);
  c.append("world", 5);
  EXPECT_EQ(c.kept(), "hello world");
  EXPECT_EQ(c.total(), 11u);
  EXPECT_FALSE(c.truncated());
}

TEST(Capture, OverTheLimitInSmallChunksKeepsHeadAndNewestTail) {
  std::string all = numbered(1000);
  sup::Capture c(100, 0);
  for (size_t i = 0; i < all.size(); i += 7) c.append(all.data() + i, std::min<size_t>(7, all.size() - i));
  EXPECT_EQ(c.kept(), all.substr(0, 50) + all.substr(950));
  EXPECT_EQ(c.kept_size(), 100u);
  EXPECT_EQ(c.omitted(), 900u);
  EXPECT_EQ(c.total(), 1000u);
}

TEST(Capture, OneHugeChunk) {
  std::string all = numbered(10000);
  sup::Capture c(101, 0);
  c.append(all.data(), all.size());
  EXPECT_EQ(c.kept(), all.substr(0, 50) + all.substr(10000 - 51));
}

TEST(Capture, NextAppendIsWhereTheNextByteGoes) {
  // A limit of 100 is reserved whole at the first append, so the buffer
  // stays put: through the head, the growing ring and the wrapped ring.
  sup::Capture c(100, 0);
  EXPECT_EQ(c.next_append(), nullptr);
  c.append("a", 1);
  for (int i = 1; i < 400; ++i) {
    const char* at = c.next_append();
    ASSERT_NE(at, nullptr) << i;
    const char byte = static_cast<char>('A' + i % 50);
    c.append(&byte, 1);
    EXPECT_EQ(*at, byte) << "append " << i;
  }
  c.flatten();
  EXPECT_EQ(c.next_append(), nullptr);
}

TEST(Capture, ZeroLimitCountsOnly) {
  sup::Capture c(0, 0);
  c.append("abc", 3);
  EXPECT_EQ(c.kept(), "");
  EXPECT_EQ(c.total(), 3u);
  EXPECT_EQ(c.omitted(), 3u);
}

TEST(Capture, RetainsUnreadBytesBeyondTheResultTail) {
  std::string all = numbered(1000);
  sup::Capture c(100, 300);
  c.append(all.data(), all.size());
  char buf[1000];
  uint64_t pos = 700;
  EXPECT_EQ(c.read_at(&pos, buf, sizeof buf), 300u);
  EXPECT_EQ(std::string(buf, 300), all.substr(700));
  EXPECT_EQ(c.kept(), all.substr(0, 50) + all.substr(950));
  EXPECT_EQ(c.omitted(), 900u);
}

TEST(Capture, ReadAtCrossesHeadTailAndJumpsTheGap) {
  std::string all = numbered(300);
  sup::Capture c(100, 0);
  c.append(all.data(), 120);
  c.append(all.data() + 120, 180);
  char buf[300];
  uint64_t pos = 40;
  size_t n = c.read_at(&pos, buf, sizeof buf);
  // Stops at the gap; the next call jumps it.
  EXPECT_EQ(std::string(buf, n), all.substr(40, 10));
  EXPECT_EQ(pos, 50u);
  n = c.read_at(&pos, buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n), all.substr(250));
  EXPECT_EQ(pos, 300u);
  pos = 5;
  n = c.read_at(&pos, buf, 3);
  EXPECT_EQ(std::string(buf, n), all.substr(5, 3));
  EXPECT_EQ(pos, 8u);
  pos = 300;
  EXPECT_EQ(c.read_at(&pos, buf, sizeof buf), 0u);
}

std::string json(const std::string& s) {
  std::string out;
  sup::append_json_string(out, s);
  return out;
}

TEST(JsonText, EscapesAndKeepsValidUtf8) {
  EXPECT_EQ(json("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  EXPECT_EQ(json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(json(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonText, ReplacesEachInvalidByte) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(json("\xff"), "\"" + fffd + "\"");
  EXPECT_EQ(json("\xc0\xaf"), "\"" + fffd + fffd + "\"");          // overlong
  EXPECT_EQ(json("\xed\xa0\x80"), "\"" + fffd + fffd + fffd + "\"");  // surrogate
  EXPECT_EQ(json("\xf4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");  // > U+10FFFF
  EXPECT_EQ(json("ab\xe2\x82"), "\"ab" + fffd + fffd + "\"");       // cut short
}

// What one byte alone in plain text becomes.
std::string alone(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: break;
  }
  if (c < 0x20) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    return buf;
  }
  if (c >= 0x80) return "\xef\xbf\xbd";  // a lone byte from 0x80 up is not UTF-8
  return std::string(1, static_cast<char>(c));
}

TEST(JsonText, EveryByteAtEveryPlaceInAWord) {
  // Plain text is scanned eight bytes at a time: each byte value, alone in
  // plain text at each offset around two words, must come out as on its own.
  for (int c = 0; c < 256; ++c) {
    for (size_t at = 0; at < 24; ++at) {
      std::string text(24, 'a');
      text[at] = static_cast<char>(c);
      const std::string want = "\"" + text.substr(0, at) + alone(static_cast<unsigned char>(c)) + text.substr(at + 1) + "\"";
      ASSERT_EQ(json(text), want) << "byte " << c << " at " << at;
      ASSERT_EQ(sup::json_string_body_length(text.data(), text.size()), want.size() - 2);
    }
  }
}

TEST(JsonText, MixedTextComesOutPieceByPiece) {
  // Valid sequences of every length and edge (kept as they are), invalid
  // ones (a U+FFFD per byte) and ASCII with escapes, joined at random
  // offsets. No piece starts with a continuation byte, so none completes
  // the one before it.
  const std::vector<std::string> valid = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe4\xb8\xad",
                                          "\xed\x9f\xbf", "\xe0\xa0\x80", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"};
  const std::vector<std::string> invalid = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                            "\xe2\x82", "\xe0\x80\x80", "\xc1\xbf"};
  const std::string ascii = "abcdefghijklmnopqrstuvwxyz \"\\\n\t\x01\x7f";
  uint32_t x = 7;
  auto next = [&x](uint32_t n) { return (x = x * 1103515245u + 12345u) / 65536 % n; };
  for (int round = 0; round < 2000; ++round) {
    std::string text, want;
    for (uint32_t pieces = next(40); pieces > 0; --pieces) {
      switch (next(3)) {
        case 0: {
          const std::string& v = valid[next(static_cast<uint32_t>(valid.size()))];
          text += v;
          want += v;
          break;
        }
        case 1: {
          const std::string& v = invalid[next(static_cast<uint32_t>(invalid.size()))];
          text += v;
          for (size_t k = 0; k < v.size(); ++k) want += "\xef\xbf\xbd";
          break;
        }
        default:
          for (uint32_t n = next(20); n > 0; --n) {
            const char c = ascii[next(static_cast<uint32_t>(ascii.size()))];
            text += c;
            want += alone(static_cast<unsigned char>(c));
          }
      }
    }
    ASSERT_EQ(json(text), "\"" + want + "\"") << "round " << round;
    ASSERT_EQ(sup::json_string_body_length(text.data(), text.size()), want.size());
  }
}

TEST(SignalNames, ParseAndName) {
  EXPECT_EQ(sup::parse_signal("SIGTERM"), 15);
  EXPECT_EQ(sup::parse_signal("term"), 15);
  EXPECT_EQ(sup::parse_signal("9"), 9);
  EXPECT_EQ(sup::parse_signal("SIGNOPE"), 0);
  EXPECT_EQ(sup::parse_signal("9x"), 0);
  EXPECT_EQ(sup::parse_signal(""), 0);
  EXPECT_EQ(sup::signal_name(15), "SIGTERM");
  EXPECT_EQ(sup::signal_name(6), "SIGABRT");
}

}  // namespace

namespace {

TEST(JsonText, LengthCountsExactlyWhatIsAppended) {
  // The result is reserved by this count before it is written.
  const std::string samples[] = {
      "", "plain text", "q\"b\\s\n\r\t\b\f\x01\x1f\x7f", std::string("nul\0nul", 7),
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xff\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80", "\xe2\x82",
  };
  for (const std::string& sample : samples) {
    std::string out;
    sup::append_json_string_body(out, sample.data(), sample.size());
    EXPECT_EQ(sup::json_string_body_length(sample.data(), sample.size()), out.size()) << out;
  }
}

TEST(Capture, FlattenKeepsEveryReadTheSame) {
  // After the result is final the kept bytes live in one buffer; a reader
  // must not see a difference, at any position, across the gap or not.
  // 1234 bytes in chunks of 7 wrap the ring many times and leave its
  // oldest byte in the middle: flatten rotates it in place.
  for (size_t written : {10u, 60u, 100u, 300u, 1234u}) {
    std::string all = numbered(written);
    sup::Capture before(100, 0), after(100, 0);
    for (size_t i = 0; i < written; i += 7) {
      size_t n = std::min<size_t>(7, written - i);
      before.append(all.data() + i, n);
      after.append(all.data() + i, n);
    }
    after.flatten();
    ASSERT_TRUE(after.flat().has_value());
    EXPECT_EQ(std::string(*after.flat()), before.kept());
    EXPECT_EQ(after.kept(), before.kept());
    EXPECT_EQ(after.omitted(), before.omitted());
    EXPECT_EQ(after.head_size(), before.head_size());
    for (uint64_t start = 0; start <= written; ++start) {
      for (size_t cap : {1u, 7u, 1000u}) {
        uint64_t p1 = start, p2 = start;
        char b1[1000], b2[1000];
        size_t n1 = before.read_at(&p1, b1, cap), n2 = after.read_at(&p2, b2, cap);
        ASSERT_EQ(std::string(b1, n1), std::string(b2, n2)) << written << " " << start << " " << cap;
        ASSERT_EQ(p1, p2);
      }
    }
  }
}

TEST(Capture, RotateBytesInPlace) {
  // Every split of short runs, and runs longer than the swap buffer with
  // splits on either side of the middle.
  auto check = [](size_t n, size_t k) {
    std::string s = numbered(n), want = s;
    std::rotate(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(k), want.end());
    sup::rotate_bytes(s.data(), n, k);
    return s == want;
  };
  for (size_t n = 0; n <= 40; ++n)
    for (size_t k = 0; k <= n; ++k) EXPECT_TRUE(check(n, k)) << n << " " << k;
  for (size_t k : {1u, 16383u, 16384u, 50000u, 99999u, 150001u, 299999u})
    EXPECT_TRUE(check(300000, k)) << k;
}

TEST(Capture, NoFlattenWhileAReaderNeedsMoreThanTheResult) {
  sup::Capture c(100, 4096);
  std::string all = numbered(1000);
  c.append(all.data(), all.size());
  c.flatten();
  EXPECT_FALSE(c.flat().has_value());
  uint64_t pos = 100;
  char buf[1000];
  EXPECT_EQ(c.read_at(&pos, buf, sizeof buf), 900u) << "the retained bytes are still there";
}

// ---- out of memory: the buffer cannot grow past a budget ----------------

size_t g_budget = 0;

void* realloc_within_budget(void* p, size_t n) { return n <= g_budget ? std::realloc(p, n) : nullptr; }

std::string scrambled(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (char& c : s) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  return s;
}

// Appends `all` in chunks of `chunk`, then checks what every out-of-memory
// capture must hold: every byte counted; kept = a head from offset 0 and the
// newest bytes, each at its offset; the rest omitted; read_at and the
// flattened bytes agreeing.
void expect_consistent(sup::Capture& c, const std::string& all) {
  EXPECT_EQ(c.total(), all.size());
  const size_t head = c.head_size(), tail = c.kept_size() - c.head_size();
  EXPECT_EQ(c.omitted(), all.size() - c.kept_size());
  EXPECT_TRUE(c.kept() == all.substr(0, head) + all.substr(all.size() - tail)) << "head " << head << " tail " << tail;
  std::string read;
  char buf[5000];
  uint64_t pos = 0;
  while (size_t n = c.read_at(&pos, buf, sizeof buf)) read.append(buf, n);
  EXPECT_EQ(pos, all.size());
  EXPECT_TRUE(read == c.kept());
  c.flatten();
  ASSERT_TRUE(c.flat().has_value());
  EXPECT_TRUE(std::string(*c.flat()) == all.substr(0, head) + all.substr(all.size() - tail));
}

void append_in_chunks(sup::Capture& c, const std::string& all, size_t chunk) {
  for (size_t i = 0; i < all.size(); i += chunk) c.append(all.data() + i, std::min(chunk, all.size() - i));
}

TEST(CaptureOutOfMemory, InTheHeadKeepsWhatFitsAndCountsTheRest) {
  // 1 MiB limit: the 512 KiB head asks for the whole megabyte at once past
  // 64 KiB, is refused, and takes just what it needs until the budget ends.
  g_budget = 100 * 1024;
  std::string all = scrambled(2 << 20);
  sup::Capture c(1 << 20, 0, realloc_within_budget);
  append_in_chunks(c, all, 4096);
  // Grown by the exact need once the big reserve was refused; then half of
  // it given to the newest bytes.
  EXPECT_GE(c.kept_size(), g_budget - 4096);
  EXPECT_LE(c.kept_size(), g_budget);
  EXPECT_NEAR(static_cast<double>(c.head_size()), g_budget / 2.0, 4096.0);
  EXPECT_TRUE(c.truncated());
  expect_consistent(c, all);
}

TEST(CaptureOutOfMemory, InTheRingKeepsTheNewestBytesThatFit) {
  // The head (50 KiB) fits, the ring can have 30 KiB of its 50.
  g_budget = 80 * 1024;
  std::string all = scrambled(1 << 20);
  sup::Capture c(100 * 1024, 0, realloc_within_budget);
  append_in_chunks(c, all, 3000);
  EXPECT_EQ(c.head_size(), 50u * 1024);
  EXPECT_GT(c.kept_size(), c.head_size()) << "newest bytes kept in the room left";
  expect_consistent(c, all);
}

TEST(CaptureOutOfMemory, OneChunkLargerThanTheRing) {
  g_budget = 70 * 1024;
  std::string all = scrambled(300 * 1024);
  sup::Capture c(100 * 1024, 0, realloc_within_budget);
  c.append(all.data(), 10);
  c.append(all.data() + 10, all.size() - 10);
  expect_consistent(c, all);
  EXPECT_GT(c.kept_size(), 10u);
}

TEST(CaptureOutOfMemory, OnceShrunkTheRingKeepsTheNewestBytesWithinWhatItHas) {
  // The head ends within the budget for good (its bytes run from offset 0
  // with no gap), and the ring, once it has wrapped in the room it got, stays
  // that size when memory comes back: it goes on keeping the newest bytes.
  g_budget = 20 * 1024;
  std::string all = scrambled(600 * 1024);
  sup::Capture c(100 * 1024, 0, realloc_within_budget);
  append_in_chunks(c, all.substr(0, 300 * 1024), 4096);
  const size_t kept = c.kept_size();
  EXPECT_LE(kept, g_budget);
  EXPECT_GT(kept, c.head_size());
  g_budget = SIZE_MAX;
  for (size_t i = 300 * 1024; i < all.size(); i += 4096) c.append(all.data() + i, 4096);
  EXPECT_EQ(c.kept_size(), kept);
  expect_consistent(c, all);
}

TEST(CaptureOutOfMemory, AFullHeadAndNoRoomDropsUntilTheRingCanGrow) {
  g_budget = 50 * 1024;  // exactly the head
  std::string all = scrambled(400 * 1024);
  sup::Capture c(100 * 1024, 0, realloc_within_budget);
  append_in_chunks(c, all.substr(0, 200 * 1024), 1000);
  EXPECT_EQ(c.kept_size(), 50u * 1024);
  g_budget = 60 * 1024;
  for (size_t i = 200 * 1024; i < all.size(); i += 1024) c.append(all.data() + i, 1024);
  EXPECT_EQ(c.kept_size(), 60u * 1024) << "the ring wraps within the 10 KiB it got";
  expect_consistent(c, all);
}

TEST(CaptureOutOfMemory, NoMemoryAtAllCountsOnly) {
  g_budget = 0;
  std::string all = scrambled(10000);
  sup::Capture c(4096, 0, realloc_within_budget);
  append_in_chunks(c, all, 1000);
  EXPECT_EQ(c.kept_size(), 0u);
  EXPECT_EQ(c.omitted(), all.size());
  expect_consistent(c, all);
}

// The pool is the engine's: there is one once the engine has started.
sup::BufferPool* engine_pool() {
  sup::Engine::instance();
  return sup::BufferPool::shared();
}

TEST(BufferPool, APoolFreesWhatItKeepsAsItEnds) {
  // Run under ASan's leak check: a buffer kept at the end is freed with it.
  sup::BufferPool pool;
  const size_t size = 2u << 20;
  pool.give(static_cast<char*>(std::malloc(size)), size);
}

TEST(BufferPool, GivesBackTheSameBufferForTheSameSize) {
  sup::BufferPool* pool = engine_pool();
  ASSERT_NE(pool, nullptr);
  const size_t size = 2u << 20;
  char* p = static_cast<char*>(std::malloc(size));
  ASSERT_NE(p, nullptr);
  pool->give(p, size);
  EXPECT_EQ(pool->take(size + 4096), nullptr);  // only the exact size
  char* again = pool->take(size);
  EXPECT_EQ(again, p);
  EXPECT_EQ(pool->take(size), nullptr);  // taken once
  // Usable whole, whatever it holds.
  std::fill(again, again + size, 'y');
  EXPECT_EQ(again[size - 1], 'y');
  std::free(again);
}

TEST(BufferPool, SmallAndHugeBuffersAreNotKept) {
  sup::BufferPool* pool = engine_pool();
  ASSERT_NE(pool, nullptr);
  const size_t small = sup::BufferPool::kPooledFrom - 1;
  pool->give(static_cast<char*>(std::malloc(small)), small);
  EXPECT_EQ(pool->take(small), nullptr);
  pool->give(nullptr, 4u << 20);  // harmless
}

TEST(BufferPool, KeepsTheNewestWhenFull) {
  sup::BufferPool* pool = engine_pool();
  ASSERT_NE(pool, nullptr);
  const size_t base = 3u << 20;
  std::vector<char*> given;
  for (int i = 0; i <= sup::BufferPool::kSlots; ++i) {
    given.push_back(static_cast<char*>(std::malloc(base + i * 4096)));
    pool->give(given.back(), base + i * 4096);
  }
  // The first was freed to make room; every later one is there.
  EXPECT_EQ(pool->take(base), nullptr);
  for (int i = 1; i <= sup::BufferPool::kSlots; ++i) {
    char* p = pool->take(base + i * 4096);
    EXPECT_EQ(p, given[i]) << i;
    std::free(p);
  }
}

TEST(BufferPool, ACaptureReusesTheBufferTheLastOneLeft) {
  // At the default limit the buffer jumps to the whole 16 MiB past 64 KiB:
  // the second capture gets the first one's, with its own bytes in it.
  const uint64_t limit = 16u << 20;
  sup::BufferPool* pool = engine_pool();
  ASSERT_NE(pool, nullptr);
  while (char* p = pool->take(limit)) std::free(p);  // what earlier tests left
  std::string chunk(100 * 1024, 'a');
  const char* first;
  {
    sup::Capture c(limit, 0);
    c.append(chunk.data(), chunk.size());
    c.append(chunk.data(), chunk.size());
    first = c.next_append() - 2 * chunk.size();
  }
  sup::Capture c(limit, 0);
  std::string mine = numbered(200 * 1024);
  c.append(mine.data(), 1000);
  c.append(mine.data() + 1000, mine.size() - 1000);
  EXPECT_EQ(c.next_append() - mine.size(), first);
  EXPECT_EQ(c.kept(), mine);
  EXPECT_EQ(c.total(), mine.size());
}

TEST(BufferPool, ATestsOwnReallocIsNotPooled) {
  // A capture growing through a stand-in leaves the pool alone both ways.
  sup::BufferPool* pool = engine_pool();
  ASSERT_NE(pool, nullptr);
  const size_t limit = 16u << 20;
  while (char* p = pool->take(limit)) std::free(p);
  char* pooled = static_cast<char*>(std::malloc(limit));
  pool->give(pooled, limit);
  auto grow = [](void* p, size_t n) noexcept { return std::realloc(p, n); };
  std::string chunk(100 * 1024, 'b');
  {
    sup::Capture c(limit, 0, grow);
    c.append(chunk.data(), chunk.size());
    EXPECT_NE(c.next_append() - chunk.size(), pooled);
  }
  char* still = pool->take(limit);
  EXPECT_EQ(still, pooled);
  EXPECT_EQ(pool->take(limit), nullptr);  // nor was the stand-in's added
  std::free(still);
}

TEST(CaptureKeepAll, EveryByteKeptAndCounted) {
  // "max_output_bytes": null. Far past the 64 MiB reserved at once, so the
  // buffer also grows by doubling; a live reader's retain changes nothing.
  std::string all = scrambled(70 << 20);
  sup::Capture c(sup::Capture::kKeepAll, 256 * 1024);
  append_in_chunks(c, all, 65536 + 17);
  EXPECT_EQ(c.total(), all.size());
  EXPECT_EQ(c.head_size(), all.size());
  EXPECT_EQ(c.kept_size(), all.size());
  EXPECT_EQ(c.omitted(), 0u);
  EXPECT_FALSE(c.truncated());
  std::vector<char> buf(1 << 20);
  uint64_t pos = 12345;
  std::string read;
  while (size_t n = c.read_at(&pos, buf.data(), buf.size())) read.append(buf.data(), n);
  EXPECT_TRUE(read == all.substr(12345));
  c.flatten();
  ASSERT_TRUE(c.flat().has_value());
  EXPECT_TRUE(*c.flat() == all);
}

TEST(CaptureKeepAll, OutOfMemoryKeepsAHeadAndTheNewestBytes) {
  // Keeping everything, the host runs out: as with a limit, the head gives
  // half of itself up to the newest bytes, and the counts stay exact.
  g_budget = 200 * 1024;
  std::string all = scrambled(1 << 20);
  sup::Capture c(sup::Capture::kKeepAll, 0, realloc_within_budget);
  append_in_chunks(c, all, 3000);
  EXPECT_TRUE(c.truncated());
  EXPECT_LE(c.kept_size(), g_budget);
  EXPECT_GT(c.kept_size(), c.head_size()) << "the newest bytes are kept too";
  EXPECT_GT(c.head_size(), 0u);
  expect_consistent(c, all);
}

TEST(CaptureOutOfMemory, ALiveReadersRetainedBytesShrinkToo) {
  // Backpressure keeps up to 256 KiB unread; only 64 KiB more can be had.
  g_budget = 64 * 1024 + 2048;
  std::string all = scrambled(512 * 1024);
  sup::Capture c(4096, 256 * 1024, realloc_within_budget);
  append_in_chunks(c, all, 1500);
  EXPECT_EQ(c.total(), all.size());
  char buf[1 << 16];
  uint64_t pos = 0;
  std::string read;
  while (size_t n = c.read_at(&pos, buf, sizeof buf)) read.append(buf, n);
  EXPECT_TRUE(read == all.substr(0, 2048) + all.substr(all.size() - (read.size() - 2048)));
  EXPECT_GT(read.size(), 2048u + 4096u) << "the ring keeps more than the result's tail";
  EXPECT_EQ(c.kept(), all.substr(0, 2048) + all.substr(all.size() - 2048));
}

}  // namespace
