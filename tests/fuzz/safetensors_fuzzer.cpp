// libFuzzer target for the safetensors reader (gpu/safetensors.h): any file must load or be
// refused with a SafetensorsError naming the problem (header length, JSON, dtype, shape, offsets
// outside the file or overlapping): never crash, hang or leak. The bytes go to an anonymous
// in-memory file, read through its /proc path as a model file is.
// Invariant 25 (docs/architecture.md): no input aborts a process.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz.safetensors", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  try {
    zinfer::gpu::SafetensorsFile file("/proc/self/fd/" + std::to_string(fd));
    size_t sum = 0;
    for (const auto& [name, t] : file.tensors()) {
      // Touch the first and the last byte of each tensor: a view must lie inside the mapping.
      if (t.nbytes > 0) sum += static_cast<size_t>(t.data[0]) + static_cast<size_t>(t.data[t.nbytes - 1]);
      sum += static_cast<size_t>(t.numel());
    }
    (void)sum;
  } catch (const zinfer::gpu::SafetensorsError&) {
  }
  ::close(fd);
  return 0;
}
