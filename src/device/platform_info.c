/* platform_info.c - see platform_info.h. */
#include "platform_info.h"

#include "qnn/qnn_device_abi.h"
#include "vtcm.h"

void platform_info_read(const struct qnn_device_platform_info *p, uint32_t *arch,
                        uint32_t *soc_model, uint64_t *vtcm_bytes) {
  if (!p || p->version != QNN_DEVICE_PLATFORM_INFO_VERSION_1) return;
  if (p->u.v1.num_hw_devices == 0 || !p->u.v1.hw_devices) return;
  const qnn_device_hardware_device_info_t *d = &p->u.v1.hw_devices[0];
  if (d->version != QNN_DEVICE_HARDWARE_DEVICE_INFO_VERSION_1) return;
  const qnn_htp_device_info_extension_t *ext = d->u.v1.device_info_extension;
  if (!ext || ext->dev_type != QNN_HTP_DEVICE_TYPE_ON_CHIP) return;
  *arch = ext->u.on_chip_device.arch;
  if (!*soc_model) *soc_model = ext->u.on_chip_device.soc_model;
  if (vtcm_bytes) *vtcm_bytes = vtcm_reported_to_bytes(ext->u.on_chip_device.vtcm_size);
}
