#include "agent/record_outbox.hpp"

#include <string>

#include "common/printable.hpp"
#include "common/stream_texts.hpp"

namespace tusk {

namespace {

void make_utf8(std::string& text) {
  if (first_invalid_utf8(text) != std::string::npos) text = valid_utf8(text);
}

void make_utf8(proto::StreamCounters& stream) {
  const auto utf8 = [](std::string& text) { make_utf8(text); };
  rewrite_stream_texts(stream, utf8, utf8);
}

}  // namespace

void make_sendable(proto::Record& record) {
  switch (record.body_case()) {
    case proto::Record::kSample:
      make_utf8(*record.mutable_sample()->mutable_run_id());
      for (auto& stream : *record.mutable_sample()->mutable_streams()) make_utf8(stream);
      break;
    case proto::Record::kResult:
      make_utf8(*record.mutable_result()->mutable_run_id());
      make_utf8(*record.mutable_result()->mutable_stop_reason());
      for (auto& stream : *record.mutable_result()->mutable_streams()) make_utf8(stream);
      break;
    case proto::Record::kOptics:
      make_utf8(*record.mutable_optics()->mutable_run_id());
      for (auto& port : *record.mutable_optics()->mutable_ports()) {
        for (std::string* text : {port.mutable_port(), port.mutable_netdev(), port.mutable_note()}) make_utf8(*text);
      }
      break;
    case proto::Record::kEvent:
      make_utf8(*record.mutable_event()->mutable_run_id());
      make_utf8(*record.mutable_event()->mutable_message());
      make_utf8(*record.mutable_event()->mutable_stream_id());
      break;
    case proto::Record::BODY_NOT_SET:
      break;
  }
}

std::uint64_t RecordOutbox::add(proto::Record record) {
  make_sendable(record);
  record.set_seq(next_seq_++);
  if (records_.size() >= capacity_) {
    pop_oldest();
    ++dropped_;
  }
  const std::size_t bytes = record.ByteSizeLong();
  records_.push_back({std::move(record), bytes});
  return records_.back().record.seq();
}

void RecordOutbox::pop_oldest() {
  if (sent_count_ > 0) {
    --sent_count_;
    sent_bytes_ -= records_.front().bytes;
  }
  records_.pop_front();
}

bool RecordOutbox::take_unsent(proto::RecordBatch& batch, std::size_t max_records, std::size_t max_bytes) {
  batch.Clear();
  std::size_t batch_bytes = 0;
  while (sent_count_ < records_.size() && static_cast<std::size_t>(batch.records_size()) < max_records) {
    const Kept& next = records_[sent_count_];
    if (batch.records_size() > 0 && batch_bytes + next.bytes > max_bytes) break;
    // One record always fits an empty window, however large: otherwise it could never leave.
    if (sent_count_ > 0 && (next.bytes > window_bytes_ || sent_bytes_ > window_bytes_ - next.bytes)) break;
    *batch.add_records() = next.record;
    batch_bytes += next.bytes;
    sent_bytes_ += next.bytes;
    ++sent_count_;
  }
  return batch.records_size() > 0;
}

void RecordOutbox::acknowledge(std::uint64_t through) {
  if (through <= acked_through_) return;
  acked_through_ = through;
  while (!records_.empty() && records_.front().record.seq() <= through) pop_oldest();
}

void RecordOutbox::rewind() {
  sent_count_ = 0;
  sent_bytes_ = 0;
}

}  // namespace tusk
