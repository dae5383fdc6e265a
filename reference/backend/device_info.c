/*
 * device_info.c - the HTP device the backend reports: HTPU_REF_DEVICE, platform info
 * (deviceGetPlatformInfo / deviceFreePlatformInfo / deviceGetInfo), deviceCreate's HTP custom
 * configs, and the FastRPC session that initialises the allocator library.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

#define DEFAULT_ARCH 68u
#define DEFAULT_SOC_MODEL 35u /* what QCS6490 binaries say; the board reportedly reports 93 */
#define DEFAULT_VTCM_MB 2u    /* in MB, the documented unit; the board's is unverified (abi.md) */
#define ANY_ID 0xFFFFFFFFu    /* QNN's default device/core id */

/* ---- HTPU_REF_DEVICE ------------------------------------------------------------------------ */

int rb_hw_from_env(rb_hw *hw, char *err, size_t errlen) {
  *hw = (rb_hw){DEFAULT_ARCH, DEFAULT_SOC_MODEL, DEFAULT_VTCM_MB, 0, 0, 0};
  const char *spec = getenv("HTPU_REF_DEVICE");
  if (!spec) return 0;
  const char *p = spec;
  int vtcm_given = 0;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', n);
    uint32_t v = 0, *dst = NULL, lo = 0, hi = 0xFFFFu;
    size_t kl = eq ? (size_t)(eq - p) : 0;
#define RB_KEY(name, field, min, max) \
  if (kl == strlen(name) && memcmp(p, name, kl) == 0) dst = &hw->field, lo = min, hi = max
    if (eq) {
      RB_KEY("arch", arch, DEFAULT_ARCH, 255u);
      else RB_KEY("soc_model", soc_model, 0u, 0xFFFFu);
      else RB_KEY("vtcm_mb", vtcm_mb, 0u, 1024u);
      /* bytes start at 1 MiB: a smaller value would be read as MB */
      else RB_KEY("vtcm_bytes", vtcm_bytes, 1048576u, UINT32_MAX);
      else RB_KEY("signed_pd", signed_pd, 0u, 1u);
      else RB_KEY("dlbc", dlbc, 0u, 1u);
    }
#undef RB_KEY
    if (!dst || fr_parse_u32(eq + 1, n - kl - 1, lo, hi, &v) != 0) {
      snprintf(err, errlen, "bad entry '%.*s' (expected key=value with keys arch (>= 68), "
               "soc_model, vtcm_mb (0..1024) or vtcm_bytes (>= 1048576), signed_pd (0/1), "
               "dlbc (0/1), comma separated)", (int)n, p);
      return -1;
    }
    if (dst == &hw->vtcm_mb || dst == &hw->vtcm_bytes) {
      if (vtcm_given) {
        snprintf(err, errlen, "VTCM given twice at '%.*s' (one of vtcm_mb or vtcm_bytes: the "
                 "device reports one encoding)", (int)n, p);
        return -1;
      }
      vtcm_given = 1;
      hw->vtcm_mb = 0; /* drops the default when bytes are given */
    }
    *dst = v;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

/* ---- deviceCreate configs ------------------------------------------------------------------ */

static bool id_ok(uint32_t id) { return id == 0 || id == ANY_ID; }

qnn_error_t rb_device_check_configs(rb_backend *b, rb_log *log, const qnn_device_config_t **cfg) {
  for (uint32_t i = 0; cfg && cfg[i]; i++) {
    if (cfg[i]->option != QNN_DEVICE_CONFIG_OPTION_CUSTOM) {
      rb_logf(log, QNN_LOG_LEVEL_VERBOSE, "deviceCreate: config option %u accepted and ignored",
              cfg[i]->option);
      continue;
    }
    const qnn_htp_device_custom_config_t *c = cfg[i]->u.custom_config;
    if (!c) {
      rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: config %u: custom config is NULL", i);
      return QNN_DEVICE_ERROR_INVALID_CONFIG;
    }
    switch (c->option) {
      case QNN_HTP_DEVICE_CONFIG_OPTION_ARCH:
        if (!id_ok(c->u.arch.device_id)) {
          rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: ARCH config for device id %u; this "
                  "platform has one HTP device (id 0)", c->u.arch.device_id);
          return QNN_DEVICE_ERROR_INVALID_CONFIG;
        }
        if (c->u.arch.arch != 0 && c->u.arch.arch != b->hw.arch) {
          rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: ARCH config asks for v%u, this "
                  "device is v%u", c->u.arch.arch, b->hw.arch);
          return QNN_DEVICE_ERROR_INVALID_CONFIG;
        }
        break;
      case QNN_HTP_DEVICE_CONFIG_OPTION_SOC:
        /* Not rejected: QCS6490 binaries say 35 while the board reportedly reports 93. */
        if (c->u.soc_model != 0 && c->u.soc_model != b->hw.soc_model)
          rb_logf(log, QNN_LOG_LEVEL_WARN, "deviceCreate: SOC config says soc model %u, this "
                  "device reports %u (accepted)", c->u.soc_model, b->hw.soc_model);
        break;
      case QNN_HTP_DEVICE_CONFIG_OPTION_SIGNEDPD:
        if (!id_ok(c->u.use_signed_process_domain.device_id)) {
          rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: SIGNEDPD config for device id %u; "
                  "this platform has one HTP device (id 0)",
                  c->u.use_signed_process_domain.device_id);
          return QNN_DEVICE_ERROR_INVALID_CONFIG;
        }
        if (c->u.use_signed_process_domain.use_signed_process_domain && !b->hw.signed_pd) {
          rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: signed PD not available on this "
                  "device (it runs the unsigned process domain)");
          return QNN_DEVICE_ERROR_INVALID_CONFIG;
        }
        break;
      default:
        rb_logf(log, QNN_LOG_LEVEL_ERROR, "deviceCreate: unknown HTP device config option %u",
                c->option);
        return QNN_DEVICE_ERROR_INVALID_CONFIG;
    }
  }
  return QNN_SUCCESS;
}

