#include "xnnpack_backend.h"

#include "edgeattn/edgeattn_generated.h"
#include "edgeattn/kernels/packed_weights.h"

#if EA_HAVE_XNNPACK
#include "layers/layer_kind.h"
#include <xnnpack.h>

#include <cmath>
#include <cstring>
#endif

namespace edgeattn {
namespace xnnpack {

#if !EA_HAVE_XNNPACK

bool built() { return false; }

Status initialize(ErrorMessage& error) {
  error << "this build has no XNNPACK backend (configure with -DEA_WITH_XNNPACK=ON)";
  return Status::kUnsupported;
}

Status build(const Model&, uint8_t*, size_t, const void**, size_t*, int*, ErrorMessage& error) {
  return initialize(error);
}

bool run_linear(const void*, const fb::Linear*, int, const int8_t*, int8_t*) { return false; }

#else

namespace {

constexpr int kMaxOps = Interpreter::kMaxLayers * 4;

struct LinearOp {
  const fb::Linear* linear;
  xnn_operator_t op;  // qc8 1x1 convolution
};

struct Table {
  int count;
  LinearOp ops[kMaxOps];
};

// Bump allocator over the arena tail. Every block has a 16-byte header with
// its size (reallocate copies that many bytes). Freeing is a no-op: the whole
// region is reclaimed when the interpreter is re-initialised.
struct Bump {
  uint8_t* base;
  size_t size;
  size_t used;
  bool failed;
};

Bump* g_bump = nullptr;  // set only while build() creates operators

constexpr size_t kHeader = 16;

void* bump_aligned(void*, size_t alignment, size_t size) {
  Bump* b = g_bump;
  if (b == nullptr) return nullptr;
  if (alignment < kHeader) alignment = kHeader;
  const uintptr_t base = reinterpret_cast<uintptr_t>(b->base);
  uintptr_t p = base + b->used + kHeader;
  p = (p + alignment - 1) & ~static_cast<uintptr_t>(alignment - 1);
  if (p + size > base + b->size || p + size < p) {
    b->failed = true;
    return nullptr;
  }
  std::memcpy(reinterpret_cast<void*>(p - kHeader), &size, sizeof(size));
  b->used = p + size - base;
  return reinterpret_cast<void*>(p);
}

void* bump_allocate(void* ctx, size_t size) { return bump_aligned(ctx, kHeader, size); }

void* bump_reallocate(void* ctx, void* old, size_t size) {
  void* p = bump_aligned(ctx, kHeader, size);
  if (p != nullptr && old != nullptr) {
    size_t old_size;
    std::memcpy(&old_size, static_cast<uint8_t*>(old) - kHeader, sizeof(old_size));
    std::memcpy(p, old, old_size < size ? old_size : size);
  }
  return p;
}

void bump_free(void*, void*) {}

const xnn_allocator kArenaAllocator = {nullptr, bump_allocate, bump_reallocate, bump_free,
                                       bump_aligned, bump_free};

bool g_initialized = false;

// Our requantization is acc * multiplier * 2^(shift - 31); XNNPACK takes that
// real factor as a float (input and output scales 1, zero input zero point:
// the file's int32 bias already folds the input zero point in).
float real_multiplier(int32_t multiplier, int32_t shift) {
  return static_cast<float>(std::ldexp(static_cast<double>(multiplier), shift - 31));
}

Status create_op(const fb::Model& model, const fb::Linear* l, int8_t* row_major, LinearOp* out,
                 ErrorMessage& error) {
  const size_t in = l->in_features(), n = l->out_features();
  const auto* r = l->requant();
  const int8_t* packed =
      reinterpret_cast<const int8_t*>(model.data()->data() + l->weight()->offset());
  const int32_t* bias =
      l->bias() != nullptr
          ? reinterpret_cast<const int32_t*>(model.data()->data() + l->bias()->offset())
          : nullptr;
  const int8_t out_zp = static_cast<int8_t>(l->output()->zero_point());
  out->linear = l;
  // Debian's XNNPACK (2022-02) has one kernel scale per fully-connected
  // operator; our weights have one per output channel (a per-tensor file has
  // the same scale n times). Its 1x1 convolution with per-channel (qc8)
  // weights runs the same GEMM micro-kernels on [rows][in] inputs.
  // The scales are copied into XNNPACK's packed weights; this temporary
  // array stays in the arena tail (n * 4 bytes).
  float* scales = static_cast<float*>(bump_aligned(nullptr, 16, n * sizeof(float)));
  if (scales == nullptr) {
    error << "XNNPACK backend: out of arena for the " << static_cast<uint64_t>(n)
          << " per-channel scales";
    return Status::kArenaTooSmall;
  }
  const bool per_channel = r->multiplier()->size() > 1;
  for (size_t c = 0; c < n; ++c) {
    const uint32_t i = per_channel ? static_cast<uint32_t>(c) : 0;
    scales[c] = real_multiplier(r->multiplier()->Get(i), r->shift()->Get(i));
  }
  // XNNPACK reads row-major [n][in] weights (and packs them into its own
  // layout); the file's are packed K4N16, so they are unpacked into
  // `row_major` (one buffer for all operators, see build()) first.
  kernels::unpack_weights_k4n16(static_cast<int>(n), static_cast<int>(in), packed, row_major,
                                static_cast<int>(in));
  const int8_t* w = row_major;
  const xnn_status st = xnn_create_convolution2d_nhwc_qc8(
      0, 0, 0, 0, /*kernel=*/1, 1, /*subsampling=*/1, 1, /*dilation=*/1, 1, /*groups=*/1, in, n,
      /*input_channel_stride=*/in, /*output_channel_stride=*/n, /*input_zero_point=*/0,
      /*input_scale=*/1.0f, scales, w, bias, out_zp, /*output_scale=*/1.0f, -128, 127, 0, &out->op);
  if (st != xnn_status_success) {
    error << "XNNPACK backend: creating the operator for a " << static_cast<uint64_t>(in) << "x"
          << static_cast<uint64_t>(n) << " projection failed (xnn_status " << static_cast<int>(st)
          << ")";
    return st == xnn_status_out_of_memory ? Status::kArenaTooSmall : Status::kUnsupported;
  }
  return Status::kOk;
}

// Whether build() gives this projection an XNNPACK operator: int8 (float
// projections have no requantization) with in_features a multiple of 16.
// (An int16 output, Linear.output16, is the runtime kernels' 5c-out: no operator.)
bool takes_operator(const fb::Linear* l) {
  return l != nullptr && l->requant() != nullptr && l->output() != nullptr && !l->output16() &&
         l->in_features() % 16 == 0;
}

// The int8 projections of one layer (null entries are skipped).
int layer_linears(const fb::Layer* layer, const fb::Linear* out[kMaxLayerLinears]) {
  const LayerKindModule* kind = find_layer_kind(layer->options_type());
  return kind != nullptr ? kind->linears(*layer, out) : 0;
}

}  // namespace

bool built() { return true; }

Status initialize(ErrorMessage& error) {
  if (g_initialized) return Status::kOk;
  const xnn_status st = xnn_initialize(&kArenaAllocator);
  if (st != xnn_status_success) {
    error << "xnn_initialize failed (xnn_status " << static_cast<int>(st) << ")";
    return Status::kUnsupported;
  }
  g_initialized = true;
  return Status::kOk;
}

Status build(const Model& model, uint8_t* region, size_t bytes, const void** table_out,
             size_t* used_bytes, int* num_ops, ErrorMessage& error) {
  *table_out = nullptr;
  *used_bytes = 0;
  *num_ops = 0;
  if (!g_initialized) {
    error << "XNNPACK backend: call edgeattn::XnnpackInitialize() (ea_xnnpack_initialize) once first";
    return Status::kNotReady;
  }
  Bump bump = {region, bytes, 0, false};
  g_bump = &bump;
  Table* table = static_cast<Table*>(bump_aligned(nullptr, 64, sizeof(Table)));
  if (table == nullptr) {
    g_bump = nullptr;
    error << "XNNPACK backend: the arena has " << static_cast<uint64_t>(bytes)
          << " bytes beyond the plan; its operator table alone needs "
          << static_cast<uint64_t>(sizeof(Table) + 64 + kHeader);
    return Status::kArenaTooSmall;
  }
  table->count = 0;
  const fb::Model& fbm = *model.flatbuffer();
  // The row-major copy of the largest int8 weight, reused by every operator.
  size_t max_weight = 0;
  for (int i = 0; i < model.num_layers(); ++i) {
    const fb::Linear* linears[kMaxLayerLinears];
    const int n = layer_linears(model.layer(i), linears);
    for (int j = 0; j < n; ++j) {
      const fb::Linear* l = linears[j];
      if (!takes_operator(l)) continue;
      const size_t w = size_t{l->in_features()} * l->out_features();
      if (w > max_weight) max_weight = w;
    }
  }
  int8_t* row_major = static_cast<int8_t*>(bump_aligned(nullptr, 64, max_weight));
  Status s = Status::kOk;
  if (max_weight > 0 && row_major == nullptr) s = Status::kArenaTooSmall;
  for (int i = 0; i < model.num_layers() && s == Status::kOk; ++i) {
    const fb::Layer* layer = model.layer(i);
    const fb::Linear* linears[kMaxLayerLinears];
    const int n = layer_linears(layer, linears);
    for (int j = 0; j < n && s == Status::kOk; ++j) {
      const fb::Linear* l = linears[j];
      if (!takes_operator(l)) continue;
      const Status created = create_op(fbm, l, row_major, &table->ops[table->count], error);
      if (created == Status::kOk) {
        ++table->count;
      } else if (created == Status::kArenaTooSmall || bump.failed) {
        s = Status::kArenaTooSmall;
      } else {
        // XNNPACK declined this projection (e.g. a scale outside its
        // supported range): the runtime's kernels keep running it.
        error.Clear();
      }
    }
  }
  g_bump = nullptr;
  if (s != Status::kOk) {
    if (bump.failed) {
      error << "; the arena has " << static_cast<uint64_t>(bytes)
            << " bytes beyond the plan, too few for XNNPACK's operators and packed weights";
    }
    return s;
  }
  *table_out = table;
  *used_bytes = bump.used;
  *num_ops = table->count;
  return Status::kOk;
}

bool run_linear(const void* table_ptr, const fb::Linear* linear, int rows, const int8_t* x,
                int8_t* y) {
  if (table_ptr == nullptr) return false;
  const Table* table = static_cast<const Table*>(table_ptr);
  for (int i = 0; i < table->count; ++i) {
    const LinearOp& o = table->ops[i];
    if (o.linear != linear) continue;
    const size_t r = static_cast<size_t>(rows);
    // rows images of 1x1 pixels: XNNPACK sees one GEMM of rows x in.
    const xnn_status st = xnn_setup_convolution2d_nhwc_qc8(o.op, r, 1, 1, x, y, nullptr);
    if (st != xnn_status_success) return false;
    return xnn_run_operator(o.op, nullptr) == xnn_status_success;
  }
  return false;
}

#endif  // EA_HAVE_XNNPACK

}  // namespace xnnpack
}  // namespace edgeattn
