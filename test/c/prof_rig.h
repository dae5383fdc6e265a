/* prof_rig.h - what the profiling tests share: the three-op model they profile and the 100-op
 * chain (models/chain100). The backend's controls (capabilities, live profiles) are
 * ref_control.h's, as for every other test. */
#ifndef HTPU_TEST_PROF_RIG_H
#define HTPU_TEST_PROF_RIG_H

#include <stdint.h>

/* A graph "three" of three named ops: add_in (x + c), relu_mid, mul_out (* c), f32 [1,8]. */
extern const char *const PROF_THREE_OPS;
/* The same graph with its ops' names left empty (a binary without op names). */
extern const char *const PROF_NAMELESS_OPS;

/* models/chain100/chain100.txt built into a temporary file (once per run); NULL on failure. */
const char *prof_chain100_path(void);

#endif
