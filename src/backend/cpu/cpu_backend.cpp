#include "backend/cpu/cpu_backend.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/thread_pool.h"
#include "backend/device_registry.h"
#include "backend/host_memory.h"
#include "runtime/error.h"

namespace hark::cpu {

int hardware_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

bool cpu_is_small_node(const Tensor& node) {
  switch (node.op) {
    case Op::Copy:
    case Op::Cont:
    case Op::Add:
    case Op::Mul:
    case Op::Scale:
    case Op::Gelu:
    case Op::LayerNorm:
    case Op::SoftMax:
    case Op::GetRows:
    case Op::Concat:
    case Op::Argmax:
    case Op::TopK:
    case Op::Unary:
    case Op::PadReflect: break;
    default: return false;  // mul_mat, flash_attn, im2col: always split over the threads
  }
  if (node.nelements() >= kCpuSmallNodeElements) return false;
  const Tensor* s = node.src[0];
  return !s || s->nelements() < kCpuSmallNodeElements;
}

namespace {

// Ops that give thread ith of nth exactly rows ctx.range(nrows) of their output, reading only the
// same rows of same-shaped sources (others broadcast: biases, norm weights).
bool splits_by_rows(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Mul:
    case Op::Scale:
    case Op::Gelu:
    case Op::LayerNorm:
    case Op::Unary: return true;
    default: return false;
  }
}

// True when every thread can run the small nodes [first, last] at once, each its own rows of
// each node, with no barrier between them: a node reads what the run made only from the rows its
// thread made (row-splitting ops, same shapes, no view in between), and there are rows for
// every thread. A step of several rows (beams, batched chunks) then spreads its layer norms, bias
// and residual adds over the threads instead of one thread doing them while the others wait.
bool run_splits_by_rows(const std::vector<Tensor*>& nodes, int first, int last, int nth) {
  int64_t rows = -1;
  for (int i = first; i <= last; ++i) {
    const Tensor* n = nodes[static_cast<size_t>(i)];
    if (op_is_view(n->op)) continue;
    if (!splits_by_rows(n->op)) return false;
    if (rows < 0) rows = n->nrows();
    if (n->nrows() != rows) return false;
    for (const Tensor* s : n->src) {
      if (!s) continue;
      // Made in this run (directly or through a view): only as this node's own rows.
      const Tensor* st = s->storage();
      bool made_here = false;
      for (int j = first; j < i && !made_here; ++j) made_here = nodes[static_cast<size_t>(j)] == st;
      if (made_here && (s != st || s->ne != n->ne)) return false;
    }
  }
  if (rows < nth) return false;
  // Memory: the planner may give a node of the run bytes that an earlier node of the run read
  // last. A thread ahead could then overwrite rows another thread still reads, unless the two
  // tensors sit on the same bytes with the same layout (row r over row r, as in place).
  auto range = [](const Tensor* t) {
    const auto* p = static_cast<const uint8_t*>(t->data);
    return std::pair<const uint8_t*, const uint8_t*>{p, p + t->nbytes()};
  };
  for (int i = first; i <= last; ++i) {
    const Tensor* n = nodes[static_cast<size_t>(i)];
    if (op_is_view(n->op)) continue;
    const auto [w0, w1] = range(n);
    for (int j = first; j <= i; ++j) {
      const Tensor* r = nodes[static_cast<size_t>(j)];
      if (op_is_view(r->op)) continue;
      for (const Tensor* s : r->src) {
        if (!s) continue;
        const auto [r0, r1] = range(s);
        const bool overlap = r0 < w1 && w0 < r1;
        const bool same_rows = s->data == n->data && s->ne == n->ne && s->nb == n->nb;
        if (overlap && !same_rows) return false;
      }
    }
  }
  return true;
}

}  // namespace

CpuDevice::CpuDevice() = default;

const char* CpuDevice::name() const { return kCpuDeviceName; }

std::string CpuDevice::description() const {
  std::string model = "CPU";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  return model + " (" + std::to_string(hardware_threads()) + " threads, " + simd_level_name(best_simd_level()) +
         " kernels)";
}

void CpuDevice::memory(size_t* free, size_t* total) const { hark::read_host_memory(free, total); }

bool CpuDevice::supports_op(const Tensor& node) const { return supports(node); }

bool CpuDevice::supports_buffer_type(const BufferType* bt) const { return bt == &cpu_buffer_type(); }

