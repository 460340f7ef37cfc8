#include "agent/record_outbox.hpp"

namespace tusk {

std::uint64_t RecordOutbox::add(proto::Record record) {
  record.set_seq(next_seq_++);
  if (records_.size() >= capacity_) {
    records_.pop_front();
    if (sent_count_ > 0) --sent_count_;
    ++dropped_;
  }
  records_.push_back(std::move(record));
  return records_.back().seq();
}

bool RecordOutbox::take_unsent(proto::RecordBatch& batch, std::size_t max_records) {
  batch.Clear();
  while (sent_count_ < records_.size() && static_cast<std::size_t>(batch.records_size()) < max_records) {
    *batch.add_records() = records_[sent_count_++];
  }
  return batch.records_size() > 0;
}

void RecordOutbox::acknowledge(std::uint64_t through) {
  if (through <= acked_through_) return;
  acked_through_ = through;
  while (!records_.empty() && records_.front().seq() <= through) {
    records_.pop_front();
    if (sent_count_ > 0) --sent_count_;
  }
}

void RecordOutbox::rewind() { sent_count_ = 0; }

}  // namespace tusk
