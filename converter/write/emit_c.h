// --emit-c: a .eatn model as C source for firmware. Writes PREFIX.h and
// PREFIX.c: a const, 16-byte aligned byte array `<name>` with the file's bytes
// and, in the header, the arena the model needs at its declared maxima:
//
//   #define <NAME>_ARENA_BYTES 2960u   (ea_model_arena_bytes, from the file)
//   #define <NAME>_SIZE 12345u         (bytes of the array)
//   #define <NAME>_NUM_LAYERS 3
//   #define <NAME>_LAYER_<LAYER> 0     (index of each layer, by name)
//
// <name> is the last path component of PREFIX made a C identifier (lower
// case); <NAME> is the same in upper case.
#ifndef EDGEATTN_CONVERTER_WRITE_EMIT_C_H_
#define EDGEATTN_CONVERTER_WRITE_EMIT_C_H_

#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {

class Model;

namespace convert {

struct EmittedC {
  std::string identifier;  // array name
  std::string header, source;
};

// `model` is the verified view of `bytes`; `origin` is named in a comment.
EmittedC emit_c(const std::vector<uint8_t>& bytes, const Model& model, const std::string& prefix,
                const std::string& origin, int workers = 1);
// Writes PREFIX.h and PREFIX.c (atomically). Throws ConvertError.
void write_emitted_c(const EmittedC& c, const std::string& prefix);

}  // namespace convert
}  // namespace edgeattn

#endif  // EDGEATTN_CONVERTER_WRITE_EMIT_C_H_
