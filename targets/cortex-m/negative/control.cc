// Links and runs: the runtime with no heap use. Companion of uses_*.cc.
#include "edgeattn/edgeattn.h"
#include "platform.h"

int main() {
  ea_model model;
  const ea_status st = ea_model_load(&model, nullptr, 0);  // rejected: null data
  ea_cm::write_line(st == EA_INVALID_ARGUMENT ? "1 passed, 0 failed" : "0 passed, 1 failed");
  return st == EA_INVALID_ARGUMENT ? 0 : 1;
}
