/* test_core_load_spill_figures.c - a load's spill-fill need, and so the size of the group it
 * starts, is the figure the binary's graph blob info reports (htpu_model_info.graph_memory,
 * src/model/memory.c): the largest of the graphs it deserializes, the same number the load
 * estimate counts and the backend answers after the load; a binary that reports none (blob
 * info version 2) shares no buffer. The reference backend works its own need out from the
 * model (reference/model/memory.c), so a load that sized its group by anything else would be
 * refused by it (a member needing more than its group's buffer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "load_rig.h"
#include "test.h"

/* Two graphs in one binary: "spillp" of 1024 floats (8 KiB spill-fill), "spillq" of 4096
 * (32 KiB). blob: the graph blob info version its system library reports. */
static const char *two_spill_file(const char *file, unsigned blob) {
  char *p = lr_spill_model("p", 1024), *q = lr_spill_model("q", 4096);
  char text[1200];
  snprintf(text, sizeof text, "meta graph_blob=%u\n%s%s", blob, p ? p : "", q ? q : "");
  int ok = p && q;
  free(p);
  free(q);
  return ok ? fx_build_model_file(file, text) : NULL;
}

/* graph `name`'s reported spill-fill figure in ctx's model info; UINT64_MAX when not found. */
static uint64_t reported(htpu_context *ctx, const char *name) {
  const htpu_model_info *mi = ctx ? htpu_context_model_info(ctx) : NULL;
  for (uint32_t g = 0; mi && g < mi->num_graphs; g++)
    if (strcmp(mi->graphs[g].name, name) == 0) return mi->graph_memory[g].spill_fill_bytes;
  return UINT64_MAX;
}

/* What the backend answers for ctx's spill-fill (capability 215 switched on for the call). */
static uint64_t answered(htpu_context *ctx) {
  htpu_context_memory cm;
  memset(&cm, 0, sizeof cm);
  fx_ref_set_capability(QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY, 0);
  int rc = htpu_context_get_memory(ctx, &cm);
  fx_ref_reset_capabilities();
  if (rc || !cm.reported) printf("    context memory: %d, %s\n", rc, cm.note);
  return rc || !cm.reported ? UINT64_MAX : cm.spill_fill_bytes;
}

/* Only spillp asked for: the need (and the group it starts) is spillp's reported figure, not
 * the binary's largest; all graphs: the largest reported, too big for that group, so it starts
 * its own of that size. The estimate counts the same largest figure. */
TEST(spill_fill_group_size_is_the_reported_figure) {
  fx_reset_env();
  const char *path = two_spill_file("spill_fig.bin", 1);
  htpu_runtime *rt = lr_runtime(1);
  CHECK(path && rt);
  unsigned long v0 = fx_ref_violations();
  const char *only_p[1] = {"spillp"};
  htpu_load_options lo = {0};
  lo.graphs = only_p;
  lo.num_graphs = 1;
  htpu_context *cp = NULL, *call = NULL;
  htpu_graph *gp = NULL, *gq = NULL;
  CHECK_EQ(htpu_context_open_file_ex(rt, path, &lo, &cp), HTPU_OK);
  CHECK_EQ(htpu_context_open_file(rt, path, &call), HTPU_OK);
  htpu_context_load_info lp = lr_info(cp), la = lr_info(call);
  uint64_t rp = reported(cp, "spillp"), rq = reported(cp, "spillq");
  const htpu_model_info *mi = htpu_context_model_info(call);
  uint64_t estimate_spill = mi ? mi->load_estimate_bytes - mi->binary_bytes : 0;
  uint64_t held = fx_ref_stats().spill_fill_bytes;
  uint64_t ap = answered(cp), aa = answered(call);
  int answers = htpu_graph_open(cp, "spillp", &gp);
  if (!answers) answers = lr_spill_check(gp, 1024);
  if (!answers) answers = htpu_graph_open(call, "spillq", &gq);
  if (!answers) answers = lr_spill_check(gq, 4096);
  htpu_graph_close(&gp);
  htpu_graph_close(&gq);
  htpu_context_close(&cp);
  htpu_context_close(&call);
  htpu_runtime_close(&rt);
  CHECK_EQ(rp, 8ull * 1024); /* the model's, worked out by hand */
  CHECK_EQ(rq, 8ull * 4096);
  CHECK_EQ(lp.spill_fill_bytes, rp);
  CHECK(lp.spill_fill_group != 0);
  CHECK_EQ(lp.spill_fill_group_bytes, rp);
  CHECK_EQ(la.spill_fill_bytes, rq);
  CHECK(la.spill_fill_group != 0 && la.spill_fill_group != lp.spill_fill_group);
  CHECK_EQ(la.spill_fill_group_bytes, rq);
  CHECK_EQ(estimate_spill, rq); /* V1 reports nothing else: the estimate is binary + spill */
  CHECK_EQ(held, rp + rq);      /* the backend's account: each group's buffer once */
  CHECK_EQ(ap, rp);             /* what the backend answers after the load */
  CHECK_EQ(aa, rq);
  CHECK_EQ(answers, 0);
  CHECK_MSG(fx_ref_violations() == v0, "%s", fx_ref_last_violation());
}

/* Graph blob info version 2 carries no spill-fill size: nothing to size a group by, so the
 * context keeps a buffer of its own (the backend still needs and accounts one) and says why. */
TEST(spill_fill_none_reported_no_group) {
  fx_reset_env();
  const char *path = two_spill_file("spill_fig2.bin", 2);
  htpu_runtime *rt = lr_runtime(1);
  CHECK(path && rt);
  htpu_context *ctx = NULL;
  htpu_graph *g = NULL;
  CHECK_EQ(htpu_context_open_file(rt, path, &ctx), HTPU_OK);
  htpu_context_load_info li = lr_info(ctx);
  const htpu_model_info *mi = htpu_context_model_info(ctx);
  int v2 = mi && mi->graph_memory[0].blob_info_version == 2 &&
           mi->graph_memory[1].blob_info_version == 2;
  uint64_t rq = reported(ctx, "spillq");
  uint64_t held = fx_ref_stats().spill_fill_bytes;
  int answers = htpu_graph_open(ctx, "spillq", &g);
  if (!answers) answers = lr_spill_check(g, 4096);
  htpu_graph_close(&g);
  htpu_context_close(&ctx);
  htpu_runtime_close(&rt);
  CHECK(v2);
  CHECK_EQ(rq, 0);
  CHECK_EQ(li.spill_fill_bytes, 0);
  CHECK_EQ(li.spill_fill_group, 0);
  CHECK_EQ(li.spill_fill_group_bytes, 0);
  CHECK_STR_CONTAINS(li.spill_fill_note, "reports no spill-fill size");
  CHECK_EQ(held, 8ull * 4096);
  CHECK_EQ(answers, 0);
}
