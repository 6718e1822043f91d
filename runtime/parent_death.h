// An actor process started by `zinfer launch` ends with its launcher (docs/architecture.md, I38):
// it asks the kernel for SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG; the actor then
// stops as on any SIGTERM) and, since the launcher may have died before that request was made,
// checks that its parent is still the launcher afterwards.
#pragma once

#include <sys/types.h>

namespace zinfer::runtime {

// Throws std::runtime_error when the parent is no longer `launcher` (it already died).
void die_with_parent(pid_t launcher);

}  // namespace zinfer::runtime
