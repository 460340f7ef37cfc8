// The DPDK engine's datapath: per queue the test uses, a TX thread that sends its flows' frames at
// the planned rate (and, on the first queue, the ARP and ping answers and the path-trace probes)
// and an RX thread that checks every frame that arrives, per stream. Neither takes a lock or makes
// a virtual call; what sample() reads they store into the worker's atomics.
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/dpdk/cpu_list.hpp"
#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/dpdk_engine_internal.hpp"
#include "agent/dpdk/frame_room.hpp"
#include "agent/dpdk/neighbour_resolver.hpp"
#include "agent/dpdk/path_probe.hpp"
#include "agent/dpdk/stream_tracker.hpp"
#include "agent/lldp/lldp_frame.hpp"
#include "agent/payload/prbs.hpp"
#include "common/clock.hpp"

namespace tusk::dpdk {

namespace {

// A poll that comes later than this after the one before means the RX thread was not running (a
// busy host descheduled it): frames waited in the ring meanwhile, so that time is no link's gap.
constexpr std::int64_t kPollSlackNs = 1'000'000;

void sleep_us(unsigned us) {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

void pin_to(std::optional<int> cpu, const char* thread) {
  if (cpu && !pin_current_thread(*cpu)) {
    spdlog::warn("DPDK {} thread: cannot pin to CPU {}: {}; it runs unpinned", thread, *cpu, std::strerror(errno));
  }
}

payload::Pattern test_pattern(const proto::DpdkTest& test) {
  return *payload::pattern_from_name(test.pattern().empty() ? "prbs31" : test.pattern());
}

}  // namespace

void DpdkEngine::send_answers() {
  rte_mbuf* answers[kBurst];
  const unsigned got = answers_->pop(answers, kBurst);
  if (got == 0) return;
  const std::uint16_t sent = rte_eth_tx_burst(port_->id(), 0, answers, static_cast<std::uint16_t>(got));
  if (sent < got) rte_pktmbuf_free_bulk(answers + sent, got - sent);  // the next request gets the next answer
}

void DpdkEngine::send_probes(FrameSpec& spec) {
  // A few per call at most: the test's frames come first.
  for (int i = 0; i < 4; ++i) {
    const auto probe = tracer_->next_probe(realtime_ns());
    if (!probe) return;
    rte_mbuf* mbuf = rte_pktmbuf_alloc(port_->mempool());
    if (mbuf == nullptr) return;
    auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(mbuf, kMaxProbeFrameLength));
    const FlowTarget& flow = targets_[probe->flow]->flow;
    spec.dst = flow.mac;
    spec.ip.dst_address = flow.address;
    spec.ip.src_port = flow.src_port;
    const std::size_t length = write_probe(spec, probe->ttl, probe->sequence, frame);
    rte_pktmbuf_trim(mbuf, static_cast<std::uint16_t>(kMaxProbeFrameLength - length));
    // A probe the port refuses is lost like one dropped on the way: the tracer counts it unanswered.
    if (rte_eth_tx_burst(port_->id(), 0, &mbuf, 1) == 0) rte_pktmbuf_free(mbuf);
  }
}

std::size_t DpdkEngine::owe_skipped(const std::vector<std::size_t>& mine, std::size_t next_target,
                                    std::uint64_t skipped) {
  // The slots were the targets' in turn: each is owed its share, and the turn moves on.
  const std::uint64_t each = skipped / mine.size(), rest = skipped % mine.size();
  for (std::size_t m = 0; m < mine.size(); ++m) {
    std::atomic<std::uint64_t>& owed = targets_[mine[(next_target + m) % mine.size()]]->skipped;
    owed.store(owed.load(std::memory_order_relaxed) + each + (m < rest ? 1 : 0), std::memory_order_relaxed);
  }
  return (next_target + rest) % mine.size();
}

void DpdkEngine::tx_loop(Worker& worker) {
  // The first worker's TX queue also carries the ARP and ping answers and the path-trace probes.
  const bool first = &worker == workers_.front().get();
  if (!first && worker.targets.empty()) return;
  pin_to(worker.queues.tx_cpu, "TX");
  if (rte_thread_register() != 0) spdlog::warn("DPDK TX thread not registered with EAL: mempool caches unused");
  const auto& test = plan_.dpdk();
  FrameSpec spec = frame_spec_;
  const std::size_t header = header_length(spec);
  const payload::Pattern pattern = test_pattern(test);
  // Frames per second for the whole port (port_pps_), shared out over the targets in turn; each
  // worker sends its targets' share.
  const std::vector<std::size_t>& mine = worker.targets;
  const double worker_pps =
      targets_.empty() ? 0 : port_pps_ * static_cast<double>(mine.size()) / static_cast<double>(targets_.size());
  const double ns_per_frame = worker_pps > 0 ? 1e9 / worker_pps : 0;
  const std::uint16_t queue = worker.queues.tx_queue;

  // One sequence for the port, not one per flow: every frame's header says where its payload
  // starts, so a receiver needs no continuity, and one 16 KiB generator buffer stays in L1 where
  // one per flow did not (8 flows sent 20 % fewer 1500 B frames than 1).
  payload::PrbsGenerator generator(pattern, test.invert(), payload::default_state(pattern));
  // Arrays, not vectors: GCC 12 at -O3 warned (free-nonheap-object, falsely) on three vectors here.
  // Indexed by position in `mine`.
  const auto sequence = std::make_unique<std::uint64_t[]>(mine.size());
  const auto sent_by_target = std::make_unique<std::uint64_t[]>(mine.size());
  const auto bytes_by_target = std::make_unique<std::uint64_t[]>(mine.size());

  while (running_ && realtime_ns() < start_ns_) sleep_us(100);
  if (mine.empty()) {
    // A receiver only (an incast's sink, or idle in a re-test): it still answers ARP and ping.
    while (running_) {
      if (answers_) send_answers();
      sleep_us(std::max(context_.idle_sleep_us(), 100u));
    }
    return;
  }
  const std::int64_t begin = realtime_ns();
  worker.tx_began_ns.store(begin, std::memory_order_relaxed);
  std::uint64_t sent_total = 0;
  std::uint64_t slots_skipped = 0;  // frame slots that passed while the port took nothing
  // Trains: a whole train's frames fall due at once, at the train's slot.
  const std::uint64_t train = std::max<std::uint32_t>(test.burst_frames(), 1);
  // Behind by more than a millisecond of frames (two bursts, or a train and a burst, at least) is
  // a stall, not jitter.
  const auto max_lag = std::max<std::uint64_t>(std::max<std::uint64_t>(2 * kBurst, train + kBurst),
                                               ns_per_frame > 0 ? static_cast<std::uint64_t>(1e6 / ns_per_frame) : 0);
  std::size_t next_target = 0;
  rte_mbuf* burst[kBurst];
  std::uint16_t burst_frame_bytes[kBurst];
  while (running_) {
    if (first && answers_) send_answers();
    if (first && tracer_) send_probes(spec);
    std::uint16_t count = kBurst;
    if (ns_per_frame > 0) {
      // Paced: send what the clock allows, in bursts of at most kBurst. After a stall (the port
      // refused frames while its link was down, or this thread was descheduled) the missed slots
      // are skipped, not sent at once: a burst at line rate would overrun the receiver.
      const auto slot = static_cast<std::uint64_t>((realtime_ns() - begin) / ns_per_frame);
      const auto due = (slot / train + 1) * train - slots_skipped;
      if (due <= sent_total) {
        sleep_us(std::max(context_.idle_sleep_us(), 10u));
        continue;
      }
      if (due - sent_total > max_lag) {
        slots_skipped += due - sent_total - kBurst;
        next_target = owe_skipped(mine, next_target, due - sent_total - kBurst);
      }
      count = static_cast<std::uint16_t>(std::min<std::uint64_t>(kBurst, due - sent_total));
    }
    if (rte_pktmbuf_alloc_bulk(port_->mempool(), burst, count) != 0) {
      sleep_us(10);  // the driver has not returned sent mbufs yet
      continue;
    }
    // One timestamp per burst: the frames of a burst leave together.
    const std::int64_t now = realtime_ns();
    const std::size_t first_target = next_target;
    for (std::uint16_t i = 0; i < count; ++i) {
      const std::size_t m = next_target;
      next_target = (next_target + 1) % mine.size();
      const std::size_t t = mine[m];
      const FrameSize& size = tx_sizes_[t].next();
      // prepare() checked that the largest size fits an mbuf, so the append cannot fail.
      auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(burst[i], size.frame));
      const FlowTarget& flow = targets_[t]->flow;
      spec.dst = flow.mac;
      spec.ip.dst_address = flow.address;
      spec.ip.src_port = flow.src_port;
      spec.ip.dscp = flow.dscp;
      TuskHeader tusk;
      tusk.flags = test.invert() ? kFlagPayloadInverted : 0;
      tusk.stream_id = flow.stream_id;
      tusk.seq = sequence[m]++;
      tusk.tx_timestamp_ns = static_cast<std::uint64_t>(now);
      tusk.prbs_state = generator.state();
      tusk.payload_length = size.payload;
      write_headers(spec, tusk, frame);
      generator.fill(frame + header, size.payload);
      burst_frame_bytes[i] = size.frame;
    }
    std::uint16_t done = 0;
    while (done < count && running_) {
      done += rte_eth_tx_burst(port_->id(), queue, burst + done, static_cast<std::uint16_t>(count - done));
      if (done < count) sleep_us(context_.idle_sleep_us());
    }
    if (done < count) rte_pktmbuf_free_bulk(burst + done, count - done);
    // Count what the driver took, per target, and publish once per burst, not once per frame.
    for (std::uint16_t i = 0; i < done; ++i) {
      const std::size_t m = (first_target + i) % mine.size();
      ++sent_by_target[m];
      bytes_by_target[m] += burst_frame_bytes[i];
    }
    for (std::size_t m = 0; m < mine.size(); ++m) {
      targets_[mine[m]]->frames.store(sent_by_target[m], std::memory_order_relaxed);
      targets_[mine[m]]->bytes.store(bytes_by_target[m], std::memory_order_relaxed);
    }
    sent_total += done;
  }
}

