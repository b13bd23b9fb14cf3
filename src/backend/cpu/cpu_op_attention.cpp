// FlashAttn on the CPU: softmax(Q K^T * scale + mask) V with keys visited in tiles.
//
// For each query the keys are visited in tiles of kTile (a query alone: of all its scratch). A
// tile's scores are computed into scratch, and the query keeps a running maximum M, a running sum
// S of exp(score - M) and an accumulator acc = sum exp(score - M) * v. When a tile raises M, S and
// acc are rescaled by exp(M_old - M_new), so the result is exactly softmax-weighted without ever
// holding the Nq x Nk score matrix: scratch per thread is a fixed few tiles, whatever the sequence
// lengths.
//
// Two ways through the same arithmetic:
//  - few queries (decoder steps): each (query, head) row with its own running softmax, a
//    thread's rows taken in groups that walk the keys together so a [D, H, Nk] KV cache is
//    streamed in memory order; rows of a group that share K/V (a batch step's queries of one
//    head) get a tile's scores and weighted values from one multi-row kernel call (attend_rows);
//  - many queries (the encoder, prompts): blocks of kQBlock queries of one head, where a tile's
//    scores are one small GEMM (Q block x K tile) and its weighted values another (P x V tile),
//    so the work runs at matrix-multiply speed instead of one kernel call per key. The operands
//    are packed for the micro-kernel once and reused (a head's K/V tiles by all its blocks).
// Threads take whole queries (or query blocks) ordered query-fastest, so one thread's work mostly
// shares a K/V head, which then stays in cache. K and V may be f32, f16 (the KV cache) or q8_0
// (a quantized cross-attention cache): q8_0 scores are integer dot products with each query
// quantized to q8 blocks, as mul_mat quantizes the activations of a q8_0 weight, and q8_0
// values are widened block by block into the weighted sums.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"

namespace hark::cpu {

namespace {

constexpr int64_t kTile = 256;       // keys per tile: a query's tile of scores stays in L1
constexpr int64_t kQBlock = 144;     // queries per GEMM block (a multiple of every micro-kernel's rows)
constexpr int64_t kMinBlocked = 16;  // fewer queries than this go one by one
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The operands of one node, unpacked once.
struct Attn {
  const Tensor& q;
  const Tensor& k;
  const Tensor& v;
  const Tensor* mask;
  const Tensor& out;
  float scale;
  bool causal;
  int64_t D, nq, nk, group;

  explicit Attn(const Tensor& node)
      : q(*node.src[0]),
        k(*node.src[1]),
        v(*node.src[2]),
        mask(node.src[3]),
        out(node),
        scale(node.params[0].f),
        causal(node.params[1].i != 0),
        D(q.ne[0]),
        nq(q.ne[1]),
        nk(k.ne[1]),
        group(q.ne[2] / k.ne[2]) {}

