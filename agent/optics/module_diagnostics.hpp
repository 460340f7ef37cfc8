// A host port's transceiver module diagnostics (temperature, supply voltage, each lane's laser bias,
// TX and RX power, the module's own alarm and warning thresholds and raised flags), read from what
// `ethtool -m DEV` printed. Pure: the caller runs ethtool; any thread may call it.
//
// Shapes read, as ethtool's source prints them (sfpid.c, sfpdiag.c, qsfp.c, cmis.c, sff-common.c):
//  - text, ethtool 6.1 (Debian 12) and later: one "\t<name padded to 41> : <value>" line per field,
//    for SFF-8079/8472 (SFP), SFF-8636 (QSFP, QSFP+, QSFP28) and CMIS (QSFP-DD, OSFP, DSFP); lane
//    fields end in "(Channel N)" or "(Chan N)", with or without a space before it.
//  - JSON (`ethtool --json -m DEV`), which ethtool 6.1 refuses ("ethtool: bad command line
//    argument(s)") and later versions print with the module-info JSON series (2025): snake_case
//    names, lanes as arrays, thresholds either repeating the reading's name ("module_temperature")
//    or as "<name>_threshold(s)" with "high_alarm" or "high_alarm_threshold" inside.
//  - ethtool's failures: "Cannot get module EEPROM information: Operation not supported" and
//    "netlink error: Operation not supported" read as no diagnostics; other failures as unreadable.
#pragma once

#include <string_view>

#include "common/optics_reading.hpp"

namespace tusk {

// Reads `output` (ethtool's stdout and stderr together), text or JSON as it finds it. Never throws:
// what it cannot read is absent, or the reading is ModuleStatus::unreadable with a note.
ModuleReading parse_module_diagnostics(std::string_view output);

}  // namespace tusk
