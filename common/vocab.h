/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_VOCAB_H
#define FWD_COMMON_VOCAB_H

#include <stdint.h>

/*
 * The words fwdalloc speaks everywhere: in the policy, the decision JSON,
 * the database, the audit trail and on the command line.  Each word has one
 * enum and one spelling, defined here only.  A name function returns "?"
 * for a value out of range; a parse function returns -1 with errno EINVAL
 * for a word it does not know.
 */

/* A job's dominant I/O mode by volume (Beacon): "none" when it did no
 * data I/O or nothing is known of it. */
enum fwd_io_mode {
	FWD_IO_NONE = 0,
	FWD_IO_N_N, /* "N-N": a file per process */
	FWD_IO_N_1, /* "N-1": one shared file */
	FWD_IO_N_M, /* "N-M": N processes, M files */
	FWD_IO_1_1, /* "1-1": one process does the I/O */
};
#define FWD_IO_MODES 5

/* What the decision did for a job. */
enum fwd_action {
	FWD_ACT_DEFAULT = 0,
	FWD_ACT_SCALE,
	FWD_ACT_ISOLATE,
	FWD_ACT_AVOID_ANOMALY,
	FWD_ACT_SHADOW,
	FWD_ACT_REFUSED,
	FWD_ACT_DIRECT, /* no forwarder: direct file-system access */
};

/* What the user asked with --io-upgrade[=MODE]; "none" is no request. */
enum fwd_request {
	FWD_REQ_NONE = 0,
	FWD_REQ_AUTO,
	FWD_REQ_SCALE,
	FWD_REQ_ISOLATE,
	FWD_REQ_OFF,
	FWD_REQ_SHADOW,
};

/* A forwarder's or OST's health. */
enum fwd_health {
	FWD_HEALTH_OK = 0,
	FWD_HEALTH_SUSPECT,
	FWD_HEALTH_EXCLUDED,
};

const char *fwd_io_mode_name(enum fwd_io_mode m);
/* Also accepts "unknown", the spelling of earlier versions, for "none". */
int fwd_io_mode_parse(const char *s, enum fwd_io_mode *out);

const char *fwd_action_name(enum fwd_action a);
int fwd_action_parse(const char *s, enum fwd_action *out);

const char *fwd_request_name(enum fwd_request r);
/* A value one can ask for: "none" (no request) is refused. */
int fwd_request_parse(const char *s, enum fwd_request *out);
/* "auto, scale, isolate, off, shadow", for messages and --help. */
const char *fwd_request_choices(void);

const char *fwd_health_name(enum fwd_health s);
int fwd_health_parse(const char *s, enum fwd_health *out);

/*
 * A Slurm job id, the one form every command, hook and file name takes:
 * 1 to 4294967295 in decimal digits, nothing else (no sign, space, leading
 * zero, exponent or suffix).  0, or -1 with errno EINVAL.
 */
#define FWD_JOB_ID_RANGE "1..4294967295"
int fwd_job_id_parse(const char *s, uint32_t *out);

#endif