  // Keys [0, live) are visible to query i of batch b: past the causal limit, or in the run of
  // -inf that ends the query's mask row, they would get probability zero, so they are never
  // visited, nor read (a batch step's rows at different positions mask the unwritten tail of a
  // KV cache this way).
  int64_t live(int64_t i, int64_t b) const {
    int64_t n = causal ? std::clamp<int64_t>(i + (nk - nq) + 1, 0, nk) : nk;
    if (mask) {
      const uint8_t* mr = mask_row(i, b);
      while (n > 0 && load_f32(mr + (n - 1) * mask->nb[0]) == kNegInf) --n;
    }
    return n;
  }
  // Query i's mask row in batch b: one per batch, or one for all of them.
  const uint8_t* mask_row(int64_t i, int64_t b) const {
    return static_cast<const uint8_t*>(mask->data) + i * mask->nb[1] + (mask->ne[3] > 1 ? b * mask->nb[3] : 0);
  }
  const uint8_t* k_head(int64_t h, int64_t b) const {
    return static_cast<const uint8_t*>(k.data) + (h / group) * k.nb[2] + b * k.nb[3];
  }
  const uint8_t* v_head(int64_t h, int64_t b) const {
    return static_cast<const uint8_t*>(v.data) + (h / group) * v.nb[2] + b * v.nb[3];
  }
  // result [D, H, Nq, B]: query i of head h has its D values contiguous
  float* out_row(int64_t i, int64_t h, int64_t b) const {
    return reinterpret_cast<float*>(static_cast<uint8_t*>(out.data) + h * out.nb[1] + i * out.nb[2] + b * out.nb[3]);
  }
  // Q rows feed the GEMM in place, so their stride must be whole floats (it always is for f32).
  bool blocked() const { return nq >= kMinBlocked && q.nb[1] % sizeof(float) == 0; }
};

// Adds query i's mask (batch b) to the first n scores of a tile starting at key j0. A key the
// mask hides (-inf) gets -inf whatever its score, so no key value can turn it into NaN.
void add_mask(const Attn& a, int64_t i, int64_t b, int64_t j0, int64_t n, float* s) {
  if (!a.mask) return;
  const uint8_t* mr = a.mask_row(i, b) + j0 * a.mask->nb[0];
  for (int64_t t = 0; t < n; ++t) {
    const float m = load_f32(mr + t * a.mask->nb[0]);
    s[t] = m == kNegInf ? kNegInf : s[t] + m;
  }
}

// Folds a tile of n masked, scaled scores into one query's running (m, sum, acc): afterwards s
// holds the tile's weights exp(score - m) for the new m. Returns false (s untouched) when the
// tile has no visible key for this query.
bool online_update(const Kernels& kern, int64_t D, int64_t n, float* s, float* m, float* sum, float* acc) {
  const float tile_max = n > 0 ? kern.max(n, s) : kNegInf;
  if (!(tile_max > kNegInf)) return false;  // all masked (or NaN): no weight
  if (tile_max > *m) {
    // Rescale what has been summed so far to the new maximum (nothing to rescale on the first
    // visible tile, where sum and acc are still zero).
    if (*sum > 0.0f) {
      const float c = std::exp(*m - tile_max);
      *sum *= c;
      kern.scale(D, acc, c, 0.0f, acc);
    }
    *m = tile_max;
  }
  *sum += kern.exp_sub_sum(n, s, *m, s);
  return true;
}

void finish(const Kernels& kern, int64_t D, float sum, const float* acc, float* out) {
  if (sum > 0.0f)
    kern.scale(D, acc, 1.0f / sum, 0.0f, out);
  else
    std::fill(out, out + D, 0.0f);  // no visible key: zeros, not 0/0
}

// ---- a few queries, one at a time ----

// Up to kRowGroup (query, head) rows visit the keys together, key by key: at each key every row
// of the group reads its head's part of the key, so a KV cache laid out [D, H, Nk] (the decoder's
// cache_heads views: a key's heads side by side) is read front to back, whole rows at a time,
// instead of once per head at a stride of the cache row (a head-major cache, the cross K/V, goes
// head by head instead: op_flash_attn). The arithmetic of each row is that of the row alone (same
// tiles, same kernel calls), so grouping changes no result.
constexpr int64_t kRowGroup = 8;

// Scratch per row of a group: scores [kTile], accumulator [D]; after the group's rows, the
// queries quantized for q8_0 keys (D / 32 blocks a row).
size_t row_floats(int64_t D) {
  const int64_t q8a_floats = D / kQuantBlock * static_cast<int64_t>(sizeof(BlockQ8A) / sizeof(float));
  return static_cast<size_t>(kRowGroup * (kTile + D + q8a_floats));
}

// Rows that go one by one (a head of the cross cache, op_flash_attn) take a group's whole
// scratch: tiles of this many keys (a 30 s window's 1500 in one), so a row's keys and then its
// values are each read as one long run, with one softmax pass. Chosen by the cache's layout, never
// by how the rows fell to threads, so a row's result does not depend on the thread count. (Zen 4, 2 threads, alternated
// in one process against 256-key tiles, medians: 8 rows on their own windows 2.84 -> 2.65 and 2.28 -> 2.14 ms, q8_0
// 0.94
// -> 0.90 and 1.29 -> 1.11; one row over 32 layers 2.29 -> 2.11 and 2.38 -> 2.23.)
int64_t single_row_tile(int64_t D) {
  const int64_t q8a_floats = D / kQuantBlock * static_cast<int64_t>(sizeof(BlockQ8A) / sizeof(float));
  return (static_cast<int64_t>(row_floats(D)) - D - q8a_floats) / 16 * 16;
}

struct RowState {
  const float* q;
  const uint8_t* kb;
  const uint8_t* vb;
  float* s;
  float* acc;
  int64_t i, h, b, live, n;  // n: visible keys of the current tile
  float m, sum;
  bool active;  // the current tile has weight for this row
};

// Rows [r0, r0 + nr) of q (ordered query, head, batch), nr <= kRowGroup, in tiles of `tile` keys
// (kTile, or single_row_tile when nr is 1).
void attend_rows(const Kernels& kern, const Attn& a, int64_t r0, int64_t nr, int64_t tile, float* scratch) {
  const int64_t D = a.D;
  const int64_t ld = tile + D;  // floats from one row's scratch to the next
  RowState rows[kRowGroup];
  int64_t live_max = 0;
  // q8_0 keys: each row's query quantized once, its blocks at qa + r * qblocks.
  const bool k_q8 = a.k.type == DType::Q8_0;
  const int64_t qblocks = D / kQuantBlock;
  auto* qa = reinterpret_cast<BlockQ8A*>(scratch + nr * ld);
  for (int64_t r = 0; r < nr; ++r) {
    RowState& w = rows[r];
    const RowIndex ri = row_index(a.q, r0 + r);
    w.i = ri.i1, w.h = ri.i2, w.b = ri.i3;
    w.q = reinterpret_cast<const float*>(static_cast<const uint8_t*>(a.q.data) + w.i * a.q.nb[1] + w.h * a.q.nb[2] +
                                         w.b * a.q.nb[3]);
    w.kb = a.k_head(w.h, w.b);
    w.vb = a.v_head(w.h, w.b);
    w.s = scratch + r * ld;
    w.acc = w.s + tile;
    w.live = a.live(w.i, w.b);
    w.m = kNegInf;
    w.sum = 0.0f;
    std::fill(w.acc, w.acc + D, 0.0f);
    live_max = std::max(live_max, w.live);
    if (k_q8) kern.quantize_q8a(w.q, qa + r * qblocks, D);
  }
  const size_t kstride = a.k.nb[1], vstride = a.v.nb[1];
  for (int64_t j0 = 0; j0 < live_max; j0 += tile) {
    const int64_t T = std::min(tile, live_max - j0);
    int64_t n_max = 0;
    for (int64_t r = 0; r < nr; ++r) {
      rows[r].n = std::clamp<int64_t>(rows[r].live - j0, 0, T);
      n_max = std::max(n_max, rows[r].n);
    }
    // Scores: one tile kernel call per run of rows that share K (same head: the queries of one
    // head in a batch step, against the same cross K) and see the same keys; each key is loaded
    // once for the whole run. A row's scores are the same alone or in a run (each (key, query)
    // pair has its own accumulator).
    for (int64_t r = 0; r < nr;) {
      const RowState& w = rows[r];
      int64_t e = r + 1;
      const std::ptrdiff_t qs = r + 1 < nr ? rows[r + 1].q - w.q : 0;
      while (e < nr && rows[e].kb == w.kb && rows[e].n == w.n && qs > 0 && rows[e].q - rows[e - 1].q == qs) ++e;
      if (w.n > 0) {
        const uint8_t* kt = w.kb + static_cast<size_t>(j0) * kstride;
        if (k_q8)
          kern.dot_q_tiles(DType::Q8_0, D, kt, kstride, w.n, qa + r * qblocks, qblocks, e - r, w.s, ld);
        else
          (a.k.type == DType::F16 ? kern.dot_f16_rows : kern.dot_f32_rows)(D, kt, kstride, w.n, w.q, e - r > 1 ? qs : 0,
                                                                           e - r, w.s, ld);
      }
      r = e;
    }
    bool any = false;
    for (int64_t r = 0; r < nr; ++r) {
      RowState& w = rows[r];
      kern.scale(w.n, w.s, a.scale, 0.0f, w.s);
      add_mask(a, w.i, w.b, j0, w.n, w.s);
      w.active = online_update(kern, D, w.n, w.s, &w.m, &w.sum, w.acc);
      any = any || w.active;
    }
    if (!any) continue;
    if (a.v.type != DType::F32) {
      // Weighted values (the f16 or q8_0 cache): one call per run of active rows that share V and
      // the same keys, each value row widened once for the run; a row's sums are those it gets
      // alone.
      for (int64_t r = 0; r < nr;) {
        const RowState& w = rows[r];
        int64_t e = r + 1;
        while (w.active && e < nr && rows[e].active && rows[e].vb == w.vb && rows[e].n == w.n) ++e;
        if (w.active && w.n > 0) {
          const uint8_t* vt = w.vb + static_cast<size_t>(j0) * vstride;
          if (a.v.type == DType::Q8_0)
            kern.axpy_q8_0_rows(D, w.n, w.s, ld, e - r, vt, vstride, w.acc, ld);
          else
            kern.axpy_f16_rows(D, w.n, w.s, ld, e - r, reinterpret_cast<const f16_t*>(vt), vstride, w.acc, ld);
        }
        r = e;
      }
      continue;
    }
    // weighted f32 values, key by key across the group
    for (int64_t t = 0; t < n_max; ++t) {
      const size_t voff = static_cast<size_t>(j0 + t) * vstride;
      for (int64_t r = 0; r < nr; ++r) {
        RowState& w = rows[r];
        if (!w.active || t >= w.n) continue;
        const float p = w.s[t];
        if (p == 0.0f) continue;  // masked keys (and negligible ones) add nothing
        kern.axpy(D, p, reinterpret_cast<const float*>(w.vb + voff), w.acc);
      }
    }
  }
  for (int64_t r = 0; r < nr; ++r)
    finish(kern, D, rows[r].sum, rows[r].acc, a.out_row(rows[r].i, rows[r].h, rows[r].b));
}

// ---- blocks of queries through the GEMM kernel ----

// The block path works on operands packed for the GEMM micro-kernel (Kernels::pack_a/pack_b):
// a block's queries once per block (scaled there, so the scores need no scaling pass), and a
// head's keys and values once per thread and head, tile by tile, then reused by every query block
// of that head the thread takes (the encoder: 11 blocks of one head in a row). Without this, each
// tile's K and V were repacked for every block, a sixth of the attention's time.
// Tiles of one head kept packed per thread. A head with more tiles (over 2048 keys; Whisper's
// longest is 1500) is packed tile by tile into the first slot instead.
constexpr int64_t kCachedTiles = 8;

int64_t tiles_of(int64_t nk) { return (nk + kTile - 1) / kTile; }
int64_t kv_slots(int64_t nk) { return std::clamp<int64_t>(tiles_of(nk), 1, kCachedTiles); }
// A packed tile (BlockScratch::kv_slot_floats): K as B panels [kTile + pad, D] (keys as rows), then
// V as B panels [D + pad, kTile] (depth-major: values as columns, keys as depth). Both pads: a
// last panel is written whole, gemm_nr rows, and kTile need not be a multiple of gemm_nr (NEON's
// 12: without the pad, V's panels overwrote the last K panel's keys).

// Scratch of one thread for the block path. Every part starts on a cache line (the packed panels
// must: the micro-kernels load them with aligned vector loads).
struct BlockScratch {
  float* s;     // scores, then weights [kQBlock x kTile]
  float* qp;    // the block's scaled queries as A panels
  float* pp;    // the weights as A panels
  float* acc;   // accumulators [kQBlock x D]
  float* m;     // each query's running max
  float* sum;   // and sum
  float* rows;  // K or V rows widened to f32 before packing [kTile x D]
  float* kv;    // kv_slots packed tiles, kv_slot_floats apart

