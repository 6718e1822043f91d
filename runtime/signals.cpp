#include "runtime/signals.h"

#include <csignal>
#include <ctime>
#include <cerrno>
#include <pthread.h>

namespace zinfer::runtime {

namespace {
sigset_t shutdown_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void block_shutdown_signals() {
  sigset_t set = shutdown_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the server
}

int wait_for_shutdown_signal(std::chrono::milliseconds timeout) {
  sigset_t set = shutdown_set();
  for (;;) {
    int sig = 0;
    if (timeout.count() < 0) {
      if (sigwait(&set, &sig) == 0) return sig;
      continue;
    }
    timespec ts{static_cast<time_t>(timeout.count() / 1000), static_cast<long>((timeout.count() % 1000) * 1000000)};
    sig = sigtimedwait(&set, nullptr, &ts);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
  }
}

}  // namespace zinfer::runtime
