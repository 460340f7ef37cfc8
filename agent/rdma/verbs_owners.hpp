// One RAII owner per librdmacm / libibverbs object the RDMA engine creates, and factories that
// create them and throw EngineError saying which device, which call and which errno failed.
//
// Creation order (rdma-core's rc_pingpong, with the CM in front):
//   EventChannel → CmId → (resolve address and route: id->verbs is now the device) →
//   ProtectionDomain → MemoryRegion → CompletionChannel → CompletionQueue → QueuePair → CmEvent*
// A struct holding them declares its members in that order, so C++ destroys them in exact reverse:
// QP before CQ, CQ before its channel, MR before PD, PD before the id, the id before its channel.
// The non-CM path opens the device itself: DeviceContext first, then PD onwards.
//
// Every owner is move-only. Destructors never throw: a failed destroy is logged with errno and the
// teardown goes on. The objects themselves are not thread-safe; whoever owns the struct owns them.
#pragma once

#include <fmt/format.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "agent/engine.hpp"

namespace tusk::rdma {
namespace detail {

// errno's text; a provider that failed without setting errno must not read as "Success".
inline std::string errno_text(int error) {
  return error == 0 ? std::string("unknown error (errno not set)") : std::string(std::strerror(error));
}

// The device name a verbs object belongs to, copied out (the object is about to be destroyed).
struct DeviceName {
  char text[IBV_SYSFS_NAME_MAX] = "?";
};
inline DeviceName device_name_of(const ibv_context* context) noexcept {
  DeviceName name;
  if (context != nullptr && context->device != nullptr) {
    const std::size_t length = ::strnlen(context->device->name, sizeof(name.text) - 1);
    std::memcpy(name.text, context->device->name, length);
    name.text[length] = '\0';
  }
  return name;
}

inline void log_destroy_failure(const DeviceName& device, const char* call, int error) noexcept {
  try {
    spdlog::warn("{}: {} failed: {}", device.text, call, errno_text(error));
  } catch (...) {
    // Logging is best effort in a destructor.
  }
}

// Throws EngineError "<where>: <call> failed: <errno text>".
[[noreturn]] inline void throw_call_failed(std::string_view where, std::string_view call, int error) {
  throw EngineError(fmt::format("{}: {} failed: {}", where, call, errno_text(error)));
}

inline std::string where_of(const ibv_context* context) {
  return context != nullptr && context->device != nullptr ? std::string(context->device->name)
                                                          : std::string("RDMA device");
}

}  // namespace detail

// ---- deleters ------------------------------------------------------------------------------------
// ibv_dealloc_pd, ibv_dereg_mr, ibv_destroy_comp_channel and ibv_destroy_cq return errno's value;
// ibv_close_device, rdma_destroy_id and rdma_ack_cm_event return -1 and set errno.

struct EventChannelDeleter {
  void operator()(rdma_event_channel* channel) const noexcept { rdma_destroy_event_channel(channel); }
};

// rdma_destroy_id blocks until every event reported for the id has been acked (CmEvent does that).
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const noexcept {
    const auto device = detail::device_name_of(id->verbs);
    if (rdma_destroy_id(id) != 0) detail::log_destroy_failure(device, "rdma_destroy_id", errno);
  }
};

struct DeviceListDeleter {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};

struct DeviceContextDeleter {
  void operator()(ibv_context* context) const noexcept {
    const auto device = detail::device_name_of(context);
    if (ibv_close_device(context) != 0) detail::log_destroy_failure(device, "ibv_close_device", errno);
  }
};

// Fails with EBUSY while an MR, QP, ... still uses the PD: a sign the members are declared out of order.
struct ProtectionDomainDeleter {
  void operator()(ibv_pd* pd) const noexcept {
    const auto device = detail::device_name_of(pd->context);
    if (int rc = ibv_dealloc_pd(pd); rc != 0) detail::log_destroy_failure(device, "ibv_dealloc_pd", rc);
  }
};

