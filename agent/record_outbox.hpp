// The agent's side of "at least once": every sample, event and result becomes a numbered Record
// kept here until the controller acknowledges it. After a reconnect, all unacknowledged records
// are sent again; the controller drops the ones it already has.
//
// Bounded: when full, the oldest record is dropped and counted; the controller sees the gap in
// sequence numbers, and the agent reports the count, so an overflow is never silent.
#pragma once

#include <cstdint>
#include <deque>

#include "tusk.pb.h"

namespace tusk {

class RecordOutbox {
 public:
  // A capacity below 1 is taken as 1: the newest record is always kept.
  explicit RecordOutbox(std::size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  // Assigns the next sequence number and keeps the record; returns that number.
  std::uint64_t add(proto::Record record);
  // Moves up to `max_records` records not yet sent on this connection into `batch`.
  // Returns false when there is nothing to send.
  bool take_unsent(proto::RecordBatch& batch, std::size_t max_records);
  // The controller has stored every record up to and including `through`.
  void acknowledge(std::uint64_t through);
  // A new connection: everything unacknowledged goes out again.
  void rewind();

  std::size_t pending() const { return records_.size(); }
  std::uint64_t last_seq() const { return next_seq_ - 1; }
  std::uint64_t first_unacked_seq() const { return records_.empty() ? next_seq_ : records_.front().seq(); }
  std::uint64_t acked_through() const { return acked_through_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::size_t capacity_;
  std::deque<proto::Record> records_;  // unacknowledged, in seq order
  std::size_t sent_count_ = 0;         // how many of records_ went out on this connection
  std::uint64_t next_seq_ = 1;
  std::uint64_t acked_through_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace tusk
