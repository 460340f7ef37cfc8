// Path-trace probes: written with the flow's exact 5-tuple (what ECMP hashes), the TTL asked and
// a checkable payload; the ICMP errors routers send back (built here as RFC 792 and Linux's
// icmp_send build them: the offending datagram quoted, up to 548 bytes) are read back to the
// flow, the TTL and whether the probe arrived damaged; the destination answers port-unreachable.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "agent/dpdk/path_probe.hpp"
#include "agent/dpdk/wire_bytes.hpp"
#include "agent/path/path_tracer.hpp"
#include "tests/support/routed_host.hpp"

namespace tusk::dpdk {
namespace {

using tusk::testing::ip;
using tusk::testing::kLeafMac;
using tusk::testing::kOurMac;
using tusk::testing::ours;
using wire::get16;
using wire::get32;
using wire::internet_checksum;
using wire::put16;
using wire::put32;

FrameSpec flow_spec(std::uint16_t src_port = 49152) {
  FrameSpec spec;
  spec.src = kOurMac;
  spec.dst = kLeafMac;
  spec.encapsulation = Encapsulation::Ipv4Udp;
  spec.ip.src_address = ip("192.168.101.11");
  spec.ip.dst_address = ip("192.168.102.12");
  spec.ip.src_port = src_port;
  spec.ip.dst_port = 0x88B5;
  spec.ip.dscp = 26;
  spec.ip.ecn = 1;
  return spec;
}

std::vector<std::uint8_t> probe(const FrameSpec& spec, std::uint8_t ttl, std::uint16_t sequence = 7) {
  std::vector<std::uint8_t> frame(kMaxProbeFrameLength);
  frame.resize(write_probe(spec, ttl, sequence, frame.data()));
  return frame;
}

// What router `responder` sends back for `probe` (an untagged frame): ICMP type/code quoting the
// datagram as it arrived there (its TTL spent), `quote` bytes of it at most.
std::vector<std::uint8_t> icmp_error(const std::vector<std::uint8_t>& probe_frame, std::uint32_t responder,
                                     std::uint8_t type, std::uint8_t code, std::size_t quote = 548) {
  std::vector<std::uint8_t> datagram(probe_frame.begin() + 14, probe_frame.end());
  datagram[8] = 1;
  if (datagram.size() > quote) datagram.resize(quote);
  std::vector<std::uint8_t> frame(14 + 20 + 8 + datagram.size());
  std::copy(kLeafMac.begin(), kLeafMac.end(), frame.begin() + 6);
  std::copy(kOurMac.begin(), kOurMac.end(), frame.begin());
  put16(&frame[12], 0x0800);
  std::uint8_t* ip_header = &frame[14];
  ip_header[0] = 0x45;
  put16(ip_header + 2, static_cast<std::uint16_t>(20 + 8 + datagram.size()));
  ip_header[8] = 64;
  ip_header[9] = 1;
  put32(ip_header + 12, responder);
  put32(ip_header + 16, get32(&probe_frame[14 + 12]));
  put16(ip_header + 10, internet_checksum(ip_header, 20));
  std::uint8_t* icmp = ip_header + 20;
  icmp[0] = type;
  icmp[1] = code;
  std::copy(datagram.begin(), datagram.end(), icmp + 8);
  put16(icmp + 2, internet_checksum(icmp, 8 + datagram.size()));
  return frame;
}

TEST(PathProbe, CarriesTheFlowsFiveTupleAndTheTtlAsked) {
  const auto frame = probe(flow_spec(), 3, 0x123);
  ASSERT_EQ(frame.size(), kEthernetHeaderLength + 20 + 8 + path::kProbePayloadLength);
  const std::uint8_t* ip_header = frame.data() + 14;
  EXPECT_EQ(get16(frame.data() + 12), 0x0800);
  EXPECT_EQ(ip_header[1], (26 << 2) | 1) << "DSCP and ECN as the flow's: a QoS policy must treat probes alike";
  EXPECT_EQ(ip_header[8], 3);
  EXPECT_EQ(ip_header[9], 17);
  EXPECT_EQ(get32(ip_header + 12), ip("192.168.101.11"));
  EXPECT_EQ(get32(ip_header + 16), ip("192.168.102.12"));
  EXPECT_EQ(internet_checksum(ip_header, 20), 0);
  EXPECT_EQ(get16(ip_header + 20), 49152);
  EXPECT_EQ(get16(ip_header + 22), 0x88B5);
  EXPECT_EQ(get32(ip_header + 28), path::kProbeMagic);
}

TEST(PathProbe, ProbesOfOneFlowDifferOnlyOutsideTheEcmpHash) {
  const auto one = probe(flow_spec(), 1, 1);
  const auto other = probe(flow_spec(), 5, 900);
  ASSERT_EQ(one.size(), other.size());
  // Addresses, protocol and ports: what every 5-tuple hash reads.
  for (std::size_t at : {14 + 9, 14 + 12, 14 + 16, 14 + 20, 14 + 22}) {
    EXPECT_EQ(one[at], other[at]) << "byte " << at;
  }
}

TEST(PathProbe, TaggedFlowsProbeOnTheirVlan) {
  FrameSpec spec = flow_spec();
  spec.tagged = true;
  spec.vlan = 100;
  spec.pcp = 3;
  const auto frame = probe(spec, 2);
  EXPECT_EQ(get16(frame.data() + 12), kVlanTpid);
  EXPECT_EQ(get16(frame.data() + 14) & 0x0FFF, 100);
  EXPECT_EQ(get16(frame.data() + 16), 0x0800);
}

TEST(PathProbeReply, TimeExceededNamesTheHopTheFlowAndTheTtl) {
  const auto sent = probe(flow_spec(50000), 2, 0x456);
  const auto reply = parse_probe_reply(ours(), icmp_error(sent, ip("172.16.1.3"), 11, 0).data(),
                                       icmp_error(sent, ip("172.16.1.3"), 11, 0).size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->answer, path::ProbeAnswer::TimeExceeded);
  EXPECT_EQ(reply->responder, ip("172.16.1.3"));
  EXPECT_EQ(reply->dst_address, ip("192.168.102.12"));
  EXPECT_EQ(reply->src_port, 50000);
  EXPECT_EQ(reply->dst_port, 0x88B5);
  EXPECT_EQ(reply->ttl, 2);
  EXPECT_EQ(reply->sequence, 0x456);
  EXPECT_FALSE(reply->damaged);
}

TEST(PathProbeReply, AQuotedPayloadWithAFlippedBitIsDamaged) {
  auto sent = probe(flow_spec(), 3);
  sent[14 + 28 + 20] ^= 0x10;  // on the wire, before the router that quotes it
  const auto frame = icmp_error(sent, ip("172.16.2.2"), 11, 0);
  const auto reply = parse_probe_reply(ours(), frame.data(), frame.size());
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->damaged);
  EXPECT_EQ(reply->ttl, 3) << "the TTL is read from the IP identification, not the payload";
}

TEST(PathProbeReply, ShortQuotesStillNameTheProbe) {
  // RFC 792 routers quote the IP header and 8 bytes: enough for the flow, not for damage.
  const auto sent = probe(flow_spec(), 1);
  const auto frame = icmp_error(sent, ip("192.168.101.1"), 11, 0, 28);
  const auto reply = parse_probe_reply(ours(), frame.data(), frame.size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->ttl, 1);
  EXPECT_FALSE(reply->damaged);
}

TEST(PathProbeReply, UnreachableFromARouterIsNotTheDestination) {
  const auto sent = probe(flow_spec(), 3);
  auto frame = icmp_error(sent, ip("172.16.1.1"), 3, 0);
  auto reply = parse_probe_reply(ours(), frame.data(), frame.size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->answer, path::ProbeAnswer::Unreachable);
  frame = icmp_error(sent, ip("192.168.102.12"), 3, 3);
  reply = parse_probe_reply(ours(), frame.data(), frame.size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->answer, path::ProbeAnswer::Destination);
}

TEST(PathProbeReply, IgnoresWhatIsNotAnAnswerToOurProbe) {
  const auto sent = probe(flow_spec(), 2);
  auto frame = icmp_error(sent, ip("172.16.1.3"), 11, 0);
  Ipv4Interface other = ours();
  other.address = ip("192.168.101.12");
  EXPECT_FALSE(parse_probe_reply(other, frame.data(), frame.size())) << "to another host";
  frame[14 + 20 + 8 + 40] ^= 0x01;  // the quote damaged on the way back: the ICMP checksum fails
  EXPECT_FALSE(parse_probe_reply(ours(), frame.data(), frame.size()));
  frame = icmp_error(sent, ip("172.16.1.3"), 0, 0);
  EXPECT_FALSE(parse_probe_reply(ours(), frame.data(), frame.size())) << "an echo reply";
  EXPECT_FALSE(parse_probe_reply(ours(), sent.data(), sent.size())) << "a probe itself";
  const auto cut = icmp_error(sent, ip("172.16.1.3"), 11, 0);
  EXPECT_FALSE(parse_probe_reply(ours(), cut.data(), 14 + 20 + 8 + 10)) << "truncated";
}

TEST(PathProbeReply, ATestFrameQuotedIsNoProbe) {
  // A router that drops a test frame for want of a route quotes it: not a probe's answer.
  auto sent = probe(flow_spec(), 3);
  put16(&sent[14 + 24], 200);  // a test frame's UDP length
  put32(&sent[14 + 28], kTuskMagic);
  const auto frame = icmp_error(sent, ip("172.16.1.3"), 3, 0);
  EXPECT_FALSE(parse_probe_reply(ours(), frame.data(), frame.size()));
}

TEST(ProbeAnswer, TheDestinationAnswersPortUnreachableQuotingTheProbe) {
  Ipv4Interface destination = parse_ipv4_interface("192.168.102.12/24,gw=192.168.102.1");
  destination.mac = {0x02, 0x74, 0x6b, 0x02, 0x02, 0x10};
  auto sent = probe(flow_spec(), 4);
  sent[14 + 8] = 61;  // as it arrives, three routers on
  sent[14 + 10] = 0;
  sent[14 + 11] = 0;
  put16(&sent[14 + 10], internet_checksum(&sent[14], 20));
  ASSERT_TRUE(may_be_probe_for_us(destination, sent.data(), sent.size()));
  std::vector<std::uint8_t> answer(kProbeAnswerRoom);
  answer.resize(answer_probe(destination, sent.data(), sent.size(), answer.data()));
  ASSERT_FALSE(answer.empty());
  const auto reply = parse_probe_reply(ours(), answer.data(), answer.size());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->answer, path::ProbeAnswer::Destination);
  EXPECT_EQ(reply->responder, ip("192.168.102.12"));
  EXPECT_EQ(reply->ttl, 4);
  EXPECT_FALSE(answer_probe(ours(), sent.data(), sent.size(), answer.data())) << "not to us";
}

