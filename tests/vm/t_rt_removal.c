/*
 * t_rt_removal.c - device removal: with a client and a server connection
 * up, delete the Soft-RoCE device (rdma link delete rxe0).  Both
 * connections and the listener must notice it, say so, and let go; the
 * removal completes once the process that used the device is gone
 * (librdmacm keeps its device context open until then), and the device is
 * added back for whatever runs next.
 *
 * The RDMA work runs in a child process so that the parent, which never
 * touches the device, can watch the removal finish and restore rxe0.
 *   tests/vm/run -- tests/vm/t_rt_removal
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/vm/t_rt_util.h"

static pid_t run_bg(const char *cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Exit status of pid, or -1 if it did not end within timeout_ms. */
static int wait_pid(pid_t pid, int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	int st;

	while (t_now_ms() < deadline) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		usleep(10 * 1000);
	}
	return -1;
}

static int wait_dead_flag(struct rt_conn *c)
{
	int ms = 0;

	while (rt_conn_state(c) != RT_CONN_DEAD && ms++ < T_TIMEOUT_MS)
		usleep(1000);
	return rt_conn_state(c) == RT_CONN_DEAD;
}

/* The child: connections up, tell the parent, watch them die. */
static int child(int ready_fd)
{
	struct rt_conn_attr ca;
	struct rt_conn *c, *sc;
	struct t_srv srv;
	struct rt_err err;
	int ms, i;

	if (!t_have_device())
		return 77;
	rt_conn_attr_init(&ca);
	if (t_srv_start(&srv, t_addr4(), &ca)) {
		CHECK(false, "server starts on %s", t_addr4());
		return 1;
	}
	c = t_connect(t_addr4(), srv.port, &ca, &err);
	sc = c ? t_srv_conn(&srv, 0, T_TIMEOUT_MS) : NULL;
	CHECK(c && sc, "connection up before the removal%s%s", c ? "" : ": ",
	      c ? "" : err.msg);
	if (!c || !sc || write(ready_fd, "r", 1) != 1)
		return 1;
	ms = t_wait_dead(c, T_TIMEOUT_MS);
	CHECK(ms >= 0 && rt_conn_error(c)->code == ENODEV,
	      "client noticed the removal after %d ms: %s", ms,
	      rt_conn_error(c)->msg);
	/* The client's own disconnect on removal may reach it first. */
	CHECK(wait_dead_flag(sc) && (rt_conn_error(sc)->code == ENODEV ||
				     rt_conn_error(sc)->code == ECONNRESET),
	      "server connection noticed the removal: %s",
	      rt_conn_error(sc)->msg);
	for (i = 0; !atomic_load(&srv.listen_errno) && i < T_TIMEOUT_MS; i++)
		usleep(1000);
	CHECK(atomic_load(&srv.listen_errno) == ENODEV,
	      "listener reports its device gone (%s)",
	      strerror(atomic_load(&srv.listen_errno)));
	rt_conn_destroy(c);
	t_srv_stop(&srv);
	return t_failures ? 1 : 0;
}

int main(void)
{
	int fds[2], st, del;
	pid_t pid, dpid;
	char ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_watchdog(115);
	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(child(fds[1]));
	}
	close(fds[1]);
	if (read(fds[0], &ch, 1) != 1) {
		/* only the lack of a device is a skip (the child said so) */
		st = wait_pid(pid, T_TIMEOUT_MS);
		if (st == 77)
			return 77;
		CHECK(false, "connections up in the child (it ended with %d)",
		      st);
		return 1;
	}
	dpid = run_bg("exec rdma link delete rxe0");
	st = wait_pid(pid, 60000);
	CHECK(st == 0, "connections and listener noticed and let go (%d)", st);
	del = wait_pid(dpid, 20000);
	CHECK(del == 0,
	      "device removal completed once the process was gone (%d)", del);
	st = wait_pid(run_bg("exec rdma link add rxe0 type rxe netdev v0"),
		      30000);
	CHECK(st == 0, "device added back (%d)", st);
	return tu_done();
}