std::unique_ptr<Backend> CpuDevice::init_backend(const BackendParams& params) {
  const int n = params.n_threads > 0 ? params.n_threads : hardware_threads();
  return std::make_unique<CpuBackend>(*this, n, best_simd_level());
}

CpuBackend::CpuBackend(Device& dev, int n_threads, SimdLevel level)
    : dev_(dev),
      n_threads_(n_threads < 1 ? 1 : n_threads),
      kernels_(&kernels_for(level)),
      pool_(std::make_unique<ThreadPool>(n_threads_)) {}

CpuBackend::~CpuBackend() = default;

void CpuBackend::set_n_threads(int n) {
  n = n < 1 ? 1 : n;
  if (n == n_threads_) return;
  n_threads_ = n;
  pool_ = std::make_unique<ThreadPool>(n);
}

namespace {
// Set on the threads of a run_on_host while they work on it: a nested call (an item that asks for
// host work of its own) runs serially on its thread instead of waiting for a pool that is busy
// with its caller.
thread_local bool t_on_host = false;
}  // namespace

void CpuBackend::run_on_host(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n_threads_ == 1 || n <= 1 || t_on_host) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Items are taken one at a time from a shared counter: rows of a step cost about the same, but
  // a thread the OS paused must not hold back a fixed share.
  std::atomic<int64_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto body = [&](int, int) {
    t_on_host = true;
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
      }
    }
    t_on_host = false;
  };
  pool_->run(std::ref(body), ThreadPool::Width::AdaptToLoad);
  if (error) std::rethrow_exception(error);
}

void CpuBackend::set_simd_level(SimdLevel level) {
  HARK_CHECK(simd_level_supported(level),
             std::string("this processor cannot run the ") + simd_level_name(level) + " kernels");
  kernels_ = &kernels_for(level);
}

