/* reading.c - one reading of the board (htpu_board_read) and the NPU's load between two. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "board.h"

const char *htpu_reading_state_name(int state) {
  switch (state) {
  case HTPU_READING_OK: return "ok";
  case HTPU_READING_MISSING: return "missing";
  case HTPU_READING_UNREADABLE: return "unreadable";
  case HTPU_READING_ABSURD: return "absurd";
  default: return NULL;
  }
}

void htpu_board_free(htpu_board *b) {
  if (!b) return;
  free(b->zones);
  free(b->policies);
  free(b);
}

int htpu_board_read(const char *root, htpu_board **out) {
  htpu_clear_error();
  if (!out) return htpu_set_error(HTPU_EINVAL, 0, "htpu_board_read: out is NULL");
  *out = NULL;
  int rc = board_check_root(root, "htpu_board_read");
  if (rc) return rc;
  htpu_board *b = calloc(1, sizeof *b);
  if (!b) return htpu_set_error(HTPU_ENOMEM, 0, "out of memory");
  rc = board_read_thermal(root, b);
  if (!rc) rc = board_read_cpufreq(root, b);
  if (rc) {
    htpu_board_free(b);
    return htpu_set_error(HTPU_ENOMEM, 0, "out of memory reading the board");
  }
  /* the counters last, with the clock: the interval a load is measured over ends here */
  htpu_stats s;
  htpu_stats_get(&s);
  b->at_ns = htpu_now_ns();
  b->executes = s.executes;
  b->execute_ns_total = s.execute_ns_total;
  *out = b;
  return 0;
}

int htpu_board_load_between(const htpu_board *earlier, const htpu_board *later,
                            htpu_board_load *out) {
  htpu_clear_error();
  if (!earlier || !later || !out)
    return htpu_set_error(HTPU_EINVAL, 0, "htpu_board_load_between: a NULL argument");
  memset(out, 0, sizeof *out);
  if (later->at_ns <= earlier->at_ns)
    return htpu_set_error(HTPU_EINVAL, 0,
                          "htpu_board_load_between: the later reading (%llu ns) is not after the "
                          "earlier one (%llu ns)",
                          (unsigned long long)later->at_ns, (unsigned long long)earlier->at_ns);
  out->interval_ns = later->at_ns - earlier->at_ns;
  /* counters only grow; a reading from another process would not, and gives 0, not garbage */
  out->executes = later->executes >= earlier->executes ? later->executes - earlier->executes : 0;
  out->execute_ns = later->execute_ns_total >= earlier->execute_ns_total
                        ? later->execute_ns_total - earlier->execute_ns_total
                        : 0;
  double busy = (double)out->execute_ns / (double)out->interval_ns;
  /* executes of several graphs overlap on the host: their sum can pass the wall time */
  out->busy = busy > 1.0 ? 1.0 : busy;
  out->executes_per_s = (double)out->executes * 1e9 / (double)out->interval_ns;
  return 0;
}
