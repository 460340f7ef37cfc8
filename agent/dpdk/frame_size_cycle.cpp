#include "agent/dpdk/frame_size_cycle.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace tusk::dpdk {

FrameSizeCycle::FrameSizeCycle(const FrameSpec& spec, std::uint32_t single_size,
                               const std::vector<std::uint32_t>& sizes)
    : mix_(size_mix(single_size, sizes)) {
  const std::vector<std::uint32_t> list = sizes.empty() ? std::vector<std::uint32_t>{single_size} : sizes;
  for (const std::uint32_t frame : list) {
    if (frame > std::numeric_limits<std::uint16_t>::max()) {
      throw std::invalid_argument(fmt::format("frame size {} B is above the largest the engine can send, {} B", frame,
                                              std::numeric_limits<std::uint16_t>::max()));
    }
    const std::size_t payload = payload_length_for(spec, frame);  // throws naming the size
    sizes_.push_back({static_cast<std::uint16_t>(frame), static_cast<std::uint16_t>(payload)});
  }
}

}  // namespace tusk::dpdk
