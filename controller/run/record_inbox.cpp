#include "controller/run/record_inbox.hpp"

namespace tusk {

RecordInbox::Accepted RecordInbox::accept(const proto::RecordBatch& batch) {
  Accepted accepted;
  for (const auto& record : batch.records()) {
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
    accepted.fresh.push_back(record);
  }
  duplicates_total_ += accepted.duplicates;
  return accepted;
}

}  // namespace tusk
