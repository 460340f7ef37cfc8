// Suggestions for mistyped names ("mesage_size" → "message_size"), so that an error about an
// unknown key can say which key was probably meant.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters each cost 1. Case is ignored.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is within max(1, word.size() / 3) edits; the earliest
// candidate wins a tie. Nothing when no candidate is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace tusk
