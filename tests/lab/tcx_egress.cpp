// A lab tool: attaches a BPF object's "tc" program at a device's tcx egress hook in a network
// namespace, and pins the link so that it stays attached after this process exits (removing the
// pin detaches it). fabric-lab.sh's `impair` uses it in place of a clsact qdisc: since Linux 6.6 a
// clsact qdisc also creates the device's tcx ingress entry, and with one there the kernel hands a
// received frame that only a packet socket takes (the LLDP frames lldpd reads) to that socket
// early, then finds no protocol handler and counts the frame in rx_dropped: one "discard" a
// second on the impaired sender's own port, in the direction the test did not impair.
//   tusk-lab-tcx NETNS DEVICE OBJECT PIN
// Exits 3 where the kernel has no tcx (before 6.6, by its release; clsact has no such effect
// there). On 6.6 or later a failed attach is an error, never a quiet fall back to clsact.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

// enum bpf_attach_type's BPF_TCX_EGRESS (Linux 6.6), which older UAPI headers lack.
constexpr int kTcxEgress = 47;

// Linux 6.6 or later, by the running kernel's release ("6.1.0-28-amd64", "6.18.1").
bool kernel_has_tcx() {
  utsname names{};
  if (::uname(&names) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(names.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 6);
}

int fail(const std::string& what) {
  std::fprintf(stderr, "tusk-lab-tcx: %s: %s\n", what.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: tusk-lab-tcx NETNS DEVICE OBJECT PIN\n");
    return 2;
  }
  const std::string netns = argv[1], device = argv[2], object_path = argv[3], pin = argv[4];
  if (!kernel_has_tcx()) {
    std::fprintf(stderr, "tusk-lab-tcx: this kernel has no tcx hook (Linux 6.6 or later)\n");
    return 3;
  }
  const int netns_fd = ::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
  if (netns_fd < 0) return fail("network namespace " + netns);
  // The net namespace alone: the pin's bpffs is in this process's mounts, as the caller's.
  if (::setns(netns_fd, CLONE_NEWNET) != 0) return fail("entering " + netns);
  ::close(netns_fd);
  const unsigned ifindex = if_nametoindex(device.c_str());
  if (ifindex == 0) return fail("device " + device + " in " + netns);

  libbpf_set_print([](libbpf_print_level level, const char* format, va_list args) {
    return level == LIBBPF_WARN ? std::vfprintf(stderr, format, args) : 0;
  });
  bpf_object* object = bpf_object__open_file(object_path.c_str(), nullptr);
  if (libbpf_get_error(object) != 0) return fail("opening " + object_path);
  if (bpf_object__load(object) != 0) return fail("loading " + object_path);
  bpf_program* program = nullptr;
  bpf_program* candidate = nullptr;
  bpf_object__for_each_program(candidate, object) {
    if (std::strcmp(bpf_program__section_name(candidate), "tc") == 0) program = candidate;
  }
  if (program == nullptr) {
    std::fprintf(stderr, "tusk-lab-tcx: %s has no \"tc\" program\n", object_path.c_str());
    return 1;
  }
  const int link_fd = bpf_link_create(bpf_program__fd(program), static_cast<int>(ifindex),
                                      static_cast<bpf_attach_type>(kTcxEgress), nullptr);
  if (link_fd < 0) return fail("attaching at " + device + "'s tcx egress");
  if (bpf_obj_pin(link_fd, pin.c_str()) != 0) return fail("pinning the link at " + pin);
  bpf_object__close(object);  // the pinned link holds the program, and the program its map
  return 0;
}
