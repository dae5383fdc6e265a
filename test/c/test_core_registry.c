/* test_core_registry.c - the handle registry: closed handles stay closed, for good. */
#include <stdint.h>
#include <stdlib.h>

#include "base/object.h"
#include "test.h"

static int destroyed;
static void count_destroy(htpu_object *o) {
  destroyed++;
  free(o);
}

static htpu_object *new_obj(void) {
  htpu_object *o = calloc(1, sizeof *o);
  if (o) obj_init(o, OBJ_SHARED, count_destroy);
  return o;
}

/* The handle the slot issued with its first generation, as anyone who kept it would hold it. */
static void *with_generation(void *h, uint32_t gen) {
  return (void *)(uintptr_t)(((uint64_t)gen << 32) | ((uint64_t)(uintptr_t)h & 0xFFFFFFFFu));
}

/* One slot opened and closed across the end of its generations (the free list hands the same
 * slot back every time): no handle it ever issued may resolve to a later object. Before slots
 * were retired, the generation wrapped to 1 and the slot's first handle came back to life. */
TEST(registry_generation_wrap_never_revives_a_closed_handle) {
  destroyed = 0;
  htpu_object *first = new_obj();
  CHECK(first);
  void *h0 = obj_register(first);
  CHECK(h0);
  void *first_gen_handle = with_generation(h0, 1);
  CHECK(obj_unregister(h0, OBJ_SHARED) == first);
  obj_release(first);

  obj_test_set_slot_generation(h0, UINT32_MAX - 1);
  void *issued[6];
  htpu_object *objs[6];
  for (int i = 0; i < 6; i++) {
    objs[i] = new_obj();
    CHECK(objs[i]);
    issued[i] = obj_register(objs[i]);
    CHECK(issued[i]);
    /* every earlier handle of every object, and the slot's very first, stays dead */
    CHECK(obj_acquire(h0, OBJ_SHARED) == NULL);
    CHECK_MSG(obj_acquire(first_gen_handle, OBJ_SHARED) == NULL,
              "cycle %d: the slot's first handle resolves to a new object", i);
    for (int k = 0; k < i; k++) {
      CHECK(issued[k] != issued[i]);
      CHECK(obj_acquire(issued[k], OBJ_SHARED) == NULL);
    }
    htpu_object *o = obj_acquire(issued[i], OBJ_SHARED);
    CHECK(o == objs[i]);
    obj_release(o);
    CHECK(obj_unregister(issued[i], OBJ_SHARED) == objs[i]);
    obj_release(objs[i]);
    CHECK(obj_unregister(issued[i], OBJ_SHARED) == NULL); /* double close */
  }
  CHECK_EQ(destroyed, 7);
  /* the used-up slot is retired: later handles come from other slots */
  uint32_t slot0 = (uint32_t)((uintptr_t)h0 & 0xFFFFFFFFu);
  CHECK_EQ((uint32_t)((uintptr_t)issued[0] & 0xFFFFFFFFu), slot0); /* gen UINT32_MAX - 1 */
  CHECK_EQ((uint32_t)((uintptr_t)issued[1] & 0xFFFFFFFFu), slot0); /* gen UINT32_MAX */
  CHECK_EQ((uint64_t)(uintptr_t)issued[1] >> 32, UINT32_MAX);
  CHECK((uint32_t)((uintptr_t)issued[2] & 0xFFFFFFFFu) != slot0);
}
