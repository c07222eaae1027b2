/* A C11 program that uses edgeattn through edgeattn.h only: loads the int8
 * and float fixture models, inspects layers, runs every layer (with
 * attention weights), caches keys, and checks error statuses. Exit code 0
 * on success; every failure prints the model, layer and check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeattn/edgeattn.h"

static int g_failures = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      ++g_failures;                                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

/* Static, 16-byte aligned storage: no heap needed for the runtime itself. */
static _Alignas(16) unsigned char g_file[1 << 20];
static _Alignas(16) unsigned char g_arena[1 << 20];
static _Alignas(16) unsigned char g_query[1 << 16];
static _Alignas(16) unsigned char g_key[1 << 16];
static _Alignas(16) unsigned char g_value[1 << 16];
static _Alignas(16) unsigned char g_out[1 << 16];
static _Alignas(16) unsigned char g_weights[1 << 18];
static _Alignas(16) unsigned char g_out2[1 << 16];
static _Alignas(16) unsigned char g_weights2[1 << 18];

static uint32_t g_rng = 12345u;
static uint32_t next_u32(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}

static void fill(unsigned char* p, size_t n, ea_dtype dtype) {
  size_t i;
  if (dtype == EA_S8) {
    for (i = 0; i < n; ++i) p[i] = (unsigned char)next_u32();
  } else {
    for (i = 0; i < n; ++i) {
      const float f = (float)((int)(next_u32() % 2001u) - 1000) / 500.0f;
      memcpy(p + 4 * i, &f, 4);
    }
  }
}

static size_t read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  size_t n;
  if (f == NULL) return 0;
  n = fread(g_file, 1, sizeof(g_file), f);
  fclose(f);
  return n;
}

