/* test_board_users.c - htpu_npu_users_read against fake /proc trees: another process holding
 * the CDSP's FastRPC device, its QNN libraries, processes that cannot be examined. */
#include <stdio.h>
#include <string.h>

#include "board_rig.h"
#include "hexagon_tpu.h"
#include "test.h"

static const char MAPS_100[] =
    "55d0c0000000-55d0c0001000 r--p 00000000 b3:02 1234   /usr/lib/erlang/erts-15/bin/beam.smp\n"
    "7f00000000-7f00001000 r-xp 00000000 b3:02 4001   /usr/lib/libQnnHtp.so\n"
    "7f00001000-7f00002000 r--p 00001000 b3:02 4001   /usr/lib/libQnnHtp.so\n"
    "7f00002000-7f00003000 r-xp 00000000 b3:02 4002   /usr/lib/libQnnHtpV68Stub.so\n"
    "7f00003000-7f00004000 r-xp 00000000 b3:02 4003   /usr/lib/libcdsprpc.so\n"
    "7f00004000-7f00005000 r-xp 00000000 b3:02 4004   /usr/lib/libc.so.6\n"
    "7f00005000-7f00006000 rw-p 00000000 00:00 0      [heap]\n"
    "7f00006000-7f00007000 r-xp 00000000 b3:02 4005   /usr/lib/onnxruntime-qnn/libonnxruntime_providers_qnn.so\n";

static const htpu_npu_user *user_of(const htpu_npu_users *u, int32_t pid) {
  for (uint32_t i = 0; i < u->count; i++)
    if (u->users[i].pid == pid) return &u->users[i];
  return NULL;
}

TEST(board_npu_users_another_process_holds_the_device) {
  const char *root = rig_root("users");
  /* 100: the BEAM with the device open and QNN mapped */
  CHECK(rig_put(root, "proc/100/comm", "beam.smp\n") == 0);
  CHECK(rig_put(root, "proc/100/maps", MAPS_100) == 0);
  CHECK(rig_link(root, "proc/100/fd/0", "/dev/null") == 0);
  CHECK(rig_link(root, "proc/100/fd/17", "/dev/fastrpc-cdsp") == 0);
  /* 200: no device */
  CHECK(rig_put(root, "proc/200/comm", "sshd\n") == 0);
  CHECK(rig_link(root, "proc/200/fd/3", "socket:[4242]") == 0);
  CHECK(rig_link(root, "proc/200/fd/4", "/dev/fastrpc-adsp") == 0);
  /* 300: the secure node and the plain one, nothing mapped that matters, no comm */
  CHECK(rig_link(root, "proc/300/fd/5", "/dev/fastrpc-cdsp-secure") == 0);
  CHECK(rig_link(root, "proc/300/fd/6", "/dev/fastrpc-cdsp") == 0);
  /* 400: fd is not a directory (cannot be listed); 500: gone (no fd at all) */
  CHECK(rig_put(root, "proc/400/fd", "") == 0);
  CHECK(rig_put(root, "proc/500/comm", "gone\n") == 0);
  /* entries that are not processes */
  CHECK(rig_link(root, "proc/self", "100") == 0);
  CHECK(rig_put(root, "proc/locks", "") == 0);

  htpu_npu_users *u = NULL;
  CHECK_EQ(htpu_npu_users_read(root, 0, &u), 0);
  CHECK_EQ(u->count, 2);
  CHECK_EQ(u->users[0].pid, 100); /* pid order */
  CHECK_EQ(u->users[1].pid, 300);
  const htpu_npu_user *beam = user_of(u, 100);
  CHECK(strcmp(beam->comm, "beam.smp") == 0);
  CHECK(strcmp(beam->device, "/dev/fastrpc-cdsp") == 0);
  CHECK_EQ(beam->fds, 1);
  CHECK(strcmp(beam->libraries, "/usr/lib/libQnnHtp.so /usr/lib/libQnnHtpV68Stub.so "
               "/usr/lib/libcdsprpc.so "
               "/usr/lib/onnxruntime-qnn/libonnxruntime_providers_qnn.so") == 0);
  const htpu_npu_user *other = user_of(u, 300);
  CHECK_EQ(other->fds, 2);
  CHECK(other->comm[0] == '\0');
  CHECK(other->libraries[0] == '\0');
  CHECK_EQ(u->unexamined, 1);
  CHECK(u->note[0] == '\0');
  htpu_npu_users_free(u);

  /* the caller itself is left out */
  CHECK_EQ(htpu_npu_users_read(root, 100, &u), 0);
  CHECK_EQ(u->count, 1);
  CHECK_EQ(u->users[0].pid, 300);
  htpu_npu_users_free(u);
}

