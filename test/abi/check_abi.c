/*
 * check_abi.c - compare src/qnn/*.h (and the facts in qnn_versions.h) with a QNN SDK.
 *
 * One translation unit includes the SDK headers and our declarations; the build renames our
 * QNN_ macros to OURS_QNN_ first (gen_abi_tables.sh) so both sets of names coexist. Checked:
 *   - sizeof/alignof of every struct we declare against its SDK counterpart;
 *   - offsetof and sizeof of every member (nested union/struct members included);
 *   - every object-like QNN_ value we define that the SDK also defines; the ones it does not
 *     must be listed in own_names[] below with the reason;
 *   - the index of every slot of our interface tables whose index is below the SDK table's slot
 *     count, and that count against qnn_core_table_slots()/qnn_system_table_slots();
 *   - graph-info stride/version and tensor stride facts used by the loader;
 *   - the same for qnn_device_abi.h and qnn_htp_abi.h (device platform info, HTP device info
 *     extension, graph blob info, memory descriptors, HTP device config, performance
 *     infrastructure), values whose SDK name differs from ours through VALUE_ALIASES, and the
 *     function types of the typed slots 35-43 and of the performance-infrastructure table;
 *   - the graph blob info version 2, contextGetProperty's property (slot 63, its function type)
 *     and HTP's context custom property (HTP/QnnHtpContext.h);
 *   - qnn_signal_abi.h and the execute/config additions: signal, graph and notify structs and
 *     the function types of slots 17, 22, 44-47 and 55;
 *   - the loading additions: contextCreateFromBinaryListAsync's params, its notify function and
 *     slot 56's type, and the HTP context custom config (REGISTER_MULTI_CONTEXTS' group);
 *   - qnn_profile_abi.h: profile event data (plain and extended), configs, the system library's
 *     profile serialization structs (System API 1.5 on), the HTP event ids and level, and the
 *     function types of the profile slots 28-34 and system slots 13-15;
 *   - the function types of the other typed slots (0, 1, 3, 4, 8, 13, 14, 20, 21, 25-27, 48,
 *     54; system 0-3) and of the log callback: every slot that is not qnn_unused_fn.
 * Declarations the SDK does not have (newer-SDK-only structs and members) are skipped, and every
 * member we declare must be either checked or skipped: a member this file forgets is a failure.
 *
 * Default build: a runtime table that prints every mismatch and exits 1 (V=1 prints every
 * check). With -DABI_STATIC the same lists become _Static_asserts (used to compile our
 * declarations for another target, e.g. aarch64, without a C library).
 */
#ifndef ABI_STATIC
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include "sdk_includes.h" /* the SDK */
#include "qnn/qnn_versions.h" /* ours, renamed: OURS_QNN_*; includes qnn/qnn_abi.h */
#include "qnn/qnn_device_abi.h" /* ours, renamed */
#include "qnn/qnn_htp_abi.h"    /* ours, renamed: OURS_QNN_*, OURS_DCVS_* */
#include "qnn/qnn_signal_abi.h" /* ours, renamed */
#include "qnn/qnn_profile_abi.h" /* ours, renamed */
#include "sdk_have.h"     /* HAVE_TYPE_x / HAVE_IF_x / HAVE_SYS_x for what this SDK declares */

/* ---- preprocessor helpers: ABI_IS1(X) is 1 when X is a macro defined as 1, else 0 ---------- */
#define ABI_CAT(a, b) ABI_CAT_(a, b)
#define ABI_CAT_(a, b) a##b
#define ABI_PLACEHOLDER_1 0,
#define ABI_SECOND(a, b, ...) b
#define ABI_IS1(x) ABI_IS1_(x)
#define ABI_IS1_(v) ABI_IS1__(ABI_PLACEHOLDER_##v)
#define ABI_IS1__(junk) ABI_SECOND(junk 1, 0, ~)
#define ABI_IF_ELSE(c) ABI_CAT(ABI_IF_ELSE_, c)
#define ABI_IF_ELSE_1(yes, no) yes
#define ABI_IF_ELSE_0(yes, no) no

#define FN_SIZE sizeof(void (*)(void))
#define SDK_CORE_SLOTS (sizeof(QNN_INTERFACE_VER_TYPE) / sizeof(void *))
#define SDK_SYSTEM_SLOTS (sizeof(QNN_SYSTEM_INTERFACE_VER_TYPE) / sizeof(void *))

/* ---- one check ---------------------------------------------------------------------------- */
enum { K_EQ, K_SKIP, K_OWN, K_SLOT_BEYOND, K_ALIAS_MISSING };

#ifdef ABI_STATIC
#define CHECK(kind, tag, path, a, b) \
  _Static_assert((long long)(a) == (long long)(b), kind " " tag " " path);
