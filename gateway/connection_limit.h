// The HTTP server's bounds on connections: the process's descriptor limit (raised to its hard
// limit at start), the default cap on open connections below it, and the back-off of an acceptor
// that ran out of descriptors.
#pragma once

#include <chrono>
#include <cstdint>

namespace zinfer::gateway {

// Raises RLIMIT_NOFILE's soft limit to its hard limit (as far as the kernel allows) and returns
// the soft limit now in force.
int64_t raise_descriptor_limit();

// [server] max_connections = 0: the descriptor limit less headroom for everything else the
// process opens (ZeroMQ sockets, model files, shm rings, the connections being refused): a tenth
// of it, at least 64. At least 1.
int64_t default_max_connections(int64_t descriptor_limit);

// How long an acceptor waits before accepting again after the `failures`-th accept in a row that
// failed for lack of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): 10 ms, doubling, at
// most 1 s. Accepting again at once would find the same pending connection and fail the same way,
// spinning a core (the connection waits in the listen queue meanwhile).
std::chrono::milliseconds accept_backoff(int failures);

}  // namespace zinfer::gateway
