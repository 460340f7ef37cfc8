#pragma once

#include "tusk.pb.h"

namespace tusk {

inline constexpr const char* kTuskVersion = TUSK_VERSION;
inline constexpr proto::ProtocolVersion kProtocolVersion = proto::PROTOCOL_VERSION_CURRENT;

}  // namespace tusk
