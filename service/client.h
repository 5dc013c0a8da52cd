/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SERVICE_CLIENT_H
#define FWD_SERVICE_CLIENT_H

/*
 * The hooks' half of service/protocol.h, for the static programs slurmctld
 * runs (no library beyond libc).
 */

#include <stddef.h>

enum svc_result {
	SVC_ANSWERED, /* *answer holds the service's answer */
	SVC_ABSENT,   /* no service listens there (or it may not be used) */
	SVC_TIMEOUT,  /* the service took the request and did not answer */
	SVC_BROKEN    /* anything else: a short or damaged answer, ... */
};

/* The current epoch time, in seconds. */
double svc_now(void);

/*
 * Request `op` ('P', 'E' or 'S') with `arg` in its head and, but for 'S',
 * the job's variables (controller/job_vars.h) as get(name) gives them
 * (NULL: unset), into buf (n bytes).  Its length, or 0 when it does not
 * fit.
 */
size_t svc_request(char op, double arg, const char *(*get)(const char *),
		   char *buf, size_t n);

/*
 * Send request `op` ('P', 'E' or 'S') with `arg` in its head (the
 * prolog's deadline, the epilog's start time; ignored for 'S') and, but
 * for 'S', the job's variables from the environment, to the service
 * listening at `path`; wait for the answer until the epoch time
 * `deadline`.  The answer, NUL-terminated, goes to answer (n bytes).  On
 * anything but SVC_ANSWERED, why (whyn bytes) says what happened.
 */
enum svc_result svc_call(const char *path, char op, double arg, double deadline,
			 char *answer, size_t n, char *why, size_t whyn);

#endif
