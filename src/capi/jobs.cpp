// The C API: jobs by id.
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

extern "C" {

// ---- jobs ----

int hark_job_new(void) {
  int id = 0;
  guarded("hark_job_new", HARK_ERR_INTERNAL, [&] { id = hark::jobs::create()->id(); });
  return id;
}

hark_status hark_job_abort(int job_id) {
  return guarded("hark_job_abort", HARK_ERR_INTERNAL, [&] {
    require(hark::jobs::abort(job_id), "job_id " + std::to_string(job_id) + " is not a registered job");
  });
}

hark_status hark_job_remove(int job_id) {
  return guarded("hark_job_remove", HARK_ERR_INTERNAL, [&] {
    require(hark::jobs::remove(job_id), "job_id " + std::to_string(job_id) + " is not a registered job");
  });
}

void hark_job_abort_all(void) {
  guarded("hark_job_abort_all", HARK_ERR_INTERNAL, [] { hark::jobs::abort_all(); });
}

int hark_job_is_running(int job_id) {
  int on = -1;
  guarded("hark_job_is_running", HARK_ERR_INTERNAL, [&] {
    const std::shared_ptr<hark::Job> job = hark::jobs::get(job_id);
    require(job != nullptr, "job_id " + std::to_string(job_id) + " is not a registered job");
    on = job->running() ? 1 : 0;
  });
  return on;
}

int hark_is_transcribing(void) {
  int on = 0;
  guarded("hark_is_transcribing", HARK_ERR_INTERNAL, [&] { on = hark::jobs::is_transcribing() ? 1 : 0; });
  return on;
}

}  // extern "C"
