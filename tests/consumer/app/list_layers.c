/* Prints the layers of a .eatn model, using only the installed C API.
 *   list_layers MODEL.eatn                                              */
#include <stdio.h>
#include <stdlib.h>

#include "edgeattn/edgeattn.h"

static const char* kind_name(ea_layer_kind kind) {
  switch (kind) {
    case EA_LAYER_MULTI_HEAD_ATTENTION: return "multi_head_attention";
    case EA_LAYER_ADDITIVE: return "additive";
    case EA_LAYER_LUONG: return "luong";
    case EA_LAYER_POOLING: return "pooling";
    /* Kinds added by later versions of the library: as downstream code
       should, name them generically instead of failing to compile. */
    default: break;
  }
  return "?";
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.eatn\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* The model must be EA_ALIGNMENT-aligned; the size must be a multiple of it for aligned_alloc. */
  size_t capacity = ((size_t)size + EA_ALIGNMENT - 1) / EA_ALIGNMENT * EA_ALIGNMENT;
  void* bytes = aligned_alloc(EA_ALIGNMENT, capacity ? capacity : EA_ALIGNMENT);
  if (!bytes || size <= 0 || fread(bytes, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  fclose(f);

  ea_model model;
  ea_status status = ea_model_load(&model, bytes, (size_t)size);
  if (status != EA_OK) {
    fprintf(stderr, "%s: %s: %s\n", argv[1], ea_status_string(status), ea_model_error(&model));
    return 1;
  }
  int32_t n = ea_model_num_layers(&model);
  printf("%s: %d layer(s), arena %zu bytes\n", argv[1], (int)n, ea_model_arena_bytes(&model));
  for (int32_t i = 0; i < n; ++i) {
    ea_layer_info info;
    status = ea_model_layer_info(&model, i, &info);
    if (status != EA_OK) {
      fprintf(stderr, "layer %d: %s\n", (int)i, ea_status_string(status));
      return 1;
    }
    printf("layer %d: %s kind=%s dtype=%s heads=%d max_q_len=%d max_kv_len=%d arena=%zu\n", (int)i,
           info.name, kind_name(info.kind), info.dtype == EA_S8 ? "int8" : "f32", (int)info.num_heads,
           (int)info.max_q_len, (int)info.max_kv_len, info.arena_bytes);
  }
  free(bytes);
  return 0;
}
