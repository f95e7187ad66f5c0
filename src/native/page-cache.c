/* posix_fadvise(POSIX_FADV_DONTNEED) for the daemon (src/images/distribution/page-cache.ts): a
 * pulled layer's compressed blob is cold once synced (its files are unpacked; only push and save
 * read it again), so its page cache is handed back at once. Freed now, those pages serve the next
 * writes while they are still warm; on a VM whose host takes back free guest memory (virtio-balloon
 * free page reporting), the first write into memory taken back costs ~0.7 ms per MiB of faults.
 * Built by scripts/build-native.mjs into build/native/page-cache.node; optional at run time. */
#include <fcntl.h>
#include <node_api.h>

/* drop(fd): 0, or the errno posix_fadvise answered. Dirty pages stay: sync the file first. */
static napi_value drop(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  int32_t fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "drop(fd): a file descriptor is required");
    return NULL;
  }
  napi_create_int32(env, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "drop", NAPI_AUTO_LENGTH, drop, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "drop", fn) != napi_ok) return NULL;
  return exports;
}