ComputeStatus CpuBackend::compute(const Graph& g) {
  // Validate everything before any thread starts, so a bad graph fails before any node has run
  // (errors inside the pool are still caught and passed on; see below).
  size_t wsize = 0;
  for (Tensor* node : g.nodes()) {
    if (op_is_view(node->op)) continue;
    HARK_CHECK(supports(*node), std::string("cpu backend cannot compute ") + node->describe());
    HARK_CHECK(node->data != nullptr,
               "cpu backend: node " + node->describe() + " has no memory (allocate the graph first)");
    for (Tensor* s : node->src)
      HARK_CHECK(!s || s->data != nullptr, "cpu backend: input " + (s ? s->describe() : std::string()) + " of " +
                                               node->describe() + " has no data");
    // The pool may run the graph on one thread (an oversubscribed machine): room for either.
    wsize = std::max({wsize, work_size(*node, n_threads_), work_size(*node, 1)});
  }
  if (work_.size() < wsize) work_.resize(wsize + 64);
  void* wdata = work_.empty()
                    ? nullptr
                    : reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(work_.data()) + 63) & ~uintptr_t{63});

  // Where to stop: the lowest node index at which some thread saw an abort or an error. A thread
  // can only set it to the node it is on, before the barrier after that node, and no thread
  // leaves that barrier before every thread has arrived, so all threads read the same verdict
  // there ("stop_at <= i") and return together. (A plain flag read after the barrier could be set
  // by a faster thread already at node i+1, so one thread would leave while the others waited at
  // the next barrier.)
  std::atomic<int> stop_at{INT_MAX};
  auto stop_after = [&stop_at](int i) {
    int cur = stop_at.load();
    while (i < cur && !stop_at.compare_exchange_weak(cur, i)) {
    }
  };
  bool aborted = false;  // written by thread 0 only, which is the calling thread
  std::mutex error_mu;
  int error_node = INT_MAX;
  std::string error;  // the error of the lowest node (the first one, in graph order)
  auto fail = [&](int i, std::string msg) {
    {
      std::lock_guard<std::mutex> lock(error_mu);
      if (i < error_node) {
        error_node = i;
        error = std::move(msg);
      }
    }
    stop_after(i);
    // This thread skips the rest of the op, so it may miss a barrier inside it (mul_mat has one)
    // that the others wait at: release them. They finish the node on whatever bytes they have,
    // which are thrown away with the rest of this run.
    pool_->break_barriers();
  };
  const auto& nodes = g.nodes();
  const int n_nodes = static_cast<int>(nodes.size());

  // The schedule: each step is one parallel node, or a run of consecutive small nodes (views in
  // between are skipped) that thread 0 computes alone while the others wait at the one barrier
  // after the run. A decoder step has many nodes of a few hundred values (a row's layer_norm, a
  // bias add, a copy into the KV cache) that cost less than a barrier; on a busy machine every
  // barrier can wait for a descheduled thread, so fewer barriers is most of the step's time.
  steps_.clear();
  for (int i = 0; i < n_nodes; ++i) {
    const Tensor* node = nodes[static_cast<size_t>(i)];
    if (op_is_view(node->op)) continue;
    const bool small = n_threads_ > 1 && cpu_is_small_node(*node);
    if (small && !steps_.empty() && steps_.back().small) {
      steps_.back().last = i;
    } else {
      steps_.push_back({i, i, small});
    }
  }
  for (ScheduleStep& st : steps_)
    if (st.small) st.by_rows = run_splits_by_rows(nodes, st.first, st.last, n_threads_);
  if (claims_size_ < steps_.size()) {
    claims_size_ = steps_.size();
    claims_ = std::make_unique<std::atomic<int64_t>[]>(claims_size_);
  }
  // Before the run: the pool's start of the job publishes these to every thread.
  for (size_t i = 0; i < steps_.size(); ++i) claims_[i].store(0, std::memory_order_relaxed);

  auto body = [&](int ith, int nth) {
    ComputeContext ctx;
    ctx.ith = ith;
    ctx.nth = nth;
    ctx.wdata = wdata;
    ctx.wsize = wsize;
    ctx.k = kernels_;
    ctx.pool = pool_.get();
    // Computes node i with `c`, then (thread 0) asks the abort callback. False: stop here.
    auto compute_one = [&](const ComputeContext& c, int i) {
      Tensor* node = nodes[static_cast<size_t>(i)];
      bool ok = true;
      try {
        compute_node(c, *node);
      } catch (const std::exception& e) {
        fail(i, e.what());
        ok = false;
      } catch (...) {
        fail(i, "cpu backend: unknown error computing " + node->describe());
        ok = false;
      }
      if (ith == 0 && abort_) {
        try {
          if (abort_()) {
            aborted = true;
            stop_after(i);
            ok = false;
          }
        } catch (const std::exception& e) {
          fail(i, std::string("abort callback failed: ") + e.what());
          ok = false;
        } catch (...) {
          fail(i, "abort callback failed with an unknown exception");
          ok = false;
        }
      }
      return ok;
    };
    for (const ScheduleStep& st : steps_) {
      if (!st.small) {
        ComputeContext node_ctx = ctx;
        node_ctx.claim = &claims_[static_cast<size_t>(&st - steps_.data())];
        compute_one(node_ctx, st.first);
      } else if (st.by_rows) {
        for (int i = st.first; i <= st.last; ++i) {
          if (op_is_view(nodes[static_cast<size_t>(i)]->op)) continue;
          if (!compute_one(ctx, i)) break;
        }
      } else if (ith == 0) {
        // Thread 0 alone, as a one-thread split (none of the small ops has a barrier inside, and
        // without a pool one would be a no-op). It stops at the first node that fails or aborts;
        // stop_at then names that node, which is <= st.last, so every thread returns after the
        // barrier below.
        ComputeContext one = ctx;
        one.nth = 1;
        one.pool = nullptr;
        for (int i = st.first; i <= st.last; ++i) {
          if (op_is_view(nodes[static_cast<size_t>(i)]->op)) continue;
          if (!compute_one(one, i)) break;
        }
      }
      ctx.barrier();
      if (stop_at.load() <= st.last) return;
    }
  };
  // Through a reference: a std::function holds one without allocating (the lambda itself, with
  // its many captures, would be copied to the heap every graph).
  pool_->run(std::ref(body), ThreadPool::Width::AdaptToLoad);
  if (error_node != INT_MAX) throw Error(error);
  return aborted ? ComputeStatus::Aborted : ComputeStatus::Ok;
}

void CpuBackend::set_tensor_async(Tensor& t, const void* data, size_t offset, size_t size) {
  tensor_set_range(t, data, offset, size);
}

void CpuBackend::get_tensor_async(const Tensor& t, void* data, size_t offset, size_t size) {
  tensor_get_range(t, data, offset, size);
}

std::unique_ptr<Event> CpuBackend::new_event() { return std::make_unique<ImmediateEvent>(); }

}  // namespace hark::cpu