/* ---- platform info ------------------------------------------------------------------------- */

void rb_pinfo_free(rb_pinfo *p) {
  if (!p) return;
  free(p->info);
  free(p->dev);
  free(p->core);
  free(p->ext);
  free(p);
}

/* One on-chip HTP device with one NSP core; its extension carries what HTPU_REF_DEVICE says. */
rb_pinfo *rb_pinfo_new(const rb_hw *hw) {
  rb_pinfo *p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->info = calloc(1, sizeof(*p->info));
  p->dev = calloc(1, sizeof(*p->dev));
  p->core = calloc(1, sizeof(*p->core));
  p->ext = calloc(1, sizeof(*p->ext));
  if (!p->info || !p->dev || !p->core || !p->ext) {
    rb_pinfo_free(p);
    return NULL;
  }
  p->ext->dev_type = QNN_HTP_DEVICE_TYPE_ON_CHIP;
  p->ext->u.on_chip_device.vtcm_size = hw->vtcm_bytes ? hw->vtcm_bytes : hw->vtcm_mb;
  p->ext->u.on_chip_device.soc_model = hw->soc_model;
  p->ext->u.on_chip_device.signed_pd_support = (uint8_t)hw->signed_pd;
  p->ext->u.on_chip_device.dlbc_support = (uint8_t)hw->dlbc;
  p->ext->u.on_chip_device.arch = hw->arch;
  p->core->version = QNN_DEVICE_CORE_INFO_VERSION_1;
  p->core->u.v1.core_id = 0;
  p->core->u.v1.core_type = 0; /* NSP */
  p->dev->version = QNN_DEVICE_HARDWARE_DEVICE_INFO_VERSION_1;
  p->dev->u.v1.device_id = 0;
  p->dev->u.v1.device_type = QNN_HTP_DEVICE_TYPE_ON_CHIP;
  p->dev->u.v1.num_cores = 1;
  p->dev->u.v1.cores = p->core;
  p->dev->u.v1.device_info_extension = p->ext;
  p->info->version = QNN_DEVICE_PLATFORM_INFO_VERSION_1;
  p->info->u.v1.num_hw_devices = 1;
  p->info->u.v1.hw_devices = p->dev;
  return p;
}

void rb_pinfo_release_all(rb_backend *b) {
  while (b->pinfos) {
    rb_pinfo *p = b->pinfos;
    b->pinfos = p->next;
    rb_violation(b->log, "backendFree: platform info %p from deviceGetPlatformInfo was not "
                 "freed with deviceFreePlatformInfo (leaked; freeing it now)", (void *)p->info);
    rb_count_leak();
    rb_pinfo_free(p);
  }
}

