/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdallocd: the controller service.  slurmctld's hooks (prolog-slurmctld,
 * epilog-slurmctld) hand it their jobs over a local socket
 * (service/protocol.h); it keeps what every launch would otherwise
 * rebuild (policy, topology, the database connection and its prepared
 * statements, recent profiles: controller/launcher.h), decides the
 * prologs that arrive together as one batch, and queues releases for its
 * release thread (one kept connection) so that no hook waits on the
 * database at a job's end.
 * The hooks fail open without it (they run `fwdctl prolog` and the
 * release queue themselves), so it is an accelerator, never a
 * dependency.  Only this file prints; the work is the libraries'.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <munge.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "controller/hooks.h"
#include "controller/job.h"
#include "controller/launcher.h"
#include "controller/release_queue.h"
#include "db/db.h"
#include "policies/caps_room.h"
#include "policies/policy.h"
#include "report/report.h"
#include "service/client.h"
#include "service/node_release.h"
#include "service/protocol.h"
#include "service/query.h"
#include "topology/topology.h"

#ifndef FWD_SERVICE_SOCKET
#error "FWD_SERVICE_SOCKET (the socket's installed path) must be defined"
#endif
#ifndef FWD_SERVICE_QUERY_SOCKET
#error "FWD_SERVICE_QUERY_SOCKET (the query socket's path) must be defined"
#endif

/* Prologs decided in one batch at most. */
#define BATCH_MAX 256
/* Connections accepted and not answered yet, at most. */
#define PENDING_MAX 4096
/* A connection that sends nothing for this long is closed. */
#define IDLE_CLOSE 10.0
/* The margin the service keeps before a hook's deadline, at most. */
#define DEADLINE_MARGIN 0.2
/* Report requests (the query socket): threads that answer them, each
 * with its own database connection, so that no report ever waits on a
 * prolog's batch or holds one up; requests queued for them, at most, in
 * all and per uid; connections that have not sent their request yet, at
 * most (apart from the hooks': users cannot crowd the hooks out). */
#define QUERY_WORKERS 2
#define QUERY_QUEUE_MAX 32
#define QUERY_PER_UID 4
#define QUERY_CONNS_MAX 256
/* How long a report's answer may take to leave, in seconds. */
#define QUERY_SEND_TIMEOUT 10
/* The nodes' releases (policy release.port): connections that have not
 * sent their whole credential yet, at most, and how long each may take;
 * credentials waiting for the release thread, at most (past it a node is
 * refused and tries the next controller). */
#define NODE_CONNS_MAX 1024
#define NODE_IDLE_CLOSE 5.0
#define NODE_QUEUE_MAX 4096

static volatile sig_atomic_t got_term, got_hup;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else if (sig != SIGCHLD)
		got_term = 1;
	/* SIGCHLD only interrupts poll(): the bounded workers of a release
	 * that had to connect on its own are waited for where they run. */
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line: the journal never interleaves two. */
	if (write(STDERR_FILENO, "fwdallocd: ", 11) < 0 ||
	    write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* What the service decides with, replaced as a whole on reload. */
struct state {
	struct policy *p;
	struct topology *t;
	struct ctl_launcher *L;
	struct timespec policy_mtime, topology_mtime;
};

static struct timespec mtime_of(const char *path)
{
	struct stat st;
	struct timespec zero = {0, 0};

	return path && !stat(path, &st) ? st.st_mtim : zero;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void state_free(struct state *s)
{
	ctl_launcher_destroy(s->L);
	topo_destroy(s->t);
	policy_destroy(s->p);
	memset(s, 0, sizeof(*s));
}

/* Load policy and topology into s.  0, or -1 (said why). */
static int state_load(struct state *s, const char *policy_path)
{
	enum topo_cache_use how = TOPO_CACHE_YAML;
	fwd_error_t err, cerr = {""};
	char caps[1024];

	memset(s, 0, sizeof(*s));
	s->policy_mtime = mtime_of(policy_path);
	if (!(s->p = policy_load(policy_path, &err))) {
		say("%s", err.text);
		return -1;
	}
	s->topology_mtime = mtime_of(s->p->topology);
	/* A topology that does not load is the jobs' fallback reason, as
	 * for `fwdctl prolog`: the service still answers. */
	if (s->p->access.mode != POLICY_MODE_OFF &&
	    !(s->t = ctl_topology_load(s->p, NULL, &how, &cerr, &err)))
		say("%s; every job falls back until it loads", err.text);
	if (s->t && how == TOPO_CACHE_YAML && cerr.text[0])
		say("topology cache not used: %s", cerr.text);
	/* At start and at each reload: caps that leave no upgrade. */
	if (s->t &&
	    policy_caps_room(s->p, s->t, s->p->topology, caps, sizeof(caps)))
		say("warning: %s", caps);
	if (!(s->L = ctl_launcher_create(s->p, s->t, &err))) {
		say("%s", err.text);
		state_free(s);
		return -1;
	}
	return 0;
}

/* Reload when asked (SIGHUP) or when the policy or topology file
 * changed; a reload that fails keeps what was loaded.  True when the
 * state was replaced. */
static bool state_refresh(struct state *s, const char *policy_path, bool force)
{
	struct state n;

	if (!force && same_time(mtime_of(policy_path), s->policy_mtime) &&
	    same_time(mtime_of(s->p->topology), s->topology_mtime))
		return false;
	if (state_load(&n, policy_path) < 0) {
		say("reload of %s failed; still deciding with the policy "
		    "loaded before",
		    policy_path);
		/* Not again until the file changes again. */
		s->policy_mtime = mtime_of(policy_path);
		s->topology_mtime = mtime_of(s->p->topology);
		return false;
	}
	state_free(s);
	*s = n;
	say("reloaded %s", policy_path);
	return true;
}

/* A connection waiting for its request. */
struct conn {
	int fd;
	double since;
};

/* A report request waiting for a query thread. */
struct query_req {
	int fd;
	char *msg; /* head line, '\n', credential; NUL-terminated */
	size_t len, head_len, cred;
	uid_t peer_uid;
	struct svcq_request r;
};

/* A node's release being read (buf: what has come, len bytes). */
struct node_conn {
	int fd;
	double since;
	char *buf;
	size_t len;
};

/* A node's release read whole, waiting for the release thread. */
struct node_msg {
	int fd;
	char *cred; /* NUL-terminated, without its '\n' */
};

/* A prolog request being decided. */
struct prolog_req {
	int fd;
	char *msg; /* the request; the job's strings point into it */
	size_t len;
	double deadline; /* the hook's, from the request's head */
};

/*
 * Remove what an earlier run left at path: a socket of this account.  0,
 * or -1 when something else is there (not ours to remove).
 */
static int clear_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return 0;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		say("%s exists and is not this account's socket: "
		    "remove it or choose another --socket",
		    path);
		return -1;
	}
	unlink(path);
	return 0;
}

/*
 * Listen on path: mode 0600 (only this account and root may connect), or
 * with `anyone` 0666 (the query socket: the credential says who).  The
 * socket is bound under a temporary name beside path and renamed into
 * place once it listens, so that a client that sees path never finds it
 * refusing connections (a hook that came between bind() and listen()
 * would fall back for nothing).  A path too long for the temporary name
 * is bound directly.
 */
