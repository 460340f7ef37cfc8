#include "controller/verdict/switch_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/clock.hpp"

namespace tusk {
namespace {

// A counter's growth: 32-bit counters wrap; a 64-bit one that went back was reset (the switch or
// its line card restarted), and then its growth is unknown.
std::optional<std::uint64_t> counter_growth(std::uint64_t before, std::uint64_t after, bool wide) {
  if (!wide) return (after - before) & 0xffffffffu;
  if (after < before) return std::nullopt;
  return after - before;
}

std::optional<SwitchPortCounters> port_delta(const SwitchPortCounters& before, const SwitchPortCounters& after) {
  const bool wide = before.wide && after.wide;
  SwitchPortCounters delta;
  delta.wide = wide;
  delta.oper_up = after.oper_up;
  std::uint64_t SwitchPortCounters::*const fields[] = {
      &SwitchPortCounters::in_octets,   &SwitchPortCounters::in_packets,  &SwitchPortCounters::in_errors,
      &SwitchPortCounters::in_discards, &SwitchPortCounters::out_octets,  &SwitchPortCounters::out_packets,
      &SwitchPortCounters::out_errors,  &SwitchPortCounters::out_discards};
  for (const auto field : fields) {
    const auto grew = counter_growth(before.*field, after.*field, wide);
    if (!grew) return std::nullopt;
    delta.*field = *grew;
  }
  return delta;
}

void fill_direction(CountedDirection& direction, const std::optional<SwitchPortCounters>& from,
                    const std::optional<SwitchPortCounters>& to) {
  if (from) {
    direction.sender_read = true;
    direction.sent = from->out_packets;
    direction.out_errors = from->out_errors;
    direction.out_discards = from->out_discards;
  }
  if (to) {
    direction.receiver_read = true;
    direction.received = to->in_packets;
    direction.in_errors = to->in_errors;
    direction.in_discards = to->in_discards;
  }
}

}  // namespace

std::uint64_t CountedDirection::vanished() const {
  if (!sender_read || !receiver_read) return 0;
  // Whether the receiver counts a discarded frame in its in packets too (Linux does) or not
  // (IF-MIB's definition), a frame it counted in any of the three did arrive; counting it twice
  // can only hide a vanished frame, never invent one.
  const std::uint64_t arrived = received + in_errors + in_discards;
  return sent > arrived ? sent - arrived : 0;
}

std::string SwitchCounterEvidence::text() const {
  std::vector<std::string> lossy;
  for (const auto& link : links) {
    for (const CountedDirection* d : {&link.a_to_b, &link.b_to_a}) {
      if (!d->counts_loss()) continue;
      std::vector<std::string> parts;
      if (d->in_errors) parts.push_back(fmt::format("{} in errors", d->in_errors));
      if (d->in_discards) parts.push_back(fmt::format("{} in discards", d->in_discards));
      if (d->vanished()) parts.push_back(fmt::format("{} of {} sent never counted in", d->vanished(), d->sent));
      lossy.push_back(fmt::format("{} ({})", d->key, fmt::join(parts, ", ")));
    }
  }
  std::string out = fmt::format("switch counters: {} cable{} read", links.size(), links.size() == 1 ? "" : "s");
  out += lossy.empty() ? ", no loss counted" : fmt::format(", loss counted on {}", fmt::join(lossy, "; "));
  if (!unreadable.empty()) {
    out += fmt::format("; {} switch{} could not be read", unreadable.size(), unreadable.size() == 1 ? "" : "es");
  }
  return out;
}

bool CountedDirection::counts_loss() const {
  const std::uint64_t carried = std::max(sent, received);
  return lost() >= kMinCountedLoss && static_cast<double>(lost()) >= kMinCountedShare * static_cast<double>(carried);
}

std::string CountedDirection::counts_text() const {
  return fmt::format("{} in errors, {} in discards{}", in_errors, in_discards,
                     sender_read ? fmt::format(", {} of {} sent never counted in", vanished(), sent) : std::string());
}

const CountedDirection* SwitchCounterEvidence::direction(const std::string& key) const {
  for (const auto& link : links) {
    if (link.a_to_b.key == key) return &link.a_to_b;
    if (link.b_to_a.key == key) return &link.b_to_a;
  }
  return nullptr;
}

SwitchCounterEvidence count_switch_links(const FabricTopology& topology, const std::vector<SwitchReading>& before,
                                         const std::vector<SwitchReading>& after) {
  SwitchCounterEvidence out;
  std::map<std::string, const SwitchReading*> first, last;
  for (const auto& reading : before) first.emplace(reading.device, &reading);
  for (const auto& reading : after) {
    last.emplace(reading.device, &reading);
    if (!reading.ok()) out.unreadable.push_back(reading.error);
    for (const auto& warning : reading.warnings) out.warnings.push_back(warning);
  }
  for (const auto& reading : before) {
    if (!reading.ok() && !last.contains(reading.device)) out.unreadable.push_back(reading.error);
  }
  const auto delta_at = [&](const LinkEnd& end) -> std::optional<SwitchPortCounters> {
    const auto b = first.find(end.device);
    const auto a = last.find(end.device);
    if (b == first.end() || a == last.end() || !b->second->ok() || !a->second->ok()) return std::nullopt;
    const auto port_before = b->second->ports.find(end.interface);
    const auto port_after = a->second->ports.find(end.interface);
    if (port_before == b->second->ports.end() || port_after == a->second->ports.end()) return std::nullopt;
    auto delta = port_delta(port_before->second, port_after->second);
    if (!delta) out.warnings.push_back(fmt::format("{}: a counter went back during the test (a reset?)", end.text()));
    return delta;
  };
  for (const auto& link : topology.links()) {
    LinkCounters counted;
    counted.a_end = link.a;
    counted.b_end = link.b;
    counted.cable = link.cable;
    counted.a = delta_at(link.a);
    counted.b = delta_at(link.b);
    if (!counted.a && !counted.b) continue;
    const std::string ends = fmt::format("{} <-> {}", link.a.text(), link.b.text());
    counted.name = link.cable.empty() ? ends : fmt::format("{}, cable {}", ends, link.cable);
    counted.a_to_b.key = fmt::format("{} -> {}", link.a.text(), link.b.text());
    counted.b_to_a.key = fmt::format("{} -> {}", link.b.text(), link.a.text());
    fill_direction(counted.a_to_b, counted.a, counted.b);
    fill_direction(counted.b_to_a, counted.b, counted.a);
    out.links.push_back(std::move(counted));
  }
  return out;
}

SwitchInterval count_switch_interval(const FabricTopology& topology, const std::vector<SwitchReading>& before,
                                     std::int64_t from_ns, const std::vector<SwitchReading>& after,
                                     std::int64_t to_ns) {
  SwitchInterval interval;
  interval.from_ns = from_ns;
  interval.to_ns = to_ns;
  const SwitchCounterEvidence counted = count_switch_links(topology, before, after);
  interval.unreadable = counted.unreadable.size();
  for (const auto& link : counted.links) {
    for (CountedDirection d : {link.a_to_b, link.b_to_a}) {
      // Mid-traffic, the two ends are read moments apart (and each agent serves counters it
      // cached up to seconds before), so what one end sent and the other received differ by the
      // frames in between: hundreds of "vanished" frames on a clean cable, paid back the next
      // interval. Only what the receiving port counted itself is an interval's evidence; frames
      // that vanish are counted over the whole test, between readings taken with no traffic.
      d.sender_read = false;
      if (d.counts_loss()) interval.lossy.push_back(d);
    }
  }
  std::sort(interval.lossy.begin(), interval.lossy.end(),
            [](const CountedDirection& a, const CountedDirection& b) { return a.lost() > b.lost(); });
  if (interval.lossy.size() > kMaxLossyPerInterval) {
    interval.lossy_dropped = interval.lossy.size() - kMaxLossyPerInterval;
    interval.lossy.resize(kMaxLossyPerInterval);
  }
  return interval;
}

std::string switch_intervals_text(const std::vector<SwitchInterval>& intervals) {
  if (intervals.empty()) return {};
  const SwitchInterval* first_lossy = nullptr;
  std::size_t lossy = 0;
  for (const auto& interval : intervals) {
    if (interval.lossy.empty()) continue;
    ++lossy;
    if (!first_lossy) first_lossy = &interval;
  }
  std::string text =
      fmt::format("switch counters per interval: {} interval{}", intervals.size(), intervals.size() == 1 ? "" : "s");
  if (!first_lossy) return text + ", no loss counted in any";
  return text + fmt::format(", loss counted in {}, first in the one ending {} on {}", lossy,
                            utc_iso_time(first_lossy->to_ns), first_lossy->lossy.front().key);
}

}  // namespace tusk
