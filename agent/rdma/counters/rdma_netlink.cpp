#include "agent/rdma/counters/rdma_netlink.hpp"

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "agent/engine.hpp"

namespace tusk::rdma::nl {

namespace {

using AttrTable = std::array<const nlattr*, RDMA_NLDEV_ATTR_MAX>;

nlmsghdr* put_request(std::span<std::byte> buffer, std::uint32_t seq, std::uint16_t command, std::uint16_t flags) {
  std::memset(buffer.data(), 0, kRequestBytes);
  nlmsghdr* header = mnl_nlmsg_put_header(buffer.data());
  header->nlmsg_type = static_cast<std::uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command));
  header->nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags);
  header->nlmsg_seq = seq;
  return header;
}

void put_qp_port(nlmsghdr* header, std::uint32_t device_index, std::uint32_t port) {
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_DEV_INDEX, device_index);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_PORT_INDEX, port);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
}

// The type each attribute Tusk reads must have; others (a newer kernel's) are skipped unread.
mnl_attr_data_type type_of(std::uint16_t attribute) {
  switch (attribute) {
    case RDMA_NLDEV_ATTR_DEV_INDEX:
    case RDMA_NLDEV_ATTR_PORT_INDEX:
    case RDMA_NLDEV_ATTR_STAT_COUNTER_ID:
    case RDMA_NLDEV_ATTR_RES_LQPN:
      return MNL_TYPE_U32;
    case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
      return MNL_TYPE_U64;
    case RDMA_NLDEV_ATTR_DEV_NAME:
    case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
      return MNL_TYPE_NUL_STRING;
    case RDMA_NLDEV_ATTR_STAT_COUNTER:
    case RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY:
    case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
    case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY:
    case RDMA_NLDEV_ATTR_RES_QP:
    case RDMA_NLDEV_ATTR_RES_QP_ENTRY:
      return MNL_TYPE_NESTED;
    default:
      return MNL_TYPE_UNSPEC;
  }
}

// Fills `table` with the attributes Tusk reads; MNL_CB_ERROR on one of the wrong type or size.
int collect(const nlattr* attr, void* data) {
  const auto type = static_cast<std::uint16_t>(mnl_attr_get_type(attr));
  if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0) return MNL_CB_OK;
  const mnl_attr_data_type expected = type_of(type);
  if (expected == MNL_TYPE_UNSPEC) return MNL_CB_OK;
  if (mnl_attr_validate(attr, expected) < 0) return MNL_CB_ERROR;
  (*static_cast<AttrTable*>(data))[type] = attr;
  return MNL_CB_OK;
}

// Calls `each` with every attribute nested in `nest` while it returns true (mnl_attr_for_each_nested,
// whose C casts C++ refuses).
template <typename Each>
bool for_each_nested(const nlattr* nest, Each each) {
  const auto* begin = static_cast<const char*>(mnl_attr_get_payload(nest));
  const char* end = begin + mnl_attr_get_payload_len(nest);
  for (auto* attr = reinterpret_cast<const nlattr*>(begin);
       mnl_attr_ok(attr, static_cast<int>(end - reinterpret_cast<const char*>(attr))); attr = mnl_attr_next(attr)) {
    if (!each(attr)) return false;
  }
  return true;
}

bool parse_nested(const nlattr* nest, AttrTable& table) {
  table.fill(nullptr);
  return mnl_attr_parse_nested(nest, collect, &table) == MNL_CB_OK;
}

bool read_hwcounters(const nlattr* table_attr, QpCounter& counter) {
  return for_each_nested(table_attr, [&](const nlattr* entry) {
    if (counter.values.size() >= kMaxHwCounters) return false;
    AttrTable line{};
    if (!parse_nested(entry, line)) return false;
    const nlattr* name = line[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME];
    const nlattr* value = line[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE];
    if (!name || !value) return false;
    const std::string_view text = mnl_attr_get_str(name);
    if (text.empty() || text.size() > kMaxCounterNameBytes) return false;
    for (const char c : text) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    counter.values.emplace_back(std::string(text), mnl_attr_get_u64(value));
    return true;
  });
}

bool read_qps(const nlattr* table_attr, QpCounter& counter) {
  return for_each_nested(table_attr, [&](const nlattr* entry) {
    if (counter.qpns.size() >= kMaxQpsPerCounter) return false;
    AttrTable line{};
    if (!parse_nested(entry, line) || !line[RDMA_NLDEV_ATTR_RES_LQPN]) return false;
    counter.qpns.push_back(mnl_attr_get_u32(line[RDMA_NLDEV_ATTR_RES_LQPN]));
    return true;
  });
}

}  // namespace