static int listen_on(const char *path, bool anyone)
{
	struct sockaddr_un sa;
	char tmp[sizeof(sa.sun_path)];
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) + 1 : 0, n;
	const char *at = path;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		say("socket path %s: too long", path);
		return -1;
	}
	if (clear_stale(path) < 0)
		return -1;
	n = snprintf(tmp, sizeof(tmp), "%.*s.fwdallocd-%ld.tmp", dirlen, path,
		     (long)getpid());
	if (n > 0 && (size_t)n < sizeof(tmp)) {
		if (clear_stale(tmp) < 0)
			return -1;
		at = tmp;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, at, strlen(at) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say("socket: %s", strerror(errno));
		return -1;
	}
	/* Only this account (SlurmUser, which runs the hooks) and root
	 * may connect, but to the query socket. */
	old = umask(anyone ? 0111 : 0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		say("listen on %s: %s", path, strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, SOMAXCONN) < 0 || (at != path && rename(at, path) < 0)) {
		say("listen on %s: %s", path, strerror(errno));
		unlink(at);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Listen for the nodes' releases on TCP port `port` of every address
 * (IPv6 and IPv4, or IPv4 alone on a host without IPv6).  The socket, or
 * -1 (said).
 */
static int listen_tcp(unsigned port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
				  .sin6_port = htons((uint16_t)port),
				  .sin6_addr = IN6ADDR_ANY_INIT};
	struct sockaddr_in a4 = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY)};
	int one = 1, off = 0;
	int fd =
		socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd >= 0 &&
	    (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	     bind(fd, (struct sockaddr *)&a6, sizeof(a6)))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
					   sizeof(one)) ||
				bind(fd, (struct sockaddr *)&a4, sizeof(a4)))) {
			say("nodes' releases: TCP port %u: %s", port,
			    strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (fd < 0 || listen(fd, SOMAXCONN) < 0) {
		say("nodes' releases: TCP port %u: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void answer(int fd, const char *text, size_t len)
{
	if (send(fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	    errno != EPIPE && errno != ECONNRESET)
		say("answer: %s", strerror(errno));
}

static void refuse(int fd, const char *why)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), FWD_SVC_MAGIC " R %s\n", why);

	if (n > 0)
		answer(fd, buf,
		       (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* The outcome as the hook's answer. */
static void answer_outcome(int fd, const struct ctl_outcome *out)
{
	char buf[FWD_SVC_MSG_MAX];
	int n = snprintf(buf, sizeof(buf), FWD_SVC_MAGIC " %d %c\n",
			 out->stop_job ? 1 : 0, out->fallback ? 'F' : 'A');

	for (size_t i = 0; i < out->n_notes && n > 0 && (size_t)n < sizeof(buf);
	     i++)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s\n",
			      out->notes[i].text);
	if (n > 0)
		answer(fd, buf,
		       (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/*
 * The main thread accepts, reads every request at once, queues prologs
 * for the decision thread and answers the rest itself (an epilog is
 * queued in the release queue there and then): a hook's hand-off never
 * waits for a batch being decided.  The decision thread owns the state
 * (policy, topology, launcher and its connection), decides the prologs
 * queued since its last batch as the next batch and answers them.  The
 * release thread drains the release queue whenever an epilog queued
 * something, with a policy and a connection of its own; the report
 * threads answer users' reports.  `mu` guards what they share.
 */
struct service {
	const char *policy_path;
	int lfd;
	/* the main thread's */
	struct conn *conns;
	size_t n_conns;
	/* the decision thread's */
	struct state st;
	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_cond_t rcv; /* the release thread's: want_drain or stop */
	struct prolog_req *queue;
	size_t n_queue;
	bool want_drain; /* an epilog queued a release */
	bool stop;
	char qdir[4096]; /* the release queue of the policy in use, or "" */
	struct ctl_launcher_stats stats;
	unsigned long long epilogs, refused;
	/* Report requests: the query socket, its connections (the main
	 * thread's), and the queue the query threads take from (under mu). */
	int qlfd;
	struct conn *qconns;
	size_t n_qconns;
	const char *munge_socket; /* NULL: libmunge's default */
	struct query_req *qqueue;
	size_t n_qqueue;
	uid_t qrunning[QUERY_WORKERS]; /* (uid_t)-1: idle */
	pthread_cond_t qcv;
	unsigned policy_gen; /* bumped on every (re)load: the query
			      * threads load the policy again */
	unsigned long long reports, reports_refused;
	/* Time spent deciding batches, in ms: in all, the longest. */
	double decide_ms, decide_ms_max;
	/* The nodes' releases: the TCP socket on port nport (-1: none),
	 * its connections (the main thread's), the credentials read whole
	 * (under mu, for the release thread), the port the policy in use
	 * names (under mu: a reload that changes it needs a restart). */
	int nlfd;
	unsigned nport, want_nport;
	struct node_conn *nconns;
	size_t n_nconns;
	struct node_msg *nqueue, *nspare; /* the spare: the release
					   * thread's while it works */
	size_t n_nqueue;
	unsigned long long node_releases, node_refused;
};

/* The policy's release queue, for the main thread (decision thread,
 * after every load). */
static void publish_qdir(struct service *sv)
{
	char dir[sizeof(sv->qdir)];
	fwd_error_t err;

	if (relq_dir(sv->st.p, dir, sizeof(dir), &err) < 0)
		dir[0] = '\0';
	pthread_mutex_lock(&sv->mu);
	memcpy(sv->qdir, dir, sizeof(dir));
	sv->policy_gen++;
	sv->want_nport = sv->st.p->release.port;
	pthread_mutex_unlock(&sv->mu);
}

static void count_refused(struct service *sv)
{
	pthread_mutex_lock(&sv->mu);
	sv->refused++;
	pthread_mutex_unlock(&sv->mu);
}

/* The release thread's messages: this process's stderr, the journal. */
static void log_release(void *arg, int prio, const char *msg)
{
	(void)arg;
	(void)prio;
	say("%s", msg);
}

/* "FWDALLOC1 E <t0>": queue the release, answer, wake the release
 * thread.  0, or -1 when refused (the caller does it itself). */
static int handle_epilog(struct service *sv, int fd, double t0,
			 const char *vars, size_t len)
{
	const char *vals[CTL_JOB_N_VARS];
	fwd_error_t err = {""};
	char dir[sizeof(sv->qdir)];

	pthread_mutex_lock(&sv->mu);
	memcpy(dir, sv->qdir, sizeof(dir));
	pthread_mutex_unlock(&sv->mu);
	if (!dir[0])
		snprintf(err.text, sizeof(err.text),
			 "the policy names no audit directory: no release "
			 "queue");
	if (!dir[0] || ctl_job_vars_parse(vars, len, vals, &err) < 0 ||
	    relq_put_vars(dir, vals, t0, &err) < 0) {
		/* The hook queues it itself. */
		refuse(fd, err.text);
		say("epilog: %s", err.text);
		return -1;
	}
	answer(fd, FWD_SVC_MAGIC " 0 A\n", sizeof(FWD_SVC_MAGIC " 0 A\n") - 1);
	pthread_mutex_lock(&sv->mu);
	sv->epilogs++;
	sv->want_drain = true;
	pthread_cond_signal(&sv->rcv);
	pthread_mutex_unlock(&sv->mu);
	return 0;
}

/* An EpilogSlurmctld hook under release.port: slurm.conf still names
 * it.  Its releases are taken (each job then has two release records,
 * the second of none), but the stall it can cause stays: said once. */
static void warn_epilog_hook(struct service *sv)
{
	static bool said;
	unsigned port;

	pthread_mutex_lock(&sv->mu);
	port = sv->want_nport;
	pthread_mutex_unlock(&sv->mu);
	if (!port || said)
		return;
	said = true;
	say("an EpilogSlurmctld hook handed a job over although the policy's "
	    "release.port (%u) has the nodes send the releases: remove "
	    "EpilogSlurmctld from slurm.conf (a controller epilog that ends "
	    "after the nodes' epilogs stalls scheduling)",
	    port);
}

static void handle_status(struct service *sv, int fd)
{
	struct ctl_launcher_stats s;
	unsigned long long epilogs, refused, reports, reports_refused, nodes,
		nodes_refused;
	double dms, dmax;
	char buf[1024];
	int n;

	pthread_mutex_lock(&sv->mu);
	s = sv->stats;
	epilogs = sv->epilogs;
	refused = sv->refused;
	dms = sv->decide_ms;
	dmax = sv->decide_ms_max;
	reports = sv->reports;
	reports_refused = sv->reports_refused;
	nodes = sv->node_releases;
	nodes_refused = sv->node_refused;
	pthread_mutex_unlock(&sv->mu);
	n = snprintf(
		buf, sizeof(buf),
		FWD_SVC_MAGIC
		" 0 A\n"
		"batches %llu\njobs %llu\ndecided %llu\nfell_back %llu\n"
		"profile_hits %llu\nprofile_reads %llu\nconnects %llu\n"
		"ledger_loads %llu\nepilogs %llu\nrefused %llu\n"
		"decide_ms %.1f\ndecide_ms_max %.1f\n"
		"rows_ms %.1f\nhealth_ms %.1f\ntx_ms %.1f\npublish_ms %.1f\n"
		"reports %llu\nreports_refused %llu\n"
		"node_releases %llu\nnode_refused %llu\n",
		s.batches, s.jobs, s.decided, s.fell_back, s.profile_hits,
		s.profile_reads, s.connects, s.ledger_loads, epilogs, refused,
		dms, dmax, s.ms_rows, s.ms_health, s.ms_tx, s.ms_publish,
		reports, reports_refused, nodes, nodes_refused);
	if (n > 0)
		answer(fd, buf, (size_t)n);
}

/*
 * Read the request on fd.  A prolog joins the decision thread's queue
 * (the fd stays open until it is answered); anything else is answered and
 * closed.  0, or 1 when the request has not arrived yet (fd left open).
 */
static int handle_request(struct service *sv, int fd)
{
	char *msg = malloc(FWD_SVC_MSG_MAX + 1), *nl, op;
	double arg = 0;
	ssize_t got;
	struct ucred cred;
	socklen_t cl = sizeof(cred);

	if (!msg) {
		refuse(fd, "out of memory");
		goto done;
	}
	got = recv(fd, msg, FWD_SVC_MSG_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		free(msg);
		return 1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		count_refused(sv);
		say("refused a request from uid %ld: only root and this "
		    "account (uid %ld) may use the service",
		    (long)cred.uid, (long)geteuid());
		refuse(fd, "not root or the service's account");
		goto done;
	}
	if (got <= 0 || got > FWD_SVC_MSG_MAX) {
		count_refused(sv);
		if (got != 0)
			refuse(fd, "request too long or unreadable");
		goto done;
	}
	msg[got] = '\0';
	if (strncmp(msg, FWD_SVC_MAGIC " ", sizeof(FWD_SVC_MAGIC)) ||
	    !(nl = memchr(msg, '\n', (size_t)got))) {
		count_refused(sv);
		refuse(fd, "not a fwdalloc request");
		goto done;
	}
	*nl = '\0';
	op = msg[sizeof(FWD_SVC_MAGIC)];
	if (op != 'S' &&
	    (msg[sizeof(FWD_SVC_MAGIC) + 1] != ' ' ||
	     fwd_time_parse_epoch(msg + sizeof(FWD_SVC_MAGIC) + 2, &arg) < 0)) {
		count_refused(sv);
		refuse(fd, "damaged request head");
		goto done;
	}
	if (op == 'S') {
		handle_status(sv, fd);
	} else if (op == 'E') {
		warn_epilog_hook(sv);
		handle_epilog(sv, fd, arg, nl + 1,
			      (size_t)(msg + got - (nl + 1)));
	} else if (op == 'P') {
		pthread_mutex_lock(&sv->mu);
		if (sv->n_queue < PENDING_MAX && !sv->stop) {
			/* The job is parsed when its batch is decided. */
			sv->queue[sv->n_queue].fd = fd;
			sv->queue[sv->n_queue].msg = msg;
			sv->queue[sv->n_queue].len = (size_t)got;
			sv->queue[sv->n_queue].deadline = arg;
			sv->n_queue++;
			pthread_cond_signal(&sv->cv);
			pthread_mutex_unlock(&sv->mu);
			return 0;
		}
		sv->refused++;
		pthread_mutex_unlock(&sv->mu);
		/* The hook decides itself. */
		refuse(fd, "busy");
	} else {
		count_refused(sv);
		refuse(fd, "unknown request");
	}
done:
	free(msg);
	close(fd);
	return 0;
}

/* ---- report requests (the query socket) ------------------------------ */

static void count_report(struct service *sv, bool refused)
{
	pthread_mutex_lock(&sv->mu);
	if (refused)
		sv->reports_refused++;
	else
		sv->reports++;
	pthread_mutex_unlock(&sv->mu);
}

/* Requests of uid queued or being answered, under mu. */
static size_t query_load_of(const struct service *sv, uid_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < sv->n_qqueue; i++)
		n += sv->qqueue[i].peer_uid == uid;
	for (size_t i = 0; i < QUERY_WORKERS; i++)
		n += sv->qrunning[i] == uid;
	return n;
}

/*
 * Read the report request on fd (main thread): check its size and head
 * and queue it for a query thread, which decodes the credential (munged
 * may be slow: never here).  0, or 1 when the request has not arrived
 * yet (fd left open).
 */
static int handle_query(struct service *sv, int fd)
{
	char *msg = malloc(FWD_SVC_QUERY_MAX + 1);
	struct query_req q = {.fd = fd};
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	fwd_error_t err;
	ssize_t got;

	if (!msg) {
		refuse(fd, "out of memory");
		goto done;
	}
	got = recv(fd, msg, FWD_SVC_QUERY_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		free(msg);
		return 1;
	}
	if (got <= 0)
		goto done; /* hung up without asking */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		count_report(sv, true);
		refuse(fd, "the caller's uid is unknown (SO_PEERCRED)");
		goto done;
	}
	if (got > FWD_SVC_QUERY_MAX) {
		count_report(sv, true);
		refuse(fd, "request too long: a report request is a head "
			   "line and a credential");
		goto done;
	}
	msg[got] = '\0';
	if (svcq_parse(msg, (size_t)got, &q.r, &q.head_len, &q.cred, &err) <
	    0) {
		count_report(sv, true);
		say("refused a report request from uid %ld: %s", (long)cred.uid,
		    err.text);
		refuse(fd, err.text);
		goto done;
	}
	q.msg = msg;
	q.len = (size_t)got;
	q.peer_uid = cred.uid;
	pthread_mutex_lock(&sv->mu);
	if (sv->stop || sv->n_qqueue >= QUERY_QUEUE_MAX ||
	    query_load_of(sv, cred.uid) >= QUERY_PER_UID) {
		bool mine = query_load_of(sv, cred.uid) >= QUERY_PER_UID;

		sv->reports_refused++;
		pthread_mutex_unlock(&sv->mu);
		refuse(fd, mine ? "busy: this user has "
				  "the most report requests in progress "
				  "already; try again when they are answered"
				: "busy: too many report requests in progress; "
				  "try again in a moment");
		goto done;
	}
	sv->qqueue[sv->n_qqueue++] = q;
	pthread_cond_signal(&sv->qcv);
	pthread_mutex_unlock(&sv->mu);
	return 0;
done:
	free(msg);
	close(fd);
	return 0;
}

/* What a query thread keeps: its own policy and database connection. */
struct query_worker {
	struct service *sv;
	size_t slot; /* in sv->qrunning */
	struct policy *p;
	unsigned gen;
	struct timespec mtime; /* the policy file's, when loaded */
	struct db *db;
};

/* The policy, loaded again when the service reloaded it (SIGHUP) or the
 * file changed. */
static void worker_refresh(struct query_worker *w)
{
	struct timespec mt = mtime_of(w->sv->policy_path);
	struct policy *p;
	fwd_error_t err;
	unsigned gen;

	pthread_mutex_lock(&w->sv->mu);
	gen = w->sv->policy_gen;
	pthread_mutex_unlock(&w->sv->mu);
	if (w->p && gen == w->gen && same_time(mt, w->mtime))
		return;
	w->gen = gen;
	w->mtime = mt;
	if (!(p = policy_load(w->sv->policy_path, &err))) {
		say("reports: %s; still answering with the policy loaded "
		    "before",
		    err.text);
		return;
	}
	policy_destroy(w->p);
	w->p = p;
	db_close(w->db);
	w->db = NULL;
}

/* The worker's database connection; NULL with err set. */
static struct db *worker_db(struct query_worker *w, fwd_error_t *err)
{
	if (!w->p) {
		errprintf(err, "no policy loaded");
		return NULL;
	}
	if (!w->db)
		w->db = db_connect(&w->p->database, DB_ROLE_CONTROLLER, err);
	return w->db;
}

/* Whether `user` (primary group gid) is in group `name`. */
static bool in_admin_group(const char *user, gid_t gid, const char *name,
			   char *note, size_t n)
{
	struct group gr, *g = NULL;
	char buf[16384];
	gid_t gids[1024];
	int ng = (int)(sizeof(gids) / sizeof(gids[0]));

	note[0] = '\0';
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &g) || !g) {
		snprintf(note, n, "reports.admin_group %s: no such group",
			 name);
		return false;
	}
	if (getgrouplist(user, gid, gids, &ng) < 0) {
		snprintf(note, n, "%s: in more than %zu groups", user,
			 sizeof(gids) / sizeof(gids[0]));
		return false;
	}
	return svcq_in_group(gids, (size_t)ng, g->gr_gid);
}

static const enum report_format report_formats[] = {REPORT_TEXT, REPORT_JSON,
						    REPORT_HTML};

/*
 * Decode the credential cred with munged (--munge-socket) into c, how it
 * ended: c->munge_text is text (n bytes), c->payload *payload, which the
 * caller frees.  0, or -1 with why (n bytes) when nothing could be asked.
 */
static int decode_cred(const struct service *sv, const char *cred,
		       struct svcq_cred *c, void **payload, char *text,
		       char *why, size_t n)
{
	munge_ctx_t ctx = munge_ctx_create();
	const char *t;
	int plen = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid;

	*payload = NULL;
	if (!ctx) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	if (sv->munge_socket &&
	    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sv->munge_socket) !=
		    EMUNGE_SUCCESS) {
		snprintf(why, n, "munge: %s", munge_ctx_strerror(ctx));
		munge_ctx_destroy(ctx);
		return -1;
	}
	c->munge_rc = munge_decode(cred, ctx, payload, &plen, &uid, &gid);
	t = munge_ctx_strerror(ctx);
	snprintf(text, n, "%s",
		 t ? t : munge_strerror((munge_err_t)c->munge_rc));
	munge_ctx_destroy(ctx);
	c->munge_text = text;
	c->uid = uid;
	c->payload = *payload;
	c->payload_len = plen > 0 ? (size_t)plen : 0;
	return 0;
}

/* Answer one report request (a query thread). */
static void serve_query(struct query_worker *w, struct query_req *q)
{
	struct service *sv = w->sv;
	struct svcq_cred c = {0};
	struct passwd pw, *pwp = NULL;
	char pwbuf[16384], why[1024], owner[256] = "", note[256] = "";
	char what[96], mtext[1024];
	void *payload = NULL;
	int owner_rc = 0, r;
	uid_t uid;
	bool admin = false;
	char *text = NULL;
	fwd_error_t err;
	struct db *db;

	if (q->r.kind == SVCQ_JOB)
		snprintf(what, sizeof(what), "report job %llu",
			 (unsigned long long)q->r.job_id);
	else
		snprintf(what, sizeof(what), "machine report");
	worker_refresh(w);
	if (decode_cred(sv, q->msg + q->cred, &c, &payload, mtext, why,
			sizeof(why)) < 0)
		goto refused;
	uid = c.uid;
	if (svcq_check_cred(&c, q->peer_uid, q->msg, q->head_len, why,
			    sizeof(why)) < 0)
		goto refused;
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp) || !pwp) {
		snprintf(why, sizeof(why),
			 "uid %ld has no user name on the controller",
			 (long)uid);
		goto refused;
	}
	admin = uid == 0 ||
		(w->p && w->p->reports.admin_group &&
		 in_admin_group(pw.pw_name, pw.pw_gid,
				w->p->reports.admin_group, note, sizeof(note)));
	if (note[0])
		say("%s", note);
	if (!(db = worker_db(w, &err))) {
		say("%s for %s: database: %s", what, pw.pw_name, err.text);
		snprintf(why, sizeof(why),
			 "the service cannot read the database now (its log "
			 "says why)");
		goto refused;
	}
	if (q->r.kind == SVCQ_JOB) {
		owner_rc = report_job_user(db, q->r.job_id, owner,
					   sizeof(owner), &err);
		if (owner_rc < 0) {
			say("%s for %s: %s", what, pw.pw_name, err.text);
			db_close(w->db);
			w->db = NULL;
			snprintf(why, sizeof(why),
				 "the service cannot read the database now "
				 "(its log says why)");
			goto refused;
		}
	}
	if (svcq_check_access(&q->r, pw.pw_name, uid, admin, owner_rc, owner,
			      w->p ? w->p->reports.admin_group : NULL, why,
			      sizeof(why)) < 0)
		goto refused;
	if (q->r.kind == SVCQ_JOB)
		r = report_job(db, q->r.job_id, report_formats[q->r.format],
			       &text, &err);
	else
		r = report_machine(db, q->r.since, q->r.until,
				   report_formats[q->r.format], &text, &err);
	if (r == REPORT_NOT_FOUND) {
		snprintf(why, sizeof(why),
			 "job %llu: no such job in "
			 "fwdalloc's records",
			 (unsigned long long)q->r.job_id);
		goto refused;
	}
	if (r < 0 || !text) {
		say("%s for %s: %s", what, pw.pw_name, err.text);
		db_close(w->db);
		w->db = NULL;
		snprintf(why, sizeof(why),
			 "the service could not make the report (its log "
			 "says why)");
		goto refused;
	}
	if (svcq_answer(q->fd, text, strlen(text), QUERY_SEND_TIMEOUT) < 0)
		say("%s for %s (uid %ld): answer not sent: %s", what,
		    pw.pw_name, (long)uid, strerror(errno));
	else
		say("%s for %s (uid %ld%s): answered, %zu bytes", what,
		    pw.pw_name, (long)uid, admin ? ", admin" : "",
		    strlen(text));
	count_report(sv, false);
	goto out;
refused:
	count_report(sv, true);
	say("refused a %s for uid %ld: %s", what, (long)q->peer_uid, why);
	refuse(q->fd, why);
out:
	free(text);
	free(payload);
}

