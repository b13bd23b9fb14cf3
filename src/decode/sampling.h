// Seeded sampling of a token from logits: a generator whose stream is the same on every platform
// (the standard library's distributions are not), and the draw from softmax(logits / T). Best-of's
// candidates each get their own generator from (seed, candidate index), so a candidate's tokens do
// not depend on how many candidates run or in which order they are stepped.
#pragma once
#include <cstdint>
#include <span>

namespace hark::decode {

// splitmix64.
struct Rng {
  uint64_t s = 0;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// The generator of best-of candidate c (0-based) of a window whose sampling seed is `seed`.
inline Rng candidate_rng(uint64_t seed, int c) {
  return Rng{seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(c + 1))};
}

// A token drawn from softmax(logits / temperature) (temperature > 0); -inf logits are never drawn.
int32_t sample(std::span<const float> logits, float temperature, Rng& rng);

}  // namespace hark::decode