// One RX thread: its streams, what it has read of each, and the steps of each frame it polls.
// Its trackers, histograms and per-stream state are this thread's alone; the counts sample()
// reads are kept here and stored (not read-modify-written) into the worker's atomics.
class RxThread {
 public:
  RxThread(DpdkEngine& engine, DpdkEngine::Worker& worker)
      : engine_(engine),
        worker_(worker),
        pattern_(test_pattern(engine.plan_.dpdk())),
        match_(match_for(engine.frame_spec_)),
        by_address_(engine.ipv4()),
        linear_(kLargestMaxFrame + kVlanTagLength) {
    index_of_stream_.reserve(kMaxRxStreams);
  }

  // Polls the worker's queues until the engine says rx_done_, then closes the gaps still open.
  void run();

 private:
  struct StreamState {
    StreamTracker tracker;
    LatencyHistogram latency;
    std::int64_t last_arrival_ns = 0;
    std::int64_t unpolled_at_last_arrival_ns = 0;
    std::uint64_t last_tx_ns = 0, gap_lost = 0;
    std::int64_t clock_correction_ns = 0;  // the sender's clock minus ours (peer_names)
    std::uint64_t bytes = 0, bits_compared = 0, negative_latencies = 0, vlan_tagged = 0, vlan_mismatches = 0,
                  pcp_changes = 0, ce_marked = 0, dscp_rewrites = 0;
    std::uint64_t bad_headers = 0;  // its frames that arrived with their Tusk header damaged
    bool latency_changed = false;
    bool vlan_reported = false;
    bool rewrite_reported = false;
  };

