// A sample's streams in their compact wire form (proto StreamCounters.counter_values): a stream's
// counter and gauge names and its ids travel in a layout sample, the samples between carry the
// values alone, in the layout's order. A stream of five counters then costs tens of bytes a sample
// where its names cost a hundred, and the controller reads values without building a map.
//
// One compactor per test: a stream is laid out in its first sample, whenever its names change,
// and every wire::kLayoutEverySamples-th sample (a controller that missed a layout reads on from
// the next one).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tusk.pb.h"

namespace tusk {

class SampleCompactor {
 public:
  // Rewrites `stream` (maps filled, as an engine samples it) in the compact form.
  void compact(proto::StreamCounters& stream);

 private:
  struct Layout {
    std::vector<std::string> counters, gauges;
    std::uint32_t samples_since = 0;  // samples sent on this layout since it was last named
  };
  // Whether `stream`'s maps hold exactly `layout`'s names.
  static bool fits(const Layout& layout, const proto::StreamCounters& stream);

  std::unordered_map<std::string, Layout> layouts_;  // by stream id
};

}  // namespace tusk
