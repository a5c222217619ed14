/*
 * t_clnt_util.c - helpers of the client-side VM tests (t_clnt_util.h).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rtest.h"
#include "tests/vm/t_clnt_util.h"

static void watchdog_fired(int sig)
{
	static const char msg[] = "FAIL - watchdog: the test ran too long\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

void t_watchdog(unsigned int seconds)
{
	signal(SIGALRM, watchdog_fired);
	alarm(seconds);
}

const char *t_addr4(void)
{
	const char *a = getenv("RDMA_ADDR4");

	return a && *a ? a : "192.0.2.1";
}

const char *t_addr6(void)
{
	const char *a = getenv("RDMA_ADDR6");

	return a && *a ? a : "2001:db8::1";
}

socklen_t t_sockaddr(struct sockaddr_storage *ss, const char *host,
		     uint16_t port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, host, &s4->sin_addr);
	return sizeof(*s4);
}

/* ---- The server process ------------------------------------------------- */

/* "%p" -> port, "%c" -> credits, "%a" -> addr. */
static void expand(const char *tmpl, uint16_t port, unsigned int credits,
		   const char *addr, char *out, size_t cap)
{
	size_t n = 0;

	for (; *tmpl && n + 64 < cap; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'a') {
			n += (size_t)snprintf(out + n, cap - n, "%s", addr);
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == 'p') {
			n += (size_t)snprintf(out + n, cap - n, "%u", port);
			tmpl++;
		} else if (tmpl[0] == '%' && tmpl[1] == 'c') {
			n += (size_t)snprintf(out + n, cap - n, "%u", credits);
			tmpl++;
		} else {
			out[n++] = *tmpl;
		}
	}
	out[n] = '\0';
}

static void exec_server(uint16_t port, unsigned int credits, const char *addr)
{
	const char *tmpl = getenv("T_CLNT_SERVER");
	char cmd[512], pbuf[16], cbuf[16], *argv[32], *save, *tok;
	int argc = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	tu_server_env();
	if (tmpl && *tmpl) {
		expand(tmpl, port, credits, addr, cmd, sizeof(cmd));
		for (tok = strtok_r(cmd, " \t", &save); tok && argc < 31;
		     tok = strtok_r(NULL, " \t", &save))
			argv[argc++] = tok;
		argv[argc] = NULL;
		execvp(argv[0], argv);
		_exit(127);
	}
	snprintf(pbuf, sizeof(pbuf), "%u", port);
	snprintf(cbuf, sizeof(cbuf), "%u", credits);
	execl("/proc/self/exe", "t_clnt_server", "--serve", pbuf, cbuf,
	      (char *)NULL);
	_exit(127);
}

/* The server accepts connections once a NULL call goes through.  The
 * library's "connection refused" lines are kept out of the log meanwhile. */
static bool server_up(const char *host, uint16_t port)
{
	static struct timeval tv = { 2, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	int err = dup(2), null = open("/dev/null", O_WRONLY);
	CLIENT *cl;
	bool ok;

	if (null >= 0)
		dup2(null, 2);

	rpcrdma_attr_init(&a);
	a.connect_timeout_ms = 1000;
	/* every server here speaks 1; a probe must not teach the process's
	 * version memory anything (the vcache part) */
	a.version = RPCRDMA_VERSION_1;
	t_sockaddr(&ss, host, port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      &a);
	ok = cl && clnt_call(cl, RTEST_NULL, (xdrproc_t)xdr_void, NULL,
			     (xdrproc_t)xdr_void, NULL, tv) == RPC_SUCCESS;
	if (cl)
		clnt_destroy(cl);
	if (err >= 0)
		dup2(err, 2);
	if (err >= 0)
		close(err);
	if (null >= 0)
		close(null);
	return ok;
}

int t_server_start(struct t_server *s, unsigned int credits, int timeout_ms)
{
	int64_t deadline = t_ms() + timeout_ms;
	int status;

	s->port = T_PORT;
	snprintf(s->what, sizeof(s->what), "%s",
		 getenv("T_CLNT_SERVER") ? "rtest server" : "fake responder");
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (!s->pid)
		exec_server(s->port, credits, t_addr4());
	s->pid6 = 0;
	if (getenv("T_CLNT_SERVER") && strstr(getenv("T_CLNT_SERVER"), "%a")) {
		s->pid6 = fork();
		if (!s->pid6)
			exec_server(s->port, credits, t_addr6());
	}
	while (t_ms() < deadline) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			t_server_kill(s, true);
			return -1;
		}
		if (server_up(t_addr4(), s->port) &&
		    server_up(t_addr6(), s->port))
			return 0;
		usleep(100000);
	}
	t_server_kill(s, true);
	return -1;
}

static void stop_one(pid_t *pid, bool crash)
{
	int status;

	if (*pid <= 0)
		return;
	kill(*pid, crash ? SIGKILL : SIGTERM);
	waitpid(*pid, &status, 0);
	*pid = 0;
}

void t_server_kill(struct t_server *s, bool crash)
{
	stop_one(&s->pid, crash);
	stop_one(&s->pid6, crash);
}

bool t_have_device(void)
{
	struct ibv_device **l;
	int n = 0;

	l = ibv_get_device_list(&n);
	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		return true;
	printf("SKIP: no RDMA device\n");
	return false;
}

/* ---- The fuzzers' seeds --------------------------------------------------- */

static int seed_filter(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

int t_seed(unsigned int i, void *buf, size_t cap, char *name, size_t ncap)
{
	struct dirent **e = NULL;
	char path[4096];
	int n, len = -1;
	FILE *f;

	n = scandir(FUZZ_SEEDS "/hdr", &e, seed_filter, alphasort);
	if (n > 0 && i < (unsigned int)n) {
		snprintf(path, sizeof(path), "%s/hdr/%s", FUZZ_SEEDS,
			 e[i]->d_name);
		snprintf(name, ncap, "%s", e[i]->d_name);
		f = fopen(path, "rb");
		if (f) {
			len = (int)fread(buf, 1, cap, f);
			fclose(f);
		}
	}
	while (n-- > 0)
		free(e[n]);
	free(e);
	return len;
}
