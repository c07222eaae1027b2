// Must fail to link: malloc is --wrap'ed and no __wrap_malloc exists.
#include <cstdlib>

#include "platform.h"

int main() {
  void* volatile p = std::malloc(16);
  std::free(p);
  return 0;
}
