// The agent's side of "at least once": every sample, event and result becomes a numbered Record
// kept here until the controller acknowledges it. After a reconnect, all unacknowledged records
// are sent again; the controller drops the ones it already has.
//
// Sendable: each record is made valid UTF-8 as it is added (make_sendable).
//
// Bounded: when full, the oldest record is dropped and counted; the controller sees the gap in
// sequence numbers, and the agent reports the count, so an overflow is never silent.
//
// Windowed: at most `window_bytes` of records are out on a connection and not yet acknowledged
// (one record more when it alone is larger), so a backlog built up during a controller outage
// drains at the pace the controller acknowledges it instead of flooding the connection's send
// queue, which closes a connection that overflows.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>

#include "tusk.pb.h"

namespace tusk {

// Every string of `record` made valid UTF-8 (bad bytes as U+FFFD). proto3 strings must be UTF-8:
// the controller refuses a whole frame that holds one that is not and drops the connection, so a
// record with an interface name or an error text in another encoding would be sent again and
// refused again, and block every record behind it.
void make_sendable(proto::Record& record);

class RecordOutbox {
 public:
  static constexpr std::size_t kNoWindow = std::numeric_limits<std::size_t>::max();
  // A capacity below 1 is taken as 1: the newest record is always kept.
  explicit RecordOutbox(std::size_t capacity, std::size_t window_bytes = kNoWindow)
      : capacity_(capacity > 0 ? capacity : 1), window_bytes_(window_bytes) {}

  // Assigns the next sequence number and keeps the record; returns that number.
  std::uint64_t add(proto::Record record);
  // Moves records not yet sent on this connection into `batch`: at most `max_records`, at most
  // `max_bytes` (but at least one), and no more than the window has room for. Returns false
  // when there is nothing to send or the window is full.
  bool take_unsent(proto::RecordBatch& batch, std::size_t max_records, std::size_t max_bytes = kNoWindow);
  // The controller has stored every record up to and including `through`.
  void acknowledge(std::uint64_t through);
  // A new connection: everything unacknowledged goes out again.
  void rewind();

  std::size_t pending() const { return records_.size(); }
  // Sent on this connection and not yet acknowledged.
  std::size_t in_flight() const { return sent_count_; }
  std::size_t in_flight_bytes() const { return sent_bytes_; }
  std::uint64_t last_seq() const { return next_seq_ - 1; }
  std::uint64_t first_unacked_seq() const { return records_.empty() ? next_seq_ : records_.front().record.seq(); }
  std::uint64_t acked_through() const { return acked_through_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  struct Kept {
    proto::Record record;
    std::size_t bytes;  // serialized size, for the window
  };
  void pop_oldest();

  std::size_t capacity_;
  std::size_t window_bytes_;
  std::deque<Kept> records_;    // unacknowledged, in seq order
  std::size_t sent_count_ = 0;  // how many of records_ went out on this connection
  std::size_t sent_bytes_ = 0;  // and their size
  std::uint64_t next_seq_ = 1;
  std::uint64_t acked_through_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace tusk
