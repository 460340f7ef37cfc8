// The lab's reordering switch, for kernels without netem (this one has no sch_netem, fq or etf, so
// nothing in the kernel can hold a frame back). It joins two interfaces with packet sockets and
// forwards every frame both ways; on the way from FROM to TO it holds a fraction of the frames back
// until DEPTH later frames have passed (or the link has been quiet for 20 ms), so each held frame
// arrives DEPTH places late: reordered, not lost. Real frames, really out of order on the wire.
//
//   tusk-lab-relay FROM TO PERCENT DEPTH      runs until SIGTERM or SIGINT; prints its counts then
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

int open_port(const char* name) {
  const int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd < 0) throw std::runtime_error(std::string("socket(AF_PACKET): ") + std::strerror(errno));
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = static_cast<int>(if_nametoindex(name));
  if (address.sll_ifindex == 0) throw std::runtime_error(std::string("no interface ") + name);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error(std::string("bind to ") + name + ": " + std::strerror(errno));
  }
  // What we send on this port must not come back to us as if it had arrived on it.
  const int one = 1;
  if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0) {
    throw std::runtime_error(std::string("PACKET_IGNORE_OUTGOING on ") + name + ": " + std::strerror(errno));
  }
  const int buffer = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
  return fd;
}

unsigned socket_drops(int fd) {
  tpacket_stats stats{};
  socklen_t length = sizeof stats;
  return getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &stats, &length) == 0 ? stats.tp_drops : 0;
}

void send_frame(int fd, const std::vector<unsigned char>& frame, const char* port) {
  while (send(fd, frame.data(), frame.size(), 0) < 0) {
    if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
      throw std::runtime_error(std::string("send on ") + port + ": " + std::strerror(errno));
    }
  }
}

struct Held {
  std::vector<unsigned char> frame;
  unsigned long long release_after;  // forwarded count at which it goes out
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s FROM TO PERCENT DEPTH\n", argv[0]);
    return 2;
  }
  try {
    const char* from_name = argv[1];
    const char* to_name = argv[2];
    const double percent = std::atof(argv[3]);
    const unsigned long long depth = std::strtoull(argv[4], nullptr, 10);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    const int from = open_port(from_name);
    const int to = open_port(to_name);
    std::mt19937_64 random(std::random_device{}());
    std::bernoulli_distribution hold(percent / 100.0);
    std::deque<Held> held;
    unsigned long long forwarded = 0, reordered = 0, returned = 0;
    std::vector<unsigned char> buffer(65536);
    pollfd fds[2] = {{from, POLLIN, 0}, {to, POLLIN, 0}};
    while (!g_stop) {
      const int ready = poll(fds, 2, 20);
      if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (ready == 0) {  // quiet: nothing will overtake the held frames any more
        for (const Held& h : held) send_frame(to, h.frame, to_name);
        held.clear();
        continue;
      }
      if (fds[1].revents & POLLIN) {  // the way back is a plain wire
        const ssize_t got = recv(to, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got > 0) {
          send_frame(from, std::vector<unsigned char>(buffer.begin(), buffer.begin() + got), from_name);
          ++returned;
        }
      }
      if (fds[0].revents & POLLIN) {
        const ssize_t got = recv(from, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got <= 0) continue;
        std::vector<unsigned char> frame(buffer.begin(), buffer.begin() + got);
        if (depth > 0 && hold(random)) {
          held.push_back({std::move(frame), forwarded + depth});
          ++reordered;
          continue;
        }
        send_frame(to, frame, to_name);
        ++forwarded;
        while (!held.empty() && held.front().release_after <= forwarded) {
          send_frame(to, held.front().frame, to_name);
          held.pop_front();
        }
      }
    }
    for (const Held& h : held) send_frame(to, h.frame, to_name);
    std::printf("relay %s->%s: forwarded %llu, held back %llu, returned %llu, socket drops %u+%u\n", from_name, to_name,
                forwarded, reordered, returned, socket_drops(from), socket_drops(to));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tusk-lab-relay: %s\n", e.what());
    return 1;
  }
}
