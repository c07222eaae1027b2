// Must fail to link: no libstdc++/libsupc++, so no operator new/delete.
#include "platform.h"

struct Big {
  int v[16];
};

int main() {
  Big* volatile b = new Big();
  delete b;
  return 0;
}
