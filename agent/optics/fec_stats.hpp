// A host port's FEC mode and counters (codewords corrected and uncorrectable, bits corrected, and the
// error histogram where the kernel has one), each as a total and per FEC lane, read from what
// `ethtool --include-statistics --show-fec DEV` printed. Pure: the caller runs ethtool; any thread
// may call it.
//
// Shapes read, as ethtool's netlink/fec.c prints them:
//  - ethtool 6.1 text: "FEC parameters for DEV:", "Supported/Configured FEC encodings: Auto RS",
//    "Active FEC encoding: RS", then "Statistics:" with "  corrected_blocks: N" and a
//    "    Lane K: N" line per lane; the ioctl fallback's "Configured FEC encodings:" too.
//  - ethtool 6.1 JSON (--json): [{"ifname", "config": [...], "active": [...], "statistics":
//    {"corrected_blocks": {"total": N, "lanes": [...]}, ...}}]; a counter given as a bare number is
//    read as its total.
//  - the error histogram (kernel 6.18's ETHTOOL_A_FEC_STAT_HIST, as the ethtool patch "netlink: fec:
//    add errors histogram statistics" of October 2025 prints it): "hist": [{"bin_low", "bin_high",
//    "total", "lanes"}] inside "statistics", and in text "  fec_symbols_err_1_to_3: N" (or
//    "fec_symbol_err_"), with lanes as " [ per_lane: a, b ]" after any counter.
//  - "netlink error: Operation not supported" (and the ioctl's "Cannot get FEC settings: Operation
//    not supported") read as no FEC statistics.
#pragma once

#include <string_view>

#include "common/optics_reading.hpp"

namespace tusk {

// Reads `output` (ethtool's stdout and stderr together), text or JSON as it finds it. Never throws:
// what it cannot read is absent, or the reading is FecStatus::unreadable with a note.
FecReading parse_fec_stats(std::string_view output);

// The mode as ethtool names it ("RS", "BaseR", "Off", "None", "Auto", "LLRS"; any case).
FecMode fec_mode_of(std::string_view name);

}  // namespace tusk
