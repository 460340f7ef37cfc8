// RDMA netlink's per-QP counters, read from replies in the layout the kernel writes them
// (drivers/infiniband/core/nldev.c: fill_res_counter_entry), with mlx5's counter names as a
// ConnectX-6 reports them; and the requests, as `rdma statistic qp bind/unbind/show` sends them.
#include "agent/rdma/counters/rdma_netlink.hpp"

#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "agent/rdma/counters/qp_counters.hpp"

namespace tusk::rdma::nl {
namespace {

struct CounterFixture {
  std::uint32_t id;
  std::vector<std::uint32_t> qpns;
  std::vector<std::pair<std::string, std::uint64_t>> values;
};

// One message of a STAT_GET dump of RES_QP counters on mlx5_0 (index 3), port 1.
std::vector<std::byte> dump_reply(const std::vector<CounterFixture>& counters) {
  std::vector<std::byte> buffer(1 << 20);  // mnl_attr_put checks no bound: room for 4,097 QPs
  nlmsghdr* header = mnl_nlmsg_put_header(buffer.data());
  header->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
  header->nlmsg_flags = NLM_F_MULTI;
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  mnl_attr_put_strz(header, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  nlattr* table = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_COUNTER);
  for (const auto& counter : counters) {
    nlattr* entry = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY);
    mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
    mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter.id);
    mnl_attr_put_u8(header, RDMA_NLDEV_ATTR_RES_TYPE, 2);  // IB_QPT_RC
    mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_RES_PID, 4242);
    mnl_attr_put_strz(header, RDMA_NLDEV_ATTR_RES_KERN_NAME, "tusk-agent");
    nlattr* hw = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
    for (const auto& [name, value] : counter.values) {
      nlattr* line = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
      mnl_attr_put_strz(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name.c_str());
      mnl_attr_put_u64(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value);
      mnl_attr_nest_end(header, line);
    }
    mnl_attr_nest_end(header, hw);
    nlattr* qps = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_RES_QP);
    for (const auto qpn : counter.qpns) {
      nlattr* qp = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
      mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
      mnl_attr_nest_end(header, qp);
    }
    mnl_attr_nest_end(header, qps);
    mnl_attr_nest_end(header, entry);
  }
  mnl_attr_nest_end(header, table);
  buffer.resize(header->nlmsg_len);
  return buffer;
}

const nlmsghdr& message(const std::vector<std::byte>& bytes) {
  return *reinterpret_cast<const nlmsghdr*>(bytes.data());
}

// The q counters mlx5 keeps per bound QP (a ConnectX-6 on Linux 6.1), as a QP that went through a
// lossy link shows them.
const std::vector<std::pair<std::string, std::uint64_t>> kMlx5QpCounters = {
    {"rx_write_requests", 0},   {"rx_read_requests", 0},      {"rx_atomic_requests", 0},      {"out_of_buffer", 0},
    {"out_of_sequence", 0},     {"duplicate_request", 0},     {"rnr_nak_retry_err", 0},       {"packet_seq_err", 37},
    {"implied_nak_seq_err", 0}, {"local_ack_timeout_err", 4}, {"resp_local_length_error", 0}, {"roce_adp_retrans", 2},
    {"roce_adp_retrans_to", 1}, {"roce_slow_restart", 0},     {"rx_icrc_encapsulated", 0}};

TEST(RdmaNetlink, ADumpOfTwoBoundQpsGivesEachItsOwnCountersByName) {
  auto other = kMlx5QpCounters;
  other[7].second = 0;
  const auto reply = dump_reply({{5, {178}, kMlx5QpCounters}, {6, {179}, other}});
  std::vector<QpCounter> counters;
  ASSERT_TRUE(parse_qp_counters(message(reply), counters));
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].counter_id, 5u);
  EXPECT_EQ(counters[0].port, 1u);
  EXPECT_EQ(counters[0].qpns, std::vector<std::uint32_t>{178});
  ASSERT_EQ(counters[0].values.size(), kMlx5QpCounters.size());
  EXPECT_EQ(counters[0].values[7], (std::pair<std::string, std::uint64_t>{"packet_seq_err", 37}));
  EXPECT_EQ(counters[1].qpns, std::vector<std::uint32_t>{179});
  EXPECT_EQ(counters[1].values[7].second, 0u);
}

