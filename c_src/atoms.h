/*
 * atoms.h - every atom the NIF returns or matches, made once in load/upgrade
 * (nif_atoms_make in convert.c).
 *
 * X(c_name, "erlang_name"). Atoms are VM-global, so making them again on upgrade yields the
 * same values.
 */
#ifndef HTPU_NIF_ATOMS_H
#define HTPU_NIF_ATOMS_H

#include <erl_nif.h>

#define HTPU_NIF_ATOMS(X)                         \
  X(ok, "ok")                                     \
  X(error, "error")                               \
  X(nil, "nil")                                   \
  X(true_, "true")                                \
  X(false_, "false")                              \
  X(unknown, "unknown")                           \
  X(timeout, "timeout")                           \
  /* runtime options */                           \
  X(backend_lib, "backend_lib")                   \
  X(system_lib, "system_lib")                     \
  X(dsp_library_path, "dsp_library_path")         \
  X(backend_id, "backend_id")                     \
  X(log_level, "log_level")                       \
  X(skip_device, "skip_device")                   \
  X(env, "env")                                   \
  X(fastrpc_lib, "fastrpc_lib")                   \
  X(qnn_set, "qnn_set")                           \
  X(recovery_retries, "recovery_retries")         \
  X(startup_retry_delay_ms, "startup_retry_delay_ms") \
  X(perf_profile, "perf_profile")                 \
  X(npu_lock_path, "npu_lock_path")               \
  X(npu_lock_timeout_ns, "npu_lock_timeout_ns")   \
  /* runtime info */                              \
  X(provider_name, "provider_name")               \
  X(core_api_version, "core_api_version")         \
  X(backend_api_version, "backend_api_version")   \
  X(build_id, "build_id")                         \
  X(system_provider_name, "system_provider_name") \
  X(system_api_version, "system_api_version")     \
  X(has_device, "has_device")                     \
  /* a model's source (ONNX EPContext) */         \
  X(source, "source")                             \
  X(format, "format")                             \
  X(ir_version, "ir_version")                     \
  X(opset, "opset")                               \
  X(producer_name, "producer_name")               \
  X(producer_version, "producer_version")         \
  X(metadata, "metadata")                         \
  X(class_names, "class_names")                   \
  X(nodes, "nodes")                               \
  X(contexts, "contexts")                         \
  X(context, "context")                           \
  X(origin, "origin")                             \
  X(main_context, "main_context")                 \
  X(embed_mode, "embed_mode")                     \
  X(cache_file, "cache_file")                     \
  X(cache_bytes, "cache_bytes")                   \
  X(partition_name, "partition_name")             \
  X(ep_sdk_version, "ep_sdk_version")             \
  X(max_size, "max_size")                         \
  /* memory figures */                            \
  X(graph_memory, "graph_memory")                 \
  X(binary_bytes, "binary_bytes")                 \
  X(load_estimate_bytes, "load_estimate_bytes")   \
  X(blob_info_version, "blob_info_version")       \
  X(spill_fill_bytes, "spill_fill_bytes")         \
  X(optimization_level, "optimization_level")     \
  X(hvx_threads, "hvx_threads")                   \
  X(io_tensor_bytes, "io_tensor_bytes")           \
  X(op_data_bytes, "op_data_bytes")               \
  X(const_bytes, "const_bytes")                   \
  X(ddr_tensor_bytes, "ddr_tensor_bytes")         \
  X(shared_weights_bytes, "shared_weights_bytes") \
  X(safe_share_io, "safe_share_io")               \
  X(reported, "reported")                         \
  X(weights_bytes, "weights_bytes")               \
  X(buffer_alignment, "buffer_alignment")         \
  X(device_arch, "device_arch")                   \
  X(device_soc_model, "device_soc_model")         \
  X(device_vtcm_bytes, "device_vtcm_bytes")       \
  X(has_perf_infrastructure, "has_perf_infrastructure") \
  X(has_shared_memory, "has_shared_memory")       \
  X(shared_memory_note, "shared_memory_note")     \
  X(startup_attempts, "startup_attempts")         \
  X(log_note, "log_note")                         \
  /* shared buffers */                            \
  X(fastrpc, "fastrpc")                           \
  X(note, "note")                                 \
  X(first_fallback, "first_fallback")             \
  X(size, "size")                                 \
  X(raw, "raw")                                   \
  X(quantize, "quantize")                         \
  X(copy, "copy")                                 \
  X(dequantize, "dequantize")                     \
  X(view, "view")                                 \
  /* model / graph / tensor info */               \
  X(binary_info_version, "binary_info_version")   \
  X(context_blob_version, "context_blob_version") \
  X(soc_version, "soc_version")                   \
  X(soc_model, "soc_model")                       \
  X(dsp_arch, "dsp_arch")                         \
  X(context_blob_size, "context_blob_size")       \
  X(graphs, "graphs")                             \
  X(name, "name")                                 \
  X(graph_info_version, "graph_info_version")     \
  X(inputs, "inputs")                             \
  X(outputs, "outputs")                           \
  X(vtcm_bytes, "vtcm_bytes")                     \
  X(id, "id")                                     \
  X(dtype, "dtype")                               \
  X(qnn_data_type, "qnn_data_type")               \
  X(tensor_version, "tensor_version")             \
  X(shape, "shape")                               \
  X(num_elements, "num_elements")                 \
  X(byte_size, "byte_size")                       \
  X(quantization, "quantization")                 \
  X(scale, "scale")                               \
  X(zero_point, "zero_point")                     \
  X(axis, "axis")                                 \
  X(scales, "scales")                             \
  X(zero_points, "zero_points")                   \
  /* execute stats */                             \
  X(execute_ns, "execute_ns")                     \
  X(quantize_ns, "quantize_ns")                   \
  X(dequantize_ns, "dequantize_ns")               \
  X(total_ns, "total_ns")                         \
  X(nif_ns, "nif_ns")                             \
  X(output_shapes, "output_shapes")               \
  X(dynamic_dims, "dynamic_dims")                 \
  X(execute_start_ns, "execute_start_ns")         \
  X(scheduler, "scheduler")                       \
  X(normal, "normal")                             \
  X(dirty_io, "dirty_io")                         \
  X(auto_, "auto")                                \
  X(auto_submit, "auto_submit")                   \
  X(normal_submit, "normal_submit")               \
  X(declined, "declined")                         \
  /* graph timing */                              \
  X(samples, "samples")                           \
  X(window, "window")                             \
  X(max_ns, "max_ns")                             \
  X(last_ns, "last_ns")                           \
  /* htpu_stats + reaper */                       \
  X(live_runtimes, "live_runtimes")               \
  X(live_contexts, "live_contexts")               \
  X(live_graphs, "live_graphs")                   \
  X(executes, "executes")                         \
  X(execute_errors, "execute_errors")             \
  X(execute_ns_total, "execute_ns_total")         \
  X(execute_ns_last, "execute_ns_last")           \
  X(loads, "loads")                               \
  X(load_ns_total, "load_ns_total")               \
  X(quantize_ns_total, "quantize_ns_total")       \
  X(dequantize_ns_total, "dequantize_ns_total")   \
  X(recoveries, "recoveries")                     \
  X(recovery_failures, "recovery_failures")       \
  X(live_shared_buffers, "live_shared_buffers")   \
  X(mem_registrations, "mem_registrations")       \
  X(startup_retries, "startup_retries")           \
  X(executes_in_flight, "executes_in_flight")     \
  X(executes_waiting, "executes_waiting")         \
  X(executes_cancelled, "executes_cancelled")     \
  X(executes_declined, "executes_declined")       \
  X(executes_normal, "executes_normal")           \
  X(executes_dirty_io, "executes_dirty_io")       \
  X(normal_declined_busy, "normal_declined_busy") \
  X(normal_declined_not_short, "normal_declined_not_short") \
  X(normal_declined_other, "normal_declined_other") \
  X(normal_declined_resource, "normal_declined_resource") \
  X(batch_multiple_executes, "batch_multiple_executes") \
  X(batch_multiple_refusals, "batch_multiple_refusals") \
  X(reaper_queued, "reaper_queued")               \
  X(reaper_closed, "reaper_closed")               \
  X(reaper_inline, "reaper_inline")               \
  /* vision (vision.c): frames, options, detections, geometry */ \
  X(data, "data")                                 \
  X(width, "width")                               \
  X(height, "height")                             \
  X(stride, "stride")                             \
  X(uv_offset, "uv_offset")                       \
  X(crop, "crop")                                 \
  X(input, "input")                               \
  X(resize, "resize")                             \
  X(pad_value, "pad_value")                       \
  X(scaleup, "scaleup")                           \
  X(bgr, "bgr")                                   \
  X(layout, "layout")                             \
  X(normalize, "normalize")                       \
  X(mean, "mean")                                 \
  X(std, "std")                                   \
  X(head, "head")                                 \
  X(score, "score")                               \
  X(iou, "iou")                                   \
  X(max, "max")                                   \
  X(max_candidates, "max_candidates")             \
  X(classes, "classes")                           \
  X(keypoints, "keypoints")                       \
  X(keypoint_dims, "keypoint_dims")               \
  X(agnostic, "agnostic")                         \
  X(class_, "class")                              \
  X(label, "label")                               \
  X(box, "box")                                   \
  X(anchor, "anchor")                             \
  X(frame_width, "frame_width")                   \
  X(frame_height, "frame_height")                 \
  X(region, "region")                             \
  X(input_width, "input_width")                   \
  X(input_height, "input_height")                 \
  X(resized_width, "resized_width")               \
  X(resized_height, "resized_height")             \
  X(pad_left, "pad_left")                         \
  X(pad_top, "pad_top")                           \
  X(pad_right, "pad_right")                       \
  X(pad_bottom, "pad_bottom")                     \
  X(scale_x, "scale_x")                           \
  X(scale_y, "scale_y")                           \
  X(geometry, "geometry")                         \
  X(preprocess_ns, "preprocess_ns")               \
  X(decode_ns, "decode_ns")                       \
  X(candidates, "candidates")                     \
  X(anchors, "anchors")                           \
  X(maps, "maps")                                 \
  X(rows, "rows")                                 \
  X(dirty_cpu, "dirty_cpu")                       \
  X(box_mapping, "box_mapping")

typedef struct nif_atoms {
#define HTPU_NIF_ATOM_FIELD_(c_name, str) ERL_NIF_TERM c_name;
  HTPU_NIF_ATOMS(HTPU_NIF_ATOM_FIELD_)
#undef HTPU_NIF_ATOM_FIELD_
} nif_atoms;

extern nif_atoms ATOMS;

/* Fills ATOMS and the error/dtype atom tables. */
void nif_atoms_make(ErlNifEnv *env);

#endif
