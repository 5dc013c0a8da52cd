/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdallocd: the controller service.  slurmctld's hooks (prolog-slurmctld,
 * epilog-slurmctld) hand it their jobs over a local socket
 * (service/protocol.h); it keeps what every launch would otherwise
 * rebuild (policy, topology, the database connection and its prepared
 * statements, recent profiles: controller/launcher.h), decides the
 * prologs that arrive together as one batch, and queues releases for a
 * drainer process so that no hook waits on the database at a job's end.
 * The hooks fail open without it (they run `fwdctl prolog` and the
 * release queue themselves), so it is an accelerator, never a
 * dependency.  Only this file prints; the work is the libraries'.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
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
#include "policies/caps_room.h"
#include "policies/policy.h"
#include "service/client.h"
#include "service/protocol.h"
#include "topology/topology.h"

#ifndef FWD_SERVICE_SOCKET
#error "FWD_SERVICE_SOCKET (the socket's installed path) must be defined"
#endif

/* Prologs decided in one batch at most. */
#define BATCH_MAX 256
/* Connections accepted and not answered yet, at most. */
#define PENDING_MAX 4096
/* A connection that sends nothing for this long is closed. */
#define IDLE_CLOSE 10.0
/* The margin the service keeps before a hook's deadline, at most. */
#define DEADLINE_MARGIN 0.2

static volatile sig_atomic_t got_term, got_hup;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else if (sig != SIGCHLD)
		got_term = 1;
	/* SIGCHLD only interrupts poll(): a drainer that ended is reaped
	 * (and one started again) at once. */
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

/* A prolog request being decided. */
struct prolog_req {
	int fd;
	char *msg; /* the request; the job's strings point into it */
	size_t len;
	double deadline; /* the hook's, from the request's head */
};

static int listen_on(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		say("socket path %s: too long", path);
		return -1;
	}
	/* A socket left by an earlier run is replaced; anything else at
	 * that path is not ours to remove. */
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			say("%s exists and is not this account's socket: "
			    "remove it or choose another --socket",
			    path);
			return -1;
		}
		unlink(path);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say("socket: %s", strerror(errno));
		return -1;
	}
	/* Only this account (SlurmUser, which runs the hooks) and root
	 * may connect. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		say("listen on %s: %s", path, strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
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
 * Two threads.  The main one accepts, reads every request at once,
 * queues prologs for the decision thread and answers the rest itself (an
 * epilog is queued in the release queue there and then): a hook's
 * hand-off never waits for a batch being decided.  The decision thread
 * owns the state (policy, topology, launcher and its connection), decides
 * the prologs queued since its last batch as the next batch, answers
 * them, and starts the release drainer.  `mu` guards what both touch.
 */
struct service {
	const char *policy_path;
	int lfd;
	/* the main thread's */
	struct conn *conns;
	size_t n_conns;
	/* the decision thread's */
	struct state st;
	pid_t drainer;
	bool drain_again; /* releases queued since the drainer started */
	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct prolog_req *queue;
	size_t n_queue;
	bool want_drain, stop;
	char qdir[4096]; /* the release queue of the policy in use, or "" */
	struct ctl_launcher_stats stats;
	unsigned long long epilogs, refused;
	/* Time spent deciding batches, in ms: in all, the longest. */
	double decide_ms, decide_ms_max;
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
	pthread_mutex_unlock(&sv->mu);
}

static void count_refused(struct service *sv)
{
	pthread_mutex_lock(&sv->mu);
	sv->refused++;
	pthread_mutex_unlock(&sv->mu);
}

/* The drainer's messages: this process's stderr, the journal. */
static void log_release(void *arg, int prio, const char *msg)
{
	(void)arg;
	(void)prio;
	say("%s", msg);
}

/* Release what is queued, in a child: the service goes on answering. */
static void start_drainer(struct service *sv)
{
	char dir[4096];
	fwd_error_t err;
	size_t done = 0, failed = 0;
	pid_t pid;

	if (sv->drainer > 0) {
		sv->drain_again = true;
		return;
	}
	sv->drain_again = false;
	pid = fork();
	if (pid < 0) {
		say("release drainer: fork: %s; the next epilog or "
		    "`fwdctl reconcile` releases what is queued",
		    strerror(errno));
		return;
	}
	if (pid > 0) {
		sv->drainer = pid;
		return;
	}
	/* The child shares the parent's database connection: it must not
	 * use or close it, so it leaves with _exit(). */
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_IGN);
	close(sv->lfd);
	if (relq_dir(sv->st.p, dir, sizeof(dir), &err) < 0 ||
	    relq_release_all(sv->st.p, dir, log_release, NULL, &done, &failed,
			     &err) < 0)
		say("release queue: %s", err.text);
	_exit(failed ? 1 : 0);
}