qnn_error_t rb_device_get_platform_info(qnn_log_handle_t log,
                                        const qnn_device_platform_info_t **out) {
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = log ? rb_find_log(log) : NULL;
  qnn_error_t rc = QNN_SUCCESS;
  rb_backend *b = NULL;
  if (log && !l)
    rc = QNN_DEVICE_ERROR_INVALID_HANDLE;
  else if (!out)
    rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
  else if (!(b = rb_owner_for(l))) {
    rb_violation(l, "deviceGetPlatformInfo before backendCreate");
    rc = QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE;
  }
  rb_pinfo *p = rc == QNN_SUCCESS ? rb_pinfo_new(&b->hw) : NULL;
  if (rc == QNN_SUCCESS && !p) rc = QNN_COMMON_ERROR_MEM_ALLOC;
  if (rc == QNN_SUCCESS) {
    p->next = b->pinfos;
    b->pinfos = p;
    *out = p->info;
    rb_logf(l, QNN_LOG_LEVEL_VERBOSE, "deviceGetPlatformInfo: 1 HTP device v%u, soc model %u",
            b->hw.arch, b->hw.soc_model);
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_device_free_platform_info(qnn_log_handle_t log,
                                         const qnn_device_platform_info_t *info) {
  pthread_mutex_lock(&g_rb.lock);
  rb_log *l = log ? rb_find_log(log) : NULL;
  qnn_error_t rc = QNN_SUCCESS;
  if (log && !l) {
    rc = QNN_DEVICE_ERROR_INVALID_HANDLE;
  } else if (!info) {
    rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
  } else {
    rb_pinfo *found = NULL;
    for (rb_backend *b = g_rb.backends; b && !found; b = b->next)
      for (rb_pinfo **pp = &b->pinfos; *pp; pp = &(*pp)->next)
        if ((*pp)->info == info) {
          found = *pp;
          *pp = found->next;
          break;
        }
    if (found) {
      rb_pinfo_free(found);
    } else {
      rb_violation(l, "deviceFreePlatformInfo of %p, which deviceGetPlatformInfo did not hand "
                   "out or which was already freed", (const void *)info);
      rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
    }
  }
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

qnn_error_t rb_device_get_info(qnn_device_handle_t h, const qnn_device_platform_info_t **out) {
  pthread_mutex_lock(&g_rb.lock);
  rb_device *d = rb_find_device(h);
  qnn_error_t rc = QNN_SUCCESS;
  if (!d)
    rc = QNN_DEVICE_ERROR_INVALID_HANDLE;
  else if (!out)
    rc = QNN_COMMON_ERROR_INVALID_ARGUMENT;
  else if (!d->info && !(d->info = rb_pinfo_new(&d->backend->hw)))
    rc = QNN_COMMON_ERROR_MEM_ALLOC;
  if (rc == QNN_SUCCESS) *out = d->info->info; /* backend-owned until deviceFree */
  pthread_mutex_unlock(&g_rb.lock);
  return rc;
}

/* ---- the FastRPC session -------------------------------------------------------------------- */

/* On the board libQnnHtp loads libcdsprpc.so and its first FastRPC call initialises rpcmem,
 * so a client's rpcmem_alloc only works once the device (session) exists. Here the backend
 * loads libhtpu_refcdsprpc.so from its own directory and calls its session hook (idempotent,
 * unlike rpcmem_init). The handle is kept until this library is unloaded. */
static pthread_mutex_t g_rpc_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_rpc_dl;

void rb_fastrpc_session_open(rb_log *log) {
  pthread_mutex_lock(&g_rpc_lock);
  if (!g_rpc_dl) {
    Dl_info info;
    char path[4096];
    if (dladdr((void *)rb_fastrpc_session_open, &info) && info.dli_fname) {
      const char *slash = strrchr(info.dli_fname, '/');
      int dir = slash ? (int)(slash - info.dli_fname) : 1;
      snprintf(path, sizeof(path), "%.*s/libhtpu_refcdsprpc.so", dir,
               slash ? info.dli_fname : ".");
      g_rpc_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (!g_rpc_dl)
        rb_logf(log, QNN_LOG_LEVEL_VERBOSE, "FastRPC session: no allocator library (%s)",
                dlerror());
    }
  }
  void (*open_fn)(void) =
      g_rpc_dl ? (void (*)(void))dlsym(g_rpc_dl, "htpu_refcdsprpc_session_open") : NULL;
  pthread_mutex_unlock(&g_rpc_lock);
  if (open_fn) open_fn();
}

__attribute__((destructor)) static void rb_rpc_unload(void) {
  if (g_rpc_dl) dlclose(g_rpc_dl);
  g_rpc_dl = NULL;
}
