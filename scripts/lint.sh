#!/usr/bin/env bash
# Lint: two steps, each reported; the script fails if a step that ran failed.
#
#   scripts/lint.sh [--tidy-only | --format-only] [BUILD_DIR]
#
#   format  clang-format-16 --dry-run --Werror over every tracked .cc/.h file of
#           proxy/ daemon/ metrics/ config/ tests/ (style: .clang-format).
#   tidy    run-clang-tidy-16 -j2 over the production sources (the .cc files of
#           proxy/ daemon/ metrics/ config/; their headers through
#           HeaderFilterRegex) with the checks of .clang-tidy; any finding
#           fails. BUILD_DIR (default build/asan) must hold compile_commands.json:
#           `cmake --preset asan` writes it (no build needed; the tree has no
#           generated headers).
#
# No option runs both. --tidy-only is what scripts/test.sh runs until the tree
# is formatted; then it can call plain scripts/lint.sh. --format-only needs no
# build directory.
# TIDY_EXTRA_CHECKS (e.g. 'clang-analyzer-*') adds checks to .clang-tidy's for
# one run; LINT_JOBS (default 2) sets how many clang-tidy run at once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

run_format=1
run_tidy=1
build_dir=build/asan
for arg in "$@"; do
  case "$arg" in
    --tidy-only) run_format=0 ;;
    --format-only) run_tidy=0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "lint: unknown option $arg" >&2; exit 2 ;;
    *) build_dir=$arg ;;
  esac
done
if [ "$run_format" -eq 0 ] && [ "$run_tidy" -eq 0 ]; then
  echo "lint: --tidy-only and --format-only together run nothing" >&2
  exit 2
fi

failed=()

if [ "$run_format" -eq 1 ]; then
  # Untracked (not ignored) files too: a new file is checked before it is added.
  mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- proxy daemon metrics config tests |
    grep -E '\.(cc|h)$')
  echo "lint: clang-format-16 --dry-run over ${#sources[@]} files"
  format_log=$(mktemp)
  if nice clang-format-16 --dry-run --Werror "${sources[@]}" >"$format_log" 2>&1; then
    echo "lint: format: ok"
  else
    # One line per file; `clang-format-16 --dry-run FILE` shows where.
    grep -oE '^[^:]+\.(cc|h):' "$format_log" | sed 's/:$//; s|^'"$root"'/||' | sort -u | sed 's/^/  not formatted: /' || cat "$format_log"
    echo "lint: format: FAILED ($(grep -oE '^[^:]+\.(cc|h):' "$format_log" | sort -u | wc -l) files differ from .clang-format)" >&2
    failed+=(format)
  fi
  rm -f "$format_log"
fi

if [ "$run_tidy" -eq 1 ]; then
  db="$build_dir/compile_commands.json"
  if [ ! -f "$db" ]; then
    echo "lint: $db is missing; run cmake --preset asan first" >&2
    exit 2
  fi
  # Every production .cc must be in the database, or it would be skipped silently.
  missing=0
  while read -r f; do
    if ! grep -qF "\"$root/$f\"" "$db"; then
      echo "lint: $f is not in $db" >&2
      missing=1
    fi
  done < <(git ls-files -- proxy daemon metrics config | grep -E '\.cc$')
  checks=()
  [ -z "${TIDY_EXTRA_CHECKS:-}" ] || checks=(-checks="$TIDY_EXTRA_CHECKS")
  echo "lint: run-clang-tidy-16 -j${LINT_JOBS:-2} over the production sources (build dir $build_dir)"
  start=$(date +%s)
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  status=0
  nice run-clang-tidy-16 -quiet -p "$build_dir" -j"${LINT_JOBS:-2}" "${checks[@]}" \
    "^$root/(proxy|daemon|metrics|config)/.*\.cc\$" >"$log" 2>&1 || status=$?
  # Keep the findings and their context; drop the per-file command lines and counts of
  # suppressed warnings from system headers.
  grep -vE '^clang-tidy-16 -p=|^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter=|^[0-9]+ warnings? treated as errors?$' "$log" || true
  findings=$( (grep -E ': (warning|error): ' "$log" || true) | sort -u | wc -l)
  echo "lint: tidy took $(( $(date +%s) - start )) s"
  if [ "$status" -ne 0 ] || [ "$findings" -ne 0 ] || [ "$missing" -ne 0 ]; then
    echo "lint: tidy: FAILED ($findings findings, run-clang-tidy exit $status)" >&2
    failed+=(tidy)
  else
    echo "lint: tidy: ok"
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: failed: ${failed[*]}" >&2
  exit 1
fi
echo "lint: ok"
