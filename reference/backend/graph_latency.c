/*
 * graph_latency.c - latency for the executes of one named graph (htpu_ref_set_graph_latency):
 * a graph that hangs while the others run, for tests of what waits on whom. The global
 * latencies (faults.c) slow every graph alike.
 */
#include <pthread.h>
#include <string.h>

#include "htpu_ref_control.h"
#include "rb_internal.h"

#define GL_MAX 8u

static pthread_mutex_t gl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char name[128];
  unsigned usec;
} gl_table[GL_MAX];

RB_EXPORT int htpu_ref_set_graph_latency(const char *graph, unsigned usec) {
  if (!graph || !graph[0] || strlen(graph) >= sizeof gl_table[0].name) return -1;
  pthread_mutex_lock(&gl_lock);
  int at = -1, free_at = -1;
  for (unsigned i = 0; i < GL_MAX; i++) {
    if (gl_table[i].name[0] && strcmp(gl_table[i].name, graph) == 0) at = (int)i;
    if (!gl_table[i].name[0] && free_at < 0) free_at = (int)i;
  }
  if (at < 0) at = free_at;
  int rc = 0;
  if (at < 0 && usec) {
    rc = -1; /* the table is full */
  } else if (at >= 0) {
    if (usec) strcpy(gl_table[at].name, graph);
    else gl_table[at].name[0] = '\0';
    gl_table[at].usec = usec;
  }
  pthread_mutex_unlock(&gl_lock);
  return rc;
}

uint32_t rb_graph_latency(const char *graph) {
  uint32_t usec = 0;
  pthread_mutex_lock(&gl_lock);
  for (unsigned i = 0; i < GL_MAX; i++)
    if (gl_table[i].name[0] && strcmp(gl_table[i].name, graph) == 0) usec = gl_table[i].usec;
  pthread_mutex_unlock(&gl_lock);
  return usec;
}

void rb_graph_latency_clear(void) {
  pthread_mutex_lock(&gl_lock);
  memset(gl_table, 0, sizeof gl_table);
  pthread_mutex_unlock(&gl_lock);
}
