/* stub.c - the stub of a fake QAIRT release (mk/qnnsets.mk): a library named
 * libQnnHtpV68Stub.so (its soname too, as the real one's) carrying the release's build id, as
 * text for htpu_qnn_set_inspect and doctor and as a symbol for the fake backend
 * (reference/backend/release.c). */
#ifndef STUB_BUILD_ID
#error "STUB_BUILD_ID must be defined (the release's build id)"
#endif

__attribute__((visibility("default"))) const char htpu_fake_stub_build_id[] = STUB_BUILD_ID;