static void test_model(const char* path) {
  ea_model model;
  ea_interpreter interp;
  ea_status s;
  size_t size = read_file(path), arena_bytes;
  int32_t n, l;
  CHECK(size > 0, "cannot read %s", path);
  if (size == 0) return;

  s = ea_model_load(&model, g_file, size);
  CHECK(s == EA_OK, "%s: load: %s: %s", path, ea_status_string(s), ea_model_error(&model));
  if (s != EA_OK) return;
  n = ea_model_num_layers(&model);
  CHECK(n == 8, "%s: %d layers, the fixture has 8", path, (int)n);
  CHECK(ea_model_find_layer(&model, "pool") >= 0, "%s: no layer 'pool'", path);
  CHECK(ea_model_find_layer(&model, "nope") == -1, "%s: found a missing layer", path);
  arena_bytes = ea_model_arena_bytes(&model);
  CHECK(arena_bytes > 0 && arena_bytes <= sizeof(g_arena), "%s: arena %zu", path, arena_bytes);

  s = ea_interpreter_init(&interp, &model, g_arena, arena_bytes - 1);
  CHECK(s == EA_ARENA_TOO_SMALL, "%s: arena - 1: %s", path, ea_status_string(s));
  CHECK(ea_interpreter_error(&interp)[0] != '\0', "%s: empty error", path);
  s = ea_interpreter_init(&interp, &model, g_arena + 1, arena_bytes);
  CHECK(s == EA_INVALID_ARGUMENT, "%s: misaligned arena: %s", path, ea_status_string(s));
  s = ea_interpreter_init(&interp, &model, g_arena, arena_bytes);
  CHECK(s == EA_OK, "%s: init: %s", path, ea_status_string(s));

  for (l = 0; l < n; ++l) {
    ea_layer_info info;
    ea_run_args args;
    int32_t q_len, kv_len, h, i, j, self_attn;
    size_t es;
    s = ea_model_layer_info(&model, l, &info);
    CHECK(s == EA_OK, "%s: layer info %d", path, (int)l);
    es = info.dtype == EA_S8 ? 1 : 4;
    self_attn = !info.cross;
    CHECK(info.key_cache == (info.kind == EA_LAYER_ADDITIVE || info.kind == EA_LAYER_DECODER_BLOCK ||
                             (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross)),
          "%s: layer %d: key_cache %d", path, (int)l, (int)info.key_cache);
    q_len = info.kind == EA_LAYER_POOLING ? 1 : info.max_q_len;
    kv_len = self_attn ? q_len : info.max_kv_len;
    fill(g_query, (size_t)q_len * (size_t)info.query_dim, info.dtype);
    fill(g_key, (size_t)kv_len * (size_t)info.key_dim, info.dtype);
    fill(g_value, (size_t)kv_len * (size_t)info.value_dim, info.dtype);
    memset(&args, 0, sizeof(args));
    args.query = info.kind == EA_LAYER_POOLING ? NULL : g_query;
    args.key = self_attn ? NULL : g_key;
    args.value = (self_attn || info.kind == EA_LAYER_POOLING) ? NULL : g_value;
    args.q_len = q_len;
    args.kv_len = self_attn ? 0 : kv_len;
    args.kv_valid_len = kv_len > 1 ? kv_len - 1 : -1;
    args.output = g_out;
    args.attn_weights = g_weights;
    s = ea_interpreter_run(&interp, l, &args);
    CHECK(s == EA_OK, "%s: layer %s: run: %s: %s", path, info.name, ea_status_string(s), ea_interpreter_error(&interp));
    /* Rows sum to one (Q15 32768 +- n/2 + 1, float 1 +- 1e-5); masked keys are 0. */
    for (h = 0; h < info.num_heads; ++h) {
      for (i = 0; i < q_len; ++i) {
        double sum = 0.0;
        int32_t limit = args.kv_valid_len < 0 ? kv_len : args.kv_valid_len;
        if (info.causal && i + 1 + kv_len - q_len < limit) limit = i + 1 + kv_len - q_len;
        for (j = 0; j < kv_len; ++j) {
          const size_t idx = ((size_t)h * (size_t)q_len + (size_t)i) * (size_t)kv_len + (size_t)j;
          double w;
          if (es == 1) {
            uint16_t v;
            memcpy(&v, g_weights + 2 * idx, 2);
            w = v;
          } else {
            float v;
            memcpy(&v, g_weights + 4 * idx, 4);
            w = v;
          }
          if (j >= limit) CHECK(w == 0.0, "%s: %s head %d row %d masked key %d = %g", path, info.name, (int)h, (int)i, (int)j, w);
          sum += w;
        }
        if (es == 1) {
          CHECK(fabs(sum - 32768.0) <= limit / 2 + 1, "%s: %s head %d row %d Q15 sum %g", path, info.name, (int)h, (int)i, sum);
        } else {
          CHECK(fabs(sum - 1.0) <= 1e-5, "%s: %s head %d row %d sum %g", path, info.name, (int)h, (int)i, sum);
        }
      }
    }
    /* Cached keys: bit-identical to the direct run. */
    if ((info.kind == EA_LAYER_MULTI_HEAD_ATTENTION && info.cross) || info.kind == EA_LAYER_ADDITIVE) {
      ea_run_args cached = args;
      cached.key = NULL;
      if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) cached.value = NULL;
      cached.use_cached_keys = 1;
      cached.output = g_out2;
      cached.attn_weights = g_weights2;
      s = ea_interpreter_run(&interp, l, &cached);
      CHECK(s == EA_NOT_READY, "%s: %s: cached run before cache_keys: %s", path, info.name, ea_status_string(s));
      s = ea_interpreter_cache_keys(&interp, l, g_key, g_value, kv_len, args.kv_valid_len);
      CHECK(s == EA_OK, "%s: %s: cache_keys: %s", path, info.name, ea_interpreter_error(&interp));
      s = ea_interpreter_run(&interp, l, &cached);
      CHECK(s == EA_OK, "%s: %s: cached run with NULL key%s (documented as allowed): %s", path, info.name,
            info.kind == EA_LAYER_MULTI_HEAD_ATTENTION ? "/value" : "", ea_interpreter_error(&interp));
      /* Non-null key/value pointers are ignored with use_cached_keys. */
      memset(g_out2, 0, sizeof(g_out2));
      memset(g_weights2, 0, sizeof(g_weights2));
      cached.key = g_query;
      if (info.kind == EA_LAYER_MULTI_HEAD_ATTENTION) cached.value = g_query;
      s = ea_interpreter_run(&interp, l, &cached);
      CHECK(s == EA_OK, "%s: %s: cached run: %s", path, info.name, ea_interpreter_error(&interp));
      CHECK(memcmp(g_out, g_out2, (size_t)q_len * (size_t)info.output_dim * es) == 0, "%s: %s: cached output differs", path, info.name);
      CHECK(memcmp(g_weights, g_weights2, (size_t)info.num_heads * (size_t)q_len * (size_t)kv_len * (es == 1 ? 2 : 4)) == 0,
            "%s: %s: cached weights differ", path, info.name);
    }
    /* KV cache: stepping through the tokens gives the full causal run's rows. */
    CHECK(ea_interpreter_cached_len(&interp, l) == (info.kv_cache ? kv_len : -1), "%s: %s: cached_len %d",
          path, info.name, (int)ea_interpreter_cached_len(&interp, l));
    if (info.kv_cache) {
      const size_t row = (size_t)info.output_dim * es;
      ea_run_args full = args;
      full.kv_valid_len = 0;
      full.attn_weights = NULL;
      s = ea_interpreter_run(&interp, l, &full);
      CHECK(s == EA_OK, "%s: %s: full run: %s", path, info.name, ea_interpreter_error(&interp));
      CHECK(ea_interpreter_begin_sequence(&interp, l) == EA_OK, "%s: begin_sequence", path);
      CHECK(ea_interpreter_cached_len(&interp, l) == 0, "%s: cached_len after begin", path);
      for (i = 0; i < q_len; ++i) {
        s = ea_interpreter_step(&interp, l, g_query + (size_t)i * (size_t)info.query_dim * es, g_out2, NULL);
        CHECK(s == EA_OK, "%s: %s: step %d: %s", path, info.name, (int)i, ea_interpreter_error(&interp));
        if (es == 1) {
          CHECK(memcmp(g_out2, g_out + (size_t)i * row, row) == 0, "%s: %s: step %d differs from the full run", path,
                info.name, (int)i);
        } else {
          for (j = 0; j < info.output_dim; ++j) {
            float a, b;
            memcpy(&a, g_out2 + 4 * (size_t)j, 4);
            memcpy(&b, g_out + (size_t)i * row + 4 * (size_t)j, 4);
            CHECK(fabs(a - b) <= 1e-4, "%s: %s: step %d channel %d: %g vs %g", path, info.name, (int)i, (int)j, a, b);
          }
        }
      }
      CHECK(ea_interpreter_cached_len(&interp, l) == q_len, "%s: cached_len after steps", path);
      s = ea_interpreter_step(&interp, l, g_query, g_out2, NULL);
      CHECK(s == EA_LENGTH_EXCEEDS_PLAN, "%s: %s: step past the cache: %s", path, info.name, ea_status_string(s));
    } else {
      CHECK(ea_interpreter_begin_sequence(&interp, l) == EA_INVALID_ARGUMENT, "%s: %s: begin_sequence", path,
            info.name);
    }
    /* Lengths beyond the plan. */
    if (info.kind != EA_LAYER_POOLING) {
      args.q_len = info.max_q_len + 1;
      s = ea_interpreter_run(&interp, l, &args);
      CHECK(s == EA_LENGTH_EXCEEDS_PLAN, "%s: %s: q_len + 1: %s", path, info.name, ea_status_string(s));
    }
  }
  /* Null arguments and bad indices. */
  CHECK(ea_interpreter_run(&interp, 0, NULL) == EA_INVALID_ARGUMENT, "%s: null args", path);
  CHECK(ea_interpreter_run(NULL, 0, NULL) == EA_INVALID_ARGUMENT, "%s: null interpreter", path);
  {
    ea_run_args a;
    ea_layer_info info;
    memset(&a, 0, sizeof(a));
    CHECK(ea_interpreter_run(&interp, n, &a) == EA_INVALID_ARGUMENT, "%s: layer n", path);
    CHECK(ea_interpreter_error(&interp)[0] != '\0', "%s: empty error", path);
    CHECK(ea_model_layer_info(&model, -1, &info) == EA_INVALID_ARGUMENT, "%s: layer -1", path);
    CHECK(ea_model_layer_info(&model, 0, NULL) == EA_INVALID_ARGUMENT, "%s: null info", path);
  }
  CHECK(ea_model_load(&model, g_file + 8, size - 8) != EA_OK, "%s: shifted buffer loaded", path);
  CHECK(ea_model_error(&model)[0] != '\0', "%s: empty error", path);
}

