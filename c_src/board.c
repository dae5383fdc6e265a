/*
 * board.c - the board NIF: one reading of the board's thermal zones, cpufreq policies and the
 * core's execute counters (htpu_board_read) as a map, for HexagonTpu.Stats.board/1, which
 * turns it into the documented shape. Beside stats.c in the layer table: it calls only the
 * C core and terms.h.
 *
 * board_read(root :: binary | nil) -> {:ok, map} | {:error, reason}. Dirty IO: sysfs reads can
 * wait on a slow sensor. Temperatures stay millidegrees and frequencies kHz (integers, nil
 * when not trustworthy); states are atoms (:ok, :missing, :unreadable, :absurd).
 */
#include <string.h>

#include "atoms.h"
#include "nif.h"
#include "terms.h"

static ERL_NIF_TERM atom(ErlNifEnv *env, const char *name) { return enif_make_atom(env, name); }

static ERL_NIF_TERM state_atom(ErlNifEnv *env, int state) {
  const char *name = htpu_reading_state_name(state);
  return atom(env, name ? name : "unknown");
}

static ERL_NIF_TERM temp_or_nil(ErlNifEnv *env, int64_t mc) {
  return mc == HTPU_BOARD_NO_TEMP ? ATOMS.nil : enif_make_int64(env, mc);
}

static ERL_NIF_TERM string_or_nil(ErlNifEnv *env, const char *s) {
  return s[0] ? nif_make_string(env, s) : ATOMS.nil;
}

static void put(ErlNifEnv *env, ERL_NIF_TERM *map, const char *key, ERL_NIF_TERM value) {
  enif_make_map_put(env, *map, atom(env, key), value, map);
}

static ERL_NIF_TERM make_zone(ErlNifEnv *env, const htpu_thermal_zone *z) {
  static const char *const kinds[] = {"other", "nsp", "cpu"};
  ERL_NIF_TERM trips = enif_make_list(env, 0);
  for (uint32_t i = z->num_trips; i-- > 0;) {
    ERL_NIF_TERM t = enif_make_new_map(env);
    put(env, &t, "type", nif_make_string(env, z->trips[i].type));
    put(env, &t, "temp_mc", temp_or_nil(env, z->trips[i].temp_mc));
    put(env, &t, "state", state_atom(env, z->trips[i].state));
    trips = enif_make_list_cell(env, t, trips);
  }
  ERL_NIF_TERM m = enif_make_new_map(env);
  put(env, &m, "zone", nif_make_string(env, z->zone));
  put(env, &m, "type", nif_make_string(env, z->type));
  put(env, &m, "kind", atom(env, kinds[z->kind >= 0 && z->kind <= 2 ? z->kind : 0]));
  put(env, &m, "state", state_atom(env, z->state));
  put(env, &m, "temp_mc", temp_or_nil(env, z->temp_mc));
  put(env, &m, "note", string_or_nil(env, z->note));
  put(env, &m, "trips", trips);
  put(env, &m, "hot_mc", temp_or_nil(env, z->hot_mc));
  put(env, &m, "critical_mc", temp_or_nil(env, z->critical_mc));
  put(env, &m, "trips_skipped", enif_make_uint(env, z->trips_skipped));
  return m;
}

static ERL_NIF_TERM khz_or_nil(ErlNifEnv *env, uint64_t khz) {
  return khz ? enif_make_uint64(env, khz) : ATOMS.nil;
}

static ERL_NIF_TERM make_policy(ErlNifEnv *env, const htpu_cpu_policy *p) {
  ERL_NIF_TERM m = enif_make_new_map(env);
  put(env, &m, "policy", nif_make_string(env, p->policy));
  put(env, &m, "cpus", nif_make_string(env, p->cpus));
  put(env, &m, "governor", string_or_nil(env, p->governor));
  put(env, &m, "governor_state", state_atom(env, p->governor_state));
  put(env, &m, "cur_khz", khz_or_nil(env, p->cur_state == HTPU_READING_OK ? p->cur_khz : 0));
  put(env, &m, "cur_state", state_atom(env, p->cur_state));
  put(env, &m, "min_khz", khz_or_nil(env, p->min_khz));
  put(env, &m, "max_khz", khz_or_nil(env, p->max_khz));
  put(env, &m, "hw_min_khz", khz_or_nil(env, p->hw_min_khz));
  put(env, &m, "hw_max_khz", khz_or_nil(env, p->hw_max_khz));
  put(env, &m, "note", string_or_nil(env, p->note));
  return m;
}

static ERL_NIF_TERM make_board(ErlNifEnv *env, const htpu_board *b) {
  ERL_NIF_TERM zones = enif_make_list(env, 0), policies = enif_make_list(env, 0);
  for (uint32_t i = b->num_zones; i-- > 0;)
    zones = enif_make_list_cell(env, make_zone(env, &b->zones[i]), zones);
  for (uint32_t i = b->num_policies; i-- > 0;)
    policies = enif_make_list_cell(env, make_policy(env, &b->policies[i]), policies);
  ERL_NIF_TERM m = enif_make_new_map(env);
  put(env, &m, "at_ns", enif_make_uint64(env, b->at_ns));
  put(env, &m, "executes", enif_make_uint64(env, b->executes));
  put(env, &m, "execute_ns_total", enif_make_uint64(env, b->execute_ns_total));
  put(env, &m, "zones", zones);
  put(env, &m, "zones_skipped", enif_make_uint(env, b->zones_skipped));
  put(env, &m, "thermal_note", string_or_nil(env, b->thermal_note));
  put(env, &m, "policies", policies);
  put(env, &m, "policies_skipped", enif_make_uint(env, b->policies_skipped));
  put(env, &m, "cpufreq_note", string_or_nil(env, b->cpufreq_note));
  put(env, &m, "nsp_state", state_atom(env, b->nsp_state));
  put(env, &m, "nsp_temp_mc", temp_or_nil(env, b->nsp_temp_mc));
  put(env, &m, "nsp_hot_mc", temp_or_nil(env, b->nsp_hot_mc));
  put(env, &m, "nsp_zone", string_or_nil(env, b->nsp_zone));
  put(env, &m, "nsp_hot", b->nsp_hot ? ATOMS.true_ : ATOMS.false_);
  put(env, &m, "cpu_state", state_atom(env, b->cpu_state));
  put(env, &m, "cpu_temp_mc", temp_or_nil(env, b->cpu_temp_mc));
  return m;
}

ERL_NIF_TERM nif_board_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
  (void)argc;
  char *root = NULL;
  if (nif_get_cstring_or_nil(env, argv[0], &root)) return enif_make_badarg(env);
  htpu_board *b = NULL;
  int rc = htpu_board_read(root, &b);
  if (root) enif_free(root);
  if (rc) return nif_make_error(env, rc);
  ERL_NIF_TERM ret = enif_make_tuple2(env, ATOMS.ok, make_board(env, b));
  htpu_board_free(b);
  return ret;
}