static void *query_thread(void *arg)
{
	struct query_worker *w = arg;
	struct service *sv = w->sv;

	for (;;) {
		struct query_req q;

		pthread_mutex_lock(&sv->mu);
		while (!sv->n_qqueue && !sv->stop)
			pthread_cond_wait(&sv->qcv, &sv->mu);
		if (sv->stop) {
			pthread_mutex_unlock(&sv->mu);
			break;
		}
		q = sv->qqueue[0];
		memmove(sv->qqueue, sv->qqueue + 1,
			(sv->n_qqueue - 1) * sizeof(q));
		sv->n_qqueue--;
		sv->qrunning[w->slot] = q.peer_uid;
		pthread_mutex_unlock(&sv->mu);
		serve_query(w, &q);
		close(q.fd);
		free(q.msg);
		pthread_mutex_lock(&sv->mu);
		sv->qrunning[w->slot] = (uid_t)-1;
		pthread_mutex_unlock(&sv->mu);
	}
	db_close(w->db);
	policy_destroy(w->p);
	return NULL;
}

/*
 * A node's release (the release thread's): the credential decoded by
 * munged, checked (nrel_check()), its epilog request queued as a hook's
 * (handle_epilog(), which answers); refused otherwise.  fd is closed.
 */
static void node_release(struct service *sv, struct node_msg *m)
{
	struct svcq_cred c = {0};
	struct nrel_request r;
	void *payload = NULL;
	char why[1024], mtext[1024];
	bool queued;

	if (decode_cred(sv, m->cred, &c, &payload, mtext, why, sizeof(why)) < 0)
		goto refused;
	if (nrel_check(&c, &r, why, sizeof(why)) < 0)
		goto refused;
	queued = handle_epilog(sv, m->fd, r.t0, r.vars, r.vars_len) == 0;
	pthread_mutex_lock(&sv->mu);
	if (queued)
		sv->node_releases++;
	else
		sv->node_refused++;
	pthread_mutex_unlock(&sv->mu);
	goto out;
refused:
	say("a node's release refused: %s", why);
	refuse(m->fd, why);
	pthread_mutex_lock(&sv->mu);
	sv->node_refused++;
	pthread_mutex_unlock(&sv->mu);
out:
	free(payload);
	free(m->cred);
	close(m->fd);
}