/* The optional XNNPACK backend through the C API. Runs first: the "not
 * initialized" answer is only observable before ea_xnnpack_initialize. */
static void test_xnnpack(void) {
  static ea_model model;
  static ea_interpreter interp;
  const size_t size = read_file(EA_FIXTURE_INT8);
  const int built = ea_xnnpack_built();
  size_t plan;
  ea_status s;
  CHECK(size > 0, "cannot read %s", EA_FIXTURE_INT8);
  CHECK(ea_model_load(&model, g_file, size) == EA_OK, "xnnpack: load: %s", ea_model_error(&model));
  plan = ea_model_arena_bytes(&model);
  CHECK(ea_interpreter_init(&interp, &model, g_arena, plan) == EA_OK, "xnnpack: init");
  s = ea_interpreter_use_xnnpack(&interp);
  CHECK(s == (built ? EA_NOT_READY : EA_UNSUPPORTED), "xnnpack: before initialize: %s",
        ea_status_string(s));
  CHECK(ea_interpreter_error(&interp)[0] != '\0', "xnnpack: empty error");
  s = ea_xnnpack_initialize();
  CHECK(s == (built ? EA_OK : EA_UNSUPPORTED), "xnnpack: initialize: %s", ea_status_string(s));
  CHECK(ea_interpreter_use_xnnpack(NULL) == EA_INVALID_ARGUMENT, "xnnpack: null interpreter");
  CHECK(ea_interpreter_xnnpack_bytes(NULL) == 0, "xnnpack: bytes of null");
  if (!built) return;
  /* No room after the plan: even the operator table does not fit. */
  s = ea_interpreter_use_xnnpack(&interp);
  CHECK(s == EA_ARENA_TOO_SMALL, "xnnpack: plan-sized arena: %s", ea_status_string(s));
  CHECK(ea_interpreter_xnnpack_bytes(&interp) == 0, "xnnpack: bytes after a failure");
  CHECK(ea_interpreter_init(&interp, &model, g_arena, sizeof(g_arena)) == EA_OK, "xnnpack: init 2");
  s = ea_interpreter_use_xnnpack(&interp);
  CHECK(s == EA_OK, "xnnpack: %s: %s", ea_status_string(s), ea_interpreter_error(&interp));
  CHECK(ea_interpreter_xnnpack_bytes(&interp) > 0 &&
            ea_interpreter_xnnpack_bytes(&interp) <= sizeof(g_arena) - plan,
        "xnnpack: %zu bytes", ea_interpreter_xnnpack_bytes(&interp));
}