struct MemoryRegionDeleter {
  void operator()(ibv_mr* mr) const noexcept {
    const auto device = detail::device_name_of(mr->context);
    if (int rc = ibv_dereg_mr(mr); rc != 0) detail::log_destroy_failure(device, "ibv_dereg_mr", rc);
  }
};

struct CompletionChannelDeleter {
  void operator()(ibv_comp_channel* channel) const noexcept {
    const auto device = detail::device_name_of(channel->context);
    if (int rc = ibv_destroy_comp_channel(channel); rc != 0) {
      detail::log_destroy_failure(device, "ibv_destroy_comp_channel", rc);
    }
  }
};

// ibv_destroy_cq waits until every event taken with ibv_get_cq_event has been acked with
// ibv_ack_cq_events: the thread that polls the channel must ack what it took before teardown.
struct CompletionQueueDeleter {
  void operator()(ibv_cq* cq) const noexcept {
    const auto device = detail::device_name_of(cq->context);
    if (int rc = ibv_destroy_cq(cq); rc != 0) detail::log_destroy_failure(device, "ibv_destroy_cq", rc);
  }
};

struct CmEventDeleter {
  void operator()(rdma_cm_event* event) const noexcept {
    const auto device = detail::device_name_of(event->id != nullptr ? event->id->verbs : nullptr);
    if (rdma_ack_cm_event(event) != 0) detail::log_destroy_failure(device, "rdma_ack_cm_event", errno);
  }
};

using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;  // from ibv_get_device_list
using EventChannel = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using CmId = std::unique_ptr<rdma_cm_id, CmIdDeleter>;
using DeviceContext = std::unique_ptr<ibv_context, DeviceContextDeleter>;
using ProtectionDomain = std::unique_ptr<ibv_pd, ProtectionDomainDeleter>;
using MemoryRegion = std::unique_ptr<ibv_mr, MemoryRegionDeleter>;
using CompletionChannel = std::unique_ptr<ibv_comp_channel, CompletionChannelDeleter>;
using CompletionQueue = std::unique_ptr<ibv_cq, CompletionQueueDeleter>;
using CmEvent = std::unique_ptr<rdma_cm_event, CmEventDeleter>;  // acked on destruction

// The QP that rdma_create_qp attached to a CM id. It is destroyed through the id (rdma_destroy_qp),
// so it borrows the id: declare the QueuePair after the CmId it was created on.
class QueuePair {
 public:
  QueuePair() = default;
  explicit QueuePair(rdma_cm_id* id) noexcept : id_(id) {}
  ~QueuePair() { reset(); }
  QueuePair(QueuePair&& other) noexcept : id_(std::exchange(other.id_, nullptr)) {}
  QueuePair& operator=(QueuePair&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, nullptr);
    }
    return *this;
  }
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  ibv_qp* get() const noexcept { return id_ != nullptr ? id_->qp : nullptr; }
  explicit operator bool() const noexcept { return get() != nullptr; }

  // rdma_destroy_qp returns nothing: there is no failure to log.
  void reset() noexcept {
    if (id_ != nullptr && id_->qp != nullptr) rdma_destroy_qp(id_);
    id_ = nullptr;
  }

 private:
  rdma_cm_id* id_ = nullptr;
};

// ---- factories -----------------------------------------------------------------------------------

inline EventChannel create_event_channel() {
  EventChannel channel(rdma_create_event_channel());
  if (!channel) detail::throw_call_failed("rdma_cm", "rdma_create_event_channel", errno);
  return channel;
}

// `port_space`: RDMA_PS_TCP for RC, RDMA_PS_UDP for UD.
inline CmId create_cm_id(rdma_event_channel* channel, void* context, rdma_port_space port_space) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel, &id, context, port_space) != 0) {
    const int error = errno;  // read before formatting the message, which may allocate
    detail::throw_call_failed("rdma_cm", fmt::format("rdma_create_id(port space {:#x})", static_cast<int>(port_space)),
                              error);
  }
  return CmId(id);
}

