// The process's one ZeroMQ context. inproc:// endpoints only connect sockets of the same context,
// so every actor thread of a process takes its sockets from here.
#pragma once

#include <zmq.hpp>

namespace zinfer::runtime {

zmq::context_t& zmq_context();

}  // namespace zinfer::runtime
