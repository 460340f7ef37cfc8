#include "controller/run/record_inbox.hpp"

#include <fmt/format.h>

namespace tusk {

std::string describe_gaps(const SeqGaps& gaps) {
  if (gaps.empty()) return "";
  const auto range = [](const std::pair<std::uint64_t, std::uint64_t>& gap) {
    return gap.first == gap.second ? fmt::format("{}", gap.first) : fmt::format("{}..{}", gap.first, gap.second);
  };
  if (gaps.size() == 1) return fmt::format("records {} never arrived: the agent dropped them", range(gaps.front()));
  std::uint64_t missing = 0;
  for (const auto& [first, last] : gaps) missing += last - first + 1;
  return fmt::format("{} records in {} gaps (first {}, last {}) never arrived: the agent dropped them", missing,
                     gaps.size(), range(gaps.front()), range(gaps.back()));
}

RecordInbox::Accepted RecordInbox::accept(proto::RecordBatch batch) {
  Accepted accepted;
  for (auto& record : *batch.mutable_records()) {
    const std::uint64_t seq = record.seq();
    if (seq <= highest_) {
      ++accepted.duplicates;
      continue;
    }
    if (seq > highest_ + 1) {
      accepted.gaps.emplace_back(highest_ + 1, seq - 1);
      missing_total_ += seq - 1 - highest_;
    }
    highest_ = seq;
    accepted.fresh.push_back(std::move(record));
  }
  duplicates_total_ += accepted.duplicates;
  return accepted;
}

}  // namespace tusk
