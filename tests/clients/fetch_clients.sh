#!/usr/bin/env bash
# Fetches and builds the real producer clients that tests/clients/run_client.py
# drives, into a cache outside the build tree:
#   ${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/clients/
#     java-0.9/ java-0.10/ java-0.10.0/ java-4/   lib/*.jar (Maven) and classes/ (javac)
#     python-pypi/site/              confluent-kafka from PyPI (pip --target), pinned
#     go/bin/                        sarama-produce, franz-produce (go build)
#     node/node_modules/             kafkajs (npm ci of node/package-lock.json)
# Idempotent: each part carries a stamp (hash of its inputs and toolchain) and
# is a quick no-op when the stamp matches. Needs network only the first time
# (Maven Central via mvn, the Go module proxy via go, the npm registry via npm).
#
#   tests/clients/fetch_clients.sh [all|java|go|node|python|python-pypi|java-0.9|java-0.10|java-0.10.0|java-4]...
#
# The Python clients come from Debian (python3-kafka, python3-confluent-kafka);
# this script only checks that they import.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE="${PP_CACHE_DIR:-$HOME/.cache/produce-proxy}/clients"
JAVA_VERSIONS=(0.9 0.10 0.10.0 4)

die() { echo "fetch_clients.sh: $*" >&2; exit 1; }
log() { [[ -n "${PP_FETCH_QUIET:-}" ]] || echo "fetch_clients.sh: $*" >&2; }

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

mkdir -p "$CACHE"
# One fetch at a time (parallel test runs share the cache).
exec 9>"$CACHE/.lock"
flock -w 900 9 || die "timed out waiting for $CACHE/.lock"

fetch_java() {
  local v=$1 src="$HERE/java/$1" dir="$CACHE/java-$1"
  [[ -f "$src/pom.xml" ]] || die "no such Java client: java-$v"
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  command -v javac >/dev/null || die "javac not found (apt-get install openjdk-17-jdk-headless)"
  mkdir -p "$dir"
  local want
  want=$(hash_of "$src/pom.xml")
  if [[ "$(cat "$dir/lib.stamp" 2>/dev/null)" != "$want" ]]; then
    log "java-$v: fetching jars with Maven into $dir/lib"
    rm -rf "$dir/lib.tmp"
    if ! mvn -B -q -f "$src/pom.xml" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$dir/lib.tmp" >"$dir/mvn.log" 2>&1; then
      sed 's/\x1b\[[0-9;]*m//g' "$dir/mvn.log" | grep -v '^\s*$' | tail -20 >&2
      die "java-$v: Maven could not fetch the client's jars (log: $dir/mvn.log)"
    fi
    rm -rf "$dir/lib" && mv "$dir/lib.tmp" "$dir/lib"
    echo "$want" >"$dir/lib.stamp"
  fi
  # 0.10.0.1 and 0.10.2.2 share one producer API: java-0.10.0 compiles
  # java/0.10's Produce.java against its own jars.
  local produce="$src/Produce.java"
  [[ -f "$produce" ]] || produce="$HERE/java/0.10/Produce.java"
  [[ -n "${JAVAC_VERSION:-}" ]] || JAVAC_VERSION=$(javac -version 2>&1)
  want=$( (cat "$HERE/java/Common.java" "$produce" "$dir/lib.stamp"; echo "$JAVAC_VERSION") | sha256sum | cut -d' ' -f1)
  if [[ "$(cat "$dir/classes.stamp" 2>/dev/null)" != "$want" ]]; then
    log "java-$v: compiling into $dir/classes"
    rm -rf "$dir/classes.tmp" && mkdir -p "$dir/classes.tmp"
    javac -nowarn -encoding UTF-8 -d "$dir/classes.tmp" -cp "$dir/lib/*" \
      "$HERE/java/Common.java" "$produce" 2> >(grep -v '^Note:' >&2) \
      || die "java-$v: javac failed"
    rm -rf "$dir/classes" && mv "$dir/classes.tmp" "$dir/classes"
    echo "$want" >"$dir/classes.stamp"
  fi
}

fetch_go() {
  local src="$HERE/go" dir="$CACHE/go"
  # The machine image puts Go in /usr/local/go; CI's environment may not
  # have it on PATH.
  command -v go >/dev/null || PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || die "go not found (Go 1.26 or newer; Debian 12's 1.19 is too old for sarama)"
  mkdir -p "$dir"
  local want
  want=$( (cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) | LC_ALL=C sort | xargs cat; go version) | sha256sum | cut -d' ' -f1)
  if [[ "$(cat "$dir/bin.stamp" 2>/dev/null)" == "$want" && -x "$dir/bin/sarama-produce" && -x "$dir/bin/franz-produce" ]]; then
    return 0
  fi
  log "go: building sarama-produce and franz-produce into $dir/bin"
  rm -rf "$dir/bin.tmp"
  # go.sum is committed: -mod=readonly never edits it; GOTOOLCHAIN=local never
  # downloads a toolchain. Modules come from the module cache, else the proxy.
  if ! (cd "$src" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
        go build -trimpath -o "$dir/bin.tmp/" ./cmd/sarama-produce ./cmd/franz-produce) >"$dir/go.log" 2>&1; then
    tail -20 "$dir/go.log" >&2
    die "go: build failed (modules from the Go module proxy; log: $dir/go.log)"
  fi
  rm -rf "$dir/bin" && mv "$dir/bin.tmp" "$dir/bin"
  echo "$want" >"$dir/bin.stamp"
}

