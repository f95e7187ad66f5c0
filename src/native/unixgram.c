/* Unix datagram sockets for the log drivers (src/logging/remote/unixgram.ts): Node has no
 * AF_UNIX SOCK_DGRAM, which journald's native socket and the local syslog socket (/dev/log) take.
 * Also systemd's notify socket (src/main/sd-notify.ts). Non-blocking sockets only: open(path, bind)
 * returns the fd or -errno, send(fd, buf) and recv(fd, buf) the byte count or -errno (-EAGAIN when
 * the call would block), close(fd). A path starting with '@' names a socket in Linux's abstract
 * namespace (the '@' stands for the leading NUL; the name is exactly the rest), as systemd's
 * NOTIFY_SOCKET and Go's net package spell it.
 * Built by scripts/build-native.mjs into build/native/unixgram.node; optional at run time. */
#include <errno.h>
#include <node_api.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static napi_value int_value(napi_env env, int v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

static napi_value do_open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  struct sockaddr_un sa;
  char path[sizeof(sa.sun_path) + 1];
  size_t len = 0;
  bool bind_it = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return int_value(env, -EINVAL);
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok) return int_value(env, -EINVAL);
  if (len >= sizeof(sa.sun_path)) return int_value(env, -ENAMETOOLONG);
  napi_get_value_bool(env, argv[1], &bind_it);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return int_value(env, -errno);
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path, len);
  socklen_t salen = sizeof sa;
  if (len > 0 && path[0] == '@') {
    sa.sun_path[0] = '\0'; /* abstract: the name's length is the address length, no NUL padding */
    salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
  }
  int rc = bind_it ? bind(fd, (struct sockaddr *)&sa, salen) : connect(fd, (struct sockaddr *)&sa, salen);
  if (rc < 0) {
    int err = errno;
    close(fd);
    return int_value(env, -err);
  }
  if (bind_it) {
    int size = 8 << 20; /* a test receiver polls: room for bursts */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  return int_value(env, fd);
}

static int fd_and_buffer(napi_env env, napi_callback_info info, int *fd, void **data, size_t *len) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return -EINVAL;
  if (napi_get_value_int32(env, argv[0], fd) != napi_ok) return -EINVAL;
  if (napi_get_buffer_info(env, argv[1], data, len) != napi_ok) return -EINVAL;
  return 0;
}

static napi_value do_send(napi_env env, napi_callback_info info) {
  int fd;
  void *data;
  size_t len;
  int rc = fd_and_buffer(env, info, &fd, &data, &len);
  if (rc < 0) return int_value(env, rc);
  ssize_t n = send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  return int_value(env, n < 0 ? -errno : (int)n);
}

static napi_value do_recv(napi_env env, napi_callback_info info) {
  int fd;
  void *data;
  size_t len;
  int rc = fd_and_buffer(env, info, &fd, &data, &len);
  if (rc < 0) return int_value(env, rc);
  ssize_t n = recv(fd, data, len, MSG_DONTWAIT);
  return int_value(env, n < 0 ? -errno : (int)n);
}

static napi_value do_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int fd = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return int_value(env, -EINVAL);
  napi_get_value_int32(env, argv[0], &fd);
  return int_value(env, close(fd) < 0 ? -errno : 0);
}

NAPI_MODULE_INIT() {
  const char *names[] = {"open", "send", "recv", "close"};
  napi_callback fns[] = {do_open, do_send, do_recv, do_close};
  for (int i = 0; i < 4; i++) {
    napi_value fn;
    if (napi_create_function(env, names[i], NAPI_AUTO_LENGTH, fns[i], NULL, &fn) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, names[i], fn) != napi_ok) return NULL;
  }
  return exports;
}