// Waits for the channel's next event; the returned owner acks it.
inline CmEvent get_cm_event(rdma_event_channel* channel) {
  rdma_cm_event* event = nullptr;
  if (rdma_get_cm_event(channel, &event) != 0) detail::throw_call_failed("rdma_cm", "rdma_get_cm_event", errno);
  return CmEvent(event);
}

// Opens the device called `device_name` (e.g. "mlx5_0", "rxe0"). The error lists the devices there are.
inline DeviceContext open_device(std::string_view device_name) {
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) {
    const int error = errno;
    throw EngineError(fmt::format(
        "RDMA device '{}': ibv_get_device_list failed: {}", device_name,
        error == ENOSYS ? std::string("this kernel has no RDMA support (ENOSYS)") : detail::errno_text(error)));
  }
  std::string names;
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    const std::string_view name = ibv_get_device_name(device);
    if (name == device_name) {
      DeviceContext context(ibv_open_device(device));
      if (!context) {
        const int error = errno;
        detail::throw_call_failed(fmt::format("RDMA device '{}'", device_name), "ibv_open_device", error);
      }
      return context;
    }
    names += names.empty() ? "" : ", ";
    names += name;
  }
  throw EngineError(fmt::format("RDMA device '{}' not found (devices here: {})", device_name,
                                names.empty() ? std::string("none") : names));
}

inline ProtectionDomain alloc_pd(ibv_context* context) {
  ProtectionDomain pd(ibv_alloc_pd(context));
  if (!pd) {
    const int error = errno;
    detail::throw_call_failed(detail::where_of(context), "ibv_alloc_pd", error);
  }
  return pd;
}

// `access`: IBV_ACCESS_* flags.
inline MemoryRegion register_memory(ibv_pd* pd, void* address, std::size_t length, int access) {
  MemoryRegion mr(ibv_reg_mr(pd, address, length, access));
  if (!mr) {
    const int error = errno;
    // ENOMEM here is usually RLIMIT_MEMLOCK, not a lack of memory.
    detail::throw_call_failed(detail::where_of(pd->context),
                              fmt::format("ibv_reg_mr({} bytes, access {:#x})", length, access), error);
  }
  return mr;
}

inline CompletionChannel create_comp_channel(ibv_context* context) {
  CompletionChannel channel(ibv_create_comp_channel(context));
  if (!channel) {
    const int error = errno;
    detail::throw_call_failed(detail::where_of(context), "ibv_create_comp_channel", error);
  }
  return channel;
}

// `channel` may be null for a CQ that is only polled.
inline CompletionQueue create_cq(ibv_context* context, int entries, ibv_comp_channel* channel, int comp_vector) {
  CompletionQueue cq(ibv_create_cq(context, entries, nullptr, channel, comp_vector));
  if (!cq) {
    const int error = errno;
    detail::throw_call_failed(detail::where_of(context),
                              fmt::format("ibv_create_cq({} entries, vector {})", entries, comp_vector), error);
  }
  return cq;
}

// Creates the QP on `id` (which must have a device: address resolved, or a connect request's id).
// rdma_create_qp updates `attributes` with the capabilities actually granted.
inline QueuePair create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr& attributes) {
  if (rdma_create_qp(id, pd, &attributes) != 0) {
    const int error = errno;
    detail::throw_call_failed(
        detail::where_of(id->verbs),
        fmt::format("rdma_create_qp(type {}, send {} / recv {} WRs, {} / {} SGEs, inline {})",
                    static_cast<int>(attributes.qp_type), attributes.cap.max_send_wr, attributes.cap.max_recv_wr,
                    attributes.cap.max_send_sge, attributes.cap.max_recv_sge, attributes.cap.max_inline_data),
        error);
  }
  return QueuePair(id);
}

}  // namespace tusk::rdma