path::ProbeReply reply_to(const path::PathTracer::Probe& probe, const std::vector<path::TracedFlow>& flows,
                          std::uint32_t responder, path::ProbeAnswer answer = path::ProbeAnswer::TimeExceeded) {
  path::ProbeReply reply;
  reply.answer = answer;
  reply.responder = responder;
  reply.dst_address = flows[probe.flow].dst_address;
  reply.src_port = flows[probe.flow].src_port;
  reply.ttl = probe.ttl;
  return reply;
}

TEST(PathTracer, FindsEachFlowsHopsAndStopsAtItsDestination) {
  const std::vector<path::TracedFlow> flows{{ip("192.168.102.12"), 49152}, {ip("192.168.102.12"), 49153}};
  path::PathTracer tracer(flows, 1000);  // one probe per millisecond
  // Flow 0 crosses spine 1, flow 1 spine 2; routers answer every probe but flow 1's at TTL 2 half
  // the time (loss on the way to spine 2).
  const auto hop_of = [&](std::size_t flow, std::uint8_t ttl) -> std::uint32_t {
    if (ttl == 1) return ip("192.168.101.1");
    if (ttl == 2) return flow == 0 ? ip("172.16.1.1") : ip("172.16.1.3");
    if (ttl == 3) return ip("172.16.2.0");
    return flows[flow].dst_address;
  };
  std::int64_t now = 1'000'000'000;
  std::size_t lost = 0;
  for (int i = 0; i < 4000; ++i, now += 1'000'000) {
    const auto probe = tracer.next_probe(now);
    ASSERT_TRUE(probe) << "one is due every millisecond";
    if (probe->flow == 1 && probe->ttl == 2 && ++lost % 2 == 0) continue;
    const std::uint32_t responder = hop_of(probe->flow, probe->ttl);
    tracer.on_reply(reply_to(*probe, flows, responder,
                             responder == flows[probe->flow].dst_address ? path::ProbeAnswer::Destination
                                                                         : path::ProbeAnswer::TimeExceeded));
  }
  for (std::size_t flow = 0; flow < 2; ++flow) {
    const auto hops = tracer.hops(flow);
    ASSERT_EQ(hops.size(), 4u) << "three routers, then the destination";
    for (std::uint8_t ttl = 1; ttl <= 4; ++ttl) {
      EXPECT_EQ(hops[ttl - 1].ttl, ttl);
      EXPECT_EQ(hops[ttl - 1].address, hop_of(flow, ttl));
      EXPECT_GT(hops[ttl - 1].probes, 400u);
    }
    EXPECT_TRUE(hops[3].destination);
    EXPECT_FALSE(hops[2].destination);
  }
  const auto flow1 = tracer.hops(1);
  EXPECT_NEAR(static_cast<double>(flow1[1].answers) / static_cast<double>(flow1[1].probes), 0.5, 0.01);
  EXPECT_EQ(flow1[0].answers, flow1[0].probes);
}

