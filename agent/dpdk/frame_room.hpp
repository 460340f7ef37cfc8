// How big a port's buffers must be for the largest frame the agent was told to carry
// (--dpdk-max-frame): jumbo frames up to 9216 B and beyond need larger mbufs than DPDK's default
// 2 KiB, and a net_af_packet port needs ring frames (framesz=, blocksz=) that hold them too, or the
// kernel truncates every longer frame silently. Worked out once, before the EAL starts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tusk::dpdk {

// Without --dpdk-max-frame, ports keep DPDK's default 2 KiB mbufs: frames up to 2048 B.
inline constexpr std::uint32_t kDefaultMbufDataRoom = 2048;
// mbuf data rooms are 16-bit, less the headroom; kept well inside.
inline constexpr std::uint32_t kLargestMaxFrame = 16000;

// Whether a vdev string names DPDK's net_af_packet driver ("net_af_packet0,iface=eth1").
bool is_af_packet(const std::string& vdev);

// The value of `key=` in a vdev argument string ("net_af_packet0,iface=lab0,framesz=4096"), if set.
std::optional<std::string> vdev_argument(const std::string& vdev, const std::string& key);

// The vdev string a port needs to carry frames of `max_frame` bytes (0: the default). For
// net_af_packet without framesz=, adds framesz= and blocksz= big enough; other drivers and smaller
// frames are returned unchanged. Throws std::invalid_argument naming the vdev when its own framesz=
// is too small or not a number.
std::string vdev_for_max_frame(const std::string& vdev, std::uint32_t max_frame);

// The mbuf data room (without headroom) for frames of `max_frame` bytes on a port made from `vdev`
// ("" for a PCI port): room for the frame and a VLAN tag a driver may reinsert, and for
// net_af_packet at least its ring frame, which its RX queue set-up demands.
std::uint32_t mbuf_data_room(const std::string& vdev, std::uint32_t max_frame);

}  // namespace tusk::dpdk