TEST(RdmaNetlink, AnAutoModeCounterHoldsEveryQpOfItsTypeAndAPortWithNoneIsEmpty) {
  const auto reply = dump_reply({{1, {178, 179, 180}, kMlx5QpCounters}});
  std::vector<QpCounter> counters;
  ASSERT_TRUE(parse_qp_counters(message(reply), counters));
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(counters[0].qpns.size(), 3u);

  std::vector<std::byte> empty(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* header = mnl_nlmsg_put_header(empty.data());
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  counters.clear();
  EXPECT_TRUE(parse_qp_counters(*header, counters));
  EXPECT_TRUE(counters.empty());
}

// What the kernel sends is bounded as a peer's words are: a name past 64 bytes or with bytes no
// driver uses, a value of the wrong width, or more QPs than any counter holds drops the message.
TEST(RdmaNetlink, AMalformedReplyIsRefusedWhole) {
  std::vector<QpCounter> counters;
  EXPECT_FALSE(parse_qp_counters(message(dump_reply({{1, {7}, {{std::string(65, 'a'), 1}}}})), counters));
  EXPECT_FALSE(parse_qp_counters(message(dump_reply({{1, {7}, {{"bad name\n", 1}}}})), counters));
  EXPECT_FALSE(parse_qp_counters(message(dump_reply({{1, std::vector<std::uint32_t>(kMaxQpsPerCounter + 1, 9), {}}})),
                                 counters));
  EXPECT_TRUE(counters.empty());

  // ENTRY_VALUE as a u32 where the kernel writes a u64.
  std::vector<std::byte> buffer(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* header = mnl_nlmsg_put_header(buffer.data());
  nlattr* table = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_COUNTER);
  nlattr* entry = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, 1);
  nlattr* hw = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  nlattr* line = mnl_attr_nest_start(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  mnl_attr_put_strz(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "packet_seq_err");
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 5);
  mnl_attr_nest_end(header, line);
  mnl_attr_nest_end(header, hw);
  mnl_attr_nest_end(header, entry);
  mnl_attr_nest_end(header, table);
  EXPECT_FALSE(parse_qp_counters(*header, counters));
}

TEST(RdmaNetlink, TheDeviceDumpNamesTheDevicesIndex) {
  std::vector<std::byte> buffer(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* header = mnl_nlmsg_put_header(buffer.data());
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  mnl_attr_put_strz(header, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
  EXPECT_EQ(device_index_in(*header, "mlx5_0"), 3u);
  EXPECT_FALSE(device_index_in(*header, "mlx5_1").has_value());
}

// The bind request carries what `rdma statistic qp bind link mlx5_0/1 lqpn 178` sends.
TEST(RdmaNetlink, ABindAsksForAManualCounterOfOneQp) {
  std::array<std::byte, kRequestBytes> buffer{};
  const nlmsghdr* request = put_qp_bind(buffer, 9, 3, 1, 178);
  EXPECT_EQ(request->nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_SET));
  EXPECT_EQ(request->nlmsg_seq, 9u);
  EXPECT_TRUE(request->nlmsg_flags & NLM_F_ACK);
  std::array<std::uint32_t, RDMA_NLDEV_ATTR_MAX> seen{};
  mnl_attr_parse(
      request, 0,
      [](const nlattr* attr, void* data) {
        (*static_cast<std::array<std::uint32_t, RDMA_NLDEV_ATTR_MAX>*>(data))[mnl_attr_get_type(attr)] =
            mnl_attr_get_u32(attr);
        return MNL_CB_OK;
      },
      &seen);
  EXPECT_EQ(seen[RDMA_NLDEV_ATTR_DEV_INDEX], 3u);
  EXPECT_EQ(seen[RDMA_NLDEV_ATTR_PORT_INDEX], 1u);
  EXPECT_EQ(seen[RDMA_NLDEV_ATTR_STAT_RES], static_cast<std::uint32_t>(RDMA_NLDEV_ATTR_RES_QP));
  EXPECT_EQ(seen[RDMA_NLDEV_ATTR_STAT_MODE], static_cast<std::uint32_t>(RDMA_COUNTER_MODE_MANUAL));
  EXPECT_EQ(seen[RDMA_NLDEV_ATTR_RES_LQPN], 178u);
  const nlmsghdr* dump = put_qp_counters_dump(buffer, 10, 3, 1);
  EXPECT_TRUE(dump->nlmsg_flags & NLM_F_DUMP);
}

// rxe (Linux 6.1, the VM lab's) answers a bind with ENOMEM: it has no per-counter statistics.
TEST(RdmaNetlink, ADriverThatCannotBindIsSaidToBePerPortOnly) {
  EXPECT_NE(qp_counter_refusal("rxe0", ENOMEM).find("rxe0 keeps no counters per QP"), std::string::npos);
  EXPECT_NE(qp_counter_refusal("mlx5_0", EPERM).find("needs CAP_NET_ADMIN"), std::string::npos);
}

TEST(RdmaNetlink, SoftwareDevicesAreNotBoundAndHardwareNicsAreAsked) {
  const auto rxe = software_device_refusal("rxe0", 0xFFFFFF);
  ASSERT_TRUE(rxe.has_value());
  EXPECT_NE(rxe->find("rxe0 is a software RDMA device (Soft-RoCE)"), std::string::npos);
  EXPECT_NE(rxe->find("per port only"), std::string::npos);
  const auto siw = software_device_refusal("siw0", 0x626d74);
  ASSERT_TRUE(siw.has_value());
  EXPECT_NE(siw->find("(siw)"), std::string::npos);
  // Mellanox/NVIDIA and Broadcom answer the bind themselves.
  EXPECT_FALSE(software_device_refusal("mlx5_0", 0x02c9).has_value());
  EXPECT_FALSE(software_device_refusal("bnxt_re0", 0x14e4).has_value());
}

}  // namespace
}  // namespace tusk::rdma::nl
