// The PRBS fill's and check's vector loops (prbs.cpp, prbs_generator.cpp): one copy each for the
// baseline, AVX2 and AVX-512, the widest this CPU has chosen at run time (a plain branch, not an
// ifunc: see relation_holds_to).
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/payload/prbs.hpp"

namespace tusk::payload {

// The narrowest data relation_holds_to may be asked about: callers keep bytes - at >= this.
inline constexpr std::size_t kRelationMinBytes = 64;

// Where `data` first breaks the relation data[m] = data[m - far] ^ data[m - near] (complemented if
// inverted) at or after `at`, to a multiple of the vector's bytes from `at`; `bytes` if nowhere.
// Needs at >= far > near and bytes - at >= kRelationMinBytes.
std::size_t relation_holds_to(const std::uint8_t* data, std::size_t at, std::size_t bytes, std::size_t far,
                              std::size_t near, bool invert);

// The generator's recurrence for this CPU's widest vectors (PrbsGenerator::Extend says what it does).
PrbsGenerator::Extend choose_extend();

}  // namespace tusk::payload