/*
 * The release thread: drains the release queue (controller/
 * release_queue.h) whenever an epilog queued something, every release on
 * the one connection it keeps from drain to drain (no process and no
 * connection a job), with its own copy of the policy (worker_refresh()).
 * Without a connection each release connects on its own, in its bounded
 * worker, as the hooks' drain does; after a drain with failures the
 * connection is made again.
 */
static void *release_thread(void *arg)
{
	struct query_worker *w = arg;
	struct service *sv = w->sv;

	for (;;) {
		char dir[4096];
		size_t done = 0, failed = 0, n_msgs;
		struct node_msg *msgs;
		fwd_error_t err;
		struct db *db;

		pthread_mutex_lock(&sv->mu);
		while (!sv->want_drain && !sv->n_nqueue && !sv->stop)
			pthread_cond_wait(&sv->rcv, &sv->mu);
		if (!sv->want_drain && !sv->n_nqueue) {
			pthread_mutex_unlock(&sv->mu);
			break;
		}
		/* The nodes' releases first, taken whole by swapping the
		 * queue with its spare: each joins the release queue, and
		 * this drain releases it. */
		msgs = sv->nqueue;
		n_msgs = sv->n_nqueue;
		sv->nqueue = sv->nspare;
		sv->nspare = msgs;
		sv->n_nqueue = 0;
		pthread_mutex_unlock(&sv->mu);
		for (size_t i = 0; i < n_msgs; i++)
			node_release(sv, &msgs[i]);
		pthread_mutex_lock(&sv->mu);
		if (!sv->want_drain) {
			pthread_mutex_unlock(&sv->mu);
			continue;
		}
		sv->want_drain = false;
		pthread_mutex_unlock(&sv->mu);
		worker_refresh(w);
		if (!w->p || relq_dir(w->p, dir, sizeof(dir), &err) < 0) {
			say("release queue: %s",
			    w->p ? err.text : "no policy loaded");
			continue;
		}
		if (!(db = worker_db(w, &err)))
			say("releases: %s; each release connects on its own",
			    err.text);
		if (relq_release_all(db, w->p, dir, log_release, NULL, &done,
				     &failed, &err) < 0)
			say("release queue: %s", err.text);
		if (failed) {
			db_close(w->db);
			w->db = NULL;
		}
	}
	db_close(w->db);
	policy_destroy(w->p);
	return NULL;
}

