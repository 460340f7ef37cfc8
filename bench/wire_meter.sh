# shellcheck shell=bash
# The bench's reading of a meter log (lines "SECONDS.NANOS BYTES": a clock and a NIC's transmit
# counter, sampled while a tool ran; rdma_write_bench meter writes them).
#
#   wire_gbps WARMUP SECONDS LOG
# prints Gbit/s over SECONDS, from WARMUP s after the traffic started (the first reading 1 MB past
# the first one: traffic, not a connection handshake's few packets), or "none" when no traffic
# started, or it stopped before the window ended: a round that carried nothing is no measurement.
wire_gbps() {
  awk -v warmup="$1" -v seconds="$2" '
    NF == 2 { ++n; t[n] = $1; b[n] = $2 }
    END {
      for (i = 1; i <= n; ++i) if (b[i] - b[1] > 1e6) { start = t[i]; break }
      if (!start) { printf "none"; exit }
      for (i = 1; i <= n; ++i) {
        if (!from && t[i] >= start + warmup) from = i
        if (from && t[i] >= t[from] + seconds) { to = i; break }
      }
      # The window must end while bytes still move: the reading after it shows more.
      if (!from || !to || to == n || b[to] <= b[from] || b[to + 1] <= b[to]) { printf "none"; exit }
      printf "%.4f", (b[to] - b[from]) * 8 / (t[to] - t[from]) / 1e9
    }' "$3"
}