  static int64_t lines(int64_t n) { return (n + 15) / 16 * 16; }  // floats in whole 64-byte lines
  static int64_t k_panel_floats(int64_t D) { return lines((kTile + kMaxGemmPanel) * D); }
  static int64_t kv_slot_floats(int64_t D) { return k_panel_floats(D) + lines((D + kMaxGemmPanel) * kTile); }
  // The parts in order, each rounded to whole lines; kv last.
  static void sizes(int64_t D, int64_t out[7]) {
    const int64_t panels = kQBlock + kMaxGemmPanel;
    const int64_t n[7] = {kQBlock * kTile, panels * D, panels * kTile, kQBlock * D, kQBlock, kQBlock, kTile * D};
    for (int i = 0; i < 7; ++i) out[i] = lines(n[i]);
  }
  static size_t floats(int64_t D, int64_t nk) {
    int64_t n[7];
    sizes(D, n);
    int64_t total = kv_slots(nk) * kv_slot_floats(D);
    for (int64_t x : n) total += x;
    return static_cast<size_t>(total);
  }
  BlockScratch(float* p, int64_t D) {
    int64_t n[7];
    sizes(D, n);
    float** parts[7] = {&s, &qp, &pp, &acc, &m, &sum, &rows};
    for (int i = 0; i < 7; ++i) {
      *parts[i] = p;
      p += n[i];
    }
    kv = p;
  }
};

// Which head's tiles a thread holds packed, and how many (tiles are visited from the first, so
// they are packed in order). Lives for one op call: the scratch is reused by other nodes.
struct PackedHead {
  const uint8_t* kb = nullptr;
  const uint8_t* vb = nullptr;
  int64_t n_packed = 0;
};

// Rows [j0, j0 + T) of a K or V head as f32 rows of D: in place when they are f32 at a
// whole-float stride, else widened, dequantized or copied into `tmp`. Sets *ld to the row stride
// in floats.
const float* f32_rows(const Kernels& kern, const Tensor& t, const uint8_t* head, int64_t j0, int64_t T, int64_t D,
                      float* tmp, int64_t* ld) {
  const uint8_t* r0 = head + j0 * t.nb[1];
  if (t.type == DType::F32 && t.nb[1] % sizeof(float) == 0 && reinterpret_cast<uintptr_t>(r0) % alignof(float) == 0) {
    *ld = static_cast<int64_t>(t.nb[1] / sizeof(float));
    return reinterpret_cast<const float*>(r0);
  }
  for (int64_t r = 0; r < T; ++r) {
    if (t.type == DType::F16)
      kern.f16_to_f32_row(reinterpret_cast<const f16_t*>(r0 + r * t.nb[1]), tmp + r * D, D);
    else if (t.type == DType::Q8_0)
      kern.dequantize_row(DType::Q8_0, r0 + r * t.nb[1], tmp + r * D, D);
    else
      std::memcpy(tmp + r * D, r0 + r * t.nb[1], static_cast<size_t>(D) * sizeof(float));
  }
  *ld = D;
  return tmp;
}

// Tile ti (keys [ti * kTile, +T)) of the head at (kb, vb), packed: returns its K panels, and its
// V panels in *vp.
const float* packed_tile(const Kernels& kern, const Attn& a, const uint8_t* kb, const uint8_t* vb, int64_t ti,
                         int64_t T, BlockScratch& w, PackedHead& ph, const float** vp) {
  const int64_t D = a.D;
  const bool cached = tiles_of(a.nk) <= kCachedTiles;
  if (kb != ph.kb || vb != ph.vb) ph = {kb, vb, 0};
  float* slot = w.kv + (cached ? ti : 0) * BlockScratch::kv_slot_floats(D);
  float* kp = slot;
  float* vpk = slot + BlockScratch::k_panel_floats(D);
  *vp = vpk;
  if (cached && ti < ph.n_packed) return kp;
  const int64_t j0 = ti * kTile;
  int64_t ld = 0;
  const float* rows = f32_rows(kern, a.k, kb, j0, T, D, w.rows, &ld);
  kern.pack_b(T, D, rows, ld, kp);
  rows = f32_rows(kern, a.v, vb, j0, T, D, w.rows, &ld);
  kern.pack_b_depth_major(D, T, rows, ld, vpk);
  if (cached) ph.n_packed = ti + 1;
  return kp;
}

// Queries [i0, i0 + nqb) of head h, batch b.
void attend_block(const Kernels& kern, const Attn& a, int64_t i0, int64_t nqb, int64_t h, int64_t b, BlockScratch& w,
                  PackedHead& ph) {
  const int64_t D = a.D;
  const float* qb = reinterpret_cast<const float*>(static_cast<const uint8_t*>(a.q.data) + i0 * a.q.nb[1] +
                                                   h * a.q.nb[2] + b * a.q.nb[3]);
  const int64_t ldq = static_cast<int64_t>(a.q.nb[1] / sizeof(float));
  // The scale goes on the queries: (scale q) . k is the scaled score, and the block's queries are
  // far fewer values than its scores.
  kern.pack_a(nqb, D, qb, ldq, w.qp);
  const int64_t qp_floats = (nqb + kern.gemm_mr - 1) / kern.gemm_mr * kern.gemm_mr * D;
  kern.scale(qp_floats, w.qp, a.scale, 0.0f, w.qp);

  std::fill(w.acc, w.acc + nqb * D, 0.0f);
  std::fill(w.m, w.m + nqb, kNegInf);
  std::fill(w.sum, w.sum + nqb, 0.0f);
  const uint8_t* kb = a.k_head(h, b);
  const uint8_t* vb = a.v_head(h, b);
  // Each query's visible keys, once: with a mask, live() scans the mask row's -inf tail.
  int64_t live[kQBlock];
  int64_t live_max = 0;
  for (int64_t r = 0; r < nqb; ++r) live_max = std::max(live_max, live[r] = a.live(i0 + r, b));
  for (int64_t j0 = 0; j0 < live_max; j0 += kTile) {
    // A tile is packed whole (all of its keys, whatever this block sees), so every block of the
    // head can reuse it.
    const int64_t T_all = std::min(kTile, a.nk - j0);
    const float* vp = nullptr;
    const float* kp = packed_tile(kern, a, kb, vb, j0 / kTile, T_all, w, ph, &vp);
    const int64_t T = std::min(kTile, live_max - j0);
    kern.gemm_packed(nqb, T, D, w.qp, kp, D, w.s, kTile, false);  // S(i, t) = scale q_i . k_t

    bool any = false;
    for (int64_t r = 0; r < nqb; ++r) {
      float* s = w.s + r * kTile;
      const int64_t n = std::clamp<int64_t>(live[r] - j0, 0, T);  // visible keys of the tile
      add_mask(a, i0 + r, b, j0, n, s);
      if (online_update(kern, D, n, s, &w.m[r], &w.sum[r], w.acc + r * D)) {
        any = true;
      } else {
        std::fill(s, s + n, 0.0f);  // this query takes nothing from the tile
      }
      std::fill(s + n, s + T, 0.0f);  // past the causal limit: weight zero in the product below
    }
    if (!any) continue;

    // acc += P V: the weights as A panels against the tile's V panels (depth: the keys; the
    // panels hold the whole tile, T_all keys deep, and the product reads the first T).
    kern.pack_a(nqb, T, w.s, kTile, w.pp);
    kern.gemm_packed(nqb, D, T, w.pp, vp, T_all, w.acc, D, true);
  }
  for (int64_t r = 0; r < nqb; ++r) finish(kern, D, w.sum[r], w.acc + r * D, a.out_row(i0 + r, h, b));
}

size_t per_thread_floats(const Tensor& node) {
  const Attn a(node);
  const size_t n = a.blocked() ? BlockScratch::floats(a.D, a.nk) : row_floats(a.D);
  return (n + 15) / 16 * 16;  // whole cache lines, so threads never share one
}

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
  return per_thread_floats(node) * sizeof(float) * static_cast<size_t>(nth);
}

void op_flash_attn(const ComputeContext& ctx, Tensor& node) {
  const Attn a(node);
  float* scratch = static_cast<float*>(ctx.wdata) + per_thread_floats(node) * static_cast<size_t>(ctx.ith);
  const int64_t H = a.q.ne[2], B = a.q.ne[3];
  if (!a.blocked()) {
    // Threads and groups take whole heads' queries (nq rows that share K and V) when a group
    // holds at least one: split between two calls, a head's keys would be read twice (beam
    // search: 5 queries per head, groups of 8 rows took 5 + 3, then 2 + 5).
    // Groups span several heads only when the heads lie side by side in a key's row (the
    // self-attention cache), where walking them together reads each row once, in order. Where
    // each head's keys are one contiguous run (the cross cache), more heads in a group are only
    // more streams at once, which the prefetchers follow worse than one: a head's queries go by
    // themselves. (Zen 4, 2 threads, the two orders alternated in one process, medians: 8 rows
    // on their own windows 3.55 -> 3.31 and 2.94 -> 2.60 ms, q8_0 1.93 -> 1.78; one row over 32
    // layers 3.24 -> 3.15 and 3.77 -> 3.61 ms.)
    const bool heads_side_by_side = a.k.nb[2] < a.k.nb[1];
    const int64_t unit = a.nq > 1 && a.nq <= kRowGroup ? a.nq : 1;
    const int64_t per_group = !heads_side_by_side ? unit : unit > 1 ? kRowGroup / unit * unit : kRowGroup;
    int64_t u0, u1;
    ctx.range(a.q.nrows() / unit, &u0, &u1);
    const int64_t r0 = u0 * unit, r1 = u1 * unit;
    const int64_t tile = per_group == 1 ? single_row_tile(a.D) : kTile;
    for (int64_t r = r0; r < r1; r += per_group) attend_rows(*ctx.k, a, r, std::min(per_group, r1 - r), tile, scratch);
    return;
  }
  const int64_t nblocks = (a.nq + kQBlock - 1) / kQBlock;
  int64_t w0, w1;
  ctx.range(nblocks * H * B, &w0, &w1);
  BlockScratch bs(scratch, a.D);
  PackedHead ph;
  for (int64_t w = w0; w < w1; ++w) {
    const int64_t qblock = w % nblocks, h = (w / nblocks) % H, b = w / (nblocks * H);
    const int64_t i0 = qblock * kQBlock;
    attend_block(*ctx.k, a, i0, std::min(kQBlock, a.nq - i0), h, b, bs, ph);
  }
}

}  // namespace hark::cpu