TEST(PathTracer, PacesProbesAndSkipsWhatAStallMissed) {
  path::PathTracer tracer({{ip("192.168.102.12"), 49152}}, 100);  // every 10 ms
  EXPECT_TRUE(tracer.next_probe(0 + 1));
  EXPECT_FALSE(tracer.next_probe(5'000'000));
  EXPECT_TRUE(tracer.next_probe(10'000'001));
  // A second's stall: a short burst to catch up, not the hundred missed.
  int sent = 0;
  while (tracer.next_probe(1'010'000'001)) ++sent;
  EXPECT_EQ(sent, 16);
  EXPECT_FALSE(tracer.next_probe(1'010'000'002));
  EXPECT_TRUE(tracer.next_probe(1'020'000'001)) << "and on at the rate from there";
  EXPECT_FALSE(path::PathTracer({}, 100).enabled());
  EXPECT_FALSE(path::PathTracer({{ip("192.168.102.12"), 1}}, 0).enabled());
}

TEST(PathTracer, APathThatChangesKeepsBothResponders) {
  const std::vector<path::TracedFlow> flows{{ip("192.168.102.12"), 49152}};
  path::PathTracer tracer(flows, 1000);
  std::int64_t now = 1;
  for (int i = 0; i < 300; ++i, now += 1'000'000) {
    const auto probe = tracer.next_probe(now);
    ASSERT_TRUE(probe);
    if (probe->ttl != 2) continue;
    tracer.on_reply(reply_to(*probe, flows, i < 200 ? ip("172.16.1.1") : ip("172.16.1.3")));
  }
  const auto hops = tracer.hops(0);
  ASSERT_GE(hops.size(), 2u);
  EXPECT_EQ(hops[1].address, ip("172.16.1.1"));
  EXPECT_EQ(hops[1].other_address, ip("172.16.1.3"));
  EXPECT_GT(hops[1].other_answers, 0u);
  EXPECT_EQ(hops[0].address, 0u) << "nobody answered TTL 1: unknown, not guessed";
  EXPECT_EQ(hops.size(), path::kMaxProbeTtl) << "no destination answered: every TTL was tried";
}

TEST(PathTracer, RepliesForOtherFlowsOrTtlsAreIgnored) {
  const std::vector<path::TracedFlow> flows{{ip("192.168.102.12"), 49152}};
  path::PathTracer tracer(flows, 1000);
  path::ProbeReply stranger;
  stranger.dst_address = ip("192.168.102.13");
  stranger.src_port = 49152;
  stranger.ttl = 1;
  stranger.responder = ip("10.0.0.1");
  tracer.on_reply(stranger);
  stranger.dst_address = flows[0].dst_address;
  stranger.ttl = path::kMaxProbeTtl + 1;
  tracer.on_reply(stranger);
  for (const auto& hop : tracer.hops(0)) EXPECT_EQ(hop.answers + hop.other_answers, 0u);
}

}  // namespace
}  // namespace tusk::dpdk
