#include "proxy/records/crc_vpclmul.h"

namespace pp::crc_vpclmul {

bool available() {
#if defined(__x86_64__)
  static const bool cpu_has_it = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
           __builtin_cpu_supports("pclmul");
  }();
  return cpu_has_it;
#else
  return false;
#endif
}

}  // namespace pp::crc_vpclmul
