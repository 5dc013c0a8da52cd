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
	if (!(s->L = ctl_launcher_create(s->p, s->t, &err))) {
		say("%s", err.text);
		state_free(s);
		return -1;
	}
	return 0;
}

/* Reload when asked (SIGHUP) or when the policy or topology file
 * changed; a reload that fails keeps what was loaded. */
static void state_refresh(struct state *s, const char *policy_path, bool force)
{
	struct state n;

	if (!force && same_time(mtime_of(policy_path), s->policy_mtime) &&
	    same_time(mtime_of(s->p->topology), s->topology_mtime))
		return;
	if (state_load(&n, policy_path) < 0) {
		say("reload of %s failed; still deciding with the policy "
		    "loaded before",
		    policy_path);
		/* Not again until the file changes again. */
		s->policy_mtime = mtime_of(policy_path);
		s->topology_mtime = mtime_of(s->p->topology);
		return;
	}
	state_free(s);
	*s = n;
	say("reloaded %s", policy_path);
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

struct service {
	const char *policy_path;
	struct state st;
	int lfd;
	struct conn *conns;
	size_t n_conns;
	struct prolog_req batch[BATCH_MAX];
	size_t n_batch;
	pid_t drainer;
	bool drain_again; /* releases queued since the drainer started */
	unsigned long long epilogs, refused;
	/* Time spent deciding batches, in ms: in all, the longest. */
	double decide_ms, decide_ms_max;
};

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
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == sv->drainer) {
			sv->drainer = 0;
			if (sv->drain_again)
				start_drainer(sv);
		}
}

/* "FWDALLOC1 E <t0>": queue the release, answer, drain later. */
static void handle_epilog(struct service *sv, int fd, double t0,
			  const char *vars, size_t len)
{
	const char *vals[CTL_JOB_N_VARS];
	fwd_error_t err;
	char dir[4096];

	if (ctl_job_vars_parse(vars, len, vals, &err) < 0 ||
	    relq_dir(sv->st.p, dir, sizeof(dir), &err) < 0 ||
	    relq_put_vars(dir, vals, t0, &err) < 0) {
		/* The hook queues it itself. */
		refuse(fd, err.text);
		say("epilog: %s", err.text);
		return;
	}
	sv->epilogs++;
	answer(fd, FWD_SVC_MAGIC " 0 A\n", sizeof(FWD_SVC_MAGIC " 0 A\n") - 1);
	start_drainer(sv);
}

static void handle_status(struct service *sv, int fd)
{
	struct ctl_launcher_stats s;
	char buf[1024];
	int n;

	ctl_launcher_stats(sv->st.L, &s);
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
		s.profile_reads, s.connects, sv->epilogs, sv->refused,
		sv->decide_ms, sv->decide_ms_max, s.ms_rows, s.ms_health,
		s.ms_tx, s.ms_publish);
	if (n > 0)
		answer(fd, buf, (size_t)n);
}

/*
 * Read the request on fd.  A prolog joins the batch (the fd stays open);
 * anything else is answered and closed.
 */
static void handle_request(struct service *sv, int fd)
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
		return; /* not yet: stays pending (caller's list) */
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		sv->refused++;
		say("refused a request from uid %ld: only root and this "
		    "account (uid %ld) may use the service",
		    (long)cred.uid, (long)geteuid());
		refuse(fd, "not root or the service's account");
		goto done;
	}
	if (got <= 0 || got > FWD_SVC_MSG_MAX) {
		sv->refused++;
		if (got != 0)
			refuse(fd, "request too long or unreadable");
		goto done;
	}
	msg[got] = '\0';
	if (strncmp(msg, FWD_SVC_MAGIC " ", sizeof(FWD_SVC_MAGIC)) ||
	    !(nl = memchr(msg, '\n', (size_t)got))) {
		sv->refused++;
		refuse(fd, "not a fwdalloc request");
		goto done;
	}
	*nl = '\0';
	op = msg[sizeof(FWD_SVC_MAGIC)];
	if (op != 'S' &&
	    (msg[sizeof(FWD_SVC_MAGIC) + 1] != ' ' ||
	     fwd_time_parse_epoch(msg + sizeof(FWD_SVC_MAGIC) + 2, &arg) < 0)) {
		sv->refused++;
		refuse(fd, "damaged request head");
		goto done;
	}
	if (op == 'S') {
		handle_status(sv, fd);
	} else if (op == 'E') {
		handle_epilog(sv, fd, arg, nl + 1,
			      (size_t)(msg + got - (nl + 1)));
	} else if (op == 'P' && sv->n_batch < BATCH_MAX) {
		/* The job is parsed when the batch is decided. */
		sv->batch[sv->n_batch].fd = fd;
		sv->batch[sv->n_batch].msg = msg;
		sv->batch[sv->n_batch].len = (size_t)got;
		sv->n_batch++;
		return;
	} else {
		sv->refused++;
		refuse(fd, op == 'P' ? "busy" : "unknown request");
	}
