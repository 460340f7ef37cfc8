// Link impairment for the DPDK lab where the kernel has no netem: a tc (clsact egress) BPF
// program on the device that carries frames to a host (a switch port, or the peer's port), which
// drops, corrupts or duplicates them, each with a probability in parts per million fixed at
// compile time (netns-lab.sh compiles it per fault). Egress, because a receiver's packet socket
// (DPDK net_af_packet) sees frames before any ingress hook could touch them.
// Corruption flips exactly one bit at a random position after the first PAYLOAD_OFFSET bytes (the
// Ethernet header by default; the fabric lab passes Ethernet, IPv4 and UDP, so routers still
// forward the frame and the BERT behind them sees the flip), as netem's corrupt does within a
// frame, so a BERT must count one bit error per corrupted frame.
// As a switch under qualification, it also rewrites the DSCP of IPv4 frames (REMARK_DSCP) and marks
// ECN-capable IPv4 frames Congestion Experienced beyond a rate (MARK_CE_ABOVE_BPS): a token bucket
// MARK_CE_BURST_NS deep, frames that find it full are marked and pass (a congested port's RED
// marking, which this kernel lacks), frames within it pass untouched.
// DISCARD_PPM is loss that the receiving port counts, as a switch counts and discards a bad
// cable's damaged frames: the frame leaves with its EtherType rewritten to IEEE's local
// experimental 0x88B5, and the receiving port's XDP program (discard, below; the fabric lab
// attaches it to the link's other end) discards it and counts it in rx_dropped (IF-MIB
// ifInDiscards). LOSS_PPM drops at the sender, where no counter of either end sees it (a veth's rx
// counter is its peer's tx counter). The kernel alone would count a frame it has no handler for
// only while no packet socket listens on the port, and lldpd's always does.
// CORRUPT_IPV4_ONLY spares every other frame (LLDP's: a real port's FCS check discards a damaged
// frame, where a flipped bit delivered would name a wrong neighbour).
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#ifndef LOSS_PPM
#define LOSS_PPM 0
#endif
#ifndef CORRUPT_PPM
#define CORRUPT_PPM 0
#endif
#ifndef DUPLICATE_PPM
#define DUPLICATE_PPM 0
#endif
#ifndef DISCARD_PPM
#define DISCARD_PPM 0
#endif

#ifndef PAYLOAD_OFFSET
#define PAYLOAD_OFFSET 14
#endif
// The flip lands within this many bytes from PAYLOAD_OFFSET (to aim at one part of a jumbo frame,
// e.g. the second 2 KiB where a NIC scattering into 2 KiB mbufs starts a second segment).
#ifndef CORRUPT_WITHIN
#define CORRUPT_WITHIN 0xffffffffu
#endif
#ifndef MARK_CE_BURST_NS
#define MARK_CE_BURST_NS 100000000ull  // 100 ms at the rate: a sender's catch-up burst is not congestion
#endif

#define ETH_HEADER 14
#define IPV4_ETHERTYPE 0x0008  // 0x0800 as it sits in the frame, read on a little-endian host
#define DISCARD_ETHERTYPE 0xb588  // 0x88B5, likewise
#define ECN_CE 3

#ifdef MARK_CE_ABOVE_BPS
// When the bucket is next empty; a frame adds its time at the rate. Updated without a lock: two
// CPUs racing lose a frame's worth at most, which a lab marker can afford.
struct marker {
  __u64 next_free_ns;
};
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct marker);
} ce_marker SEC(".maps");

static __always_inline int beyond_rate(struct __sk_buff *skb) {
  __u32 zero = 0;
  struct marker *m = bpf_map_lookup_elem(&ce_marker, &zero);
  if (!m) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 cost = (__u64)skb->len * 8 * 1000000000ull / MARK_CE_ABOVE_BPS;
  __u64 start = m->next_free_ns > now ? m->next_free_ns : now;
  if (start + cost - now > MARK_CE_BURST_NS) return 1;
  m->next_free_ns = start + cost;
  return 0;
}
#endif

