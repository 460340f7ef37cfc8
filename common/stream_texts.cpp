#include "common/stream_texts.hpp"

#include <vector>

namespace tusk {

namespace {

template <typename Map>
void rewrite_keys(Map& map, const std::function<void(std::string&)>& key) {
  std::vector<std::string> names;
  bool changed = false;
  for (const auto& [name, value] : map) {
    names.push_back(name);
    key(names.back());
    changed = changed || names.back() != name;
  }
  if (!changed) return;
  Map rewritten;
  std::size_t i = 0;
  for (const auto& [name, value] : map) rewritten[names[i++]] = value;
  map.swap(rewritten);
}

}  // namespace

void rewrite_stream_texts(proto::StreamCounters& stream, const std::function<void(std::string&)>& text,
                          const std::function<void(std::string&)>& key) {
  for (std::string* field :
       {stream.mutable_stream_id(), stream.mutable_peer(), stream.mutable_kind(), stream.mutable_nic()}) {
    text(*field);
  }
  if (stream.has_flow()) {
    auto& flow = *stream.mutable_flow();
    for (std::string* field : {flow.mutable_src_address(), flow.mutable_dst_address(), flow.mutable_protocol()})
      text(*field);
  }
  for (auto& hop : *stream.mutable_path()) {
    text(*hop.mutable_address());
    text(*hop.mutable_other_address());
  }
  rewrite_keys(*stream.mutable_counters(), key);
  rewrite_keys(*stream.mutable_gauges(), key);
  for (auto& name : *stream.mutable_counter_names()) key(name);
  for (auto& name : *stream.mutable_gauge_names()) key(name);
}

}  // namespace tusk
