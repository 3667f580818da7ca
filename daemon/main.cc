// produce-proxy entry point. Until the daemon issue lands it only reports its version.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("produce-proxy %s\n", PP_VERSION);
    return 0;
  }
  std::printf("produce-proxy %s: the daemon is not built yet (see README.md)\n", PP_VERSION);
  return 0;
}
