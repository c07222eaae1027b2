// Optional XNNPACK backend for the int8 projections (built with
// EA_WITH_XNNPACK; every function is a stub reporting kUnsupported otherwise).
//
// The runtime's own kernels do everything else (attention core, softmax,
// additive scores). XNNPACK operators, and the weights XNNPACK packs for them,
// live in the caller's arena, after the bytes the plan needs: XNNPACK's
// allocator (xnn_initialize) is pointed at a bump allocator over that tail
// while the operators are created, so Run allocates nothing from the heap.
#ifndef EDGEATTN_RUNTIME_XNNPACK_BACKEND_H_
#define EDGEATTN_RUNTIME_XNNPACK_BACKEND_H_

#include <cstddef>
#include <cstdint>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace fb {
struct Linear;
}  // namespace fb

namespace xnnpack {

// True when this build has the backend.
bool built();

// Process-wide, once, before any Model::Load you want to count as heap-free:
// XNNPACK's CPU detection (cpuinfo) allocates its tables with malloc here.
Status initialize(ErrorMessage& error);

// Creates one XNNPACK operator per eligible int8 Linear of `model` inside
// [region, region + bytes). Eligible: int8 with in_features % 16 == 0 (then
// the canonical row stride equals in_features, so XNNPACK reads the file's
// weights as they are, and no XNNPACK micro-kernel reads past an input row).
// Others, and any XNNPACK declines to create (unsupported scale), keep the
// runtime's kernels. On success *table points into the region
// and *used_bytes says how much of it the backend took.
Status build(const Model& model, uint8_t* region, size_t bytes, const void** table,
             size_t* used_bytes, int* num_ops, ErrorMessage& error);

// Runs y = linear(x) through XNNPACK if `table` holds an operator for
// `linear`; returns false (nothing done) otherwise. x is rows x in dense,
// y rows x out dense.
bool run_linear(const void* table, const fb::Linear* linear, int rows, const int8_t* x,
                int8_t* y);

}  // namespace xnnpack
}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_XNNPACK_BACKEND_H_