#if defined(REMARK_DSCP) || defined(MARK_CE_ABOVE_BPS)
// The IPv4 TOS byte as a switch would leave it; the header checksum follows.
static __always_inline void remark(struct __sk_buff *skb) {
  __u16 ethertype;
  __u8 first[2];  // version/IHL, TOS
  if (bpf_skb_load_bytes(skb, 12, &ethertype, 2) != 0 || ethertype != IPV4_ETHERTYPE) return;
  if (bpf_skb_load_bytes(skb, ETH_HEADER, first, 2) != 0) return;
  __u8 tos = first[1];
#ifdef REMARK_DSCP
  tos = (__u8)((REMARK_DSCP << 2) | (tos & 3));
#endif
#ifdef MARK_CE_ABOVE_BPS
  if ((tos & 3) != 0 && (tos & 3) != ECN_CE && beyond_rate(skb)) tos |= ECN_CE;
#endif
  if (tos == first[1]) return;
  __u16 old_word, new_word;
  __builtin_memcpy(&old_word, first, 2);
  first[1] = tos;
  __builtin_memcpy(&new_word, first, 2);
  bpf_l3_csum_replace(skb, ETH_HEADER + 10, old_word, new_word, 2);
  bpf_skb_store_bytes(skb, ETH_HEADER + 1, &tos, 1, 0);
}
#endif
// Marks our own duplicate, which comes through this program again and must pass untouched.
#define DUPLICATE_MARK 0x7475736b

static __always_inline int chance(__u32 ppm) { return ppm > 0 && bpf_get_prandom_u32() % 1000000 < ppm; }

static __always_inline int corruptible(struct __sk_buff *skb) {
#ifdef CORRUPT_IPV4_ONLY
  __u16 ethertype;
  return bpf_skb_load_bytes(skb, 12, &ethertype, 2) == 0 && ethertype == IPV4_ETHERTYPE;
#else
  (void)skb;
  return 1;
#endif
}

SEC("tc")
int impair(struct __sk_buff *skb) {
  if (skb->mark == DUPLICATE_MARK) {
    skb->mark = 0;
    return TC_ACT_OK;
  }
#if defined(REMARK_DSCP) || defined(MARK_CE_ABOVE_BPS)
  remark(skb);
#endif
  if (chance(LOSS_PPM)) return TC_ACT_SHOT;
  if (chance(DISCARD_PPM)) {
    __u16 ethertype = DISCARD_ETHERTYPE;
    bpf_skb_store_bytes(skb, 12, &ethertype, 2, 0);
    return TC_ACT_OK;
  }
  if (chance(CORRUPT_PPM) && skb->len > PAYLOAD_OFFSET && corruptible(skb)) {
    __u32 span = skb->len - PAYLOAD_OFFSET;
    if (span > CORRUPT_WITHIN) span = CORRUPT_WITHIN;
    __u32 offset = PAYLOAD_OFFSET + bpf_get_prandom_u32() % span;
    __u8 byte;
    if (bpf_skb_load_bytes(skb, offset, &byte, 1) == 0) {
      byte ^= (__u8)(1u << (bpf_get_prandom_u32() & 7));
      bpf_skb_store_bytes(skb, offset, &byte, 1, 0);
    }
  }
  // The clone leaves first; the original follows.
  if (chance(DUPLICATE_PPM)) {
    skb->mark = DUPLICATE_MARK;
    bpf_clone_redirect(skb, skb->ifindex, 0);
    skb->mark = 0;
  }
  return TC_ACT_OK;
}

#if DISCARD_PPM > 0
// The receiving port's half of DISCARD_PPM: before any packet socket sees it (as a switch's MAC
// discards a damaged frame before any mirror), a frame that arrives as 0x88B5 is discarded and
// counted in the port's rx_dropped. A veth counts a failed XDP redirect (here to no device) as a
// drop there, where XDP_DROP would show only in ethtool's xdp_drops.
SEC("xdp")
int discard(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  if (data + ETH_HEADER > end) return XDP_PASS;
  if (*(__u16 *)(data + 12) != DISCARD_ETHERTYPE) return XDP_PASS;
  return bpf_redirect(0, 0);
}
#endif

char _license[] SEC("license") = "GPL";
