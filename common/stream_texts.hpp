// Every string a StreamCounters holds, rewritten in place: the agent makes them valid UTF-8 before
// sending (agent/record_outbox.cpp), the controller makes them printable on arrival
// (controller/run/run_data.cpp). One walk, so a field added to the message is handled by both,
// and a flow is touched only when the stream has one (mutable_flow() would make one, and a stream
// with a flow is judged as one).
#pragma once

#include <functional>
#include <string>

#include "tusk.pb.h"

namespace tusk {

// `text` for its ids, kind, NIC, flow and path addresses; `key` for its counters' and gauges' names,
// in the maps and in a compact sample's name lists (a map is rebuilt only when `key` changes a name;
// names it makes equal keep one value, in a map; in a list, the first).
void rewrite_stream_texts(proto::StreamCounters& stream, const std::function<void(std::string&)>& text,
                          const std::function<void(std::string&)>& key);

}  // namespace tusk