/* Parse a queued prolog request into l.  0, or -1 (answered). */
static int parse_prolog(struct prolog_req *r, double now, struct ctl_launch *l)
{
	/* handle_request() checked the head and cut it at its '\n'. */
	const char *vars = r->msg + strlen(r->msg) + 1;
	const char *vals[CTL_JOB_N_VARS];
	double deadline = r->deadline, m;
	fwd_error_t err;

	if (ctl_job_vars_parse(vars, (size_t)(r->msg + r->len - vars), vals,
			       &err) < 0 ||
	    ctl_job_from_vars(&l->job, vals, &err) < 0) {
		refuse(r->fd, err.text);
		say("prolog: refused a request: %s", err.text);
		return -1;
	}
	l->t0 = now;
	/* Answer in time for the hook to hear it. */
	m = (deadline - now) / 5;
	l->deadline = deadline - (m < DEADLINE_MARGIN ? m : DEADLINE_MARGIN);
	l->hook_deadline = deadline;
	if (l->deadline <= now) {
		/* The hook has given up already: its own fallback records
		 * the job. */
		say("prolog job %s: its hook's deadline passed before the "
		    "service could take it",
		    l->job.job_id);
		return -1;
	}
	return 0;
}

/* The decision thread: one batch of queued prologs. */
static void decide_batch(struct service *sv, struct prolog_req *batch,
			 size_t n_batch)
{
	struct ctl_launch *ls = calloc(n_batch, sizeof(*ls));
	struct ctl_outcome *outs = calloc(n_batch, sizeof(*outs));
	int *fds = calloc(n_batch, sizeof(*fds));
	struct ctl_launcher_stats st;
	double now = fwd_clock_real(), ms = 0;
	size_t n = 0;

	if (!ls || !outs || !fds) {
		for (size_t i = 0; i < n_batch; i++)
			refuse(batch[i].fd, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_batch; i++) {
		struct prolog_req *r = &batch[i];

		if (parse_prolog(r, now, &ls[n]) < 0)
			continue;
		if (sv->st.p->access.mode == POLICY_MODE_OFF) {
			answer(r->fd, FWD_SVC_MAGIC " 0 A\n",
			       sizeof(FWD_SVC_MAGIC " 0 A\n") - 1);
			continue;
		}
		fds[n++] = r->fd;
	}
	if (n) {
		double t = fwd_clock_real();

		ctl_launcher_prologs(sv->st.L, ls, n, outs);
		ms = (fwd_clock_real() - t) * 1e3;
	}
	for (size_t i = 0; i < n; i++) {
		/* Unanswered: the hook records the job (closed below). */
		if (!outs[i].unanswered)
			answer_outcome(fds[i], &outs[i]);
		/* What the hook prints goes to slurmctld's log; the
		 * journal gets it too, beside the service's own lines. */
		for (size_t k = 0; k < outs[i].n_notes; k++)
			say("%s", outs[i].notes[k].text);
		if (outs[i].lost_record) {
			/* The audit file refused it: the journal keeps it. */
			say("prolog job %s: audit record not written to the "
			    "audit file: %s",
			    ls[i].job.job_id, outs[i].lost_record);
			openlog("fwdalloc", LOG_PID, LOG_DAEMON);
			syslog(LOG_WARNING,
			       "prolog job %s: audit record not written to "
			       "the audit file: %s",
			       ls[i].job.job_id, outs[i].lost_record);
			closelog();
		}
		ctl_outcome_free(&outs[i]);
	}
	ctl_launcher_stats(sv->st.L, &st);
	pthread_mutex_lock(&sv->mu);
	sv->stats = st;
	sv->decide_ms += ms;
	if (ms > sv->decide_ms_max)
		sv->decide_ms_max = ms;
	pthread_mutex_unlock(&sv->mu);
out:
	for (size_t i = 0; i < n_batch; i++) {
		close(batch[i].fd);
		free(batch[i].msg);
	}
	free(ls);
	free(outs);
	free(fds);
}

static void *decider(void *arg)
{
	struct service *sv = arg;
	struct prolog_req *batch = calloc(BATCH_MAX, sizeof(*batch));
	struct ctl_launcher_stats st;

	if (!batch) {
		say("decision thread: %s", strerror(errno));
		return NULL;
	}
	ctl_launcher_stats(sv->st.L, &st);
	pthread_mutex_lock(&sv->mu);
	sv->stats = st;
	pthread_mutex_unlock(&sv->mu);
	for (;;) {
		struct timespec ts;
		size_t n;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&sv->mu);
		while (!sv->n_queue && !sv->stop && !got_hup &&
		       pthread_cond_timedwait(&sv->cv, &sv->mu, &ts) == 0)
			;
		if (sv->stop) {
			pthread_mutex_unlock(&sv->mu);
			break;
		}
		n = sv->n_queue < BATCH_MAX ? sv->n_queue : BATCH_MAX;
		memcpy(batch, sv->queue, n * sizeof(*batch));
		memmove(sv->queue, sv->queue + n,
			(sv->n_queue - n) * sizeof(*batch));
		sv->n_queue -= n;
		pthread_mutex_unlock(&sv->mu);
		if (got_hup || n) {
			bool force = got_hup;

			got_hup = 0;
			if (state_refresh(&sv->st, sv->policy_path, force))
				publish_qdir(sv);
		}
		if (n)
			decide_batch(sv, batch, n);
	}
	free(batch);
	return NULL;
}

