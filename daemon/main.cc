// produce-proxy: parse the command line, load the configuration, run the
// runtime on one libuv loop until SIGTERM/SIGINT has drained it.
#include <spdlog/spdlog.h>
#include <uv.h>

#include <chrono>
#include <iostream>

#include "config/diff.h"
#include "daemon/allocator_tuning.h"
#include "daemon/cli.h"
#include "daemon/logging.h"
#include "daemon/proxy_runtime.h"
#include "daemon/spool_inspect.h"
#include "proxy/net/async.h"

namespace {

void log_reload(const std::vector<pp::config::KeyChange>& changes) {
  if (changes.empty()) spdlog::info("SIGHUP: configuration unchanged");
  for (const auto& c : changes) {
    if (c.live) {
      spdlog::info("SIGHUP: {} = {} (was {}), applied", c.key, c.after, c.before);
    } else {
      spdlog::warn("SIGHUP: {} = {} (was {}) needs a restart; still running with {}", c.key, c.after, c.before,
                   c.before);
    }
  }
}

// Runs the runtime until a stop signal has drained it (or start-up or the
// runtime failed); SIGHUP re-reads the configuration and applies the live keys.
int run(const pp::CommandLine& cli, const pp::config::Settings& settings) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  int exit_code = pp::kExitClean;
  {
    pp::ProxyRuntime runtime(&loop, settings);
    bool stopped = false;
    auto stop_with = [&](int code) {
      exit_code = code;
      stopped = true;
      uv_stop(&loop);
    };
    if (auto started = runtime.start(nullptr, stop_with); !started) {
      spdlog::error("start-up failed: {}", started.error());
      exit_code = pp::kExitRuntimeFailure;
    } else {
      pp::config::Settings running = settings;
      auto on_stop_signal = [&](int signum) {
        spdlog::info("{}: draining", signum == SIGINT ? "SIGINT" : "SIGTERM");
        runtime.drain(stop_with);
      };
      pp::net::Signal sigterm(&loop, SIGTERM, on_stop_signal);
      pp::net::Signal sigint(&loop, SIGINT, on_stop_signal);
      pp::net::Signal sighup(&loop, SIGHUP, [&](int) {
        auto reloaded = pp::config::load_settings(cli.config_source());
        if (!reloaded) {
          spdlog::error("SIGHUP: configuration not reloaded:\n{}", pp::config::format_errors(reloaded.error()));
          return;
        }
        log_reload(pp::config::diff_settings(running, *reloaded));
        running = pp::config::with_live_changes(running, *reloaded);
        (void)pp::configure_logging(pp::config::to_string(running.log.level),
                                    pp::config::to_string(running.log.format));
        runtime.reload(running);
      });
      while (!stopped && uv_run(&loop, UV_RUN_DEFAULT) != 0) {
      }
    }
  }
  // Let close callbacks of everything the runtime owned run.
  uv_run(&loop, UV_RUN_NOWAIT);
  uv_loop_close(&loop);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  auto cli = pp::parse_command_line(std::span<const char* const>(argv, static_cast<std::size_t>(argc)),
                                    pp::version_report(PP_VERSION));
  if (!cli) {
    (cli.error().exit_code == 0 ? std::cout : std::cerr) << cli.error().output;
    return cli.error().exit_code;
  }
  if (cli->check_config) return pp::check_config(*cli, std::cout, std::cerr);
  if (cli->print_config) return pp::print_config(*cli, std::cout, std::cerr);
  if (cli->users_add) return pp::run_users_add(*cli->users_add, std::cin, std::cout, std::cerr);
  if (cli->spool_inspect) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return pp::spool_inspect(*cli->spool_inspect, std::chrono::duration_cast<std::chrono::milliseconds>(now).count(),
                             std::cout, std::cerr);
  }

  auto settings = pp::config::load_settings(cli->config_source());
  if (!settings) {
    std::cerr << pp::config::format_errors(settings.error());
    return pp::kExitBadConfig;
  }
  if (auto logging = pp::configure_logging(pp::config::to_string(settings->log.level),
                                           pp::config::to_string(settings->log.format));
      !logging) {
    std::cerr << "log: " << logging.error() << "\n";
    return pp::kExitBadConfig;
  }
  spdlog::info("produce-proxy {} starting", PP_VERSION);
  switch (pp::keep_freed_memory_for_reuse(static_cast<std::size_t>(settings->producer.buffer_memory_bytes))) {
    case pp::AllocatorTuning::kApplied:
      break;
    case pp::AllocatorTuning::kRefused:
      spdlog::warn("allocator: glibc refused to keep freed memory; frames and batches fault in fresh pages");
      break;
    case pp::AllocatorTuning::kJemalloc: {
      const pp::JemallocInfo jemalloc = pp::jemalloc_info();
      if (jemalloc.dirty_decay_ms < 0) {
        spdlog::info("allocator: jemalloc {}; freed memory is kept for reuse", jemalloc.version);
      } else {
        spdlog::info("allocator: jemalloc {}; freed memory goes back to the kernel after {} ms unused",
                     jemalloc.version, jemalloc.dirty_decay_ms);
      }
      break;
    }
    case pp::AllocatorTuning::kOtherAllocator:
      spdlog::debug("allocator: a sanitizer's allocator, left as it is");
      break;
  }
  return run(*cli, *settings);
}
