// hark: jobs, the C++ API. Every transcription is a Job with an id, stoppable by that id from any
// thread.
#pragma once
#include <memory>

#include "hark/export.h"

namespace hark {

// ---- jobs ----
// Every transcription runs as a Job with an id, kept in a process-wide registry while it exists,
// so a front end can stop a job by id from any thread (whisper.rn's `stop()`). A job made with
// jobs::create() and passed in TranscribeParams::job can be stopped before its transcription has
// even started; without one, transcribe() makes its own and reports its id in the Transcript.
class HARK_API Job {
 public:
  virtual ~Job() = default;
  virtual int id() const = 0;
  // Asks the job to stop; thread-safe, returns at once. The transcription returns within one graph
  // node's compute (well under 100 ms), with the segments finished before the stop.
  virtual void abort() = 0;
  virtual bool abort_requested() const = 0;
  virtual bool running() const = 0;  // a transcription is executing it now
};

namespace jobs {
// All thread-safe.
HARK_API std::shared_ptr<Job> create();     // a new job with a fresh id (never reused), registered
HARK_API std::shared_ptr<Job> get(int id);  // nullptr when no such job is registered
HARK_API bool remove(int id);               // forgets the id; a running job runs on. false: unknown id
HARK_API bool abort(int id);                // false: unknown id
HARK_API void abort_all();                  // every registered job, running or not yet started
HARK_API bool is_transcribing();            // some registered job is running
}  // namespace jobs

}  // namespace hark
