#include "agent/payload/prbs_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace tusk::payload {
namespace {

// Sixteen, thirty-two and sixty-four stream bytes in memory order: the baseline (GCC and Clang
// lower it to SSE2 or NEON), and the loops worth AVX2 and AVX-512.
typedef std::uint64_t NarrowBlock __attribute__((vector_size(16)));
typedef std::uint64_t WideBlock __attribute__((vector_size(32)));
typedef std::uint64_t WidestBlock __attribute__((vector_size(64)));

// A vector's lanes ORed together, by halves (the lanes one by one took a third of the check).
template <class Vector>
[[gnu::always_inline]] inline std::uint64_t lanes_or(Vector v) {
  if constexpr (sizeof(Vector) == 64) {
    return lanes_or(__builtin_shufflevector(v, v, 0, 1, 2, 3) | __builtin_shufflevector(v, v, 4, 5, 6, 7));
  } else if constexpr (sizeof(Vector) == 32) {
    return lanes_or(__builtin_shufflevector(v, v, 0, 1) | __builtin_shufflevector(v, v, 2, 3));
  } else {
    return v[0] | v[1];
  }
}

// The loop is bound by its three loads per vector, and a baseline x86-64 build has 16-byte vectors
// only: on x86-64 an AVX2 or AVX-512 copy, chosen at the first call where the CPU has it, does two
// or four times the bytes per load. The body is inlined into each copy, which compiles it for its
// own target.
template <class Vector>
[[gnu::always_inline]] inline std::size_t relation_holds_to_body(const std::uint8_t* data, std::size_t at,
                                                                 std::size_t bytes, std::size_t far, std::size_t near,
                                                                 bool invert) {
  constexpr std::size_t kBytes = sizeof(Vector);
  const Vector expected = invert ? ~Vector{} : Vector{};
  // Vectors stay inside this lambda: passing them between functions outside AVX changes the ABI.
  const auto obeys = [&](std::size_t from, std::size_t blocks) __attribute__((always_inline)) {
    Vector misses{};
    for (std::size_t p = from; p < from + kBytes * blocks; p += kBytes) {
      Vector now, far_back, near_back;
      std::memcpy(&now, data + p, sizeof now);
      std::memcpy(&far_back, data + p - far, sizeof far_back);
      std::memcpy(&near_back, data + p - near, sizeof near_back);
      misses |= now ^ far_back ^ near_back ^ expected;
    }
    return lanes_or(misses) == 0;
  };
  constexpr std::size_t kGroupBlocks = 8;  // ORed together per branch
  for (; at + kBytes * kGroupBlocks <= bytes; at += kBytes * kGroupBlocks) {
    if (!obeys(at, kGroupBlocks)) return at;
  }
  // The whole vectors left, as one group.
  if (const std::size_t left = (bytes - at) / kBytes; left > 0) {
    if (!obeys(at, left)) return at;
    at += kBytes * left;
  }
  // The last few bytes, as the vector that ends there.
  if (at < bytes && !obeys(bytes - kBytes, 1)) return at;
  return bytes;
}

std::size_t relation_holds_to_baseline(const std::uint8_t* data, std::size_t at, std::size_t bytes, std::size_t far,
                                       std::size_t near, bool invert) {
  return relation_holds_to_body<WideBlock>(data, at, bytes, far, near, invert);
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] std::size_t relation_holds_to_avx2(const std::uint8_t* data, std::size_t at, std::size_t bytes,
                                                           std::size_t far, std::size_t near, bool invert) {
  return relation_holds_to_body<WideBlock>(data, at, bytes, far, near, invert);
}
[[gnu::target("avx512f,avx512bw")]] std::size_t relation_holds_to_avx512(const std::uint8_t* data, std::size_t at,
                                                                         std::size_t bytes, std::size_t far,
                                                                         std::size_t near, bool invert) {
  return relation_holds_to_body<WidestBlock>(data, at, bytes, far, near, invert);
}

std::atomic<unsigned> g_vector_bytes_limit{64};

// The widest vectors this CPU has, 64, 32 or 16 bytes, under the tests' limit. (AVX-512 where the
// CPU has AVX-512BW, as every CPU with AVX-512 since Skylake-SP does.)
unsigned vector_bytes() {
  static const unsigned widest = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bw") != 0) return 64u;
    return __builtin_cpu_supports("avx2") != 0 ? 32u : 16u;
  }();
  return std::min(widest, g_vector_bytes_limit.load(std::memory_order_relaxed));
}
#endif