#define NOTE(tag, path, why)
#define OWN(name)
#define SLOT_BEYOND(tbl, field, idx, sdk_slots) \
  _Static_assert((idx) >= (sdk_slots), "slot " #tbl "." #field ": SDK has no member of that name");
#define ALIAS_MISSING(ours, sdk)
#else
typedef struct {
  int kind;
  const char *what; /* sizeof, offsetof, value, slot, fact, ... */
  const char *tag;  /* our struct tag or value name */
  const char *path; /* member path, "" for whole-struct checks */
  long long ours, sdk;
  const char *why; /* skips */
} check_t;
#define CHECK(kind, tag, path, a, b) {K_EQ, kind, tag, path, (long long)(a), (long long)(b), NULL},
#define NOTE(tag, path, why) {K_SKIP, "skip", tag, path, 0, 0, why},
#define OWN(name) {K_OWN, "value", name, "", 0, 0, NULL},
#define SLOT_BEYOND(tbl, field, idx, sdk_slots) \
  {K_SLOT_BEYOND, "slot", #tbl, #field, (long long)(idx), (long long)(sdk_slots), NULL},
#define ALIAS_MISSING(ours, sdk) {K_ALIAS_MISSING, "value", #ours, "= " #sdk, 0, 0, NULL},
#endif

/* whole structs */
#define STRUCT(ours, sdk)                                                  \
  CHECK("sizeof", #ours, "", sizeof(struct ours), sizeof(sdk))             \
  CHECK("alignof", #ours, "", _Alignof(struct ours), _Alignof(sdk))
#define ALIGN_ONLY(ours, sdk) CHECK("alignof", #ours, "", _Alignof(struct ours), _Alignof(sdk))
/* a member: offset and size */
#define MSIZE(type, path) sizeof(((type *)0)->path)
#define FIELD(ours, opath, sdk, spath)                                                    \
  CHECK("offsetof", #ours, #opath, offsetof(struct ours, opath), offsetof(sdk, spath))    \
  CHECK("sizeof", #ours, #opath, MSIZE(struct ours, opath), MSIZE(sdk, spath))
/* our named union/struct member standing for the SDK's anonymous one: offset of its first member */
#define ANON(ours, opath, sdk, first_member) \
  CHECK("offsetof", #ours, #opath, offsetof(struct ours, opath), offsetof(sdk, first_member))
/* only when the SDK declares `have` (a HAVE_ macro) */
#define CHECK_IF(have, kind, tag, path, a, b) \
  ABI_IF_ELSE(ABI_IS1(have))(CHECK(kind, tag, path, a, b), )
#define FIELD_IF(have, ours, opath, sdk, spath) \
  ABI_IF_ELSE(ABI_IS1(have))(FIELD(ours, opath, sdk, spath), NOTE(#ours, #opath, "not in this SDK"))

/* a function-table slot: same index as the SDK member of that name, or beyond the SDK table */
#define SLOT_(tbl, field, sdk_t, sdk_name, have, sdk_slots)                                     \
  ABI_IF_ELSE(ABI_IS1(have))(                                                                  \
      CHECK("slot", #tbl, #field, offsetof(struct tbl, field) / FN_SIZE,                       \
            offsetof(sdk_t, sdk_name) / sizeof(void *)),                                       \
      SLOT_BEYOND(tbl, field, offsetof(struct tbl, field) / FN_SIZE, sdk_slots))
#define SLOT(field, sdk_name)                                                          \
  SLOT_(qnn_interface_table, field, QNN_INTERFACE_VER_TYPE, sdk_name, HAVE_IF_##sdk_name, \
        SDK_CORE_SLOTS)
#define SYSSLOT(field, sdk_name)                                                         \
  SLOT_(qnn_system_interface_table, field, QNN_SYSTEM_INTERFACE_VER_TYPE, sdk_name,     \
        HAVE_SYS_##sdk_name, SDK_SYSTEM_SLOTS)

/* values */
#define ABI_VALUE(name) CHECK("value", #name, "", OURS_##name, name)
#define ABI_OWN(name) OWN(#name)

/* ---- the lists ---------------------------------------------------------------------------- */
#define STRUCT_CHECKS                                                                          \
  STRUCT(qnn_version, Qnn_Version_t)                                                           \
  FIELD(qnn_version, major, Qnn_Version_t, major)                                              \
  FIELD(qnn_version, minor, Qnn_Version_t, minor)                                              \
  FIELD(qnn_version, patch, Qnn_Version_t, patch)                                              \
  STRUCT(qnn_api_version, Qnn_ApiVersion_t)                                                    \
  FIELD(qnn_api_version, core_api_version, Qnn_ApiVersion_t, coreApiVersion)                   \
  FIELD(qnn_api_version, backend_api_version, Qnn_ApiVersion_t, backendApiVersion)             \
                                                                                               \
  STRUCT(qnn_scale_offset, Qnn_ScaleOffset_t)                                                  \
  FIELD(qnn_scale_offset, scale, Qnn_ScaleOffset_t, scale)                                     \
  FIELD(qnn_scale_offset, offset, Qnn_ScaleOffset_t, offset)                                   \
  STRUCT(qnn_axis_scale_offset, Qnn_AxisScaleOffset_t)                                         \
  FIELD(qnn_axis_scale_offset, axis, Qnn_AxisScaleOffset_t, axis)                              \
  FIELD(qnn_axis_scale_offset, num_scale_offsets, Qnn_AxisScaleOffset_t, numScaleOffsets)      \
  FIELD(qnn_axis_scale_offset, scale_offset, Qnn_AxisScaleOffset_t, scaleOffset)               \
  STRUCT(qnn_bw_scale_offset, Qnn_BwScaleOffset_t)                                             \
  FIELD(qnn_bw_scale_offset, bitwidth, Qnn_BwScaleOffset_t, bitwidth)                          \
  FIELD(qnn_bw_scale_offset, scale, Qnn_BwScaleOffset_t, scale)                                \
  FIELD(qnn_bw_scale_offset, offset, Qnn_BwScaleOffset_t, offset)                              \
  STRUCT(qnn_bw_axis_scale_offset, Qnn_BwAxisScaleOffset_t)                                    \
  FIELD(qnn_bw_axis_scale_offset, bitwidth, Qnn_BwAxisScaleOffset_t, bitwidth)                 \
  FIELD(qnn_bw_axis_scale_offset, axis, Qnn_BwAxisScaleOffset_t, axis)                         \
  FIELD(qnn_bw_axis_scale_offset, num_elements, Qnn_BwAxisScaleOffset_t, numElements)          \
  FIELD(qnn_bw_axis_scale_offset, scales, Qnn_BwAxisScaleOffset_t, scales)                     \
  FIELD(qnn_bw_axis_scale_offset, offsets, Qnn_BwAxisScaleOffset_t, offsets)                   \
  STRUCT(qnn_quantize_params, Qnn_QuantizeParams_t)                                            \
  FIELD(qnn_quantize_params, encoding_definition, Qnn_QuantizeParams_t, encodingDefinition)    \
  FIELD(qnn_quantize_params, quantization_encoding, Qnn_QuantizeParams_t, quantizationEncoding) \
  ANON(qnn_quantize_params, u, Qnn_QuantizeParams_t, scaleOffsetEncoding)                      \
  FIELD(qnn_quantize_params, u.scale_offset_encoding, Qnn_QuantizeParams_t, scaleOffsetEncoding) \
  FIELD(qnn_quantize_params, u.axis_scale_offset_encoding, Qnn_QuantizeParams_t,               \
        axisScaleOffsetEncoding)                                                               \
  FIELD(qnn_quantize_params, u.bw_scale_offset_encoding, Qnn_QuantizeParams_t,                 \
        bwScaleOffsetEncoding)                                                                 \
  FIELD(qnn_quantize_params, u.bw_axis_scale_offset_encoding, Qnn_QuantizeParams_t,            \
        bwAxisScaleOffsetEncoding)                                                             \
  FIELD_IF(HAVE_TYPE_Qnn_BlockwiseExpansion_t, qnn_quantize_params, u.other_encoding,          \
           Qnn_QuantizeParams_t, blockwiseExpansion)                                           \
                                                                                               \
  STRUCT(qnn_client_buffer, Qnn_ClientBuffer_t)                                                \
  FIELD(qnn_client_buffer, data, Qnn_ClientBuffer_t, data)                                     \
  FIELD(qnn_client_buffer, data_size, Qnn_ClientBuffer_t, dataSize)                            \
  STRUCT(qnn_sparse_params, Qnn_SparseParams_t)                                                \
  FIELD(qnn_sparse_params, type, Qnn_SparseParams_t, type)                                     \
  ANON(qnn_sparse_params, u, Qnn_SparseParams_t, hybridCoo)                                    \
  FIELD(qnn_sparse_params, u.hybrid_coo, Qnn_SparseParams_t, hybridCoo)                        \
  FIELD(qnn_sparse_params, u.hybrid_coo.num_specified_elements, Qnn_SparseParams_t,            \
        hybridCoo.numSpecifiedElements)                                                        \
  FIELD(qnn_sparse_params, u.hybrid_coo.num_sparse_dimensions, Qnn_SparseParams_t,             \
        hybridCoo.numSparseDimensions)                                                         \
  TENSOR_COMMON(qnn_tensor_v1, Qnn_TensorV1_t)                                                 \
  TENSOR_COMMON(qnn_tensor_v2, Qnn_TensorV2_t)                                                 \
  FIELD_IF(HAVE_TYPE_Qnn_TensorRetrieveRaw_t, qnn_tensor_v2, u.retrieve_raw, Qnn_TensorV2_t,   \
           retrieveRaw)                                                                        \
  FIELD(qnn_tensor_v2, is_dynamic_dimensions, Qnn_TensorV2_t, isDynamicDimensions)             \
  FIELD(qnn_tensor_v2, sparse_params, Qnn_TensorV2_t, sparseParams)                            \
  FIELD(qnn_tensor_v2, is_produced, Qnn_TensorV2_t, isProduced)                                \
  STRUCT(qnn_tensor, Qnn_Tensor_t)                                                             \
  FIELD(qnn_tensor, version, Qnn_Tensor_t, version)                                            \
  ANON(qnn_tensor, u, Qnn_Tensor_t, v1)                                                        \
  FIELD(qnn_tensor, u.v1, Qnn_Tensor_t, v1)                                                    \
  FIELD(qnn_tensor, u.v2, Qnn_Tensor_t, v2)                                                    \
                                                                                               \
  STRUCT(qnn_backend_config, QnnBackend_Config_t)                                              \
  FIELD(qnn_backend_config, option, QnnBackend_Config_t, option)                               \
  ANON(qnn_backend_config, u, QnnBackend_Config_t, customConfig)                               \
  FIELD(qnn_backend_config, u.custom_config, QnnBackend_Config_t, customConfig)                \
  FIELD(qnn_backend_config, u.platform_option, QnnBackend_Config_t, platformOption)            \
  FIELD(qnn_backend_config, u.pad_, QnnBackend_Config_t, errorConfig)                          \
  STRUCT(qnn_device_config, QnnDevice_Config_t)                                                \
  FIELD(qnn_device_config, option, QnnDevice_Config_t, option)                                 \
  ANON(qnn_device_config, u, QnnDevice_Config_t, customConfig)                                 \
  FIELD(qnn_device_config, u.custom_config, QnnDevice_Config_t, customConfig)                  \
  FIELD(qnn_device_config, u.hardware_info, QnnDevice_Config_t, hardwareInfo)                  \
  STRUCT(qnn_context_config, QnnContext_Config_t)                                              \
  FIELD(qnn_context_config, option, QnnContext_Config_t, option)                               \
  ANON(qnn_context_config, u, QnnContext_Config_t, customConfig)                               \
  FIELD(qnn_context_config, u.custom_config, QnnContext_Config_t, customConfig)                \
  FIELD(qnn_context_config, u.priority, QnnContext_Config_t, priority)                         \
  FIELD(qnn_context_config, u.memory_limit_hint, QnnContext_Config_t, memoryLimitHint)         \
  FIELD(qnn_context_config, u.is_persistent_binary, QnnContext_Config_t, isPersistentBinary)   \
  FIELD(qnn_context_config, u.enable_graphs, QnnContext_Config_t, enableGraphs)                \
  FIELD(qnn_context_config, u.async_queue_depth, QnnContext_Config_t, asyncExeQueueDepth)      \
  STRUCT(qnn_context_async_queue_depth, QnnContext_AsyncExecutionQueueDepth_t)                 \
  FIELD(qnn_context_async_queue_depth, type, QnnContext_AsyncExecutionQueueDepth_t, type)      \
  FIELD(qnn_context_async_queue_depth, depth, QnnContext_AsyncExecutionQueueDepth_t, depth)    \
  STRUCT(qnn_graph_config, QnnGraph_Config_t)                                                  \
  FIELD(qnn_graph_config, option, QnnGraph_Config_t, option)                                   \
  ANON(qnn_graph_config, u, QnnGraph_Config_t, customConfig)                                   \
  FIELD(qnn_graph_config, u.custom_config, QnnGraph_Config_t, customConfig)                    \
  FIELD(qnn_graph_config, u.priority, QnnGraph_Config_t, priority)                             \
  FIELD(qnn_graph_config, u.profile_handle, QnnGraph_Config_t, profileHandle)                  \
  STRUCT(qnn_notify_status, Qnn_NotifyStatus_t)                                                \
  FIELD(qnn_notify_status, error, Qnn_NotifyStatus_t, error)                                   \
  STRUCT(qnn_signal_config, QnnSignal_Config_t)                                                \
  FIELD(qnn_signal_config, option, QnnSignal_Config_t, option)                                 \
  ANON(qnn_signal_config, u, QnnSignal_Config_t, customConfig)                                 \
  FIELD(qnn_signal_config, u.custom_config, QnnSignal_Config_t, customConfig)                  \
  FIELD(qnn_signal_config, u.timeout_duration_us, QnnSignal_Config_t, timeoutDurationUs)       \
                                                                                               \
  /* the provider structs: equal up to the table; the table's own size depends on the version */ \
  ALIGN_ONLY(qnn_interface, QnnInterface_t)                                                    \
  FIELD(qnn_interface, backend_id, QnnInterface_t, backendId)                                  \
  FIELD(qnn_interface, provider_name, QnnInterface_t, providerName)                            \
  FIELD(qnn_interface, api_version, QnnInterface_t, apiVersion)                                \
  ANON(qnn_interface, table, QnnInterface_t, QNN_INTERFACE_VER_NAME)                           \
  CHECK("sizeof-minus-table", "qnn_interface", "",                                             \
        sizeof(struct qnn_interface) - sizeof(struct qnn_interface_table),                     \
        sizeof(QnnInterface_t) - sizeof(QNN_INTERFACE_VER_TYPE))                               \
  ALIGN_ONLY(qnn_system_interface, QnnSystemInterface_t)                                       \
  FIELD(qnn_system_interface, backend_id, QnnSystemInterface_t, backendId)                     \
  FIELD(qnn_system_interface, provider_name, QnnSystemInterface_t, providerName)               \
  FIELD(qnn_system_interface, system_api_version, QnnSystemInterface_t, systemApiVersion)      \
  ANON(qnn_system_interface, table, QnnSystemInterface_t, QNN_SYSTEM_INTERFACE_VER_NAME)       \
  CHECK("sizeof-minus-table", "qnn_system_interface", "",                                      \
        sizeof(struct qnn_system_interface) - sizeof(struct qnn_system_interface_table),       \
        sizeof(QnnSystemInterface_t) - sizeof(QNN_SYSTEM_INTERFACE_VER_TYPE))                  \
  ALIGN_ONLY(qnn_interface_table, QNN_INTERFACE_VER_TYPE)                                      \
  ALIGN_ONLY(qnn_system_interface_table, QNN_SYSTEM_INTERFACE_VER_TYPE)                        \
                                                                                               \
  BINFO_COMMON(qnn_binary_info_v1, QnnSystemContext_BinaryInfoV1_t)                            \
  BINFO_COMMON(qnn_binary_info_v2, QnnSystemContext_BinaryInfoV2_t)                            \
  FIELD(qnn_binary_info_v2, platform_info, QnnSystemContext_BinaryInfoV2_t, platformInfo)      \
  ABI_IF_ELSE(ABI_IS1(HAVE_TYPE_QnnSystemContext_BinaryInfoV3_t))(                             \
      BINFO_V3(STRUCT, FIELD), BINFO_V3(SKIP_STRUCT, SKIP_FIELD))                              \
  STRUCT_IF_ELSE_GE(HAVE_TYPE_QnnSystemContext_BinaryInfoV3_t, qnn_system_context_binary_info, \
                    QnnSystemContext_BinaryInfo_t)                                             \
  FIELD(qnn_system_context_binary_info, version, QnnSystemContext_BinaryInfo_t, version)       \
  ANON(qnn_system_context_binary_info, u, QnnSystemContext_BinaryInfo_t, contextBinaryInfoV1)  \
  FIELD(qnn_system_context_binary_info, u.v1, QnnSystemContext_BinaryInfo_t, contextBinaryInfoV1) \
  FIELD(qnn_system_context_binary_info, u.v2, QnnSystemContext_BinaryInfo_t, contextBinaryInfoV2) \
  FIELD_IF(HAVE_TYPE_QnnSystemContext_BinaryInfoV3_t, qnn_system_context_binary_info, u.v3,    \
           QnnSystemContext_BinaryInfo_t, contextBinaryInfoV3)                                 \
                                                                                               \
  GINFO_V1(STRUCT, FIELD, qnn_graph_info_v1, QnnSystemContext_GraphInfoV1_t)                                  \
  ABI_IF_ELSE(ABI_IS1(HAVE_TYPE_QnnSystemContext_GraphInfoV2_t))(                              \
      GINFO_V2(STRUCT, FIELD, qnn_graph_info_v2, QnnSystemContext_GraphInfoV2_t),              \
      GINFO_V2(SKIP_STRUCT, SKIP_FIELD, qnn_graph_info_v2, QnnSystemContext_GraphInfoV2_t))    \
  ABI_IF_ELSE(ABI_IS1(HAVE_TYPE_QnnSystemContext_GraphInfoV3_t))(                              \
      GINFO_V3(STRUCT, FIELD), GINFO_V3(SKIP_STRUCT, SKIP_FIELD))                              \
  STRUCT_IF_ELSE_GE(HAVE_TYPE_QnnSystemContext_GraphInfoV3_t, qnn_system_context_graph_info,   \
                    QnnSystemContext_GraphInfo_t)                                              \
  FIELD(qnn_system_context_graph_info, version, QnnSystemContext_GraphInfo_t, version)         \
  ANON(qnn_system_context_graph_info, u, QnnSystemContext_GraphInfo_t, graphInfoV1)            \
  FIELD(qnn_system_context_graph_info, u.v1, QnnSystemContext_GraphInfo_t, graphInfoV1)        \
  FIELD_IF(HAVE_TYPE_QnnSystemContext_GraphInfoV2_t, qnn_system_context_graph_info, u.v2,      \
           QnnSystemContext_GraphInfo_t, graphInfoV2)                                          \
  FIELD_IF(HAVE_TYPE_QnnSystemContext_GraphInfoV3_t, qnn_system_context_graph_info, u.v3,      \
           QnnSystemContext_GraphInfo_t, graphInfoV3)

/* A union holder that gained a member in newer SDKs: equal when the SDK has it, else not smaller. */
#define STRUCT_IF_ELSE_GE(have, ours, sdk)                                                   \
  ABI_IF_ELSE(ABI_IS1(have))(STRUCT(ours, sdk),                                              \
                             CHECK("sizeof>=", #ours, "", sizeof(struct ours) >= sizeof(sdk), 1) \
                             ALIGN_ONLY(ours, sdk))

#define TENSOR_COMMON(o, s)                                     \
  STRUCT(o, s)                                                  \
  FIELD(o, id, s, id)                                           \
  FIELD(o, name, s, name)                                       \
  FIELD(o, type, s, type)                                       \
  FIELD(o, data_format, s, dataFormat)                          \
  FIELD(o, data_type, s, dataType)                              \
  FIELD(o, quantize_params, s, quantizeParams)                  \
  FIELD(o, rank, s, rank)                                       \
  FIELD(o, dimensions, s, dimensions)                           \
  FIELD(o, mem_type, s, memType)                                \
  ANON(o, u, s, clientBuf)                                      \
  FIELD(o, u.client_buf, s, clientBuf)                          \
  FIELD(o, u.mem_handle, s, memHandle)

#define BINFO_COMMON(o, s)                                      \
  STRUCT(o, s)                                                  \
  FIELD(o, backend_id, s, backendId)                            \
  FIELD(o, build_id, s, buildId)                                \
  FIELD(o, core_api_version, s, coreApiVersion)                 \
  FIELD(o, backend_api_version, s, backendApiVersion)           \
  FIELD(o, soc_version, s, socVersion)                          \
  FIELD(o, hw_info_blob_version, s, hwInfoBlobVersion)          \
  FIELD(o, context_blob_version, s, contextBlobVersion)         \
  FIELD(o, hw_info_blob_size, s, hwInfoBlobSize)                \
  FIELD(o, hw_info_blob, s, hwInfoBlob)                         \
  FIELD(o, context_blob_size, s, contextBlobSize)               \
  FIELD(o, num_context_tensors, s, numContextTensors)           \
  FIELD(o, context_tensors, s, contextTensors)                  \
  FIELD(o, num_graphs, s, numGraphs)                            \
  FIELD(o, graphs, s, graphs)

/* Structs a given SDK may lack are written once against S (whole struct) and F (member):
 * STRUCT/FIELD to compare, SKIP_STRUCT/SKIP_FIELD to record them as skipped. */
#define SKIP_STRUCT(ours, sdk) NOTE(#ours, "", "struct not in this SDK")
#define SKIP_FIELD(ours, opath, sdk, spath) NOTE(#ours, #opath, "struct not in this SDK")

#define BINFO_V3_T QnnSystemContext_BinaryInfoV3_t
#define BINFO_V3(S, F)                                                     \
  S(qnn_binary_info_v3, BINFO_V3_T)                                        \
  F(qnn_binary_info_v3, backend_id, BINFO_V3_T, backendId)                 \
  F(qnn_binary_info_v3, build_id, BINFO_V3_T, buildId)                     \
  F(qnn_binary_info_v3, core_api_version, BINFO_V3_T, coreApiVersion)      \
  F(qnn_binary_info_v3, backend_api_version, BINFO_V3_T, backendApiVersion) \
  F(qnn_binary_info_v3, soc_version, BINFO_V3_T, socVersion)               \
  F(qnn_binary_info_v3, context_blob_version, BINFO_V3_T, contextBlobVersion) \
  F(qnn_binary_info_v3, context_blob_size, BINFO_V3_T, contextBlobSize)    \
  F(qnn_binary_info_v3, num_context_tensors, BINFO_V3_T, numContextTensors) \
  F(qnn_binary_info_v3, context_tensors, BINFO_V3_T, contextTensors)       \
  F(qnn_binary_info_v3, num_graphs, BINFO_V3_T, numGraphs)                 \
  F(qnn_binary_info_v3, graphs, BINFO_V3_T, graphs)                        \
  F(qnn_binary_info_v3, platform_info, BINFO_V3_T, platformInfo)           \
  F(qnn_binary_info_v3, context_metadata_size, BINFO_V3_T, contextMetadataSize) \
  F(qnn_binary_info_v3, context_metadata, BINFO_V3_T, contextMetadata)     \
  F(qnn_binary_info_v3, soc_model, BINFO_V3_T, socModel)

#define GINFO_V1(S, F, o, s)                                    \
  S(o, s)                                                       \
  F(o, graph_name, s, graphName)                                \
  F(o, num_graph_inputs, s, numGraphInputs)                     \
  F(o, graph_inputs, s, graphInputs)                            \
  F(o, num_graph_outputs, s, numGraphOutputs)                   \
  F(o, graph_outputs, s, graphOutputs)
#define GINFO_V2(S, F, o, s)                                    \
  GINFO_V1(S, F, o, s)                                          \
  F(o, num_updateable_tensors, s, numUpdateableTensors)         \
  F(o, updateable_tensors, s, updateableTensors)
#define GINFO_V3_T QnnSystemContext_GraphInfoV3_t
#define GINFO_V3(S, F)                                                      \
  GINFO_V2(S, F, qnn_graph_info_v3, GINFO_V3_T)                             \
  F(qnn_graph_info_v3, graph_blob_info_size, GINFO_V3_T, graphBlobInfoSize) \
  F(qnn_graph_info_v3, graph_blob_info, GINFO_V3_T, graphBlobInfo)          \
  F(qnn_graph_info_v3, start_op_index, GINFO_V3_T, startOpIndex)            \
  F(qnn_graph_info_v3, end_op_index, GINFO_V3_T, endOpIndex)

#define SLOT_CHECKS                                                            \
  SLOT(property_has_capability, propertyHasCapability)                         \
  SLOT(backend_create, backendCreate)                                          \
  SLOT(backend_set_config, backendSetConfig)                                   \
  SLOT(backend_get_api_version, backendGetApiVersion)                          \
  SLOT(backend_get_build_id, backendGetBuildId)                                \
  SLOT(backend_register_op_package, backendRegisterOpPackage)                  \
  SLOT(backend_get_supported_operations, backendGetSupportedOperations)        \
  SLOT(backend_validate_op_config, backendValidateOpConfig)                    \
  SLOT(backend_free, backendFree)                                              \
  SLOT(context_create, contextCreate)                                          \
  SLOT(context_set_config, contextSetConfig)                                   \
  SLOT(context_get_binary_size, contextGetBinarySize)                          \
  SLOT(context_get_binary, contextGetBinary)                                   \
  SLOT(context_create_from_binary, contextCreateFromBinary)                    \
  SLOT(context_free, contextFree)                                              \
  SLOT(graph_create, graphCreate)                                              \
  SLOT(graph_create_subgraph, graphCreateSubgraph)                             \
  SLOT(graph_set_config, graphSetConfig)                                       \
  SLOT(graph_add_node, graphAddNode)                                           \
  SLOT(graph_finalize, graphFinalize)                                          \
  SLOT(graph_retrieve, graphRetrieve)                                          \
  SLOT(graph_execute, graphExecute)                                            \
  SLOT(graph_execute_async, graphExecuteAsync)                                 \
  SLOT(tensor_create_context_tensor, tensorCreateContextTensor)                \
  SLOT(tensor_create_graph_tensor, tensorCreateGraphTensor)                    \
  SLOT(log_create, logCreate)                                                  \
  SLOT(log_set_log_level, logSetLogLevel)                                      \
  SLOT(log_free, logFree)                                                      \
  SLOT(profile_create, profileCreate)                                          \
  SLOT(profile_set_config, profileSetConfig)                                   \
  SLOT(profile_get_events, profileGetEvents)                                   \
  SLOT(profile_get_sub_events, profileGetSubEvents)                            \
  SLOT(profile_get_event_data, profileGetEventData)                            \
  SLOT(profile_get_extended_event_data, profileGetExtendedEventData)           \
  SLOT(profile_free, profileFree)                                              \
  SLOT(mem_register, memRegister)                                              \
  SLOT(mem_de_register, memDeRegister)                                         \
  SLOT(device_get_platform_info, deviceGetPlatformInfo)                        \
  SLOT(device_free_platform_info, deviceFreePlatformInfo)                      \
  SLOT(device_get_infrastructure, deviceGetInfrastructure)                     \
  SLOT(device_create, deviceCreate)                                            \
  SLOT(device_set_config, deviceSetConfig)                                     \
  SLOT(device_get_info, deviceGetInfo)                                         \
  SLOT(device_free, deviceFree)                                                \
  SLOT(signal_create, signalCreate)                                            \
  SLOT(signal_set_config, signalSetConfig)                                     \
  SLOT(signal_trigger, signalTrigger)                                          \
  SLOT(signal_free, signalFree)                                                \
  SLOT(error_get_message, errorGetMessage)                                     \
  SLOT(error_get_verbose_message, errorGetVerboseMessage)                      \
  SLOT(error_free_verbose_message, errorFreeVerboseMessage)                    \
  SLOT(graph_prepare_execution_environment, graphPrepareExecutionEnvironment)  \
  SLOT(graph_release_execution_environment, graphReleaseExecutionEnvironment)  \
  SLOT(graph_get_property, graphGetProperty)                                   \
  SLOT(context_validate_binary, contextValidateBinary)                         \
  SLOT(context_create_from_binary_with_signal, contextCreateFromBinaryWithSignal) \
  SLOT(context_create_from_binary_list_async, contextCreateFromBinaryListAsync) \
  SLOT(tensor_update_graph_tensors, tensorUpdateGraphTensors)                  \
  SLOT(tensor_update_context_tensors, tensorUpdateContextTensors)              \
  SLOT(context_get_binary_section_size, contextGetBinarySectionSize)           \
  SLOT(context_get_binary_section, contextGetBinarySection)                    \
  SLOT(context_apply_binary_section, contextApplyBinarySection)                \
  SLOT(backend_get_property, backendGetProperty)                               \
  SLOT(context_get_property, contextGetProperty)                               \
  SLOT(context_get_incremental_binary, contextGetIncrementalBinary)            \
  SLOT(context_release_incremental_binary, contextReleaseIncrementalBinary)    \
  SLOT(context_finalize, contextFinalize)                                      \
  SLOT(global_config_set, globalConfigSet)                                     \
  SLOT(context_create_from_binary_with_callback, contextCreateFromBinaryWithCallback) \
  SLOT(context_get_binary_section_update, contextGetBinarySectionUpdate)       \
  SLOT(context_free_binary_section_update, contextFreeBinarySectionUpdate)     \
                                                                               \
  SYSSLOT(system_context_create, systemContextCreate)                          \
  SYSSLOT(system_context_get_binary_info, systemContextGetBinaryInfo)          \
  SYSSLOT(system_context_get_metadata, systemContextGetMetaData)               \
  SYSSLOT(system_context_free, systemContextFree)                              \
  SYSSLOT(system_tensor_get_memory_footprint, systemTensorGetMemoryFootprint)  \
  SYSSLOT(system_log_create, systemLogCreate)                                  \
  SYSSLOT(system_log_set_log_level, systemLogSetLogLevel)                      \
  SYSSLOT(system_log_free, systemLogFree)                                      \
  SYSSLOT(system_dlc_create_from_file, systemDlcCreateFromFile)                \
  SYSSLOT(system_dlc_create_from_binary, systemDlcCreateFromBinary)            \
  SYSSLOT(system_dlc_compose_graphs, systemDlcComposeGraphs)                   \
  SYSSLOT(system_dlc_get_op_mappings, systemDlcGetOpMappings)                  \
  SYSSLOT(system_dlc_free, systemDlcFree)                                      \
  SYSSLOT(system_profile_create_serialization_target, systemProfileCreateSerializationTarget) \
  SYSSLOT(system_profile_serialize_event_data, systemProfileSerializeEventData) \
  SYSSLOT(system_profile_free_serialization_target, systemProfileFreeSerializationTarget)

/* ---- qnn_device_abi.h and qnn_htp_abi.h -------------------------------------------------------
 * Each group is written once against S (whole struct), F (member) and A (our named union for the
 * SDK's anonymous one) and expanded with the comparing macros when the SDK declares the group's
 * holder type, else with the skipping ones (an SDK without HTP headers, or one older than the
 * struct). The holder types are ones each group's SDK header declares. */
#define SKIP_ANON(ours, opath, sdk, first) NOTE(#ours, #opath, "struct not in this SDK")
#define GROUP_IF(have, G) ABI_IF_ELSE(ABI_IS1(have))(G(STRUCT, FIELD, ANON), G(SKIP_STRUCT, SKIP_FIELD, SKIP_ANON))

/* Function types. TPL(T) spells the SDK's function type with the one struct it involves
 * replaced by T; our member must be TPL(our struct) and the SDK's member TPL(SDK struct), both
 * exactly (type compatibility, checked by _Generic). With the struct checks this proves that
 * every parameter and the result have the same ABI on both sides. */
#define FN_SIG(ours, opath, sdk_t, spath, TPL, our_arg, sdk_arg)                               \
  CHECK("fn-type", #ours, #opath,                                                            \
        _Generic(((struct ours *)0)->opath, TPL(our_arg) : 1, default : 0), 1)               \
  CHECK("fn-type(sdk)", #ours, #opath,                                                       \
        _Generic(((sdk_t *)0)->spath, TPL(sdk_arg) : 1, default : 0), 1)
#define SLOT_SIG(field, sdk_name, TPL, our_arg, sdk_arg) \
  FN_SIG(qnn_interface_table, field, QNN_INTERFACE_VER_TYPE, sdk_name, TPL, our_arg, sdk_arg)
#define TPL_MEM_REGISTER(T) uint64_t (*)(void *, const T *, uint32_t, void **)
#define TPL_MEM_DE_REGISTER(T) uint64_t (*)(void *const *, uint32_t)
#define TPL_GET_PLATFORM_INFO(T) uint64_t (*)(void *, const T **)
#define TPL_FREE_PLATFORM_INFO(T) uint64_t (*)(void *, const T *)
#define TPL_GET_INFRASTRUCTURE(T) uint64_t (*)(T *const *)
#define TPL_DEVICE_CREATE(T) uint64_t (*)(void *, const T **, void **)
#define TPL_DEVICE_FREE(T) uint64_t (*)(void *)
#define TPL_CREATE_POWER_CONFIG_ID(T) uint64_t (*)(uint32_t, uint32_t, uint32_t *)
#define TPL_DESTROY_POWER_CONFIG_ID(T) uint64_t (*)(uint32_t)
#define TPL_SET_POWER_CONFIG(T) uint64_t (*)(uint32_t, const T **)
#define PLATFORM_T struct qnn_device_platform_info
#define TPL_GRAPH_SET_CONFIG(T) uint64_t (*)(void *, const T **)
#define TPL_SIGNAL_CREATE(T) uint64_t (*)(void *, const T **, void **)
#define TPL_SIGNAL_SET_CONFIG(T) uint64_t (*)(void *, const T **)
#define TPL_SIGNAL_ONE(T) uint64_t (*)(void *)
#define TPL_CREATE_WITH_SIGNAL(T) \
  uint64_t (*)(void *, void *, const T **, const void *, uint64_t, void **, void *, void *)
/* executeAsync involves two structs: P names the side (ABI_OURS or ABI_SDK) */
#define ABI_OURS_TENSOR struct qnn_tensor
#define ABI_OURS_NOTIFY struct qnn_notify_status
#define ABI_SDK_TENSOR Qnn_Tensor_t
#define ABI_SDK_NOTIFY Qnn_NotifyStatus_t
/* contextCreateFromBinaryListAsync: the params and the config */
#define ABI_OURS_PARAMS struct qnn_context_params
#define ABI_OURS_CONFIG struct qnn_context_config
#define ABI_SDK_PARAMS QnnContext_Params_t
#define ABI_SDK_CONFIG QnnContext_Config_t
#define TPL_LIST_ASYNC(P) \
  uint64_t (*)(void *, void *, const P##_PARAMS **, const P##_CONFIG **, void *)
#define TPL_EXECUTE_ASYNC(P)                                                                   \
  uint64_t (*)(void *, const P##_TENSOR *, uint32_t, P##_TENSOR *, uint32_t, void *, void *,   \
               void (*)(void *, P##_NOTIFY), void *)
/* the core slots a loader calls: 0, 1, 3, 4, 8, 13, 14, 20, 21, 25..27, 48 and 54 */
#define TPL_PROPERTY(T) uint64_t (*)(uint32_t)
#define TPL_BACKEND_CREATE(T) uint64_t (*)(void *, const T **, void **)
#define TPL_GET_API_VERSION(T) uint64_t (*)(T *)
#define TPL_GET_BUILD_ID(T) uint64_t (*)(const char **)
#define TPL_ONE_HANDLE(T) uint64_t (*)(void *)
#define TPL_CREATE_FROM_BINARY(T) \
  uint64_t (*)(void *, void *, const T **, const void *, uint64_t, void **, void *)
#define TPL_CONTEXT_FREE(T) uint64_t (*)(void *, void *)
#define TPL_GRAPH_RETRIEVE(T) uint64_t (*)(void *, const char *, void **)
#define TPL_EXECUTE(T) uint64_t (*)(void *, const T *, uint32_t, T *, uint32_t, void *, void *)
/* QnnLog_Level_t is an enum: compatible with uint32_t (checked below, with the callback) */
#define TPL_LOG_CREATE(T) uint64_t (*)(T, uint32_t, void **)
#define TPL_LOG_SET_LEVEL(T) uint64_t (*)(void *, uint32_t)
#define TPL_ERROR_GET_MESSAGE(T) uint64_t (*)(uint64_t, const char **)
#define TPL_VALIDATE_BINARY(T) uint64_t (*)(void *, void *, const T **, const void *, uint64_t)
#define TPL_CONTEXT_GET_PROPERTY(T) uint64_t (*)(void *, T **)
#define CORE_SIG_CHECKS                                                                        \
  CHECK("type", "qnn_log_level", "enum = uint32_t",                                          \
        _Generic((QnnLog_Level_t)0, uint32_t : 1, default : 0), 1)                           \
  CHECK("fn-type", "qnn_log_callback_t", "",                                                 \
        _Generic((qnn_log_callback_t)0, QnnLog_Callback_t : 1, default : 0), 1)              \
  SLOT_SIG(property_has_capability, propertyHasCapability, TPL_PROPERTY, void, void)          \
  SLOT_SIG(backend_create, backendCreate, TPL_BACKEND_CREATE, struct qnn_backend_config,      \
           QnnBackend_Config_t)                                                                \
  SLOT_SIG(backend_get_api_version, backendGetApiVersion, TPL_GET_API_VERSION,               \
           struct qnn_api_version, Qnn_ApiVersion_t)                                           \
  SLOT_SIG(backend_get_build_id, backendGetBuildId, TPL_GET_BUILD_ID, void, void)             \
  SLOT_SIG(backend_free, backendFree, TPL_ONE_HANDLE, void, void)                              \
  SLOT_SIG(context_create_from_binary, contextCreateFromBinary, TPL_CREATE_FROM_BINARY,       \
           struct qnn_context_config, QnnContext_Config_t)                                     \
  SLOT_SIG(context_free, contextFree, TPL_CONTEXT_FREE, void, void)                            \
  SLOT_SIG(graph_retrieve, graphRetrieve, TPL_GRAPH_RETRIEVE, void, void)                      \
  SLOT_SIG(graph_execute, graphExecute, TPL_EXECUTE, struct qnn_tensor, Qnn_Tensor_t)          \
  SLOT_SIG(log_create, logCreate, TPL_LOG_CREATE, qnn_log_callback_t, QnnLog_Callback_t)       \
  SLOT_SIG(log_set_log_level, logSetLogLevel, TPL_LOG_SET_LEVEL, void, void)                   \
  SLOT_SIG(log_free, logFree, TPL_ONE_HANDLE, void, void)                                      \
  SLOT_SIG(error_get_message, errorGetMessage, TPL_ERROR_GET_MESSAGE, void, void)              \
  SLOT_SIG(context_validate_binary, contextValidateBinary, TPL_VALIDATE_BINARY,               \
           struct qnn_context_config, QnnContext_Config_t)                                     \
  SYS_SIG(system_context_create, systemContextCreate, uint64_t (*)(void **),                  \
          uint64_t (*)(void **))                                                               \
  SYS_SIG(system_context_get_binary_info, systemContextGetBinaryInfo,                          \
          uint64_t (*)(void *, void *, uint64_t, const void **, uint64_t *),                   \
          uint64_t (*)(void *, void *, uint64_t, const QnnSystemContext_BinaryInfo_t **,       \
                       uint64_t *))                                                            \
  SYS_SIG(system_context_get_metadata, systemContextGetMetaData,                               \
          uint64_t (*)(void *, const void *, uint64_t, const void **),                         \
          uint64_t (*)(void *, const void *, uint64_t, const QnnSystemContext_BinaryInfo_t **)) \
  SYS_SIG(system_context_free, systemContextFree, uint64_t (*)(void *), uint64_t (*)(void *))
/* every typed slot: the core ones above, 17, 22, 28..47 and 55, system slots 0..3 and 13..15
 * (slot 39 and the binary info of system slots 1 and 2: ours is type-erased, the SDK's is its
 * struct) */
#define SIG_CHECKS                                                                             \
  CORE_SIG_CHECKS                                                                              \
  SLOT_SIG(mem_register, memRegister, TPL_MEM_REGISTER, struct qnn_mem_descriptor,             \
           Qnn_MemDescriptor_t)                                                                \
  SLOT_SIG(mem_de_register, memDeRegister, TPL_MEM_DE_REGISTER, void, void)                    \
  SLOT_SIG(device_get_platform_info, deviceGetPlatformInfo, TPL_GET_PLATFORM_INFO, PLATFORM_T, \
           QnnDevice_PlatformInfo_t)                                                           \
  SLOT_SIG(device_free_platform_info, deviceFreePlatformInfo, TPL_FREE_PLATFORM_INFO,          \
           PLATFORM_T, QnnDevice_PlatformInfo_t)                                               \
  SLOT_SIG(device_get_infrastructure, deviceGetInfrastructure, TPL_GET_INFRASTRUCTURE, void,   \
           struct _QnnDevice_Infrastructure_t)                                                 \
  SLOT_SIG(device_create, deviceCreate, TPL_DEVICE_CREATE, struct qnn_device_config,           \
           QnnDevice_Config_t)                                                                 \
  SLOT_SIG(device_get_info, deviceGetInfo, TPL_GET_PLATFORM_INFO, PLATFORM_T,                  \
           QnnDevice_PlatformInfo_t)                                                           \
  SLOT_SIG(device_free, deviceFree, TPL_DEVICE_FREE, void, void)                               \
  SLOT_SIG(graph_set_config, graphSetConfig, TPL_GRAPH_SET_CONFIG, struct qnn_graph_config,    \
           QnnGraph_Config_t)                                                                  \
  SLOT_SIG(graph_execute_async, graphExecuteAsync, TPL_EXECUTE_ASYNC, ABI_OURS, ABI_SDK)       \
  SLOT_SIG(signal_create, signalCreate, TPL_SIGNAL_CREATE, struct qnn_signal_config,           \
           QnnSignal_Config_t)                                                                 \
  SLOT_SIG(signal_set_config, signalSetConfig, TPL_SIGNAL_SET_CONFIG, struct qnn_signal_config, \
           QnnSignal_Config_t)                                                                 \
  SLOT_SIG(signal_trigger, signalTrigger, TPL_SIGNAL_ONE, void, void)                          \
  SLOT_SIG(signal_free, signalFree, TPL_SIGNAL_ONE, void, void)                                \
  SLOT_SIG(context_create_from_binary_with_signal, contextCreateFromBinaryWithSignal,          \
           TPL_CREATE_WITH_SIGNAL, struct qnn_context_config, QnnContext_Config_t)             \
  ABI_IF_ELSE(ABI_IS1(HAVE_TYPE_QnnHtpDevice_Infrastructure_t))(PERF_SIG_CHECKS, )           \
  ABI_IF_ELSE(ABI_IS1(HAVE_IF_contextGetProperty))(                                            \
      SLOT_SIG(context_get_property, contextGetProperty, TPL_CONTEXT_GET_PROPERTY,             \
               struct qnn_context_property, QnnContext_Property_t), )                          \
  PROFILE_SIG_CHECKS                                                                           \
  ABI_IF_ELSE(ABI_IS1(HAVE_SYS_systemProfileCreateSerializationTarget))(SYS_PROFILE_SIG_CHECKS, )
/* the profile slots 28..34 */
#define TPL_PROFILE_CREATE(T) uint64_t (*)(void *, uint32_t, void **)
#define TPL_PROFILE_SET_CONFIG(T) uint64_t (*)(void *, const T **)
#define TPL_PROFILE_GET_EVENTS(T) uint64_t (*)(void *, const uint64_t **, uint32_t *)
#define TPL_PROFILE_GET_SUB_EVENTS(T) uint64_t (*)(uint64_t, const uint64_t **, uint32_t *)
#define TPL_PROFILE_GET_DATA(T) uint64_t (*)(uint64_t, T *)
#define TPL_PROFILE_FREE(T) uint64_t (*)(void *)
#define PROFILE_SIG_CHECKS                                                                     \
  CHECK("type", "qnn_profile_event_id_t", "= QnnProfile_EventId_t",                         \
        _Generic((qnn_profile_event_id_t)0, QnnProfile_EventId_t : 1, default : 0) &&         \
            sizeof(qnn_profile_event_id_t) == sizeof(QnnProfile_EventId_t),                   \
        1)                                                                                     \
  SLOT_SIG(profile_create, profileCreate, TPL_PROFILE_CREATE, void, void)                      \
  SLOT_SIG(profile_set_config, profileSetConfig, TPL_PROFILE_SET_CONFIG,                       \
           struct qnn_profile_config, QnnProfile_Config_t)                                     \
  SLOT_SIG(profile_get_events, profileGetEvents, TPL_PROFILE_GET_EVENTS, void, void)           \
  SLOT_SIG(profile_get_sub_events, profileGetSubEvents, TPL_PROFILE_GET_SUB_EVENTS, void, void) \
  SLOT_SIG(profile_get_event_data, profileGetEventData, TPL_PROFILE_GET_DATA,                  \
           struct qnn_profile_event_data, QnnProfile_EventData_t)                              \
  SLOT_SIG(profile_get_extended_event_data, profileGetExtendedEventData, TPL_PROFILE_GET_DATA, \
           struct qnn_profile_extended_event_data, QnnProfile_ExtendedEventData_t)             \
  SLOT_SIG(profile_free, profileFree, TPL_PROFILE_FREE, void, void)
/* the system slots 13..15 (System API 1.5 on): two structs in one signature, spelled out */
#define SYS_SIG(field, sdk_name, our_t, sdk_t)                                                 \
  CHECK("fn-type", "qnn_system_interface_table", #field,                                     \
        _Generic(((struct qnn_system_interface_table *)0)->field, our_t : 1, default : 0), 1)  \
  CHECK("fn-type(sdk)", "qnn_system_interface_table", #field,                                \
        _Generic(((QNN_SYSTEM_INTERFACE_VER_TYPE *)0)->sdk_name, sdk_t : 1, default : 0), 1)
#define SYS_PROFILE_SIG_CHECKS                                                                 \
  CHECK("type", "qnn_system_profile_target_handle_t",                                         \
        "= QnnSystemProfile_SerializationTargetHandle_t",                                      \
        _Generic((qnn_system_profile_target_handle_t)0,                                        \
                 QnnSystemProfile_SerializationTargetHandle_t : 1, default : 0),               \
        1)                                                                                     \
  SYS_SIG(system_profile_create_serialization_target, systemProfileCreateSerializationTarget,  \
          uint64_t (*)(struct qnn_system_profile_target,                                       \
                       struct qnn_system_profile_target_config *, uint32_t, void **),          \
          uint64_t (*)(QnnSystemProfile_SerializationTarget_t,                                 \
                       QnnSystemProfile_SerializationTargetConfig_t *, uint32_t, void **))     \
  SYS_SIG(system_profile_serialize_event_data, systemProfileSerializeEventData,                \
          uint64_t (*)(void *, const struct qnn_system_profile_data **, uint32_t),             \
          uint64_t (*)(void *, const QnnSystemProfile_ProfileData_t **, uint32_t))             \
  SYS_SIG(system_profile_free_serialization_target, systemProfileFreeSerializationTarget,      \
          uint64_t (*)(void *), uint64_t (*)(void *))
#define PERF_SIG(field, sdk_name, TPL, our_arg, sdk_arg)                                       \
  FN_SIG(qnn_htp_perf_infrastructure, field, QnnHtpDevice_PerfInfrastructure_t, sdk_name, TPL, \
         our_arg, sdk_arg)
#define PERF_SIG_CHECKS                                                                        \
  PERF_SIG(create_power_config_id, createPowerConfigId, TPL_CREATE_POWER_CONFIG_ID, void, void) \
  PERF_SIG(destroy_power_config_id, destroyPowerConfigId, TPL_DESTROY_POWER_CONFIG_ID, void,   \
           void)                                                                               \
  PERF_SIG(set_power_config, setPowerConfig, TPL_SET_POWER_CONFIG, struct qnn_htp_power_config, \
           QnnHtpPerfInfrastructure_PowerConfig_t)

/* QnnDevice.h: the platform info chain */
#define G_DEVICE_INFO(S, F, A)                                                                 \
  S(qnn_device_core_info_v1, QnnDevice_CoreInfoV1_t)                                           \
  F(qnn_device_core_info_v1, core_id, QnnDevice_CoreInfoV1_t, coreId)                          \
  F(qnn_device_core_info_v1, core_type, QnnDevice_CoreInfoV1_t, coreType)                      \
  F(qnn_device_core_info_v1, core_info_extension, QnnDevice_CoreInfoV1_t, coreInfoExtension)   \
  S(qnn_device_core_info, QnnDevice_CoreInfo_t)                                                \
  F(qnn_device_core_info, version, QnnDevice_CoreInfo_t, version)                              \
  A(qnn_device_core_info, u, QnnDevice_CoreInfo_t, v1)                                         \
  F(qnn_device_core_info, u.v1, QnnDevice_CoreInfo_t, v1)                                      \
  S(qnn_device_hardware_device_info_v1, QnnDevice_HardwareDeviceInfoV1_t)                      \
  F(qnn_device_hardware_device_info_v1, device_id, QnnDevice_HardwareDeviceInfoV1_t, deviceId) \
  F(qnn_device_hardware_device_info_v1, device_type, QnnDevice_HardwareDeviceInfoV1_t,         \
    deviceType)                                                                                \
  F(qnn_device_hardware_device_info_v1, num_cores, QnnDevice_HardwareDeviceInfoV1_t, numCores) \
  F(qnn_device_hardware_device_info_v1, cores, QnnDevice_HardwareDeviceInfoV1_t, cores)        \
  F(qnn_device_hardware_device_info_v1, device_info_extension,                                 \
    QnnDevice_HardwareDeviceInfoV1_t, deviceInfoExtension)                                     \
  S(qnn_device_hardware_device_info, QnnDevice_HardwareDeviceInfo_t)                           \
  F(qnn_device_hardware_device_info, version, QnnDevice_HardwareDeviceInfo_t, version)         \
  A(qnn_device_hardware_device_info, u, QnnDevice_HardwareDeviceInfo_t, v1)                    \
  F(qnn_device_hardware_device_info, u.v1, QnnDevice_HardwareDeviceInfo_t, v1)                 \
  S(qnn_device_platform_info_v1, QnnDevice_PlatformInfoV1_t)                                   \
  F(qnn_device_platform_info_v1, num_hw_devices, QnnDevice_PlatformInfoV1_t, numHwDevices)     \
  F(qnn_device_platform_info_v1, hw_devices, QnnDevice_PlatformInfoV1_t, hwDevices)            \
  S(qnn_device_platform_info, QnnDevice_PlatformInfo_t)                                        \
  F(qnn_device_platform_info, version, QnnDevice_PlatformInfo_t, version)                      \
  A(qnn_device_platform_info, u, QnnDevice_PlatformInfo_t, v1)                                 \
  F(qnn_device_platform_info, u.v1, QnnDevice_PlatformInfo_t, v1)

/* HTP/QnnHtpDevice.h: what deviceInfoExtension points to on HTP */
#define HTP_ONCHIP_T QnnHtpDevice_OnChipDeviceInfoExtension_t
#define HTP_DEVEXT_T QnnHtpDevice_DeviceInfoExtension_t
#define G_HTP_DEVICE_INFO(S, F, A)                                                             \
  S(qnn_htp_on_chip_device_info, HTP_ONCHIP_T)                                                 \
  F(qnn_htp_on_chip_device_info, vtcm_size, HTP_ONCHIP_T, vtcmSize)                            \
  F(qnn_htp_on_chip_device_info, soc_model, HTP_ONCHIP_T, socModel)                            \
  F(qnn_htp_on_chip_device_info, signed_pd_support, HTP_ONCHIP_T, signedPdSupport)             \
  F(qnn_htp_on_chip_device_info, dlbc_support, HTP_ONCHIP_T, dlbcSupport)                      \
  F(qnn_htp_on_chip_device_info, arch, HTP_ONCHIP_T, arch)                                     \
  S(qnn_htp_device_info_extension, HTP_DEVEXT_T)                                               \
  F(qnn_htp_device_info_extension, dev_type, HTP_DEVEXT_T, devType)                            \
  A(qnn_htp_device_info_extension, u, HTP_DEVEXT_T, onChipDevice)                              \
  F(qnn_htp_device_info_extension, u.on_chip_device, HTP_DEVEXT_T, onChipDevice)

/* HTP/QnnHtpSystemContext.h: what graph info V3's graphBlobInfo points to (newer SDKs) */
#define HTP_BLOB_V1_T QnnHtpSystemContext_GraphBlobInfoV1_t
#define HTP_BLOB_T QnnHtpSystemContext_GraphBlobInfo_t
#define G_HTP_GRAPH_BLOB(S, F, A)                                                              \
  S(qnn_htp_graph_blob_info_v1, HTP_BLOB_V1_T)                                                 \
  F(qnn_htp_graph_blob_info_v1, spill_fill_buffer_size, HTP_BLOB_V1_T, spillFillBufferSize)    \
  F(qnn_htp_graph_blob_info_v1, vtcm_size, HTP_BLOB_V1_T, vtcmSize)                            \
  F(qnn_htp_graph_blob_info_v1, optimization_level, HTP_BLOB_V1_T, optimizationLevel)          \
  F(qnn_htp_graph_blob_info_v1, htp_dlbc, HTP_BLOB_V1_T, htpDlbc)                              \
  F(qnn_htp_graph_blob_info_v1, num_hvx_threads, HTP_BLOB_V1_T, numHvxThreads)                 \
  S(qnn_htp_graph_blob_info, HTP_BLOB_T)                                                       \
  F(qnn_htp_graph_blob_info, version, HTP_BLOB_T, version)                                     \
  A(qnn_htp_graph_blob_info, u, HTP_BLOB_T, contextBinaryGraphBlobInfoV1)                      \
  F(qnn_htp_graph_blob_info, u.v1, HTP_BLOB_T, contextBinaryGraphBlobInfoV1)

/* QnnContext.h: what contextCreateFromBinaryListAsync (slot 56) takes a list of */
#define CPARAMS_V1_T QnnContext_ParamsV1_t
#define G_CONTEXT_PARAMS(S, F, A)                                                              \
  S(qnn_context_params_v1, CPARAMS_V1_T)                                                       \
  F(qnn_context_params_v1, config, CPARAMS_V1_T, config)                                       \
  F(qnn_context_params_v1, binary_buffer, CPARAMS_V1_T, binaryBuffer)                          \
  F(qnn_context_params_v1, binary_buffer_size, CPARAMS_V1_T, binaryBufferSize)                 \
  F(qnn_context_params_v1, profile, CPARAMS_V1_T, profile)                                     \
  F(qnn_context_params_v1, notify_func, CPARAMS_V1_T, notifyFunc)                              \
  F(qnn_context_params_v1, notify_param, CPARAMS_V1_T, notifyParam)                            \
  S(qnn_context_params, QnnContext_Params_t)                                                   \
  F(qnn_context_params, version, QnnContext_Params_t, version)                                 \
  A(qnn_context_params, u, QnnContext_Params_t, v1)                                            \
  F(qnn_context_params, u.v1, QnnContext_Params_t, v1)                                         \
  FIELD_IF(HAVE_TYPE_QnnContext_ParamsV2_t, qnn_context_params, u.v2, QnnContext_Params_t, v2)
/* the notify function and slot 56's type, where the SDK has the list API */
#define LIST_ASYNC_SIG_CHECKS                                                                  \
  CHECK("fn-type", "qnn_context_notify_fn_t", "",                                            \
        _Generic((qnn_context_notify_fn_t)0, QnnContext_createFromBinaryNotifyFn_t : 1,       \
                 default : 0), 1)                                                             \
  SLOT_SIG(context_create_from_binary_list_async, contextCreateFromBinaryListAsync,          \
           TPL_LIST_ASYNC, ABI_OURS, ABI_SDK)

/* HTP/QnnHtpContext.h: what a CUSTOM context config points to on HTP */
#define HTP_CTXCFG_T QnnHtpContext_CustomConfig_t
#define HTP_GROUP_T QnnHtpContext_GroupRegistration_t
#define G_HTP_CONTEXT_CONFIG(S, F, A)                                                          \
  S(qnn_htp_context_group_registration, HTP_GROUP_T)                                           \
  F(qnn_htp_context_group_registration, first_group_handle, HTP_GROUP_T, firstGroupHandle)     \
  F(qnn_htp_context_group_registration, max_spill_fill_buffer, HTP_GROUP_T, maxSpillFillBuffer) \
  S(qnn_htp_context_custom_config, HTP_CTXCFG_T)                                               \
  F(qnn_htp_context_custom_config, option, HTP_CTXCFG_T, option)                               \
  A(qnn_htp_context_custom_config, u, HTP_CTXCFG_T, groupRegistration)                         \
  F(qnn_htp_context_custom_config, u.group_registration, HTP_CTXCFG_T, groupRegistration)      \
  F(qnn_htp_context_custom_config, u.file_read_memory_budget_in_mb, HTP_CTXCFG_T,              \
    fileReadMemoryBudgetInMb)
/* HTP/QnnHtpSystemContext.h: version 2 of the graph blob info, a struct of its own */
#define HTP_BLOB_V2_T QnnHtpSystemContext_GraphBlobInfoV2_t
#define G_HTP_GRAPH_BLOB_V2(S, F, A)                                                           \
  S(qnn_htp_graph_blob_info_v2, HTP_BLOB_V2_T)                                                 \
  F(qnn_htp_graph_blob_info_v2, version, HTP_BLOB_V2_T, version)                               \
  F(qnn_htp_graph_blob_info_v2, native_k_channel_size, HTP_BLOB_V2_T, nativeKChannelSize)      \
  F(qnn_htp_graph_blob_info_v2, native_v_channel_size, HTP_BLOB_V2_T, nativeVChannelSize)      \
  F(qnn_htp_graph_blob_info_v2, is_safe_share_io, HTP_BLOB_V2_T, isSafeShareIO)                \
  F(qnn_htp_graph_blob_info_v2, io_tensor_size, HTP_BLOB_V2_T, ioTensorSize)                   \
  F(qnn_htp_graph_blob_info_v2, op_data_size, HTP_BLOB_V2_T, opDataSize)                       \
  F(qnn_htp_graph_blob_info_v2, const_size, HTP_BLOB_V2_T, constSize)                          \
  F(qnn_htp_graph_blob_info_v2, ddr_tensor_size, HTP_BLOB_V2_T, ddrTensorSize)                 \
  F(qnn_htp_graph_blob_info_v2, shared_weights_size, HTP_BLOB_V2_T, sharedWeightsSize)

/* QnnContext.h: what contextGetProperty (slot 63) takes; HTP/QnnHtpContext.h: the HTP custom
 * property a custom one points to */
#define G_CONTEXT_PROPERTY(S, F, A)                                                            \
  S(qnn_context_property, QnnContext_Property_t)                                               \
  F(qnn_context_property, option, QnnContext_Property_t, option)                               \
  A(qnn_context_property, u, QnnContext_Property_t, customProperty)                            \
  F(qnn_context_property, u.custom_property, QnnContext_Property_t, customProperty)
#define HTP_CPROP_T QnnHtpContext_CustomProperty_t
#define G_HTP_CONTEXT_PROPERTY(S, F, A)                                                        \
  S(qnn_htp_context_custom_property, HTP_CPROP_T)                                              \
  F(qnn_htp_context_custom_property, option, HTP_CPROP_T, option)                              \
  A(qnn_htp_context_custom_property, u, HTP_CPROP_T, bufferStartAlignment)                     \
  F(qnn_htp_context_custom_property, u.buffer_start_alignment, HTP_CPROP_T,                    \
    bufferStartAlignment)                                                                      \
  F(qnn_htp_context_custom_property, u.spill_fill_buffer_size, HTP_CPROP_T,                    \
    spillfillBufferSize)                                                                       \
  F(qnn_htp_context_custom_property, u.weights_buffer_size, HTP_CPROP_T, weightsBufferSize)

/* QnnMem.h: what memRegister (slot 35) takes an array of */
#define G_MEM(S, F, A)                                                                         \
  S(qnn_mem_shape, Qnn_MemShape_t)                                                             \
  F(qnn_mem_shape, num_dim, Qnn_MemShape_t, numDim)                                            \
  F(qnn_mem_shape, dim_size, Qnn_MemShape_t, dimSize)                                          \
  F(qnn_mem_shape, shape_config, Qnn_MemShape_t, shapeConfig)                                  \
  S(qnn_mem_descriptor, Qnn_MemDescriptor_t)                                                   \
  F(qnn_mem_descriptor, mem_shape, Qnn_MemDescriptor_t, memShape)                              \
  F(qnn_mem_descriptor, data_type, Qnn_MemDescriptor_t, dataType)                              \
  F(qnn_mem_descriptor, mem_type, Qnn_MemDescriptor_t, memType)                                \
  A(qnn_mem_descriptor, u, Qnn_MemDescriptor_t, ionInfo)                                       \
  F(qnn_mem_descriptor, u.ion_info, Qnn_MemDescriptor_t, ionInfo)                              \
  F(qnn_mem_descriptor, u.ion_info.fd, Qnn_MemDescriptor_t, ionInfo.fd)                        \
  F(qnn_mem_descriptor, u.custom_info, Qnn_MemDescriptor_t, customInfo)                        \
  F(qnn_mem_descriptor, u.dma_buf_info, Qnn_MemDescriptor_t, dmaBufInfo)                       \
  F(qnn_mem_descriptor, u.dma_buf_info.fd, Qnn_MemDescriptor_t, dmaBufInfo.fd)                 \
  F(qnn_mem_descriptor, u.dma_buf_info.data, Qnn_MemDescriptor_t, dmaBufInfo.data)

/* HTP/QnnHtpMem.h: what a custom memory descriptor's customInfo points to on HTP */
#define G_HTP_MEM(S, F, A)                                                                     \
  S(qnn_htp_shared_buffer_config, QnnHtpMem_SharedBufferConfig_t)                              \
  F(qnn_htp_shared_buffer_config, fd, QnnHtpMem_SharedBufferConfig_t, fd)                      \
  F(qnn_htp_shared_buffer_config, offset, QnnHtpMem_SharedBufferConfig_t, offset)              \
  S(qnn_htp_mem_descriptor, QnnMemHtp_Descriptor_t)                                            \
  F(qnn_htp_mem_descriptor, type, QnnMemHtp_Descriptor_t, type)                                \
  F(qnn_htp_mem_descriptor, size, QnnMemHtp_Descriptor_t, size)                                \
  A(qnn_htp_mem_descriptor, u, QnnMemHtp_Descriptor_t, qurtAddress)                            \
  F(qnn_htp_mem_descriptor, u.qurt_address, QnnMemHtp_Descriptor_t, qurtAddress)               \
  F(qnn_htp_mem_descriptor, u.shared_buffer_config, QnnMemHtp_Descriptor_t, sharedBufferConfig)

/* HTP/QnnHtpDevice.h: the device custom config */
#define HTP_DEVCFG_T QnnHtpDevice_CustomConfig_t
#define G_HTP_DEVICE_CONFIG(S, F, A)                                                           \
  S(qnn_htp_device_custom_config, HTP_DEVCFG_T)                                                \
  F(qnn_htp_device_custom_config, option, HTP_DEVCFG_T, option)                                \
  A(qnn_htp_device_custom_config, u, HTP_DEVCFG_T, socModel)                                   \
  F(qnn_htp_device_custom_config, u.soc_model, HTP_DEVCFG_T, socModel)                         \
  F(qnn_htp_device_custom_config, u.arch, HTP_DEVCFG_T, arch)                                  \
  F(qnn_htp_device_custom_config, u.arch.device_id, HTP_DEVCFG_T, arch.deviceId)               \
  F(qnn_htp_device_custom_config, u.arch.arch, HTP_DEVCFG_T, arch.arch)                        \
  F(qnn_htp_device_custom_config, u.use_signed_process_domain, HTP_DEVCFG_T,                   \
    useSignedProcessDomain)                                                                    \
  F(qnn_htp_device_custom_config, u.use_signed_process_domain.device_id, HTP_DEVCFG_T,         \
    useSignedProcessDomain.deviceId)                                                           \
  F(qnn_htp_device_custom_config, u.use_signed_process_domain.use_signed_process_domain,       \
    HTP_DEVCFG_T, useSignedProcessDomain.useSignedProcessDomain)

/* HTP/QnnHtpPerfInfrastructure.h: power votes */
#define HTP_DCVS_T QnnHtpPerfInfrastructure_DcvsV3_t
#define HTP_PCFG_T QnnHtpPerfInfrastructure_PowerConfig_t
#define G_HTP_POWER_CONFIG(S, F, A)                                                            \
  S(qnn_htp_dcvs_v3, HTP_DCVS_T)                                                               \
  F(qnn_htp_dcvs_v3, context_id, HTP_DCVS_T, contextId)                                        \
  F(qnn_htp_dcvs_v3, set_dcvs_enable, HTP_DCVS_T, setDcvsEnable)                               \
  F(qnn_htp_dcvs_v3, dcvs_enable, HTP_DCVS_T, dcvsEnable)                                      \
  F(qnn_htp_dcvs_v3, power_mode, HTP_DCVS_T, powerMode)                                        \
  F(qnn_htp_dcvs_v3, set_sleep_latency, HTP_DCVS_T, setSleepLatency)                           \
  F(qnn_htp_dcvs_v3, sleep_latency, HTP_DCVS_T, sleepLatency)                                  \
  F(qnn_htp_dcvs_v3, set_sleep_disable, HTP_DCVS_T, setSleepDisable)                           \
  F(qnn_htp_dcvs_v3, sleep_disable, HTP_DCVS_T, sleepDisable)                                  \
  F(qnn_htp_dcvs_v3, set_bus_params, HTP_DCVS_T, setBusParams)                                 \
  F(qnn_htp_dcvs_v3, bus_voltage_corner_min, HTP_DCVS_T, busVoltageCornerMin)                  \
  F(qnn_htp_dcvs_v3, bus_voltage_corner_target, HTP_DCVS_T, busVoltageCornerTarget)            \
  F(qnn_htp_dcvs_v3, bus_voltage_corner_max, HTP_DCVS_T, busVoltageCornerMax)                  \
  F(qnn_htp_dcvs_v3, set_core_params, HTP_DCVS_T, setCoreParams)                               \
  F(qnn_htp_dcvs_v3, core_voltage_corner_min, HTP_DCVS_T, coreVoltageCornerMin)                \
  F(qnn_htp_dcvs_v3, core_voltage_corner_target, HTP_DCVS_T, coreVoltageCornerTarget)          \
  F(qnn_htp_dcvs_v3, core_voltage_corner_max, HTP_DCVS_T, coreVoltageCornerMax)                \
  S(qnn_htp_power_config, HTP_PCFG_T)                                                          \
  F(qnn_htp_power_config, option, HTP_PCFG_T, option)                                          \
  A(qnn_htp_power_config, u, HTP_PCFG_T, dcvsV3Config)                                         \
  F(qnn_htp_power_config, u.dcvs_v3_config, HTP_PCFG_T, dcvsV3Config)                          \
  F(qnn_htp_power_config, u.rpc_control_latency_config, HTP_PCFG_T, rpcControlLatencyConfig)   \
  F(qnn_htp_power_config, u.rpc_polling_time_config, HTP_PCFG_T, rpcPollingTimeConfig)

/* HTP/QnnHtpDevice.h: what deviceGetInfrastructure (slot 39) hands back. The member offsets of
 * the function table are its order (slot i at i * pointer size). */
#define HTP_PERF_T QnnHtpDevice_PerfInfrastructure_t
#define HTP_INFRA_T QnnHtpDevice_Infrastructure_t
#define G_HTP_INFRASTRUCTURE(S, F, A)                                                          \
  S(qnn_htp_perf_infrastructure, HTP_PERF_T)                                                   \
  F(qnn_htp_perf_infrastructure, create_power_config_id, HTP_PERF_T, createPowerConfigId)      \
  F(qnn_htp_perf_infrastructure, destroy_power_config_id, HTP_PERF_T, destroyPowerConfigId)    \
  F(qnn_htp_perf_infrastructure, set_power_config, HTP_PERF_T, setPowerConfig)                 \
  F(qnn_htp_perf_infrastructure, set_memory_config, HTP_PERF_T, setMemoryConfig)               \
  S(qnn_htp_device_infrastructure, HTP_INFRA_T)                                                \
  F(qnn_htp_device_infrastructure, infra_type, HTP_INFRA_T, infraType)                         \
  A(qnn_htp_device_infrastructure, u, HTP_INFRA_T, perfInfra)                                  \
  F(qnn_htp_device_infrastructure, u.perf_infra, HTP_INFRA_T, perfInfra)

/* QnnProfile.h: what the profile slots hand back and take */
#define PEXT_V1_T QnnProfile_ExtendedEventDataV1_t
#define G_PROFILE(S, F, A)                                                                     \
  S(qnn_profile_event_data, QnnProfile_EventData_t)                                            \
  F(qnn_profile_event_data, type, QnnProfile_EventData_t, type)                                \
  F(qnn_profile_event_data, unit, QnnProfile_EventData_t, unit)                                \
  F(qnn_profile_event_data, value, QnnProfile_EventData_t, value)                              \
  F(qnn_profile_event_data, identifier, QnnProfile_EventData_t, identifier)                    \
  S(qnn_scalar, Qnn_Scalar_t)                                                                  \
  F(qnn_scalar, data_type, Qnn_Scalar_t, dataType)                                             \
  A(qnn_scalar, u, Qnn_Scalar_t, floatValue)                                                   \
  F(qnn_scalar, u.float_value, Qnn_Scalar_t, floatValue)                                       \
  F(qnn_scalar, u.double_value, Qnn_Scalar_t, doubleValue)                                     \
  F(qnn_scalar, u.uint64_value, Qnn_Scalar_t, uint64Value)                                     \
  F(qnn_scalar, u.int64_value, Qnn_Scalar_t, int64Value)                                       \
  F(qnn_scalar, u.uint32_value, Qnn_Scalar_t, uint32Value)                                     \
  F(qnn_scalar, u.int32_value, Qnn_Scalar_t, int32Value)                                       \
  F(qnn_scalar, u.string_value, Qnn_Scalar_t, stringValue)                                     \
  S(qnn_opaque_object, Qnn_OpaqueObject_t)                                                     \
  F(qnn_opaque_object, data, Qnn_OpaqueObject_t, data)                                         \
  F(qnn_opaque_object, len, Qnn_OpaqueObject_t, len)                                           \
  S(qnn_profile_backend_opaque_object, QnnProfile_BackendOpaqueObject_t)                       \
  F(qnn_profile_backend_opaque_object, opaque_object, QnnProfile_BackendOpaqueObject_t,        \
    opaqueObject)                                                                              \
  F(qnn_profile_backend_opaque_object, file_name, QnnProfile_BackendOpaqueObject_t, fileName)  \
  S(qnn_profile_extended_event_data_v1, PEXT_V1_T)                                             \
  F(qnn_profile_extended_event_data_v1, type, PEXT_V1_T, type)                                 \
  F(qnn_profile_extended_event_data_v1, unit, PEXT_V1_T, unit)                                 \
  A(qnn_profile_extended_event_data_v1, u, PEXT_V1_T, value)                                   \
  F(qnn_profile_extended_event_data_v1, u.value, PEXT_V1_T, value)                             \
  F(qnn_profile_extended_event_data_v1, u.backend_opaque_object, PEXT_V1_T, backendOpaqueObject) \
  F(qnn_profile_extended_event_data_v1, timestamp, PEXT_V1_T, timestamp)                       \
  F(qnn_profile_extended_event_data_v1, identifier, PEXT_V1_T, identifier)                     \
  S(qnn_profile_extended_event_data, QnnProfile_ExtendedEventData_t)                           \
  F(qnn_profile_extended_event_data, version, QnnProfile_ExtendedEventData_t, version)         \
  A(qnn_profile_extended_event_data, u, QnnProfile_ExtendedEventData_t, v1)                    \
  F(qnn_profile_extended_event_data, u.v1, QnnProfile_ExtendedEventData_t, v1)                 \
  S(qnn_profile_config, QnnProfile_Config_t)                                                   \
  F(qnn_profile_config, option, QnnProfile_Config_t, option)                                   \
  A(qnn_profile_config, u, QnnProfile_Config_t, customConfig)                                  \
  F(qnn_profile_config, u.custom_config, QnnProfile_Config_t, customConfig)                    \
  F(qnn_profile_config, u.num_max_events, QnnProfile_Config_t, numMaxEvents)                   \
  F(qnn_profile_config, u.enable_optrace, QnnProfile_Config_t, enableOptrace)

/* System/QnnSystemProfile.h (System API 1.5 on): what systemProfileSerializeEventData takes */
#define SP_FILE_T QnnSystemProfile_SerializationTargetFile_t
#define SP_TARGET_T QnnSystemProfile_SerializationTarget_t
#define SP_HDR_T QnnSystemProfile_SerializationFileHeader_t
#define SP_TCFG_T QnnSystemProfile_SerializationTargetConfig_t
#define SP_H1_T QnnSystemProfile_HeaderV1_t
#define SP_EV1_T QnnSystemProfile_ProfileEventV1_t
#define SP_D1_T QnnSystemProfile_ProfileDataV1_t
#define SP_D_T QnnSystemProfile_ProfileData_t
#define G_SYSTEM_PROFILE(S, F, A)                                                              \
  S(qnn_system_profile_target_file, SP_FILE_T)                                                 \
  F(qnn_system_profile_target_file, file_name, SP_FILE_T, fileName)                            \
  F(qnn_system_profile_target_file, file_directory, SP_FILE_T, fileDirectory)                  \
  S(qnn_system_profile_target, SP_TARGET_T)                                                    \
  F(qnn_system_profile_target, type, SP_TARGET_T, type)                                        \
  A(qnn_system_profile_target, u, SP_TARGET_T, file)                                           \
  F(qnn_system_profile_target, u.file, SP_TARGET_T, file)                                      \
  S(qnn_system_profile_file_header, SP_HDR_T)                                                  \
  F(qnn_system_profile_file_header, app_name, SP_HDR_T, appName)                               \
  F(qnn_system_profile_file_header, app_version, SP_HDR_T, appVersion)                         \
  F(qnn_system_profile_file_header, backend_version, SP_HDR_T, backendVersion)                 \
  S(qnn_system_profile_target_config, SP_TCFG_T)                                               \
  F(qnn_system_profile_target_config, type, SP_TCFG_T, type)                                   \
  A(qnn_system_profile_target_config, u, SP_TCFG_T, maxNumMessages)                            \
  F(qnn_system_profile_target_config, u.max_num_messages, SP_TCFG_T, maxNumMessages)           \
  F(qnn_system_profile_target_config, u.serialization_header, SP_TCFG_T, serializationHeader)  \
  S(qnn_system_profile_header_v1, SP_H1_T)                                                     \
  F(qnn_system_profile_header_v1, start_time, SP_H1_T, startTime)                              \
  F(qnn_system_profile_header_v1, stop_time, SP_H1_T, stopTime)                                \
  F(qnn_system_profile_header_v1, start_mem, SP_H1_T, startMem)                                \
  F(qnn_system_profile_header_v1, stop_mem, SP_H1_T, stopMem)                                  \
  F(qnn_system_profile_header_v1, method_type, SP_H1_T, methodType)                            \
  F(qnn_system_profile_header_v1, visibility, SP_H1_T, visibility)                             \
  F(qnn_system_profile_header_v1, graph_name, SP_H1_T, graphName)                              \
  S(qnn_system_profile_event_v1, SP_EV1_T)                                                     \
  F(qnn_system_profile_event_v1, type, SP_EV1_T, type)                                         \
  A(qnn_system_profile_event_v1, u, SP_EV1_T, eventData)                                       \
  F(qnn_system_profile_event_v1, u.event_data, SP_EV1_T, eventData)                            \
  F(qnn_system_profile_event_v1, u.extended_event_data, SP_EV1_T, extendedEventData)           \
  F(qnn_system_profile_event_v1, sub_events, SP_EV1_T, profileSubEventData)                    \
  F(qnn_system_profile_event_v1, num_sub_events, SP_EV1_T, numSubEvents)                       \
  S(qnn_system_profile_data_v1, SP_D1_T)                                                       \
  F(qnn_system_profile_data_v1, header, SP_D1_T, header)                                       \
  F(qnn_system_profile_data_v1, events, SP_D1_T, profilingEvents)                              \
  F(qnn_system_profile_data_v1, num_events, SP_D1_T, numProfilingEvents)                       \
  S(qnn_system_profile_data, SP_D_T)                                                           \
  F(qnn_system_profile_data, version, SP_D_T, version)                                         \
  A(qnn_system_profile_data, u, SP_D_T, v1)                                                    \
  F(qnn_system_profile_data, u.v1, SP_D_T, v1)

#define EXT_CHECKS                                                                             \
  GROUP_IF(HAVE_TYPE_QnnProfile_EventData_t, G_PROFILE)                                        \
  GROUP_IF(HAVE_TYPE_QnnSystemProfile_ProfileData_t, G_SYSTEM_PROFILE)                         \
  GROUP_IF(HAVE_TYPE_QnnDevice_PlatformInfo_t, G_DEVICE_INFO)                                  \
  GROUP_IF(HAVE_TYPE_QnnHtpDevice_DeviceInfoExtension_t, G_HTP_DEVICE_INFO)                    \
  GROUP_IF(HAVE_TYPE_QnnHtpSystemContext_GraphBlobInfo_t, G_HTP_GRAPH_BLOB)                    \
  GROUP_IF(HAVE_TYPE_QnnHtpSystemContext_GraphBlobInfoV2_t, G_HTP_GRAPH_BLOB_V2)               \
  GROUP_IF(HAVE_TYPE_QnnContext_Property_t, G_CONTEXT_PROPERTY)                                \
  GROUP_IF(HAVE_TYPE_QnnHtpContext_CustomProperty_t, G_HTP_CONTEXT_PROPERTY)                   \
  GROUP_IF(HAVE_TYPE_Qnn_MemDescriptor_t, G_MEM)                                               \
  GROUP_IF(HAVE_TYPE_QnnContext_ParamsV1_t, G_CONTEXT_PARAMS)                                  \
  ABI_IF_ELSE(ABI_IS1(HAVE_TYPE_QnnContext_ParamsV1_t))(LIST_ASYNC_SIG_CHECKS, )               \
  GROUP_IF(HAVE_TYPE_QnnHtpContext_CustomConfig_t, G_HTP_CONTEXT_CONFIG)                       \
  GROUP_IF(HAVE_TYPE_QnnMemHtp_Descriptor_t, G_HTP_MEM)                                        \
  GROUP_IF(HAVE_TYPE_QnnHtpDevice_CustomConfig_t, G_HTP_DEVICE_CONFIG)                         \
  GROUP_IF(HAVE_TYPE_QnnHtpPerfInfrastructure_PowerConfig_t, G_HTP_POWER_CONFIG)               \
  GROUP_IF(HAVE_TYPE_QnnHtpDevice_Infrastructure_t, G_HTP_INFRASTRUCTURE)                      \
  SIG_CHECKS

/* Values we name differently from the SDK: VALUE_AS(ours, SDK name). Compared when the SDK's
 * header declares `have` (a HAVE_ macro; NONE for core headers), a failure otherwise. */
#define HAVE_NONE 1
#define VALUE_AS(have, ours, sdk)                                                              \
  ABI_IF_ELSE(ABI_IS1(have))(CHECK("value", #ours, "= " #sdk, OURS_##ours, sdk),               \
                             ALIAS_MISSING(ours, sdk))
#define VALUE_ALIASES(X)                                                                       \
  X(HAVE_NONE, QNN_PROPERTY_MEM_SUPPORT_ION, QNN_PROPERTY_MEMORY_SUPPORT_MEM_TYPE_ION)         \
  X(HAVE_NONE, QNN_PROPERTY_MEM_SUPPORT_CUSTOM, QNN_PROPERTY_MEMORY_SUPPORT_MEM_TYPE_CUSTOM)   \
  X(HAVE_NONE, QNN_PROPERTY_MEM_SUPPORT_DMA_BUF, QNN_PROPERTY_MEMORY_SUPPORT_MEM_TYPE_DMA_BUF) \
  X(HAVE_TYPE_QnnHtpPerfInfrastructure_PowerConfig_t, QNN_HTP_PERF_ERROR_INVALID_INPUT,        \
    QNN_HTP_PERF_INFRASTRUCTURE_ERROR_INVALID_INPUT)                                           \
  X(HAVE_TYPE_QnnHtpPerfInfrastructure_PowerConfig_t, QNN_HTP_PERF_ERROR_UNSUPPORTED_CONFIG,   \
    QNN_HTP_PERF_INFRASTRUCTURE_ERROR_UNSUPPORTED_CONFIG)
#define ALIAS_CHECKS VALUE_ALIASES(VALUE_AS)

/* Layout facts behind the OURS_ stride constants (constant expressions). */
#define ROUND8(x) (((x) + 7u) & ~(size_t)7u)
#define STRIDE_CHECKS                                                                        \
  CHECK("fact", "QNN_TENSOR_STRIDE", "= sizeof(Qnn_Tensor_t)", OURS_QNN_TENSOR_STRIDE,      \
        sizeof(Qnn_Tensor_t))                                                                \
  CHECK("fact", "QNN_TENSOR_STRIDE_V1_ONLY", "= tensor holding only V1",                    \
        OURS_QNN_TENSOR_STRIDE_V1_ONLY,                                                      \
        ROUND8(offsetof(Qnn_Tensor_t, v1) + sizeof(Qnn_TensorV1_t)))                          \
  CHECK("fact", "QNN_GRAPH_INFO_STRIDE_V1_ONLY", "= graph info holding only V1",            \
        OURS_QNN_GRAPH_INFO_STRIDE_V1_ONLY,                                                  \
        ROUND8(offsetof(QnnSystemContext_GraphInfo_t, graphInfoV1) +                         \
               sizeof(QnnSystemContext_GraphInfoV1_t)))                                      \
  CHECK_IF(HAVE_TYPE_QnnSystemContext_GraphInfoV2_t, "fact", "QNN_GRAPH_INFO_STRIDE_V2",      \
           "= graph info holding V1+V2", OURS_QNN_GRAPH_INFO_STRIDE_V2,                      \
           ROUND8(offsetof(QnnSystemContext_GraphInfo_t, graphInfoV2) +                      \
                  sizeof(QnnSystemContext_GraphInfoV2_t)))                                   \
  CHECK_IF(HAVE_TYPE_QnnSystemContext_GraphInfoV3_t, "fact", "QNN_GRAPH_INFO_STRIDE_V3",      \
           "= sizeof(QnnSystemContext_GraphInfo_t)", OURS_QNN_GRAPH_INFO_STRIDE_V3,          \
           sizeof(QnnSystemContext_GraphInfo_t))                                             \
  CHECK("fact", "QNN_CORE_API_MAJOR", "= QNN_API_VERSION_MAJOR", OURS_QNN_CORE_API_MAJOR,    \
        QNN_API_VERSION_MAJOR)                                                               \
  CHECK("fact", "QNN_SYSTEM_API_MAJOR", "= QNN_SYSTEM_API_VERSION_MAJOR",                    \
        OURS_QNN_SYSTEM_API_MAJOR, QNN_SYSTEM_API_VERSION_MAJOR)

#ifdef ABI_STATIC
STRUCT_CHECKS
SLOT_CHECKS
STRIDE_CHECKS
EXT_CHECKS
ALIAS_CHECKS
#undef ABI_OWN
#define ABI_OWN(name)
#include "our_values.h"

#else /* runtime table */

/* Our names the SDK need not define, and why. Anything else we define must match the SDK. */
static const struct {
  const char *name, *why;
} own_names[] = {
    {"QNN_BACKEND_ID_REFERENCE", "id 1 is only named in a QnnCommon.h comment"},
    {"QNN_BACKEND_ERROR_CANNOT_INITIALIZE", "not defined by every SDK"},
    {"QNN_INTERFACE_GET_PROVIDERS_SYMBOL", "checked as a declared function name below"},
    {"QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL", "checked as a declared function name below"},
    {"QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3", "newer SDKs only (absent at System API 1.1, present at 1.4)"},
    {"QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3", "newer SDKs only (absent at System API 1.1, present at 1.4)"},
    {"QNN_GRAPH_INFO_STRIDE_V1_ONLY", "layout fact, checked against the SDK struct below"},
    {"QNN_GRAPH_INFO_STRIDE_V2", "layout fact, checked against the SDK struct below"},
    {"QNN_GRAPH_INFO_STRIDE_V3", "layout fact, checked against the SDK struct below"},
    {"QNN_TENSOR_STRIDE", "layout fact, checked against the SDK struct below"},
    {"QNN_TENSOR_STRIDE_V1_ONLY", "layout fact, checked against the SDK struct below"},
    {"QNN_DATATYPE_BFLOAT_16", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_TENSOR_TYPE_OPTIONAL_APP_READWRITE", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_QUANTIZATION_ENCODING_BW_FLOAT_BLOCK", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_CONTEXT_PROPERTY_OPTION_CUSTOM", "newer SDKs only (contextGetProperty: absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_PROPERTY_CONTEXT_SUPPORT_CUSTOM_PROPERTY", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V1", "newer SDKs only (graph blob info: absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_SYSTEM_CONTEXT_HTP_GRAPH_INFO_BLOB_VERSION_V2", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_HTP_CONTEXT_GET_PROP_BUFFER_START_ALIGNMENT", "newer SDKs only (HTP context properties: absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
    {"QNN_HTP_CONTEXT_GET_PROP_WEIGHTS_BUFFER_SIZE", "newer SDKs only (absent in QAIRT 2.25, present in 2.43)"},
#define SYSPROF_WHY "newer SDKs only (QnnSystemProfile.h: absent at System API 1.1, present at 1.5)"
    {"QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_FILE", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_MAX_NUM_MESSAGES", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_SERIALIZATION_TARGET_CONFIG_SERIALIZATION_HEADER", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_VISIBILITY_PUBLIC", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_METHOD_TYPE_NONE", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_EXECUTE", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_METHOD_TYPE_BACKEND_CREATE_FROM_BINARY", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_EVENT_DATA", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_EXTENDED_EVENT_DATA", SYSPROF_WHY},
    {"QNN_SYSTEM_PROFILE_DATA_VERSION_1", SYSPROF_WHY},
};

static const check_t checks[] = {STRUCT_CHECKS SLOT_CHECKS STRIDE_CHECKS EXT_CHECKS ALIAS_CHECKS
#include "our_values.h"
};

/* our names checked against a differently named SDK value (VALUE_ALIASES) */
#define ALIAS_NAME(have, ours, sdk) #ours,
static const char *const aliased[] = {VALUE_ALIASES(ALIAS_NAME)};

static const struct {
  const char *tag, *path;
} declared[] = {
#include "our_fields.h"
};

static int verbose;
static unsigned n_ok, n_skip, n_fail;

static void report(int ok, const char *what, const char *tag, const char *path, long long ours,
                   long long sdk, const char *note) {
  if (ok) n_ok++;
  else n_fail++;
  if (ok && !verbose) return;
  printf("%-4s %-18s %s%s%s: ours=%lld sdk=%lld%s%s\n", ok ? "ok" : "FAIL", what, tag,
         *path == '=' ? " " : *path ? "." : "", path, ours, sdk, note ? "  " : "", note ? note : "");
}

static void skip(const char *what, const char *tag, const char *path, const char *why) {
  n_skip++;
  if (verbose) printf("skip %-18s %s%s%s  (%s)\n", what, tag, *path ? "." : "", path, why);
}

static int is_aliased(const char *name) {
  for (size_t i = 0; i < sizeof aliased / sizeof aliased[0]; i++)
    if (!strcmp(aliased[i], name)) return 1;
  return 0;
}

static const char *own_reason(const char *name) {
  for (size_t i = 0; i < sizeof own_names / sizeof own_names[0]; i++)
    if (!strcmp(own_names[i].name, name)) return own_names[i].why;
  return NULL;
}

static int covered(const char *tag, const char *path) {
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    const check_t *c = &checks[i];
    if (c->kind != K_OWN && !strcmp(c->tag, tag) && !strcmp(c->path, path)) return 1;
  }
  return 0;
}

#define SDK_NAME_OF(fn) ((void)sizeof(&fn), #fn) /* compiles only if the SDK declares fn */

int main(void) {
  const char *v = getenv("V");
  verbose = v && *v && strcmp(v, "0");

  printf("check-abi: SDK core API %d.%d.%d, System API %d.%d.%d: core table %u slots, system "
         "table %u slots, graph info %u bytes\n",
         QNN_API_VERSION_MAJOR, QNN_API_VERSION_MINOR, QNN_API_VERSION_PATCH,
         QNN_SYSTEM_API_VERSION_MAJOR, QNN_SYSTEM_API_VERSION_MINOR, QNN_SYSTEM_API_VERSION_PATCH,
         (unsigned)SDK_CORE_SLOTS, (unsigned)SDK_SYSTEM_SLOTS,
         (unsigned)sizeof(QnnSystemContext_GraphInfo_t));

  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    const check_t *c = &checks[i];
    switch (c->kind) {
    case K_EQ: report(c->ours == c->sdk, c->what, c->tag, c->path, c->ours, c->sdk, NULL); break;
    case K_SKIP: skip("member", c->tag, c->path, c->why); break;
    case K_SLOT_BEYOND:
      if (c->ours >= c->sdk) skip("slot", c->tag, c->path, "beyond this SDK's table");
      else
        report(0, "slot", c->tag, c->path, c->ours, -1,
               "(the SDK table has this index but no member of the expected name)");
      break;
    case K_ALIAS_MISSING:
      report(0, "value", c->tag, c->path, 0, 0, "(the SDK header declaring it is missing)");
      break;
    case K_OWN: {
      if (is_aliased(c->tag)) break; /* compared under its SDK name (VALUE_ALIASES) */
      const char *why = own_reason(c->tag);
      if (why) skip("value", c->tag, "", why);
      else
        report(0, "value", c->tag, "", 0, 0,
               "(we define it, this SDK does not, and own_names[] does not list it)");
      break;
    }
    }
  }

  /* every member we declare must have been checked or explicitly skipped */
  for (size_t i = 0; i < sizeof declared / sizeof declared[0]; i++)
    if (!covered(declared[i].tag, declared[i].path))
      report(0, "unchecked member", declared[i].tag, declared[i].path, 0, 0,
             "(declared in src/qnn but check_abi.c has no entry for it)");

  /* run-time facts: qnn_versions.h against this SDK */
  const qnn_version_t core = {QNN_API_VERSION_MAJOR, QNN_API_VERSION_MINOR, QNN_API_VERSION_PATCH};
  const qnn_version_t sys = {QNN_SYSTEM_API_VERSION_MAJOR, QNN_SYSTEM_API_VERSION_MINOR,
                             QNN_SYSTEM_API_VERSION_PATCH};
  report(qnn_core_table_slots(core) == SDK_CORE_SLOTS, "fact", "qnn_core_table_slots", "",
         qnn_core_table_slots(core), (long long)SDK_CORE_SLOTS, NULL);
  report(qnn_system_table_slots(sys) == SDK_SYSTEM_SLOTS, "fact", "qnn_system_table_slots", "",
         qnn_system_table_slots(sys), (long long)SDK_SYSTEM_SLOTS, NULL);
  report(qnn_core_table_slots(core) <= sizeof(qnn_interface_table_t) / FN_SIZE, "fact",
         "qnn_core_table_slots<=declared", "", qnn_core_table_slots(core),
         (long long)(sizeof(qnn_interface_table_t) / FN_SIZE), NULL);
  report(qnn_graph_info_stride(sys) == sizeof(QnnSystemContext_GraphInfo_t), "fact",
         "qnn_graph_info_stride", "", qnn_graph_info_stride(sys),
         (long long)sizeof(QnnSystemContext_GraphInfo_t), NULL);
  const long long sdk_gi_max = ABI_IS1(HAVE_TYPE_QnnSystemContext_GraphInfoV3_t)   ? 3
                               : ABI_IS1(HAVE_TYPE_QnnSystemContext_GraphInfoV2_t) ? 2
                                                                                    : 1;
  report(qnn_graph_info_max_version(sys) == sdk_gi_max, "fact", "qnn_graph_info_max_version", "",
         qnn_graph_info_max_version(sys), sdk_gi_max, NULL);
  const uint64_t e = 0x123456789abcdef0ull;
  report(OURS_QNN_ERROR_CODE(e) == QNN_GET_ERROR_CODE(e), "fact", "QNN_ERROR_CODE", "",
         OURS_QNN_ERROR_CODE(e), (long long)QNN_GET_ERROR_CODE(e), NULL);
  const char *sym = SDK_NAME_OF(QnnInterface_getProviders);
  report(!strcmp(OURS_QNN_INTERFACE_GET_PROVIDERS_SYMBOL, sym), "symbol",
         OURS_QNN_INTERFACE_GET_PROVIDERS_SYMBOL, "", 0, 0, sym);
  sym = SDK_NAME_OF(QnnSystemInterface_getProviders);
  report(!strcmp(OURS_QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, sym), "symbol",
         OURS_QNN_SYSTEM_INTERFACE_GET_PROVIDERS_SYMBOL, "", 0, 0, sym);

  printf("check-abi: %u checks passed, %u skipped (not in this SDK), %u FAILED\n", n_ok, n_skip,
         n_fail);
  return n_fail ? 1 : 0;
}
#endif
