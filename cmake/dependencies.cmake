# Every dependency comes from Debian 12's packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
# libssl-dev: upstream TLS (proxy/net/tls_session.h).
find_package(OpenSSL 3 REQUIRED)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(SNAPPY REQUIRED IMPORTED_TARGET snappy)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
pkg_check_modules(LIBSYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# The release daemon's allocator (daemon/CMakeLists.txt); sanitizer builds
# keep their own.
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[a-z,]*address")
  set(PP_SANITIZER_BUILD ON)
else()
  set(PP_SANITIZER_BUILD OFF)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
endif()
# spdlog 1.10 with the external fmt 9 (Debian's libspdlog-dev).
find_package(spdlog REQUIRED)
# prometheus-cpp 1.0.1 (prometheus-cpp-dev): core metrics and the pull Exposer; its
# config also finds civetweb (libcivetweb-dev), whose context the health handlers join.
find_package(prometheus-cpp CONFIG REQUIRED)
# toml++ 3.3 as Debian's compiled library (libtomlplusplus-dev) and CLI11 2.1
# (libcli11-dev, header-only): the config file and the command line.
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)

if(PP_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(PP_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
