// A host port's module and FEC readings (common/optics_reading.hpp) as the agent sends them to the
// controller. What arrives is a peer's word: reading it back bounds every field again as the agent's
// ethtool parsers bound theirs, so a broken or hostile agent costs no more than a hostile ethtool.
#pragma once

#include "tusk.pb.h"

#include <cstddef>

#include "common/optics_reading.hpp"

namespace tusk {

// The most flags a reading keeps: each quantity's each limit, for the module and for each lane, once.
inline constexpr std::size_t kMaxModuleFlags = (static_cast<std::size_t>(ModuleQuantity::rx_power) + 1) *
                                               (static_cast<std::size_t>(ModuleLimit::low_warning) + 1) *
                                               (kMaxOpticsLanes + 1);

// `out` cleared and filled with the reading as it is.
void to_proto(const ModuleReading& reading, proto::ModuleDiagnostics& out);
void to_proto(const FecReading& reading, proto::FecStats& out);

// The reading a peer sent, bounded: at most kMaxOpticsLanes lanes (per counter and bin too) and
// kMaxFecHistogramBins bins, more setting lanes_dropped; texts as bounded_ascii to
// kMaxOpticsTextBytes; an enum value past its enum as unknown (spec, RX power kind), unreadable
// (status) or other (FEC mode); a non-finite number absent; a flag of no known quantity or limit,
// or of a lane outside 1..kMaxOpticsLanes, dropped (past it also setting lanes_dropped), each flag
// kept once; an identifier past one byte absent; at most kMaxFecModes configured modes.
ModuleReading module_from_proto(const proto::ModuleDiagnostics& message);
FecReading fec_from_proto(const proto::FecStats& message);

}  // namespace tusk