  inline void on_frame(const rte_mbuf* mbuf, std::int64_t now);
  // Someone else's frame: not test traffic, not counted; a reply to one of our path-trace probes is
  // booked; ARP, a ping or a probe for our address is answered (the TX thread sends it: it owns
  // the TX queue).
  inline void on_foreign_frame(const rte_mbuf* mbuf, const std::uint8_t* data, std::uint32_t length);
  // A test frame whose Tusk header was hit on the way: a damaged frame of its stream when the
  // stream can still be told (its flow's addresses and ports, a stream id with a sequence number
  // that stream is sending now, or its sender's only stream), else of the port; never lost.
  inline void on_damaged_frame(const std::uint8_t* data, std::uint32_t length, const ParsedFrame& parsed);
  // The stream a test frame belongs to, added on its first frame; none when the worker is full.
  inline std::optional<std::size_t> stream_of(const std::uint8_t* data, const ParsedFrame& parsed);
  inline void on_test_frame(const rte_mbuf* mbuf, std::uint32_t length, const ParsedFrame& parsed, std::size_t index,
                            std::int64_t now);
  // The VLAN tag and the TOS byte as they arrived, against what the sender sent.
  inline void check_vlan(StreamState& rx, const RxStreamCounters& stream, const ParsedFrame& parsed,
                         const ArrivedTag& tag);
  inline void check_class(StreamState& rx, const RxStreamCounters& stream, const ParsedFrame& parsed);
  // A silence longer than the gap threshold that lost frames is a traffic gap (counted, with the
  // frames lost in it); one in which the sender sent nothing is its host pausing.
  inline void judge_gap(StreamState& rx, RxStreamCounters& counters, const ParsedFrame& parsed, std::int64_t silent_ns,
                        std::int64_t sent_apart_ns, std::uint64_t lost_in_gap);
  static inline void store_counts(const StreamState& rx, const StreamTracker::Counts& counts,
                                  RxStreamCounters& counters);
  void publish_latency();
  // A stream silent since well before the test's end never resumed: a gap that did not close.
  void close_open_gaps();

