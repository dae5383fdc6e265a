/* prof_rig.h - what the profiling tests share: the reference backend's profile controls, the
 * three-op model they profile, and the 100-op chain (models/chain100). */
#ifndef HTPU_TEST_PROF_RIG_H
#define HTPU_TEST_PROF_RIG_H

#include <stdint.h>

/* A graph "three" of three named ops: add_in (x + c), relu_mid, mul_out (* c), f32 [1,8]. */
extern const char *const PROF_THREE_OPS;
/* The same graph with its ops' names left empty (a binary without op names). */
extern const char *const PROF_NAMELESS_OPS;

/* The reference backend's profile controls (htpu_ref_control.h), resolved from the library
 * the tests load; each aborts the test run when the library lacks them. */
int prof_set_capability(uint32_t key, uint32_t answer);
void prof_reset_capabilities(void);
uint32_t prof_live_profiles(void);

/* models/chain100/chain100.txt built into a temporary file (once per run); NULL on failure. */
const char *prof_chain100_path(void);

#endif
