// The keys of `topology: shift` (shifts, step, group_by, scope): reading them into the test's
// ShiftSpec, and the checks that make the test a schedule of steps (method kind Shift).
#pragma once

#include "controller/profile/profile_schema.hpp"

namespace tusk::shift_keys {

bool read_shifts(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);
bool read_step(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);
bool read_group_by(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);
bool read_scope(profile_schema::ReadContext& context, const YamlValue& value, profile_schema::TestDraft& draft);

// Before the method's checks: a shift test becomes a method of kind Shift whose trial is a step;
// a shift key on another topology, or a method beside a shift, is refused.
void check_shift(profile_schema::TestCheck& check);

// The most steps a shift schedule may run: a burn-in of 4,096 hosts shifted one by one.
inline constexpr std::uint32_t kMaxShiftSteps = 4096;

}  // namespace tusk::shift_keys
