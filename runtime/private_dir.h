// The private directory of a deployment's ipc:// and shm:// files. An endpoint written with
// `{runtime_dir}` (configs/multiproc.toml: "ipc://{runtime_dir}/tokenizer.ipc") lives there
// instead of at a fixed /tmp path that another local user could take first or plant a link at.
//
// The first process that needs it (`zinfer launch`, or `zinfer serve`) creates it with mkdtemp
// (mode 0700, a name no one can guess) under $XDG_RUNTIME_DIR, else /tmp, and exports it as
// $ZINFER_RUNTIME_DIR, which the actors it starts inherit. A directory given in
// $ZINFER_RUNTIME_DIR is used only if it is a real directory (not a link), owned by this user and
// closed to others (mode 0700): anything else is an error saying which.
#pragma once

#include <string>

namespace zinfer::runtime {

inline constexpr const char* kRuntimeDirVariable = "ZINFER_RUNTIME_DIR";
inline constexpr const char* kRuntimeDirPlaceholder = "{runtime_dir}";

// The directory (created on the first call of a process that has none in its environment).
// Throws std::runtime_error naming the path and the problem.
std::string private_runtime_dir();

// `endpoint` with {runtime_dir} replaced by private_runtime_dir(); unchanged without it.
std::string expand_runtime_dir(const std::string& endpoint);

// Throws std::runtime_error unless `path` is a directory (not a symbolic link) owned by this user
// with no access for group or others.
void check_private_dir(const std::string& path);

}  // namespace zinfer::runtime
