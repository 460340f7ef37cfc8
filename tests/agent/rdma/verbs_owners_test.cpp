// The verbs owners need a device to own anything; without one these tests check what can be checked
// anywhere: the owners are move-only, empty owners destroy nothing, and a missing device is an
// EngineError that names it.
#include "agent/rdma/verbs_owners.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

namespace tusk::rdma {
namespace {

template <typename T>
constexpr bool kMoveOnly =
    !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> && std::is_nothrow_move_constructible_v<T> &&
    std::is_nothrow_move_assignable_v<T> && std::is_nothrow_destructible_v<T>;

static_assert(kMoveOnly<EventChannel>);
static_assert(kMoveOnly<CmId>);
static_assert(kMoveOnly<DeviceContext>);
static_assert(kMoveOnly<ProtectionDomain>);
static_assert(kMoveOnly<MemoryRegion>);
static_assert(kMoveOnly<CompletionChannel>);
static_assert(kMoveOnly<CompletionQueue>);
static_assert(kMoveOnly<CmEvent>);
static_assert(kMoveOnly<QueuePair>);

TEST(VerbsOwners, EmptyOwnersDestroyNothing) {
  EventChannel channel;
  CmId id;
  ProtectionDomain pd;
  MemoryRegion mr;
  CompletionChannel comp_channel;
  CompletionQueue cq;
  QueuePair qp;
  EXPECT_FALSE(qp);
  EXPECT_EQ(qp.get(), nullptr);
}

TEST(VerbsOwners, AQueuePairOnAnIdWithoutQpIsEmptyAndMovesOwnership) {
  rdma_cm_id id{};  // never handed to librdmacm: id.qp stays null, so nothing is destroyed
  QueuePair first(&id);
  EXPECT_FALSE(first);
  QueuePair second(std::move(first));
  EXPECT_EQ(first.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  QueuePair third;
  third = std::move(second);
  third.reset();
  EXPECT_FALSE(third);
}

TEST(VerbsOwners, OpeningAMissingDeviceNamesIt) {
  try {
    open_device("tusk_no_such_device");
    FAIL() << "expected EngineError";
  } catch (const EngineError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'tusk_no_such_device'"), std::string::npos) << message;
  }
}

TEST(VerbsOwners, ErrnoTextNeverSaysSuccess) {
  EXPECT_EQ(detail::errno_text(0), "unknown error (errno not set)");
  EXPECT_EQ(detail::errno_text(ENOMEM), std::string(std::strerror(ENOMEM)));
}

}  // namespace
}  // namespace tusk::rdma
