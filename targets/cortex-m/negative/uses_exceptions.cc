// Must fail to link: the exception machinery (__cxa_allocate_exception,
// __cxa_throw, the personality routine) lives in libsupc++, which is not
// linked. Built with exceptions on for this file only.
#include "platform.h"

int main() {
  try {
    throw 42;
  } catch (int v) {
    return v;
  }
  return 0;
}
