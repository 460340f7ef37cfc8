// Which sample indexes of one agent's test arrived: one bit each, so a day of 100 ms samples costs
// 108 KB whatever the streams, and the run needs no list of what it received.
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
    const std::uint64_t bit = std::uint64_t{1} << ((index - 1) % 64);
    if (words_.size() <= word) words_.resize(word + 1);
    if (words_[word] & bit) return false;
    words_[word] |= bit;
    ++count_;
    if (index > highest_) highest_ = index;
    return true;
  }
  bool contains(std::uint32_t index) const {
    if (index == 0) return false;
    const std::size_t word = (index - 1) / 64;
    return word < words_.size() && (words_[word] >> ((index - 1) % 64)) & 1;
  }
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
  std::vector<std::uint64_t> words_;
  std::uint64_t count_ = 0;
  std::uint32_t highest_ = 0;
};

}  // namespace tusk