// The generator's recurrence: with j = 9 squarings the taps are 64n and 64k bytes back, so any
// vector up to 64k bytes wide is the XOR of two vectors far enough back that their stores are long
// done (no store-to-load forwarding stall), complemented where the buffer holds inverted data. Each
// vector goes to the buffer (the taps of later ones) and to `out`, the last one only in part.
// Copies for AVX2 and AVX-512 as relation_holds_to has.
template <class Vector>
[[gnu::always_inline]] inline void extend_body(std::uint8_t* stream, std::size_t from, std::size_t bytes,
                                               std::uint8_t* out, std::size_t far, std::size_t near, bool invert) {
  const Vector flip = invert ? ~Vector{} : Vector{};
  std::uint8_t* at = stream + from;
  // Vector i of the run, into the stream; `made` by reference (a vector return from a lambda
  // outside the AVX copies changes the ABI).
  const auto next = [&](std::size_t i, Vector & made) __attribute__((always_inline)) {
    Vector far_back, near_back;
    std::memcpy(&far_back, at + i - far, sizeof far_back);
    std::memcpy(&near_back, at + i - near, sizeof near_back);
    made = far_back ^ near_back ^ flip;
    std::memcpy(at + i, &made, sizeof made);
  };
  std::size_t i = 0;
  Vector made;
  // A frame's start is where the last one ended, anywhere in a cache line. One vector at the start
  // puts the rest of the run's stream stores and tap loads on whole lines (measured: two stores
  // split across lines per vector cost a quarter of the fill on 1500 B frames); the vectors overlap
  // and make the same bytes twice.
  const std::size_t to_line = (0 - reinterpret_cast<std::uintptr_t>(at)) % sizeof(Vector);
  if (to_line != 0 && bytes >= 2 * sizeof(Vector)) {
    next(0, made);
    std::memcpy(out, &made, sizeof made);
    i = to_line;
  }
#pragma GCC unroll 4
  for (; i + sizeof(Vector) <= bytes; i += sizeof(Vector)) {
    next(i, made);
    std::memcpy(out + i, &made, sizeof made);
  }
  if (i < bytes) {
    if (bytes >= sizeof(Vector)) {
      // The vector that ends where the run does, made once more from its taps (reading it back
      // from the stream would wait for the two stores it straddles): one store instead of a copy.
      next(bytes - sizeof(Vector), made);
      std::memcpy(out + bytes - sizeof(Vector), &made, sizeof made);
    } else {
      next(i, made);
      std::memcpy(out + i, &made, bytes - i);
    }
  }
}

void extend_baseline(std::uint8_t* stream, std::size_t from, std::size_t bytes, std::uint8_t* out, std::size_t far,
                     std::size_t near, bool invert) {
  extend_body<NarrowBlock>(stream, from, bytes, out, far, near, invert);
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] void extend_avx2(std::uint8_t* stream, std::size_t from, std::size_t bytes, std::uint8_t* out,
                                         std::size_t far, std::size_t near, bool invert) {
  extend_body<WideBlock>(stream, from, bytes, out, far, near, invert);
}
[[gnu::target("avx512f,avx512bw")]] void extend_avx512(std::uint8_t* stream, std::size_t from, std::size_t bytes,
                                                       std::uint8_t* out, std::size_t far, std::size_t near,
                                                       bool invert) {
  extend_body<WidestBlock>(stream, from, bytes, out, far, near, invert);
}
#endif

}  // namespace

// A plain branch, not the loader's ifunc (target_clones): ifunc resolvers run before sanitizer
// runtimes start (a ThreadSanitizer build crashed at start-up) and do not exist in static builds.
std::size_t relation_holds_to(const std::uint8_t* data, std::size_t at, std::size_t bytes, std::size_t far,
                              std::size_t near, bool invert) {
#if defined(__x86_64__)
  switch (vector_bytes()) {
    case 64:
      return relation_holds_to_avx512(data, at, bytes, far, near, invert);
    case 32:
      return relation_holds_to_avx2(data, at, bytes, far, near, invert);
    default:
      break;
  }
#endif
  return relation_holds_to_baseline(data, at, bytes, far, near, invert);
}

PrbsGenerator::Extend choose_extend() {
#if defined(__x86_64__)
  switch (vector_bytes()) {
    case 64:
      return extend_avx512;
    case 32:
      return extend_avx2;
    default:
      break;
  }
#endif
  return extend_baseline;
}

void limit_vector_bytes_for_tests(unsigned bytes) {
#if defined(__x86_64__)
  g_vector_bytes_limit.store(bytes == 0 ? 64 : bytes, std::memory_order_relaxed);
#else
  (void)bytes;
#endif
}

}  // namespace tusk::payload
