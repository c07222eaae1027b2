/* Where the guest instructions go: a per-block variant of insn_count.c for
 * qemu-user / qemu-system (TCG plugin API version 1, QEMU 7.2; Debian ships
 * no qemu-plugin.h, so the entries used are declared here).
 *
 * Each translated block gets its own execution counter (an inline add, no
 * callback per execution). At exit every executed block is printed as
 * "tb <start address, hex> <instructions executed>" (instructions in the
 * block times its executions) through qemu_plugin_outs, i.e. to stderr with
 * `-d plugin`. The lines add up to insn_count.c's total for the same run.
 * targets/qemu-plugin/profile_by_function.py attributes them to the
 * functions of the guest binary:
 *
 *   gcc -shared -fPIC -O2 -o libtb_profile.so tb_profile.c
 *   qemu-aarch64 -plugin ./libtb_profile.so -d plugin ./prog 2> profile.txt
 *
 * A block translated twice (after a flush) has two counters; the script
 * adds them. Blocks are kept in a list allocated once per translation
 * (host memory of the plugin, never freed: the process ends right after).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb* tb, enum qemu_plugin_op op, void* ptr,
                                                     uint64_t imm);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb* tb);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
extern void qemu_plugin_outs(const char* string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct block { uint64_t vaddr, n, execs; struct block* next; };
static struct block* g_blocks;

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  struct block* b = calloc(1, sizeof *b);
  b->vaddr = qemu_plugin_tb_vaddr(tb);
  b->n = qemu_plugin_tb_n_insns(tb);
  b->next = g_blocks;
  g_blocks = b;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
}

static void on_exit_cb(qemu_plugin_id_t id, void* userdata) {
  char line[96];
  (void)id;
  (void)userdata;
  for (struct block* b = g_blocks; b != NULL; b = b->next) {
    if (b->execs == 0) continue;
    snprintf(line, sizeof line, "tb %" PRIx64 " %" PRIu64 "\n", b->vaddr, b->n * b->execs);
    qemu_plugin_outs(line);
  }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t* info,
                                                               int argc, char** argv) {
  (void)info; (void)argc; (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
  qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
  return 0;
}
