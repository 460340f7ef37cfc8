// CRC-32C (Castagnoli): the checksum of every Tusk frame header and RDMA message payload.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tusk {

// Reflected, initial value and final XOR 0xFFFFFFFF: check value 0xE3069283 for "123456789".
// Short inputs (a frame header) use the CPU's crc32 instruction inline; long ones ISA-L's
// crc32_iscsi, which folds several streams with carry-less multiplication: a single chain of crc32
// instructions waits on each one's latency and checked 9-10 GB/s, a quarter of memcpy, where ISA-L
// runs at memory speed (bench/crc_bench).
std::uint32_t crc32c(const void* data, std::size_t length);

// The same, continued from a previous result (crc32c(a+b) == crc32c_extend(crc32c(a), b)).
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t length);

// The ways crc32c can be computed, each giving the same values: for the tests that hold them equal
// and the bench that chose among them. Not for the datapath.
namespace crc32c_ways {
// A byte at a time from a 256-entry table: the portable reference.
std::uint32_t table(const void* data, std::size_t length);
// One chain of SSE4.2 crc32 instructions, 8 bytes each (the table where the CPU has none).
std::uint32_t one_chain(const void* data, std::size_t length);
// ISA-L's crc32_iscsi (its own choice of instructions for this CPU).
std::uint32_t isal(const void* data, std::size_t length);
}  // namespace crc32c_ways

}  // namespace tusk
