#include "runtime/parent_death.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

#include <sys/prctl.h>
#include <unistd.h>

namespace zinfer::runtime {

void die_with_parent(pid_t launcher) {
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    throw std::runtime_error(std::string("prctl(PR_SET_PDEATHSIG): ") + std::strerror(errno));
  }
  // The launcher may have died between our fork and the prctl: we were then re-parented and no
  // signal will come.
  if (::getppid() != launcher) {
    throw std::runtime_error("the launcher (pid " + std::to_string(launcher) + ") is gone; not starting");
  }
}

}  // namespace zinfer::runtime