/* Range mode through the C API: float in/out with a per-call range, int8 at
 * a caller's range (EA_RANGE_ONE is the static run), and its statuses. */
static void test_range_mode(void) {
  static ea_model model;
  static ea_interpreter interp;
  const size_t size = read_file(EA_FIXTURE_INT8);
  size_t plan, extra;
  int32_t l;
  ea_status s;
  CHECK(size > 0, "cannot read %s", EA_FIXTURE_INT8);
  CHECK(ea_model_load(&model, g_file, size) == EA_OK, "range: load: %s", ea_model_error(&model));
  plan = ea_model_arena_bytes(&model);
  extra = ea_model_range_bytes(&model, 0, 0);
  CHECK(extra > 0 && plan + extra <= sizeof(g_arena), "range: %zu extra bytes", extra);
  CHECK(ea_model_range_bytes(&model, 1, 1) < extra, "range: caps shrink the workspace");
  CHECK(ea_model_range_bytes(NULL, 0, 0) == 0, "range: null model");
  CHECK(ea_interpreter_init(&interp, &model, g_arena, plan + extra) == EA_OK, "range: init");
  for (l = 0; l < ea_model_num_layers(&model); ++l) {
    ea_layer_info info;
    ea_run_args args;
    uint32_t range = 0;
    size_t out_bytes;
    CHECK(ea_model_layer_info(&model, l, &info) == EA_OK, "range: info");
    memset(&args, 0, sizeof(args));
    args.query = g_query;
    args.key = g_key;
    args.value = g_value;
    args.q_len = info.kind == EA_LAYER_POOLING ? 1 : info.max_q_len;
    args.kv_len = info.cross ? info.max_kv_len : 0;
    args.output = g_out;
    out_bytes = (size_t)args.q_len * (size_t)info.output_dim;
    /* Floats in [-2, 2]: beyond the fixture's calibrated ranges for most inputs. */
    fill(g_query, (size_t)info.max_q_len * (size_t)info.query_dim, EA_F32);
    fill(g_key, (size_t)info.max_kv_len * (size_t)info.key_dim, EA_F32);
    fill(g_value, (size_t)info.max_kv_len * (size_t)info.value_dim, EA_F32);
    s = ea_interpreter_run_float(&interp, l, &args, EA_RANGE_DYNAMIC, &range);
    CHECK(s == EA_OK, "range: %s: run_float: %s", info.name, ea_interpreter_error(&interp));
    CHECK(range >= EA_RANGE_ONE && range <= EA_RANGE_MAX, "range: %s: R %u", info.name, (unsigned)range);
    /* C may hold any int in an enum: refused with a message, never read as a policy. */
    s = ea_interpreter_run_float(&interp, l, &args, (ea_range_policy)7, NULL);
    CHECK(s == EA_INVALID_ARGUMENT, "range: %s: policy 7: %s", info.name, ea_status_string(s));
    CHECK(strstr(ea_interpreter_error(&interp), "unknown range policy 7") != NULL, "range: policy 7: %s",
          ea_interpreter_error(&interp));
    /* int8 at R = 1 is the static run. */
    fill(g_query, (size_t)info.max_q_len * (size_t)info.query_dim, EA_S8);
    fill(g_key, (size_t)info.max_kv_len * (size_t)info.key_dim, EA_S8);
    fill(g_value, (size_t)info.max_kv_len * (size_t)info.value_dim, EA_S8);
    CHECK(ea_interpreter_run(&interp, l, &args) == EA_OK, "range: %s: run", info.name);
    args.output = g_out2;
    s = ea_interpreter_run_scaled(&interp, l, &args, EA_RANGE_ONE);
    CHECK(s == EA_OK, "range: %s: run_scaled: %s", info.name, ea_interpreter_error(&interp));
    CHECK(memcmp(g_out, g_out2, out_bytes) == 0, "range: %s: R = 1 differs from the static run", info.name);
    s = ea_interpreter_run_scaled(&interp, l, &args, EA_RANGE_ONE / 2);
    CHECK(s == EA_INVALID_ARGUMENT, "range: %s: R = 0.5: %s", info.name, ea_status_string(s));
    CHECK(ea_interpreter_error(&interp)[0] != '\0', "range: empty error");
  }
  CHECK(ea_interpreter_run_scaled(&interp, 0, NULL, EA_RANGE_ONE) == EA_INVALID_ARGUMENT, "range: null args");
  CHECK(ea_interpreter_run_float(NULL, 0, NULL, EA_RANGE_DYNAMIC, NULL) == EA_INVALID_ARGUMENT, "range: null");
  {
    ea_run_args args;
    memset(&args, 0, sizeof(args));
    args.query = g_query;
    args.q_len = 1;
    args.output = g_out;
    fill(g_query, 4096, EA_F32);
    CHECK(ea_interpreter_init(&interp, &model, g_arena, plan) == EA_OK, "range: init without workspace");
    s = ea_interpreter_run_float(&interp, 0, &args, EA_RANGE_DYNAMIC, NULL);
    CHECK(s == EA_ARENA_TOO_SMALL, "range: no workspace: %s", ea_status_string(s));
  }
}

