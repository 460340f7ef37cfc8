// A lab tool: takes a network interface down for a set time and brings it up again, in one
// process, so the outage is that time and not the start-up of the commands around it (a TCG guest
// takes up to a second to start `ip`). Prints how long the interface was down, in ms.
//   tusk-lab-flap IFACE SECONDS
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace {

bool set_up(int socket_fd, const char* name, bool up) {
  ifreq request{};
  std::strncpy(request.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(socket_fd, SIOCGIFFLAGS, &request) != 0) return false;
  request.ifr_flags = static_cast<short>(up ? (request.ifr_flags | IFF_UP) : (request.ifr_flags & ~IFF_UP));
  return ioctl(socket_fd, SIOCSIFFLAGS, &request) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  if (argc != 3 || (seconds = std::atof(argv[2])) <= 0 || seconds > 3600) {
    std::fprintf(stderr, "usage: tusk-lab-flap IFACE SECONDS (0 < SECONDS <= 3600)\n");
    return 2;
  }
  const int socket_fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (socket_fd < 0) {
    std::perror("tusk-lab-flap: socket");
    return 1;
  }
  if (!set_up(socket_fd, argv[1], false)) {
    std::fprintf(stderr, "tusk-lab-flap: cannot take %s down: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  const auto down = std::chrono::steady_clock::now();
  std::this_thread::sleep_until(down + std::chrono::duration<double>(seconds));
  if (!set_up(socket_fd, argv[1], true)) {
    std::fprintf(stderr, "tusk-lab-flap: cannot bring %s up: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  const auto held = std::chrono::steady_clock::now() - down;
  std::printf("%s down %lld ms\n", argv[1],
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(held).count()));
  ::close(socket_fd);
  return 0;
}