nlmsghdr* put_device_dump(std::span<std::byte> buffer, std::uint32_t seq) {
  return put_request(buffer, seq, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
}

nlmsghdr* put_qp_bind(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index, std::uint32_t port,
                      std::uint32_t qpn) {
  nlmsghdr* header = put_request(buffer, seq, RDMA_NLDEV_CMD_STAT_SET, 0);
  put_qp_port(header, device_index, port);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
  return header;
}

nlmsghdr* put_qp_unbind(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index, std::uint32_t port,
                        std::uint32_t counter_id, std::uint32_t qpn) {
  nlmsghdr* header = put_request(buffer, seq, RDMA_NLDEV_CMD_STAT_DEL, 0);
  put_qp_port(header, device_index, port);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_MODE, RDMA_COUNTER_MODE_MANUAL);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, counter_id);
  mnl_attr_put_u32(header, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
  return header;
}

nlmsghdr* put_qp_counters_dump(std::span<std::byte> buffer, std::uint32_t seq, std::uint32_t device_index,
                               std::uint32_t port) {
  nlmsghdr* header = put_request(buffer, seq, RDMA_NLDEV_CMD_STAT_GET, NLM_F_DUMP);
  put_qp_port(header, device_index, port);
  return header;
}

std::optional<std::uint32_t> device_index_in(const nlmsghdr& message, const std::string& device) {
  AttrTable table{};
  if (mnl_attr_parse(&message, 0, collect, &table) != MNL_CB_OK) return std::nullopt;
  const nlattr* index = table[RDMA_NLDEV_ATTR_DEV_INDEX];
  const nlattr* name = table[RDMA_NLDEV_ATTR_DEV_NAME];
  if (!index || !name || device != mnl_attr_get_str(name)) return std::nullopt;
  return mnl_attr_get_u32(index);
}

bool parse_qp_counters(const nlmsghdr& message, std::vector<QpCounter>& into) {
  AttrTable top{};
  if (mnl_attr_parse(&message, 0, collect, &top) != MNL_CB_OK) return false;
  const nlattr* counters = top[RDMA_NLDEV_ATTR_STAT_COUNTER];
  if (!counters) return true;  // a port with no counter bound
  std::vector<QpCounter> found;
  const bool whole = for_each_nested(counters, [&](const nlattr* entry) {
    AttrTable line{};
    if (!parse_nested(entry, line) || !line[RDMA_NLDEV_ATTR_STAT_COUNTER_ID]) return false;
    QpCounter counter;
    counter.counter_id = mnl_attr_get_u32(line[RDMA_NLDEV_ATTR_STAT_COUNTER_ID]);
    if (line[RDMA_NLDEV_ATTR_PORT_INDEX]) counter.port = mnl_attr_get_u32(line[RDMA_NLDEV_ATTR_PORT_INDEX]);
    if (line[RDMA_NLDEV_ATTR_RES_QP] && !read_qps(line[RDMA_NLDEV_ATTR_RES_QP], counter)) return false;
    if (line[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS] && !read_hwcounters(line[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS], counter))
      return false;
    found.push_back(std::move(counter));
    return true;
  });
  if (!whole) return false;
  into.insert(into.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  return true;
}

RdmaNetlink::RdmaNetlink() {
  socket_ = mnl_socket_open(NETLINK_RDMA);
  if (!socket_) throw EngineError(fmt::format("RDMA netlink socket: {}", std::strerror(errno)));
  if (mnl_socket_bind(socket_, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int error = errno;
    mnl_socket_close(socket_);
    throw EngineError(fmt::format("RDMA netlink socket bind: {}", std::strerror(error)));
  }
  port_id_ = mnl_socket_get_portid(socket_);
  // The sampler reads through this once a second: a kernel that never answers must not hold it.
  const timeval two_seconds{2, 0};
  ::setsockopt(mnl_socket_get_fd(socket_), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
}

RdmaNetlink::~RdmaNetlink() {
  mnl_socket_close(socket_);
}

namespace {
struct Delivery {
  const std::function<void(const nlmsghdr&)>* on_message;
};
int deliver(const nlmsghdr* message, void* data) {
  (*static_cast<Delivery*>(data)->on_message)(*message);
  return MNL_CB_OK;
}
}  // namespace

int RdmaNetlink::transact(nlmsghdr* request, const std::function<void(const nlmsghdr&)>& on_message) {
  const std::uint32_t seq = request->nlmsg_seq;
  if (mnl_socket_sendto(socket_, request, request->nlmsg_len) < 0) return errno;
  std::vector<char> buffer(MNL_SOCKET_BUFFER_SIZE);
  Delivery delivery{&on_message};
  for (;;) {
    const ssize_t got = mnl_socket_recvfrom(socket_, buffer.data(), buffer.size());
    if (got < 0) return errno;
    const int run = mnl_cb_run(buffer.data(), static_cast<std::size_t>(got), seq, port_id_, deliver, &delivery);
    if (run == MNL_CB_STOP) return 0;  // the dump's end, or the ack of a request
    if (run == MNL_CB_ERROR) return errno != 0 ? errno : EPROTO;
  }
}

}  // namespace tusk::rdma::nl
