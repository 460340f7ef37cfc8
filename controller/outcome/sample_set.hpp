// Which sample indexes of one agent's test arrived: one bit each past the longest run from 1 that
// arrived whole, which is only counted. An agent that misses nothing costs a word or two however
// long the test; one whose sample never came holds a bit a sample from there (a day of 100 ms
// samples: 108 KB), never a list.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tusk {

class SampleSet {
 public:
  // Adds `index` (from 1); false when it was there already.
  bool insert(std::uint32_t index) {
    if (index == 0) return false;
    const std::size_t word = (index - 1) / 64;
    if (word < first_word_) return false;
    const std::size_t at = word - first_word_;
    const std::uint64_t bit = std::uint64_t{1} << ((index - 1) % 64);
    if (words_.size() <= at) words_.resize(at + 1);
    if (words_[at] & bit) return false;
    words_[at] |= bit;
    ++count_;
    if (index > highest_) highest_ = index;
    // Whole words at the front are all there: count them instead.
    std::size_t whole = 0;
    while (whole < words_.size() && words_[whole] == ~std::uint64_t{0}) ++whole;
    if (whole > 0) {
      words_.erase(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(whole));
      first_word_ += whole;
    }
    return true;
  }
  bool contains(std::uint32_t index) const {
    if (index == 0) return false;
    const std::size_t word = (index - 1) / 64;
    if (word < first_word_) return true;
    const std::size_t at = word - first_word_;
    return at < words_.size() && (words_[at] >> ((index - 1) % 64)) & 1;
  }
  // The bitmap's words held: what the set costs beyond its counts.
  std::size_t words_held() const { return words_.size(); }
  std::uint64_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::uint32_t highest() const { return highest_; }

  // The runs of consecutive indexes that arrived, [first, last] each, the first `most` of them;
  // `more` is set to how many runs were left out.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges(std::size_t most, std::size_t& more) const {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
    more = 0;
    std::uint32_t start = 0;
    for (std::uint32_t i = 1; i <= highest_ + 1; ++i) {
      const bool in = i <= highest_ && contains(i);
      if (in && start == 0) start = i;
      if (!in && start != 0) {
        if (runs.size() < most) {
          runs.emplace_back(start, i - 1);
        } else {
          ++more;
        }
        start = 0;
      }
    }
    return runs;
  }

 private:
  std::size_t first_word_ = 0;        // the indexes of the words before it all arrived
  std::vector<std::uint64_t> words_;  // from first_word_ on
  std::uint64_t count_ = 0;
  std::uint32_t highest_ = 0;
};

}  // namespace tusk