/* Accept what is waiting on lfd into conns (*n of max). */
static void accept_all(int lfd, struct conn *conns, size_t *n, size_t max)
{
	int fd;

	while (lfd >= 0 && *n < max &&
	       (fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
		       0) {
		conns[*n].fd = fd;
		conns[*n].since = fwd_clock_real();
		(*n)++;
	}
}

/* Read every pending connection of conns that has its request. */
static void read_pending(struct service *sv, struct conn *conns, size_t *n,
			 int (*handle)(struct service *, int))
{
	double now = fwd_clock_real();
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		struct pollfd pf = {conns[i].fd, POLLIN, 0};

		if (poll(&pf, 1, 0) > 0 && !handle(sv, conns[i].fd))
			continue;
		if (now - conns[i].since > IDLE_CLOSE) {
			close(conns[i].fd);
			continue;
		}
		conns[k++] = conns[i];
	}
	*n = k;
}

/* A reload that names another release.port: said once; the socket
 * stays until fwdallocd restarts. */
static void note_port_change(struct service *sv)
{
	static unsigned said = (unsigned)-1;
	unsigned want;

	pthread_mutex_lock(&sv->mu);
	want = sv->want_nport;
	pthread_mutex_unlock(&sv->mu);
	if (want == sv->nport || want == said)
		return;
	said = want;
	if (sv->nport)
		say("release.port is now %u: the nodes' releases are taken on "
		    "TCP port %u until fwdallocd restarts",
		    want, sv->nport);
	else
		say("release.port is now %u: the nodes' releases are taken "
		    "once fwdallocd restarts",
		    want);
}