static void reap(struct service *sv)
{
	int status;

	if (sv->drainer > 0 && waitpid(sv->drainer, &status, WNOHANG) > 0) {
		sv->drainer = 0;
		if (sv->drain_again)
			start_drainer(sv);
	}
}

/* "FWDALLOC1 E <t0>": queue the release, answer; the decision thread
 * starts the drainer. */
static void handle_epilog(struct service *sv, int fd, double t0,
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
		return;
	}
	answer(fd, FWD_SVC_MAGIC " 0 A\n", sizeof(FWD_SVC_MAGIC " 0 A\n") - 1);
	pthread_mutex_lock(&sv->mu);
	sv->epilogs++;
	sv->want_drain = true;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
}

static void handle_status(struct service *sv, int fd)
{
	struct ctl_launcher_stats s;
	unsigned long long epilogs, refused;
	double dms, dmax;
	char buf[1024];
	int n;

	pthread_mutex_lock(&sv->mu);
	s = sv->stats;
	epilogs = sv->epilogs;
	refused = sv->refused;
	dms = sv->decide_ms;
	dmax = sv->decide_ms_max;
	pthread_mutex_unlock(&sv->mu);
	n = snprintf(
		buf, sizeof(buf),
		FWD_SVC_MAGIC
		" 0 A\n"
		"batches %llu\njobs %llu\ndecided %llu\nfell_back %llu\n"
		"profile_hits %llu\nprofile_reads %llu\nconnects %llu\n"
		"epilogs %llu\nrefused %llu\n"
		"decide_ms %.1f\ndecide_ms_max %.1f\n"
		"rows_ms %.1f\nhealth_ms %.1f\ntx_ms %.1f\npublish_ms %.1f\n",
		s.batches, s.jobs, s.decided, s.fell_back, s.profile_hits,
		s.profile_reads, s.connects, epilogs, refused, dms, dmax,
		s.ms_rows, s.ms_health, s.ms_tx, s.ms_publish);
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
		bool drain;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&sv->mu);
		while (!sv->n_queue && !sv->want_drain && !sv->stop &&
		       !got_hup &&
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
		drain = sv->want_drain;
		sv->want_drain = false;
		pthread_mutex_unlock(&sv->mu);
		reap(sv);
		if (got_hup || n) {
			bool force = got_hup;

			got_hup = 0;
			if (state_refresh(&sv->st, sv->policy_path, force))
				publish_qdir(sv);
		}
		if (n)
			decide_batch(sv, batch, n);
		if (drain)
			start_drainer(sv);
	}
	free(batch);
	return NULL;
}

