#include "controller/profile/profile.hpp"

#include <algorithm>

namespace tusk {

SeriesRetention series_retention_of(const Profile& profile) {
  SeriesRetention retention = profile.series;
  for (const auto& test : profile.tests) {
    if (test.window) retention.full = std::max(retention.full, *test.window * 2 + retention.margin);
  }
  return retention;
}

std::string_view to_string(CablingMode mode) {
  switch (mode) {
    case CablingMode::Off:
      return "off";
    case CablingMode::Check:
      return "check";
    case CablingMode::Enforce:
      return "enforce";
  }
  return "?";
}

std::string_view to_string(Topology topology) {
  switch (topology) {
    case Topology::Loopback:
      return "loopback";
    case Topology::Pairs:
      return "pairs";
    case Topology::Ring:
      return "ring";
    case Topology::Mesh:
      return "mesh";
    case Topology::Pipeline:
      return "pipeline";
    case Topology::Incast:
      return "incast";
    case Topology::Permutation:
      return "permutation";
    case Topology::Congestion:
      return "congestion";
    case Topology::Shift:
      return "shift";
  }
  return "unknown";
}

std::string_view to_string(MethodKind kind) {
  switch (kind) {
    case MethodKind::Throughput:
      return "throughput";
    case MethodKind::FrameLossRate:
      return "frame_loss_rate";
    case MethodKind::Sweep:
      return "sweep";
    case MethodKind::Incast:
      return "incast";
    case MethodKind::CongestionControl:
      return "congestion_control";
    case MethodKind::EcmpBalance:
      return "ecmp_balance";
    case MethodKind::LinkFailure:
      return "link_failure";
    case MethodKind::BurstAbsorption:
      return "burst_absorption";
    case MethodKind::Shift:
      return "shift";
  }
  return "unknown";
}

std::string_view to_string(ShiftSpec::Scope scope) {
  return scope == ShiftSpec::Scope::Rack ? "rack" : "cross";
}

}  // namespace tusk