done:
	free(msg);
	close(fd);
}

/* Parse a batched prolog request into l.  0, or -1 (answered). */
static int parse_prolog(struct prolog_req *r, double now, struct ctl_launch *l)
{
	/* handle_request() checked the head and cut it at its '\n'. */
	const char *vars = r->msg + strlen(r->msg) + 1;
	const char *vals[CTL_JOB_N_VARS];
	double deadline = 0, m;
	fwd_error_t err;

	fwd_time_parse_epoch(r->msg + sizeof(FWD_SVC_MAGIC) + 2, &deadline);
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

static void decide_batch(struct service *sv)
{
	struct ctl_launch *ls = calloc(sv->n_batch, sizeof(*ls));
	struct ctl_outcome *outs = calloc(sv->n_batch, sizeof(*outs));
	int *fds = calloc(sv->n_batch, sizeof(*fds));
	double now = fwd_clock_real();
	size_t n = 0;

	if (!ls || !outs || !fds) {
		for (size_t i = 0; i < sv->n_batch; i++)
			refuse(sv->batch[i].fd, "out of memory");
		goto out;
	}
	state_refresh(&sv->st, sv->policy_path, got_hup);
	got_hup = 0;
	for (size_t i = 0; i < sv->n_batch; i++) {
		struct prolog_req *r = &sv->batch[i];

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
		double t = fwd_clock_real(), ms;

		ctl_launcher_prologs(sv->st.L, ls, n, outs);
		ms = (fwd_clock_real() - t) * 1e3;
		sv->decide_ms += ms;
		if (ms > sv->decide_ms_max)
			sv->decide_ms_max = ms;
	}
	for (size_t i = 0; i < n; i++) {
		answer_outcome(fds[i], &outs[i]);
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
out:
	for (size_t i = 0; i < sv->n_batch; i++) {
		close(sv->batch[i].fd);
		free(sv->batch[i].msg);
	}
	sv->n_batch = 0;
	free(ls);
	free(outs);
	free(fds);
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

		if (poll(&pf, 1, 0) > 0) {
			handle_request(sv, sv->conns[i].fd);
			continue;
		}
		if (now - sv->conns[i].since > IDLE_CLOSE) {
			close(sv->conns[i].fd);
			continue;
		}
		sv->conns[k++] = sv->conns[i];
	}
	sv->n_conns = k;
}

static int serve(struct service *sv)
{
	struct pollfd *pfs = calloc(PENDING_MAX + 1, sizeof(*pfs));

	if (!pfs || !(sv->conns = calloc(PENDING_MAX, sizeof(*sv->conns)))) {
		say("%s", strerror(errno));
		free(pfs);
		return 1;
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
		reap(sv);
		if (got_hup && !sv->n_batch) {
			state_refresh(&sv->st, sv->policy_path, true);
			got_hup = 0;
		}
		/* Everything that has arrived, then one batch of the
		 * prologs among it: prologs that arrive while a batch is
		 * being decided make the next batch. */
		accept_all(sv);
		read_pending(sv);
		if (sv->n_batch)
			decide_batch(sv);
	}
	for (size_t i = 0; i < sv->n_conns; i++)
		close(sv->conns[i].fd);
	free(sv->conns);
	free(pfs);
	return 0;
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
