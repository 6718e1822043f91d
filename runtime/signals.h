// Graceful shutdown on SIGINT/SIGTERM: the main thread blocks both signals before it starts any
// thread (so every thread inherits the mask and none is interrupted), then waits for one.
#pragma once

#include <chrono>

namespace zinfer::runtime {

void block_shutdown_signals();
// Waits for SIGINT or SIGTERM; returns the signal number, or 0 after `timeout` (negative = forever).
int wait_for_shutdown_signal(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));

}  // namespace zinfer::runtime
