#include "controller/run/peer_texts.hpp"

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

#include "common/printable.hpp"
#include "common/stream_texts.hpp"
#include "common/wire_bounds.hpp"
#include "tusk.pb.h"

namespace tusk {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Whether `text` had to change; the common case (short plain ASCII) costs one scan and no copy.
bool make_safe(std::string& text, std::size_t most, PeerTextTally& tally) {
  if (text.size() <= most && printable_as_is(text)) return false;
  bool changed = false;
  if (text.size() > most) {
    text = cut_utf8(text, most) + "...";
    ++tally.cut;
    changed = true;
  }
  std::string shown = printable(text);
  if (shown != text) {
    text = std::move(shown);
    ++tally.escaped;
    changed = true;
  }
  return changed;
}

void make_string_field_safe(Message& message, const FieldDescriptor& field, PeerTextTally& tally) {
  const auto* reflection = message.GetReflection();
  const std::size_t most = wire::kMaxPeerMessageBytes;
  std::string scratch;
  const auto fine = [&](const std::string& text) { return text.size() <= most && printable_as_is(text); };
  if (!field.is_repeated()) {
    const std::string& as_sent = reflection->GetStringReference(message, &field, &scratch);
    if (fine(as_sent)) return;
    std::string text = as_sent;
    if (make_safe(text, most, tally)) reflection->SetString(&message, &field, std::move(text));
    return;
  }
  for (int i = 0; i < reflection->FieldSize(message, &field); ++i) {
    const std::string& as_sent = reflection->GetRepeatedStringReference(message, &field, i, &scratch);
    if (fine(as_sent)) continue;
    std::string text = as_sent;
    if (make_safe(text, most, tally)) reflection->SetRepeatedString(&message, &field, i, std::move(text));
  }
}

void make_texts_safe_in(Message& message, PeerTextTally& tally) {
  // A stream's counter and gauge names live in maps, which reflection would copy out and back on
  // every sample: its own walk (common/stream_texts.hpp) rewrites them in place.
  if (message.GetDescriptor() == proto::StreamCounters::descriptor()) {
    rewrite_stream_texts(
        static_cast<proto::StreamCounters&>(message),
        [&](std::string& text) { make_safe(text, wire::kMaxPeerMessageBytes, tally); },
        [&](std::string& name) { make_safe(name, kMaxPeerNameBytes, tally); });
    return;
  }
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // only those set: an unset message is not made
  for (const FieldDescriptor* field : fields) {
    if (field->type() == FieldDescriptor::TYPE_STRING) {  // not TYPE_BYTES: an Any's packed value
      make_string_field_safe(message, *field, tally);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        make_texts_safe_in(*reflection->MutableMessage(&message, field), tally);
        continue;
      }
      for (int i = 0; i < reflection->FieldSize(message, field); ++i)
        make_texts_safe_in(*reflection->MutableRepeatedMessage(&message, field, i), tally);
    }
  }
}

}  // namespace

PeerTextTally make_peer_texts_safe(Message& message) {
  PeerTextTally tally;
  make_texts_safe_in(message, tally);
  return tally;
}

}  // namespace tusk