/* Coverage through the C API (fixture_coverage_int8, layer "coverage":
 * query 10, key 12 = value, kv 10): the info fields, ea_interpreter_step
 * refused, and decoding: cache_keys, two one-row cached runs (the second
 * differs: it sees the first step's weights), begin_sequence, then the first
 * step again, byte for byte. */
static void test_coverage(const char* path) {
  ea_model model;
  ea_interpreter interp;
  ea_layer_info info;
  ea_run_args a;
  ea_status s;
  int32_t layer;
  const size_t size = read_file(path);
  CHECK(size > 0, "cannot read %s", path);
  if (size == 0) return;
  s = ea_model_load(&model, g_file, size);
  CHECK(s == EA_OK, "%s: load: %s", path, ea_model_error(&model));
  if (s != EA_OK) return;
  layer = ea_model_find_layer(&model, "coverage");
  CHECK(layer >= 0, "%s: no layer 'coverage'", path);
  if (layer < 0) return;
  s = ea_model_layer_info(&model, layer, &info);
  CHECK(s == EA_OK && info.coverage == 1 && info.coverage_bytes == 48 && info.kv_cache == 0,
        "%s: coverage %d, %zu bytes", path, (int)info.coverage, info.coverage_bytes);
  s = ea_interpreter_init(&interp, &model, g_arena, ea_model_arena_bytes(&model));
  CHECK(s == EA_OK, "%s: init: %s", path, ea_status_string(s));
  fill(g_query, (size_t)info.query_dim, EA_S8);
  fill(g_key, (size_t)info.max_kv_len * (size_t)info.key_dim, EA_S8);
  s = ea_interpreter_step(&interp, layer, g_query, g_out, NULL);
  CHECK(s == EA_INVALID_ARGUMENT, "%s: step on a coverage layer: %s", path, ea_status_string(s));
  s = ea_interpreter_cache_keys(&interp, layer, g_key, g_key, info.max_kv_len, 0);
  CHECK(s == EA_OK, "%s: cache_keys: %s", path, ea_interpreter_error(&interp));
  memset(&a, 0, sizeof(a));
  a.query = g_query;
  a.value = g_key;
  a.q_len = 1;
  a.use_cached_keys = 1;
  a.output = g_out;
  a.attn_weights = g_weights;
  s = ea_interpreter_run(&interp, layer, &a);
  CHECK(s == EA_OK, "%s: step 1: %s", path, ea_interpreter_error(&interp));
  a.output = g_out2;
  a.attn_weights = g_weights2;
  s = ea_interpreter_run(&interp, layer, &a);
  CHECK(s == EA_OK, "%s: step 2: %s", path, ea_interpreter_error(&interp));
  CHECK(memcmp(g_weights, g_weights2, (size_t)info.max_kv_len * 2) != 0, "%s: coverage changed nothing", path);
  s = ea_interpreter_begin_sequence(&interp, layer);
  CHECK(s == EA_OK, "%s: begin_sequence: %s", path, ea_interpreter_error(&interp));
  s = ea_interpreter_run(&interp, layer, &a);
  CHECK(s == EA_OK, "%s: new sequence: %s", path, ea_interpreter_error(&interp));
  CHECK(memcmp(g_out, g_out2, (size_t)info.output_dim) == 0 &&
        memcmp(g_weights, g_weights2, (size_t)info.max_kv_len * 2) == 0,
        "%s: begin_sequence did not start over", path);
}

