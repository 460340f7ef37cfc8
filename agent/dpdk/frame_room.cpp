#include "agent/dpdk/frame_room.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace tusk::dpdk {
namespace {

constexpr std::uint32_t kVlanTag = 4;
constexpr std::uint32_t kPageBytes = 4096;
// An af_packet ring frame holds the tpacket2 header before the frame: the kernel puts the MAC
// header at offset 66 on receive (truncating what does not fit), the PMD reads TX frames from
// offset 32. 128 covers both with room to spare.
constexpr std::uint32_t kAfPacketFrameOverhead = 128;
// The PMD's own default ring frame.
constexpr std::uint32_t kAfPacketDefaultFrame = 2048;

std::uint32_t round_up(std::uint32_t value, std::uint32_t step) {
  return (value + step - 1) / step * step;
}

std::uint32_t af_packet_frame(const std::string& vdev) {
  const auto text = vdev_argument(vdev, "framesz");
  if (!text) return kAfPacketDefaultFrame;
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value == 0) {
    throw std::invalid_argument(fmt::format("--dpdk-vdev {}: framesz={} is not a number of bytes", vdev, *text));
  }
  return value;
}

}  // namespace

bool is_af_packet(const std::string& vdev) {
  return vdev.rfind("net_af_packet", 0) == 0;
}

std::optional<std::string> vdev_argument(const std::string& vdev, const std::string& key) {
  std::size_t at = vdev.find(',');
  while (at != std::string::npos) {
    const std::size_t start = at + 1;
    at = vdev.find(',', start);
    const std::string argument = vdev.substr(start, at == std::string::npos ? std::string::npos : at - start);
    if (argument.rfind(key + "=", 0) == 0) return argument.substr(key.size() + 1);
  }
  return std::nullopt;
}

std::string vdev_for_max_frame(const std::string& vdev, std::uint32_t max_frame) {
  if (!is_af_packet(vdev)) return vdev;
  const std::uint32_t needed = max_frame + kVlanTag + kAfPacketFrameOverhead;
  if (vdev_argument(vdev, "framesz")) {
    const std::uint32_t frame = af_packet_frame(vdev);
    if (max_frame != 0 && frame < needed) {
      throw std::invalid_argument(fmt::format(
          "--dpdk-vdev {}: framesz={} holds frames up to {} B, less than --dpdk-max-frame {}: give framesz={} "
          "(and blocksz= a multiple of 4096 at least as large), or leave both out and Tusk sizes them",
          vdev, frame, frame > kAfPacketFrameOverhead + kVlanTag ? frame - kAfPacketFrameOverhead - kVlanTag : 0,
          max_frame, round_up(needed, kPageBytes)));
    }
    return vdev;
  }
  if (max_frame == 0 || needed <= kAfPacketDefaultFrame) return vdev;
  // One ring frame per block: any framecnt divides evenly, and a block is whole pages.
  const std::uint32_t frame = round_up(needed, kPageBytes);
  return fmt::format("{},framesz={},blocksz={}", vdev, frame, frame);
}

std::uint32_t mbuf_data_room(const std::string& vdev, std::uint32_t max_frame) {
  std::uint32_t room = std::max(kDefaultMbufDataRoom, max_frame + kVlanTag);
  // The PMD refuses an RX queue whose mbufs are smaller than its ring frame less the 32 bytes
  // before the packet data.
  if (is_af_packet(vdev)) room = std::max(room, af_packet_frame(vdev) - 32);
  return round_up(room, 64);
}

}  // namespace tusk::dpdk
