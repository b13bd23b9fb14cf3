/* qemu_insn_count: a QEMU TCG plugin that counts the guest instructions a program executes, for
 * what emulation can say about speed without the hardware (bench/arm64-instructions runs
 * bench_phases under qemu-aarch64 with it, on each ARM level).
 *
 *   qemu-aarch64 -plugin libqemu_insn_count.so,out=FILE prog args...   (FILE: the count, one line)
 *   qemu-aarch64 -plugin libqemu_insn_count.so,out=FILE,top=N ...      (and the N functions that
 *                                                                       executed the most)
 *
 * Each translated block adds its instruction count to one counter when it runs (an inline add:
 * no call per block), so the program runs at close to its plain emulated speed. One counter for
 * all guest threads, added to without atomics: exact for a one-thread program (run the program
 * with one compute thread).
 *
 * Debian's QEMU loads plugins but ships no plugin header, so the few entry points this uses are
 * declared here as QEMU's plugin API (version 1, QEMU 7.x) defines them. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn;
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
const char* qemu_plugin_insn_symbol(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t id, void* userdata),
                                    void* userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;
static char out_path[4096];

/* With top=N: a counter per function (the symbol of a block's first instruction), found by name
 * when a block is translated (rare) and added to inline when it runs. */
enum { kMaxFunctions = 8192 };
struct function_count {
  const char* name;
  uint64_t executed;
};
static struct function_count functions[kMaxFunctions];
static int n_functions, top_n;

static uint64_t* counter_of(const char* name) {
  if (!name) name = "(no symbol)";
  for (int i = 0; i < n_functions; ++i)
    if (strcmp(functions[i].name, name) == 0) return &functions[i].executed;
  if (n_functions == kMaxFunctions) return &functions[kMaxFunctions - 1].executed;
  functions[n_functions].name = name;
  return &functions[n_functions++].executed;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
  if (top_n > 0 && n > 0)
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                             counter_of(qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0))), n);
}

static int by_count(const void* a, const void* b) {
  const uint64_t x = ((const struct function_count*)a)->executed, y = ((const struct function_count*)b)->executed;
  return x < y ? 1 : x > y ? -1 : 0;
}

static void at_exit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  FILE* f = out_path[0] ? fopen(out_path, "w") : stderr;
  if (!f) {
    fprintf(stderr, "qemu_insn_count: cannot write %s\n", out_path);
    return;
  }
  fprintf(f, "%" PRIu64 "\n", executed);
  qsort(functions, (size_t)n_functions, sizeof functions[0], by_count);
  for (int i = 0; i < top_n && i < n_functions; ++i)
    fprintf(f, "%14" PRIu64 " %5.1f%% %s\n", functions[i].executed,
            executed ? 100.0 * (double)functions[i].executed / (double)executed : 0.0, functions[i].name);
  if (f != stderr) fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info;
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "out=", 4) == 0 && strlen(argv[i] + 4) < sizeof out_path) {
      strcpy(out_path, argv[i] + 4);
    } else if (strncmp(argv[i], "top=", 4) == 0) {
      top_n = atoi(argv[i] + 4);
    } else {
      fprintf(stderr, "qemu_insn_count: unknown argument '%s' (out=FILE and top=N are the ones)\n", argv[i]);
      return -1;
    }
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