  DpdkEngine& engine_;
  DpdkEngine::Worker& worker_;
  const payload::Pattern pattern_;
  const FrameMatch match_;
  const bool by_address_;
  std::vector<std::unique_ptr<StreamState>> state_;
  std::unordered_map<std::uint64_t, std::size_t> index_of_stream_;  // stream_key -> rx_streams index
  // For a frame whose Tusk header was damaged: its flow's (sender and UDP source port) stream, and
  // a sender's stream while it has only one (kSeveralStreams after).
  static constexpr std::size_t kSeveralStreams = std::numeric_limits<std::size_t>::max();
  std::unordered_map<std::uint64_t, std::size_t> index_of_flow_, index_of_sender_;
  std::vector<std::uint8_t> linear_;                 // a chained frame, made contiguous
  std::int64_t last_poll_ns_ = 0, unpolled_ns_ = 0;  // time this thread was not polling, summed
};

void RxThread::run() {
  const std::vector<std::uint16_t>& queues = worker_.queues.rx_queues;
  std::size_t next_queue = 0, empty_polls = 0;
  std::int64_t last_publish_ns = realtime_ns();
  rte_mbuf* burst[kBurst];
  while (!engine_.rx_done_) {
    // The worker's queues in turn; it sleeps (labs) only when a whole round found nothing.
    const std::uint16_t queue = queues[next_queue];
    next_queue = next_queue + 1 == queues.size() ? 0 : next_queue + 1;
    const std::uint16_t got = rte_eth_rx_burst(engine_.port_->id(), queue, burst, kBurst);
    const std::int64_t now = realtime_ns();
    if (last_poll_ns_ != 0 && now - last_poll_ns_ > kPollSlackNs) unpolled_ns_ += now - last_poll_ns_ - kPollSlackNs;
    last_poll_ns_ = now;
    for (std::uint16_t i = 0; i < got; ++i) {
      on_frame(burst[i], now);
      rte_pktmbuf_free(burst[i]);
    }
    if (now - last_publish_ns >= DpdkEngine::kLatencyPublishNs) {
      publish_latency();
      last_publish_ns = now;
    }
    empty_polls = got == 0 ? empty_polls + 1 : 0;
    if (empty_polls >= queues.size()) {
      sleep_us(engine_.context_.idle_sleep_us());
      empty_polls = 0;
    }
  }
  publish_latency();  // stop() joins this thread before the final sample: that one is exact
  close_open_gaps();
}

