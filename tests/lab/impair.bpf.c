// Link impairment for the DPDK lab where the kernel has no netem: a tc (clsact egress) BPF
// program on the device that carries frames to a host (a switch port, or the peer's port), which
// drops, corrupts or duplicates them, each with a probability in parts per million fixed at
// compile time (netns-lab.sh compiles it per fault). Egress, because a receiver's packet socket
// (DPDK net_af_packet) sees frames before any ingress hook could touch them.
// Corruption flips exactly one bit at a random position after the first PAYLOAD_OFFSET bytes (the
// Ethernet header by default; the fabric lab passes Ethernet, IPv4 and UDP, so routers still
// forward the frame and the BERT behind them sees the flip), as netem's corrupt does within a
// frame, so a BERT must count one bit error per corrupted frame.
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

#ifndef PAYLOAD_OFFSET
#define PAYLOAD_OFFSET 14
#endif
// Marks our own duplicate, which comes through this program again and must pass untouched.
#define DUPLICATE_MARK 0x7475736b

static __always_inline int chance(__u32 ppm) { return ppm > 0 && bpf_get_prandom_u32() % 1000000 < ppm; }

SEC("tc")
int impair(struct __sk_buff *skb) {
  if (skb->mark == DUPLICATE_MARK) {
    skb->mark = 0;
    return TC_ACT_OK;
  }
  if (chance(LOSS_PPM)) return TC_ACT_SHOT;
  if (chance(CORRUPT_PPM) && skb->len > PAYLOAD_OFFSET) {
    __u32 offset = PAYLOAD_OFFSET + bpf_get_prandom_u32() % (skb->len - PAYLOAD_OFFSET);
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

char _license[] SEC("license") = "GPL";
