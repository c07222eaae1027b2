#include "edgeattn/edgeattn.hpp"
#include "xnnpack_backend.h"
#include "edgeattn/kernels/dispatch.h"

namespace edgeattn {

const char* status_string(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kInvalidModel: return "invalid model";
    case Status::kVersionMismatch: return "format version mismatch";
    case Status::kCrcMismatch: return "file checksum (CRC-32) mismatch";
    case Status::kUnsupported: return "unsupported";
    case Status::kArenaTooSmall: return "arena too small";
    case Status::kLengthExceedsPlan: return "length exceeds plan";
    case Status::kNotReady: return "not ready";
  }
  return "unknown status";
}

Status SetKernelPath(const char* name) {
  kernels::KernelPath path;
  if (!kernels::parse_kernel_path(name, &path) || !kernels::set_kernel_path(path)) {
    return Status::kUnsupported;
  }
  return Status::kOk;
}

const char* KernelPath() { return kernels::kernel_path_name(kernels::active_kernel_path()); }

bool XnnpackBuilt() { return xnnpack::built(); }

Status XnnpackInitialize() {
  ErrorMessage ignored;
  return xnnpack::initialize(ignored);
}

}  // namespace edgeattn