/* The nodes' releases waiting to be accepted (the main thread's). */
static void accept_nodes(struct service *sv)
{
	int fd;

	while (sv->nlfd >= 0 && sv->n_nconns < NODE_CONNS_MAX &&
	       (fd = accept4(sv->nlfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		sv->nconns[sv->n_nconns++] =
			(struct node_conn){fd, fwd_clock_real(), NULL, 0};
}

/*
 * Read what a node sent on c: 1 when its credential has come whole (up to
 * its '\n', which becomes a NUL), 0 when more is to come, -1 when the
 * node closed first or sent more than FWD_SVC_NODE_MAX bytes (why).
 */
static int node_read(struct node_conn *c, const char **why)
{
	ssize_t r;

	if (!c->buf && !(c->buf = malloc(FWD_SVC_NODE_MAX + 1))) {
		*why = "out of memory";
		return -1;
	}
	for (;;) {
		char *nl;

		r = recv(c->fd, c->buf + c->len, FWD_SVC_NODE_MAX - c->len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0) {
			*why = r ? strerror(errno)
				 : "closed before its credential's end";
			return -1;
		}
		nl = memchr(c->buf + c->len, '\n', (size_t)r);
		c->len += (size_t)r;
		if (nl) {
			*nl = '\0';
			return 1;
		}
		if (c->len >= FWD_SVC_NODE_MAX) {
			*why = "request too long (a release is one MUNGE "
			       "credential and a newline)";
			return -1;
		}
	}
}

/*
 * The nodes' connections (the main thread's): a credential read whole
 * goes to the release thread; a broken, overlong or idle connection is
 * closed, refused where it can still hear it.
 */
static void read_nodes(struct service *sv)
{
	double now = fwd_clock_real();
	size_t k = 0;

	for (size_t i = 0; i < sv->n_nconns; i++) {
		struct node_conn *c = &sv->nconns[i];
		const char *why = NULL;
		char *cred;
		int r = node_read(c, &why);

		if (!r && now - c->since <= NODE_IDLE_CLOSE) {
			sv->nconns[k++] = *c;
			continue;
		}
		if (r > 0 && (cred = strdup(c->buf))) {
			pthread_mutex_lock(&sv->mu);
			if (sv->n_nqueue < NODE_QUEUE_MAX && !sv->stop) {
				sv->nqueue[sv->n_nqueue++] =
					(struct node_msg){c->fd, cred};
				pthread_cond_signal(&sv->rcv);
				pthread_mutex_unlock(&sv->mu);
				free(c->buf);
				continue;
			}
			pthread_mutex_unlock(&sv->mu);
			free(cred);
			why = "busy: too many releases waiting";
		}
		if (!why)
			why = r > 0 ? "out of memory"
				    : "no whole credential within 5 s";
		say("a node's release refused: %s", why);
		refuse(c->fd, why);
		close(c->fd);
		free(c->buf);
		pthread_mutex_lock(&sv->mu);
		sv->node_refused++;
		pthread_mutex_unlock(&sv->mu);
	}
	sv->n_nconns = k;
}

/* The main thread: accept and read; the decision thread decides. */
static int serve(struct service *sv)
{
	struct pollfd *pfs =
		calloc(PENDING_MAX + QUERY_CONNS_MAX + NODE_CONNS_MAX + 3,
		       sizeof(*pfs));
	struct query_worker qw[QUERY_WORKERS];
	pthread_t qtid[QUERY_WORKERS];
	size_t n_qw = 0;
	sigset_t all, old;
	pthread_t tid, rtid;
	/* the release thread: a worker of its own (the slot is unused) */
	struct query_worker rw = {.sv = sv, .slot = QUERY_WORKERS};
	int rc;

	sv->conns = calloc(PENDING_MAX, sizeof(*sv->conns));
	sv->queue = calloc(PENDING_MAX, sizeof(*sv->queue));
	sv->qconns = calloc(QUERY_CONNS_MAX, sizeof(*sv->qconns));
	sv->qqueue = calloc(QUERY_QUEUE_MAX, sizeof(*sv->qqueue));
	sv->nconns = calloc(NODE_CONNS_MAX, sizeof(*sv->nconns));
	sv->nqueue = calloc(NODE_QUEUE_MAX, sizeof(*sv->nqueue));
	sv->nspare = calloc(NODE_QUEUE_MAX, sizeof(*sv->nspare));
	for (size_t i = 0; i < QUERY_WORKERS; i++)
		sv->qrunning[i] = (uid_t)-1;
	if (!pfs || !sv->conns || !sv->queue || !sv->qconns || !sv->qqueue ||
	    !sv->nconns || !sv->nqueue || !sv->nspare) {
		say("%s", strerror(errno));
		rc = 1;
		goto out;
	}
	publish_qdir(sv);
	/* Signals are the main thread's: the decision thread starts with
	 * them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&tid, NULL, decider, sv);
	if (!rc && (rc = pthread_create(&rtid, NULL, release_thread, &rw))) {
		pthread_mutex_lock(&sv->mu);
		sv->stop = true;
		pthread_cond_signal(&sv->cv);
		pthread_mutex_unlock(&sv->mu);
		pthread_join(tid, NULL);
	}
	for (size_t i = 0; !rc && sv->qlfd >= 0 && i < QUERY_WORKERS; i++) {
		int e;

		qw[i] = (struct query_worker){.sv = sv, .slot = i};
		if ((e = pthread_create(&qtid[i], NULL, query_thread,
					&qw[i]))) {
			say("report thread: %s", strerror(e));
			break;
		}
		n_qw++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		say("decision thread: %s", strerror(rc));
		rc = 1;
		goto out;
	}
	while (!got_term) {
		size_t n = 0;

		pfs[n++] = (struct pollfd){sv->lfd, POLLIN, 0};
		if (sv->qlfd >= 0 && n_qw)
			pfs[n++] = (struct pollfd){sv->qlfd, POLLIN, 0};
		for (size_t i = 0; i < sv->n_conns; i++)
			pfs[n++] = (struct pollfd){sv->conns[i].fd, POLLIN, 0};
		for (size_t i = 0; i < sv->n_qconns; i++)
			pfs[n++] = (struct pollfd){sv->qconns[i].fd, POLLIN, 0};
		if (sv->nlfd >= 0)
			pfs[n++] = (struct pollfd){sv->nlfd, POLLIN, 0};
		for (size_t i = 0; i < sv->n_nconns; i++)
			pfs[n++] = (struct pollfd){sv->nconns[i].fd, POLLIN, 0};
		if (poll(pfs, n, 1000) < 0 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			break;
		}
		if (got_hup) {
			pthread_mutex_lock(&sv->mu);
			pthread_cond_signal(&sv->cv);
			pthread_mutex_unlock(&sv->mu);
		}
		accept_all(sv->lfd, sv->conns, &sv->n_conns, PENDING_MAX);
		read_pending(sv, sv->conns, &sv->n_conns, handle_request);
		if (n_qw) {
			accept_all(sv->qlfd, sv->qconns, &sv->n_qconns,
				   QUERY_CONNS_MAX);
			read_pending(sv, sv->qconns, &sv->n_qconns,
				     handle_query);
		}
		accept_nodes(sv);
		read_nodes(sv);
		note_port_change(sv);
	}
	pthread_mutex_lock(&sv->mu);
	sv->stop = true;
	pthread_cond_signal(&sv->cv);
	pthread_cond_signal(&sv->rcv);
	pthread_cond_broadcast(&sv->qcv);
	pthread_mutex_unlock(&sv->mu);
	pthread_join(tid, NULL);
	pthread_join(rtid, NULL);
	for (size_t i = 0; i < n_qw; i++)
		pthread_join(qtid[i], NULL);
	for (size_t i = 0; i < sv->n_qqueue; i++) {
		refuse(sv->qqueue[i].fd, "stopping");
		close(sv->qqueue[i].fd);
		free(sv->qqueue[i].msg);
	}
	/* Prologs not decided: their hooks decide themselves, now. */
	for (size_t i = 0; i < sv->n_queue; i++) {
		refuse(sv->queue[i].fd, "stopping");
		close(sv->queue[i].fd);
		free(sv->queue[i].msg);
	}
	rc = 0;
out:
	for (size_t i = 0; i < sv->n_conns; i++)
		close(sv->conns[i].fd);
	for (size_t i = 0; i < sv->n_qconns; i++)
		close(sv->qconns[i].fd);
	for (size_t i = 0; i < sv->n_nconns; i++) {
		close(sv->nconns[i].fd);
		free(sv->nconns[i].buf);
	}
	/* The release thread took every credential queued before it
	 * stopped. */
	for (size_t i = 0; i < sv->n_nqueue; i++) {
		close(sv->nqueue[i].fd);
		free(sv->nqueue[i].cred);
	}
	free(sv->nconns);
	free(sv->nqueue);
	free(sv->nspare);
	free(sv->conns);
	free(sv->queue);
	free(sv->qconns);
	free(sv->qqueue);
	free(pfs);
	return rc;
}

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdallocd [--policy FILE] [--socket PATH] [--query-socket PATH]\n"
"                 [--munge-socket PATH]\n"
"       fwdallocd --status [--socket PATH]\n"
"\n"
"The fwdalloc controller service.  slurmctld's PrologSlurmctld and\n"
"EpilogSlurmctld programs (LIBEXECDIR/fwdalloc/prolog-slurmctld,\n"
"epilog-slurmctld) hand it each job over a local socket.  It keeps the\n"
"policy, the topology, one database connection with its prepared\n"
"statements, the profiles read in the last minute and the ledger (each\n"
"batch reads what changed since the last, however many jobs run; the\n"
"whole of it once a minute), decides the prologs that arrive together\n"
"as one batch (one transaction under the decision lock; the knapsack\n"
"arbitrates between them), and queues releases for its release thread\n"
"(a connection of its own, kept), so that a hook costs Slurm about a\n"
"millisecond.  Run it on every host that runs slurmctld (primary and\n"
"backup), as SlurmUser, under systemd (fwdallocd.service).\n"
"\n"
"Without it the hooks do the work themselves (`fwdctl prolog`, the\n"
"release queue) exactly as before: a service that is stopped, hung or\n"
"broken never fails or delays a job beyond the hook's budget.  A prolog\n"
"the service took but did not answer in time falls back: whatever it\n"
"may have committed for the job is released (`fwdctl prolog\n"
"--abandoned`).  Two services (two controllers) decide safely at the\n"
"same time: decisions are serialized by the database's decision lock.\n"
"\n"
"Reports for users.  `fwdctl report job JOBID`, run by a user who cannot\n"
"read the database password, asks this service on its query socket\n"
"with a MUNGE credential (munge_encode(), the site's munged): the\n"
"credential's payload is the request itself, it may be decoded by this\n"
"service's account only, and munged decodes it once (a replayed one is\n"
"refused).  The service decodes it, checks that its uid is the uid that\n"
"connected (SO_PEERCRED), maps the uid to a user name and answers with\n"
"the report of that user's own job only: the job's own components and\n"
"time range, as `fwdctl report` shows them.  root and the members of the\n"
"policy's reports.admin_group see every job, and the machine report.\n"
"Everything else is refused, saying why: a forged or damaged credential,\n"
"a replayed or expired one, one made for another request or by another\n"
"uid, another user's job.  The database credentials never leave the\n"
"service; a database error reaches the user as \"cannot read the\n"
"database now\" and this log as the error.  Report requests are answered\n"
"by %d threads of their own, each with its own database connection: a\n"
"report never delays a prolog or an epilog.  At most %d wait, %d of one\n"
"uid; more are refused as busy.  A report larger than one message\n"
"follows in messages of 64 KiB on the same connection.\n"
"\n"
"Releases from the nodes.  With the policy's release.port set, the\n"
"service also listens on that TCP port (every address) and slurm.conf\n"
"sets no EpilogSlurmctld: the job epilog of each job's first node\n"
"(the fwdalloc SPANK plugin, as root) sends the job's release there, in\n"
"a MUNGE credential whose payload is the epilog's request, to the hosts\n"
"of release.controllers in turn (none listed: the node's slurm.conf\n"
"SlurmctldHost lines).  The service accepts a credential made\n"
"by root only, and each once (munged refuses a replay); it queues the\n"
"release as an epilog's and answers at once.  Anything else is refused\n"
"and logged with its reason: another uid's credential, a forged,\n"
"replayed or expired one, another request, more than %d bytes, or no\n"
"whole credential within %.0f s.  At most %d connections are read at\n"
"once and %d credentials wait; past that a node is refused as busy and\n"
"tries the next controller.  The port is taken at start: a reload that\n"
"changes it says so and needs a restart.  Open it to the compute nodes\n"
"only.\n"
"\n"
"Options:\n"
"  --policy FILE  the policy (default SYSCONFDIR/fwdalloc/fwdalloc.yaml).\n"
"                 The service reloads it, and the topology it names, when\n"
"                 either file changes and on SIGHUP; a reload that fails\n"
"                 keeps the policy loaded before (and says so).\n"
"  --socket PATH  where to listen (default\n"
"                 %s);\n"
"                 created mode 0600: only this account and root may\n"
"                 connect.\n"
"  --query-socket PATH\n"
"                 where users' report requests arrive (default\n"
"                 %s);\n"
"                 created mode 0666 (its directory must let users reach\n"
"                 it): the credential says who asks.  It takes report\n"
"                 requests only.  \"none\": no reports.  When it cannot\n"
"                 be created the service still decides jobs and its log\n"
"                 says why.\n"
"  --munge-socket PATH\n"
"                 munged's socket (default: libmunge's, as for Slurm's\n"
"                 AuthInfo=socket=).\n"
"  --status       ask the running service for its counters and print\n"
"                 them (batches, jobs, decided, fell_back, profile_hits,\n"
"                 profile_reads, connects; ledger_loads: the ledger\n"
"                 read whole, where other batches read what changed;\n"
"                 epilogs, refused, and\n"
"                 decide_ms, decide_ms_max: the time spent deciding\n"
"                 batches in all and the longest batch, in ms; rows_ms,\n"
"                 health_ms, tx_ms, publish_ms: that time by phase, the\n"
"                 job rows and profiles, the health, the transaction, the\n"
"                 decision files and audit lines); reports,\n"
"                 reports_refused: report requests answered and refused;\n"
"                 node_releases, node_refused: the nodes' releases\n"
"                 taken and refused.\n"
"  -h, --help     this text;  --version  the version.\n"
"\n"
"Messages go to stderr (the journal under systemd).  SIGTERM stops it;\n"
"the release thread finishes the releases it is at; those queued after\n"
"stay queued for the next start, an epilog run without the service, or\n"
"`fwdctl reconcile`.\n"
"\n"
"Exit status: 0 stopped by SIGTERM or --status answered; 1 could not\n"
"start (policy, socket) or --status got no answer; 2 bad usage.  A\n"
"release.port it cannot listen on is logged; the service runs without\n"
"it (the nodes' releases then fail over or are left to reconcile).\n",
		QUERY_WORKERS, QUERY_QUEUE_MAX, QUERY_PER_UID,
		FWD_SVC_NODE_MAX, NODE_IDLE_CLOSE, NODE_CONNS_MAX,
		NODE_QUEUE_MAX, FWD_SERVICE_SOCKET, FWD_SERVICE_QUERY_SOCKET);
}
/* clang-format on */

static int status(const char *path)
{
	char ans[4096], why[512];
	enum svc_result r = svc_call(path, 'S', 0, svc_now() + 5, ans,
				     sizeof(ans), why, sizeof(why));
	char *nl;

	if (r != SVC_ANSWERED || strncmp(ans, FWD_SVC_MAGIC " 0 A\n", 14)) {
		fprintf(stderr, "fwdallocd: %s: %s\n", path,
			r == SVC_ANSWERED ? "refused" : why);
		return 1;
	}
	nl = strchr(ans, '\n');
	fputs(nl + 1, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 's'},
		{"query-socket", required_argument, NULL, 'q'},
		{"munge-socket", required_argument, NULL, 'm'},
		{"status", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct service sv;
	const char *sock = FWD_SERVICE_SOCKET;
	const char *qsock = FWD_SERVICE_QUERY_SOCKET;
	bool want_status = false;
	struct sigaction sa;
	int c, rc;

	memset(&sv, 0, sizeof(sv));
	pthread_mutex_init(&sv.mu, NULL);
	pthread_cond_init(&sv.cv, NULL);
	pthread_cond_init(&sv.qcv, NULL);
	pthread_cond_init(&sv.rcv, NULL);
	/* What an earlier run left queued is released at once. */
	sv.want_drain = true;
	sv.qlfd = -1;
	sv.nlfd = -1;
	sv.policy_path = SYSCONFDIR "/fwdalloc/fwdalloc.yaml";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			sv.policy_path = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'q':
			qsock = optarg;
			break;
		case 'm':
			sv.munge_socket = optarg;
			break;
		case 'S':
			want_status = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("fwdallocd %s\n", PACKAGE_VERSION);
			return 0;
		default:
			fprintf(stderr, "fwdallocd: see 'fwdallocd --help'\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"fwdallocd: unexpected argument '%s'; see 'fwdallocd "
			"--help'\n",
			argv[optind]);
		return 2;
	}
	if (want_status)
		return status(sock);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (state_load(&sv.st, sv.policy_path) < 0)
		return 1;
	if ((sv.lfd = listen_on(sock, false)) < 0) {
		state_free(&sv.st);
		return 1;
	}
	/* Users' reports are not the launch path: without their socket the
	 * service still decides jobs, and says so. */
	if (strcmp(qsock, "none") && (sv.qlfd = listen_on(qsock, true)) < 0)
		say("users' report requests are not answered: no query socket "
		    "(--query-socket %s)",
		    qsock);
	/* Without the nodes' socket the service still decides jobs; the
	 * nodes then fail to send and reconcile releases their jobs. */
	if (sv.st.p->release.port &&
	    (sv.nlfd = listen_tcp(sv.st.p->release.port)) >= 0)
		sv.nport = sv.st.p->release.port;
	sv.want_nport = sv.nport;
	say("listening on %s (policy %s)", sock, sv.policy_path);
	if (sv.nlfd >= 0)
		say("taking the nodes' releases on TCP port %u (MUNGE%s%s, "
		    "root only)",
		    sv.nport, sv.munge_socket ? " at " : "",
		    sv.munge_socket ? sv.munge_socket : "");
	if (sv.qlfd >= 0)
		say("answering users' report requests on %s (MUNGE%s%s)", qsock,
		    sv.munge_socket ? " at " : "",
		    sv.munge_socket ? sv.munge_socket : "");
	rc = serve(&sv);
	close(sv.lfd);
	unlink(sock);
	if (sv.qlfd >= 0) {
		close(sv.qlfd);
		unlink(qsock);
	}
	if (sv.nlfd >= 0)
		close(sv.nlfd);
	state_free(&sv.st);
	say("stopped");
	return rc;
}
