# Every dependency comes from Debian 12's packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(SNAPPY REQUIRED IMPORTED_TARGET snappy)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
# spdlog 1.10 with the external fmt 9 (Debian's libspdlog-dev).
find_package(spdlog REQUIRED)

if(PP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(PP_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