fetch_node() {
  local src="$HERE/node" dir="$CACHE/node"
  command -v node >/dev/null || die "node not found (apt-get install nodejs npm)"
  command -v npm >/dev/null || die "npm not found (apt-get install npm)"
  mkdir -p "$dir"
  local want
  want=$( (cat "$src/package.json" "$src/package-lock.json"; node --version; npm --version) | sha256sum | cut -d' ' -f1)
  if [[ "$(cat "$dir/modules.stamp" 2>/dev/null)" == "$want" && -f "$dir/node_modules/kafkajs/package.json" ]]; then
    return 0
  fi
  log "node: installing kafkajs (package-lock.json) into $dir/node_modules"
  rm -rf "$dir/tmp" && mkdir -p "$dir/tmp"
  cp "$src/package.json" "$src/package-lock.json" "$dir/tmp/"
  # npm ci installs exactly the committed lock (integrity-checked) and never
  # edits it; no install scripts run (kafkajs has none, nor dependencies).
  if ! (cd "$dir/tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >"$dir/npm.log" 2>&1; then
    tail -20 "$dir/npm.log" >&2
    die "node: npm ci failed (packages from the npm registry; log: $dir/npm.log)"
  fi
  rm -rf "$dir/node_modules" && mv "$dir/tmp/node_modules" "$dir/node_modules" && rm -rf "$dir/tmp"
  echo "$want" >"$dir/modules.stamp"
}

PY_APT="python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard python3-xxhash"
check_python() {
  /usr/bin/python3 -c 'import kafka, confluent_kafka' 2>/dev/null \
    || die "python: /usr/bin/python3 lacks kafka or confluent_kafka (apt-get install $PY_APT)"
  # kafka-python's codecs are optional modules; without them only that codec fails
  # (lz4 at magic 0/1 needs xxhash, and without it kafka-python's sender thread dies).
  local missing
  missing=$(/usr/bin/python3 -c 'import importlib.util as u; print(" ".join(m for m in ("snappy", "lz4", "zstandard", "xxhash") if u.find_spec(m) is None))')
  [[ -z "$missing" ]] || echo "fetch_clients.sh: warning: kafka-python codec modules missing: $missing (apt-get install $PY_APT)" >&2
}

# confluent-kafka from PyPI, pinned: its wheel bundles a current librdkafka.
# Debian's python3-confluent-kafka runs on Debian's librdkafka 2.0.2, whose
# SCRAM client-final message repeats the client nonce before the server's
# (edenhill/kcat#462), so it cannot log in with SCRAM to Kafka 4.x or to the
# proxy's listener. Installed beside, not over, the Debian modules: the
# client confluent-pypi runs /usr/bin/python3 with PYTHONPATH=site.
CONFLUENT_PYPI="confluent-kafka==2.16.1"
fetch_python_pypi() {
  local dir="$CACHE/python-pypi" want
  want=$( (echo "$CONFLUENT_PYPI"; /usr/bin/python3 --version) | sha256sum | cut -d' ' -f1)
  if [[ "$(cat "$dir/site.stamp" 2>/dev/null)" == "$want" && -d "$dir/site/confluent_kafka" ]]; then
    return 0
  fi
  log "python-pypi: installing $CONFLUENT_PYPI into $dir/site"
  rm -rf "$dir/site.tmp" && mkdir -p "$dir"
  if ! /usr/bin/python3 -m pip install -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --target "$dir/site.tmp" "$CONFLUENT_PYPI" >"$dir/pip.log" 2>&1; then
    tail -20 "$dir/pip.log" >&2
    die "python-pypi: pip could not install $CONFLUENT_PYPI (log: $dir/pip.log)"
  fi
  rm -rf "$dir/site" && mv "$dir/site.tmp" "$dir/site"
  echo "$want" >"$dir/site.stamp"
}

parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(all)
for p in "${parts[@]}"; do
  case "$p" in
    all) for v in "${JAVA_VERSIONS[@]}"; do fetch_java "$v"; done; fetch_go; fetch_node; check_python; fetch_python_pypi ;;
    java) for v in "${JAVA_VERSIONS[@]}"; do fetch_java "$v"; done ;;
    java-*) fetch_java "${p#java-}" ;;
    go) fetch_go ;;
    node) fetch_node ;;
    python) check_python ;;
    python-pypi) check_python; fetch_python_pypi ;;
    *) die "unknown part: $p (all|java|go|node|python|python-pypi|java-0.9|java-0.10|java-0.10.0|java-4)" ;;
  esac
done