void RxThread::on_frame(const rte_mbuf* mbuf, std::int64_t now) {
  // A driver that scatters a long frame over several mbufs hands a chain: it is read as one run of
  // bytes (copied only then), so headers and PRBS are checked across segments.
  const std::uint32_t length = rte_pktmbuf_pkt_len(mbuf);
  if (mbuf->nb_segs > 1 && length > linear_.size()) {
    engine_.bad_headers_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto* data = static_cast<const std::uint8_t*>(rte_pktmbuf_read(mbuf, 0, length, linear_.data()));
  ParsedFrame parsed;
  const auto status = parse_headers(data, length, parsed, match_);
  if (status == ParseStatus::NotTusk) {
    on_foreign_frame(mbuf, data, length);
  } else if (status == ParseStatus::BadHeader) {
    on_damaged_frame(data, length, parsed);
  } else if (status != ParseStatus::Ok) {
    engine_.bad_headers_.fetch_add(1, std::memory_order_relaxed);
  } else if (by_address_ && parsed.ip.dst_address != engine_.interface_.address) {
    // Another host's test frame: a switch flooded it (unknown unicast) or mirrored it here.
    // Counting it would make a stream of a flow this host was never sent.
    engine_.misaddressed_frames_.fetch_add(1, std::memory_order_relaxed);
  } else if (const auto index = stream_of(data, parsed)) {
    on_test_frame(mbuf, length, parsed, *index, now);
  }
}

void RxThread::on_foreign_frame(const rte_mbuf* mbuf, const std::uint8_t* data, std::uint32_t length) {
  if (lldp::is_lldp_frame(data, length)) {  // every 30 s or so: what the port is cabled to, kept fresh
    hear_lldp(engine_.context_.listener().heard(), *engine_.port_, data, length);
    return;
  }
  std::optional<path::ProbeReply> reply;
  if (engine_.tracer_) reply = parse_probe_reply(engine_.interface_, data, length);
  if (reply) {
    engine_.tracer_->on_reply(*reply);
  } else if (engine_.answers_) {
    if (rte_mbuf* answer = answer_for_us(*engine_.port_, engine_.interface_, mbuf);
        answer && !engine_.answers_->push(answer)) {
      rte_pktmbuf_free(answer);
    }
  }
}

void RxThread::on_damaged_frame(const std::uint8_t* data, std::uint32_t length, const ParsedFrame& parsed) {
  const auto header = damaged_header(data, length, parsed);
  std::optional<std::size_t> index;
  if (header && (!by_address_ || parsed.addresses_read)) {
    MacAddress source;
    std::copy(data + 6, data + 12, source.begin());
    const std::uint32_t address = by_address_ ? parsed.ip.src_address : 0;
    // The flow's UDP ports came through intact (their checksum passed): they name its stream.
    if (by_address_) {
      if (const auto flow = index_of_flow_.find(detail::stream_key(source, address, parsed.ip.src_port));
          flow != index_of_flow_.end())
        index = flow->second;
    }
    // The stream id, when that stream is sending near the sequence number: a hit elsewhere.
    if (!index) {
      if (const auto known = index_of_stream_.find(detail::stream_key(source, address, header->stream_id));
          known != index_of_stream_.end() && state_[known->second]->tracker.near(header->seq))
        index = known->second;
    }
    // The sender's only stream.
    if (!index) {
      if (const auto sender = index_of_sender_.find(detail::stream_key(source, address, 0));
          sender != index_of_sender_.end() && sender->second != kSeveralStreams)
        index = sender->second;
    }
  }
  if (!index) {
    engine_.bad_headers_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  StreamState& rx = *state_[*index];
  ++rx.bad_headers;
  store_counts(rx, rx.tracker.counts(), worker_.rx_streams[*index]);
}

std::optional<std::size_t> RxThread::stream_of(const std::uint8_t* data, const ParsedFrame& parsed) {
  MacAddress source;
  std::copy(data + 6, data + 12, source.begin());
  const std::uint64_t key =
      detail::stream_key(source, by_address_ ? parsed.ip.src_address : 0, parsed.header.stream_id);
  if (const auto known = index_of_stream_.find(key); known != index_of_stream_.end()) return known->second;
  const std::size_t index = worker_.rx_stream_count.load(std::memory_order_relaxed);
  if (index == kMaxRxStreams) return std::nullopt;
  RxStreamCounters& stream = worker_.rx_streams[index];
  stream.source = source;
  stream.stream_id = parsed.header.stream_id;
  stream.flow = parsed.ip;
  if (by_address_) stream.sent_dscp = flow_dscp(engine_.plan_.dpdk(), parsed.ip.src_port);
  index_of_stream_.emplace(key, index);
  if (by_address_) index_of_flow_.emplace(detail::stream_key(source, parsed.ip.src_address, parsed.ip.src_port), index);
  if (const auto [sender, added] =
          index_of_sender_.emplace(detail::stream_key(source, by_address_ ? parsed.ip.src_address : 0, 0), index);
      !added)
    sender->second = kSeveralStreams;
  state_.push_back(std::make_unique<StreamState>());  // once per new stream, not per frame
  state_.back()->clock_correction_ns = engine_.peers_.latency_correction_ns(engine_.peer_name(stream));
  worker_.rx_stream_count.store(index + 1, std::memory_order_release);
  return index;
}

void RxThread::on_test_frame(const rte_mbuf* mbuf, std::uint32_t length, const ParsedFrame& parsed, std::size_t index,
                             std::int64_t now) {
  StreamState& rx = *state_[index];
  RxStreamCounters& counters = worker_.rx_streams[index];
  const bool inverted = parsed.header.flags & kFlagPayloadInverted;
  const std::uint64_t errors =
      payload::count_bit_errors(pattern_, inverted, parsed.header.prbs_state, parsed.payload, parsed.payload_length);
  // Nothing arrived for a while, and not because this thread was descheduled: a gap, unless the
  // sender paused (the frames on both sides of it are consecutive, sent that far apart).
  const std::int64_t silent_ns =
      rx.last_arrival_ns == 0 ? 0 : (now - rx.last_arrival_ns) - (unpolled_ns_ - rx.unpolled_at_last_arrival_ns);
  const auto sent_apart_ns = static_cast<std::int64_t>(parsed.header.tx_timestamp_ns - rx.last_tx_ns);
  rx.last_arrival_ns = now;
  rx.unpolled_at_last_arrival_ns = unpolled_ns_;
  rx.last_tx_ns = parsed.header.tx_timestamp_ns;
  const bool gap = silent_ns > engine_.gap_threshold_ns_;
  const std::uint64_t lost_before = gap ? rx.tracker.counts().lost : 0;  // rare: off the per-frame path

  // One-way latency from the sender's TX stamp to our RX time, less the two clocks' offset as the
  // controller estimated it before the test (its error is within half the round trip of its
  // probes, report.json starts[].clock_rtt_ns). What still comes out negative is that error
  // showing: kept as 0 ns, and counted.
  rx.negative_latencies += rx.latency.record_clamped(now - static_cast<std::int64_t>(parsed.header.tx_timestamp_ns) +
                                                     rx.clock_correction_ns);
  rx.latency_changed = true;

  // The kernel under af_packet always moves a received tag into packet metadata; DPDK's af_packet
  // PMD reads it from the ring and puts it back in the frame (setting RTE_MBUF_F_RX_VLAN) unless
  // VLAN stripping was asked for, which Port does not. Drivers that strip anyway report the tag in
  // the mbuf: either way the tag is seen.
  const bool stripped = mbuf->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED;
  check_vlan(rx, counters, parsed, arrived_tag(parsed, stripped, mbuf->vlan_tci));
  if (by_address_) check_class(rx, counters, parsed);

  rx.tracker.on_frame(parsed.header.seq, errors > 0, errors);
  const auto counts = rx.tracker.counts();
  if (gap) {
    judge_gap(rx, counters, parsed, silent_ns, sent_apart_ns,
              counts.lost > lost_before ? counts.lost - lost_before : 0);
  }
  rx.bytes += length + (stripped ? kVlanTagLength : 0);  // as on the wire
  rx.bits_compared += std::uint64_t{parsed.payload_length} * 8;
  store_counts(rx, counts, counters);
}

void RxThread::check_vlan(StreamState& rx, const RxStreamCounters& stream, const ParsedFrame& parsed,
                          const ArrivedTag& tag) {
  rx.vlan_tagged += tag.tagged;
  const FrameSpec& spec = engine_.frame_spec_;
  const TagCheck tag_check = check_tag(spec, tag);
  if (tag_check == TagCheck::VlanMismatch) {
    ++rx.vlan_mismatches;
    if (!rx.vlan_reported && engine_.events_) {
      rx.vlan_reported = true;
      engine_.events_(
          proto::AgentEvent::NOTICE,
          fmt::format("{} stream {} arrives {}, expected {}", engine_.peer_name(stream), parsed.header.stream_id,
                      tag.tagged ? fmt::format("on VLAN {}", tag.vlan) : std::string("untagged"),
                      spec.tagged ? fmt::format("VLAN {}", spec.vlan) : std::string("untagged")),
          engine_.rx_stream_id(stream));
    }
  } else if (tag_check == TagCheck::PcpChanged) {
    ++rx.pcp_changes;
  }
}

void RxThread::check_class(StreamState& rx, const RxStreamCounters& stream, const ParsedFrame& parsed) {
  // What the switches did to the TOS byte: a congestion mark, or another traffic class.
  rx.ce_marked += parsed.ip.ecn == kEcnCe;
  const auto& sent_dscp = stream.sent_dscp;
  if (!sent_dscp || parsed.ip.dscp == *sent_dscp) return;
  ++rx.dscp_rewrites;
  if (!rx.rewrite_reported && engine_.events_) {
    rx.rewrite_reported = true;
    engine_.events_(proto::AgentEvent::NOTICE,
                    fmt::format("{} stream {} arrives with DSCP {}, sent with {}: a switch rewrote its class",
                                engine_.peer_name(stream), parsed.header.stream_id, parsed.ip.dscp, *sent_dscp),
                    engine_.rx_stream_id(stream));
  }
}

void RxThread::judge_gap(StreamState& rx, RxStreamCounters& counters, const ParsedFrame& parsed, std::int64_t silent_ns,
                         std::int64_t sent_apart_ns, std::uint64_t lost_in_gap) {
  if (lost_in_gap == 0 && sent_apart_ns > engine_.gap_threshold_ns_) {
    // The sender sent nothing meanwhile: its host paused, the link did not fail.
    if (engine_.events_) {
      engine_.events_(proto::AgentEvent::NOTICE,
                      fmt::format("{} stream {}: the sender sent nothing for {} ms (its host paused; no frame lost)",
                                  engine_.peer_name(counters), parsed.header.stream_id, sent_apart_ns / 1'000'000),
                      engine_.rx_stream_id(counters));
    }
    return;
  }
  rx.gap_lost += lost_in_gap;
  const auto gap_ms = static_cast<std::uint64_t>(silent_ns / 1'000'000);
  if (gap_ms > counters.longest_gap_ms.load(std::memory_order_relaxed)) {
    counters.longest_gap_ms.store(gap_ms, std::memory_order_relaxed);
  }
  counters.traffic_gaps.fetch_add(1, std::memory_order_relaxed);
  counters.gap_lost.store(rx.gap_lost, std::memory_order_relaxed);
  if (engine_.events_) {
    engine_.events_(
        proto::AgentEvent::LINK_DOWN,
        fmt::format("traffic gap on {} stream {}: nothing for {} ms, resumed ({} frames lost in it)",
                    engine_.peer_name(counters), parsed.header.stream_id, silent_ns / 1'000'000, lost_in_gap),
        engine_.rx_stream_id(counters));
  }
}

void RxThread::store_counts(const StreamState& rx, const StreamTracker::Counts& counts, RxStreamCounters& counters) {
  // A frame whose header was damaged arrived: received and errored, though its sequence number,
  // unreadable, leaves a hole the tracker counts as lost until the frame is taken off it.
  counters.frames.store(counts.received + rx.bad_headers, std::memory_order_relaxed);
  counters.bytes.store(rx.bytes, std::memory_order_relaxed);
  counters.bits_compared.store(rx.bits_compared, std::memory_order_relaxed);
  counters.bit_errors.store(counts.bit_errors, std::memory_order_relaxed);
  counters.errored_frames.store(counts.errored_frames + rx.bad_headers, std::memory_order_relaxed);
  counters.bad_headers.store(rx.bad_headers, std::memory_order_relaxed);
  // A late frame can fill a hole counted in a gap: never report less than zero outside gaps.
  const std::uint64_t lost = counts.lost > rx.gap_lost ? counts.lost - rx.gap_lost : 0;
  counters.lost.store(lost > rx.bad_headers ? lost - rx.bad_headers : 0, std::memory_order_relaxed);
  counters.duplicates.store(counts.duplicates, std::memory_order_relaxed);
  counters.reordered.store(counts.reordered, std::memory_order_relaxed);
  counters.error_bursts.store(counts.error_bursts, std::memory_order_relaxed);
  counters.negative_latencies.store(rx.negative_latencies, std::memory_order_relaxed);
  counters.vlan_tagged.store(rx.vlan_tagged, std::memory_order_relaxed);
  counters.vlan_mismatches.store(rx.vlan_mismatches, std::memory_order_relaxed);
  counters.pcp_changes.store(rx.pcp_changes, std::memory_order_relaxed);
  counters.ce_marked.store(rx.ce_marked, std::memory_order_relaxed);
  counters.dscp_rewrites.store(rx.dscp_rewrites, std::memory_order_relaxed);
}

void RxThread::publish_latency() {
  for (std::size_t i = 0; i < state_.size(); ++i) {
    if (!state_[i]->latency_changed) continue;
    worker_.rx_streams[i].latency.publish(state_[i]->latency.summary());
    state_[i]->latency_changed = false;
  }
}

void RxThread::close_open_gaps() {
  const std::int64_t end_ns = engine_.start_ns_ + std::int64_t{engine_.plan_.duration_ms()} * 1'000'000;
  for (std::size_t i = 0; i < state_.size(); ++i) {
    const StreamState& rx = *state_[i];
    const std::int64_t until_ns = std::min({end_ns, last_poll_ns_, engine_.stop_requested_ns_.load()});
    const std::int64_t silent_ns = (until_ns - rx.last_arrival_ns) - (unpolled_ns_ - rx.unpolled_at_last_arrival_ns);
    if (silent_ns <= engine_.gap_threshold_ns_) continue;
    RxStreamCounters& stream = worker_.rx_streams[i];
    stream.open_gap.store(1, std::memory_order_relaxed);
    if (engine_.events_) {
      engine_.events_(proto::AgentEvent::LINK_DOWN,
                      fmt::format("nothing from {} stream {} in the last {} ms of the test: its traffic stopped and "
                                  "did not resume (a link that went down and stayed down, or a sender that stopped)",
                                  engine_.peer_name(stream), stream.stream_id, silent_ns / 1'000'000),
                      engine_.rx_stream_id(stream));
    }
  }
}

void DpdkEngine::rx_loop(Worker& worker) {
  pin_to(worker.queues.rx_cpu, "RX");
  if (rte_thread_register() != 0) spdlog::warn("DPDK RX thread not registered with EAL: mempool caches unused");
  RxThread(*this, worker).run();
}

}  // namespace tusk::dpdk