TEST(board_npu_users_without_proc_and_many_libraries) {
  const char *root = rig_root("users_none");
  htpu_npu_users *u = NULL;
  CHECK_EQ(htpu_npu_users_read(root, 0, &u), 0);
  CHECK_EQ(u->count, 0);
  CHECK_STR_CONTAINS(u->note, "/proc' cannot be opened");
  htpu_npu_users_free(u);
  htpu_npu_users_free(NULL);
  CHECK_EQ(htpu_npu_users_read(root, 0, NULL), HTPU_EINVAL);

  /* more libraries than the field holds: cut with "...", never past it */
  char maps[16384] = "";
  for (int i = 0; i < 80; i++) {
    char line[160];
    snprintf(line, sizeof line, "7f%02d-7f%02d r-xp 0 b3:02 %d /opt/qnn-set-%02d/libQnnOp%02d.so\n",
             i, i + 1, i, i, i);
    strcat(maps, line);
  }
  CHECK(rig_put(root, "proc/7/maps", maps) == 0);
  CHECK(rig_link(root, "proc/7/fd/9", "/dev/fastrpc-cdsp") == 0);
  CHECK_EQ(htpu_npu_users_read(root, 0, &u), 0);
  CHECK_EQ(u->count, 1);
  size_t n = strlen(u->users[0].libraries);
  CHECK(n < sizeof u->users[0].libraries);
  CHECK(n > 3 && strcmp(u->users[0].libraries + n - 3, "...") == 0);
  CHECK_STR_CONTAINS(u->users[0].libraries, "/opt/qnn-set-00/libQnnOp00.so");
  htpu_npu_users_free(u);
}

/* FastRPC's daemons keep the device open for good (cdsprpcd opens the secure node first): they
 * are listed apart and never counted as users; a process merely named like one, or running QNN,
 * is a user. */
TEST(board_npu_users_fastrpc_daemons_are_not_users) {
  const char *root = rig_root("users_daemons");
  static const char DAEMON_MAPS[] =
      "5500-5501 r-xp 0 b3:02 10 /usr/bin/cdsprpcd\n"
      "7f00-7f01 r-xp 0 b3:02 11 /usr/lib/libcdsp_default_listener.so.1\n"
      "7f01-7f02 r-xp 0 b3:02 12 /usr/lib/libcdsprpc.so.1\n";
  /* 612: cdsprpcd as the board's coldplug script starts it; its executable not ours to see */
  CHECK(rig_put(root, "proc/612/comm", "cdsprpcd\n") == 0);
  CHECK(rig_put(root, "proc/612/maps", DAEMON_MAPS) == 0);
  CHECK(rig_link(root, "proc/612/fd/3", "/dev/fastrpc-cdsp-secure") == 0);
  /* 613: adsprpcd holding the CDSP node too, its executable the daemon's, replaced meanwhile */
  CHECK(rig_put(root, "proc/613/comm", "adsprpcd\n") == 0);
  CHECK(rig_link(root, "proc/613/exe", "/usr/bin/adsprpcd (deleted)") == 0);
  CHECK(rig_link(root, "proc/613/fd/4", "/dev/fastrpc-cdsp") == 0);
  /* 700: a program that names itself cdsprpcd: its executable says otherwise */
  CHECK(rig_put(root, "proc/700/comm", "cdsprpcd\n") == 0);
  CHECK(rig_link(root, "proc/700/exe", "/usr/bin/python3.11") == 0);
  CHECK(rig_link(root, "proc/700/fd/5", "/dev/fastrpc-cdsp") == 0);
  /* 701: named like the daemon, but running QNN */
  CHECK(rig_put(root, "proc/701/comm", "gdsprpcd\n") == 0);
  CHECK(rig_put(root, "proc/701/maps", "7f00-7f01 r-xp 0 b3:02 1 /usr/lib/libQnnHtp.so\n") == 0);
  CHECK(rig_link(root, "proc/701/fd/6", "/dev/fastrpc-cdsp") == 0);
  /* 702: a FastRPC client without QNN (a Hexagon SDK program): a user all the same */
  CHECK(rig_put(root, "proc/702/comm", "calculator\n") == 0);
  CHECK(rig_put(root, "proc/702/maps", "7f00-7f01 r-xp 0 b3:02 3 /usr/lib/libcdsprpc.so\n") == 0);
  CHECK(rig_link(root, "proc/702/fd/3", "/dev/fastrpc-cdsp") == 0);

  htpu_npu_users *u = NULL;
  CHECK_EQ(htpu_npu_users_read(root, 0, &u), 0);
  CHECK_EQ(u->num_daemons, 2);
  CHECK_EQ(u->daemons[0].pid, 612);
  CHECK(strcmp(u->daemons[0].comm, "cdsprpcd") == 0);
  CHECK(strcmp(u->daemons[0].device, "/dev/fastrpc-cdsp-secure") == 0);
  CHECK(strcmp(u->daemons[0].libraries, "/usr/lib/libcdsprpc.so.1") == 0);
  CHECK_EQ(u->daemons[1].pid, 613);
  CHECK_EQ(u->count, 3);
  CHECK_EQ(u->users[0].pid, 700);
  CHECK_EQ(u->users[1].pid, 701);
  CHECK_EQ(u->users[2].pid, 702);
  CHECK(user_of(u, 612) == NULL && user_of(u, 613) == NULL);
  htpu_npu_users_free(u);

  /* the daemon alone: nobody uses the NPU */
  root = rig_root("users_daemon_only");
  CHECK(rig_put(root, "proc/612/comm", "cdsprpcd\n") == 0);
  CHECK(rig_link(root, "proc/612/fd/3", "/dev/fastrpc-cdsp-secure") == 0);
  CHECK_EQ(htpu_npu_users_read(root, 0, &u), 0);
  CHECK_EQ(u->count, 0);
  CHECK_EQ(u->num_daemons, 1);
  CHECK_EQ(u->unexamined, 0);
  htpu_npu_users_free(u);
}