/* The kind names are the spec's (written out here, not read from the list),
 * and key_cache says which layers cache their keys. */
static void test_kind_names(void) {
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_MULTI_HEAD_ATTENTION), "mha") == 0, "mha");
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_ADDITIVE), "additive") == 0, "additive");
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_FEED_FORWARD), "ffn") == 0, "ffn");
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_DECODER_BLOCK), "decoder_block") == 0, "decoder_block");
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_LINEAR), "linear") == 0, "linear");
  CHECK(strcmp(ea_layer_kind_name(EA_LAYER_KIND_COUNT), "?") == 0, "one past the kinds");
  CHECK(strcmp(ea_layer_kind_name((ea_layer_kind)-1), "?") == 0, "-1");
  CHECK(strcmp(ea_status_string((ea_status)-1), "unknown status") == 0, "status -1");
  CHECK(strcmp(ea_status_string((ea_status)300), "unknown status") == 0, "status 300");
}

int main(void) {
  test_kind_names();
  test_xnnpack();
  test_range_mode();
  test_model(EA_FIXTURE_INT8);
  test_model(EA_FIXTURE_F32);
  test_coverage(EA_FIXTURE_COVERAGE_INT8);
  CHECK(ea_status_string(EA_OK) != NULL, "status string");
  if (g_failures != 0) {
    fprintf(stderr, "c_api_test: %d failure(s)\n", g_failures);
    return 1;
  }
  printf("c_api_test: OK\n");
  return 0;
}
