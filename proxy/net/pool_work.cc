#include "proxy/net/pool_work.h"

#include <memory>
#include <utility>

namespace pp::net {
namespace {

struct WorkRequest {
  uv_work_t req{};
  std::function<void()> work;
  std::function<void(bool)> done;
};

void run_work(uv_work_t* req) {
  static_cast<WorkRequest*>(req->data)->work();
}

void after_work(uv_work_t* req, int status) {
  const std::unique_ptr<WorkRequest> request(static_cast<WorkRequest*>(req->data));
  request->done(status == 0);
}

}  // namespace

bool queue_work(uv_loop_t* loop, std::function<void()> work, std::function<void(bool ran)> done) {
  auto request = std::make_unique<WorkRequest>();
  request->work = std::move(work);
  request->done = std::move(done);
  request->req.data = request.get();
  if (uv_queue_work(loop, &request->req, run_work, after_work) != 0) return false;
  (void)request.release();  // after_work frees it
  return true;
}

}  // namespace pp::net
