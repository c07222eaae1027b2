// Error text without printf: appending strings and integers into a fixed buffer.
#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

ErrorMessage& ErrorMessage::operator<<(const char* s) {
  if (s == nullptr) s = "(null)";
  while (*s != '\0' && length_ + 1 < sizeof(text_)) text_[length_++] = *s++;
  text_[length_] = '\0';
  return *this;
}

ErrorMessage& ErrorMessage::operator<<(int64_t v) {
  char digits[24];
  int n = 0;
  // Work with the negative magnitude so INT64_MIN does not overflow.
  int64_t rest = v < 0 ? v : -v;
  do {
    digits[n++] = static_cast<char>('0' - rest % 10);
    rest /= 10;
  } while (rest != 0);
  char text[26];
  int t = 0;
  if (v < 0) text[t++] = '-';
  while (n > 0) text[t++] = digits[--n];
  text[t] = '\0';
  return *this << static_cast<const char*>(text);
}

}  // namespace edgeattn