/* Accept what is waiting. */
static void accept_all(struct service *sv)
{
	int fd;

	while (sv->n_conns < PENDING_MAX &&
	       (fd = accept4(sv->lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		sv->conns[sv->n_conns].fd = fd;
		sv->conns[sv->n_conns].since = fwd_clock_real();
		sv->n_conns++;
	}
}

/* Read every pending connection that has its request. */
static void read_pending(struct service *sv)
{
	double now = fwd_clock_real();
	size_t k = 0;

	for (size_t i = 0; i < sv->n_conns; i++) {
		struct pollfd pf = {sv->conns[i].fd, POLLIN, 0};

		if (poll(&pf, 1, 0) > 0 && !handle_request(sv, sv->conns[i].fd))
			continue;
		if (now - sv->conns[i].since > IDLE_CLOSE) {
			close(sv->conns[i].fd);
			continue;
		}
		sv->conns[k++] = sv->conns[i];
	}
	sv->n_conns = k;
}

/* The main thread: accept and read; the decision thread decides. */
static int serve(struct service *sv)
{
	struct pollfd *pfs = calloc(PENDING_MAX + 1, sizeof(*pfs));
	sigset_t all, old;
	pthread_t tid;
	int rc;

	sv->conns = calloc(PENDING_MAX, sizeof(*sv->conns));
	sv->queue = calloc(PENDING_MAX, sizeof(*sv->queue));
	if (!pfs || !sv->conns || !sv->queue) {
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
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		say("decision thread: %s", strerror(rc));
		rc = 1;
		goto out;
	}
	while (!got_term) {
		size_t n = 0;

		pfs[n++] = (struct pollfd){sv->lfd, POLLIN, 0};
		for (size_t i = 0; i < sv->n_conns; i++)
			pfs[n++] = (struct pollfd){sv->conns[i].fd, POLLIN, 0};
		if (poll(pfs, n, 1000) < 0 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			break;
		}
		if (got_hup) {
			pthread_mutex_lock(&sv->mu);
			pthread_cond_signal(&sv->cv);
			pthread_mutex_unlock(&sv->mu);
		}
		accept_all(sv);
		read_pending(sv);
	}
	pthread_mutex_lock(&sv->mu);
	sv->stop = true;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
	pthread_join(tid, NULL);
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
	free(sv->conns);
	free(sv->queue);
	free(pfs);
	return rc;
}

/* clang-format off */
static void usage(FILE *f)
{
	fprintf(f,
"Usage: fwdallocd [--policy FILE] [--socket PATH]\n"
"       fwdallocd --status [--socket PATH]\n"
"\n"
"The fwdalloc controller service.  slurmctld's PrologSlurmctld and\n"
"EpilogSlurmctld programs (LIBEXECDIR/fwdalloc/prolog-slurmctld,\n"
"epilog-slurmctld) hand it each job over a local socket.  It keeps the\n"
"policy, the topology, one database connection with its prepared\n"
"statements and the profiles read in the last minute, decides the\n"
"prologs that arrive together as one batch (one transaction under the\n"
"decision lock; the knapsack arbitrates between them), and queues\n"
"releases for a drainer process, so that a hook costs Slurm about a\n"
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
"Options:\n"
"  --policy FILE  the policy (default SYSCONFDIR/fwdalloc/fwdalloc.yaml).\n"
"                 The service reloads it, and the topology it names, when\n"
"                 either file changes and on SIGHUP; a reload that fails\n"
"                 keeps the policy loaded before (and says so).\n"
"  --socket PATH  where to listen (default %s); created\n"
"                 mode 0600: only this account and root may connect.\n"
"  --status       ask the running service for its counters and print\n"
"                 them (batches, jobs, decided, fell_back, profile_hits,\n"
"                 profile_reads, connects, epilogs, refused, and\n"
"                 decide_ms, decide_ms_max: the time spent deciding\n"
"                 batches in all and the longest batch, in ms; rows_ms,\n"
"                 health_ms, tx_ms, publish_ms: that time by phase, the\n"
"                 job rows and profiles, the health, the transaction, the\n"
"                 decision files and audit lines).\n"
"  -h, --help     this text;  --version  the version.\n"
"\n"
"Messages go to stderr (the journal under systemd).  SIGTERM stops it;\n"
"releases already queued stay queued for the next drainer or\n"
"`fwdctl reconcile`.\n"
"\n"
"Exit status: 0 stopped by SIGTERM or --status answered; 1 could not\n"
"start (policy, socket) or --status got no answer; 2 bad usage.\n",
		FWD_SERVICE_SOCKET);
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
		{"status", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct service sv;
	const char *sock = FWD_SERVICE_SOCKET;
	bool want_status = false;
	struct sigaction sa;
	int c, rc;

	memset(&sv, 0, sizeof(sv));
	pthread_mutex_init(&sv.mu, NULL);
	pthread_cond_init(&sv.cv, NULL);
	sv.policy_path = SYSCONFDIR "/fwdalloc/fwdalloc.yaml";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			sv.policy_path = optarg;
			break;
		case 's':
			sock = optarg;
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
	if ((sv.lfd = listen_on(sock)) < 0) {
		state_free(&sv.st);
		return 1;
	}
	say("listening on %s (policy %s)", sock, sv.policy_path);
	rc = serve(&sv);
	close(sv.lfd);
	unlink(sock);
	while (sv.drainer > 0 && waitpid(sv.drainer, NULL, 0) < 0 &&
	       errno == EINTR)
		;
	state_free(&sv.st);
	say("stopped");
	return rc;
}
