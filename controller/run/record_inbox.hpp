// The controller's side of "counted once": records from one agent process arrive in sequence
// order per connection, and after a reconnect the agent resends everything not yet acknowledged.
// Anything at or below the highest sequence number already stored is a duplicate; a jump past the
// next number is a gap (records the agent had to drop), which is reported, never ignored.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tusk.pb.h"

namespace tusk {

using SeqGaps = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // inclusive ranges of missing seqs

// One line for all the gaps of one batch, however many (an agent that numbers every other record
// makes one fault per batch, not 256).
std::string describe_gaps(const SeqGaps& gaps);

class RecordInbox {
 public:
  struct Accepted {
    std::vector<proto::Record> fresh;
    std::uint64_t duplicates = 0;
    SeqGaps gaps;
  };

  // Takes the batch (its fresh records are moved out, not copied).
  Accepted accept(proto::RecordBatch batch);
  // Every record up to this sequence number is stored (what we acknowledge).
  std::uint64_t acked_through() const { return highest_; }
  // A new agent process, or one this controller has not met: everything before `first_seq` was
  // settled elsewhere (acknowledged to a previous controller), so it is neither expected nor a gap.
  void start_at(std::uint64_t first_seq) { highest_ = first_seq > 0 ? first_seq - 1 : 0; }

  std::uint64_t duplicates_total() const { return duplicates_total_; }
  std::uint64_t missing_total() const { return missing_total_; }

 private:
  std::uint64_t highest_ = 0;
  std::uint64_t duplicates_total_ = 0;
  std::uint64_t missing_total_ = 0;
};

}  // namespace tusk
