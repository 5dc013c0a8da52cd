/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_SERVICE_PROTOCOL_H
#define FWD_SERVICE_PROTOCOL_H

/*
 * What slurmctld's hooks (prolog-slurmctld, epilog-slurmctld) and the
 * controller service (fwdallocd) say to each other, over a local
 * SOCK_SEQPACKET socket: one message each way per connection.
 *
 * Request: a head line, then the job's variables (controller/job_vars.h),
 * each "NAME=VALUE" and NUL-terminated:
 *   "FWDALLOC1 P <deadline>\n"  the prolog; <deadline>: the epoch time,
 *                                in seconds, after which the hook no
 *                                longer waits for the answer
 *   "FWDALLOC1 E <t0>\n"        the epilog; <t0>: when the hook started
 *   "FWDALLOC1 S\n"             the service's counters (no variables)
 *
 * A user's report request goes to the other socket, the query socket
 * (mode 0666: any local user may connect; the hooks' socket stays 0600),
 * which takes nothing else (service/query.h):
 *   "FWDALLOC1 Q job <jobid> <fmt>\n<credential>"
 *   "FWDALLOC1 Q machine <since> <until> <fmt>\n<credential>"
 *                                <fmt>: text, json or html; <since>,
 *                                <until>: epoch seconds; <credential>: a
 *                                MUNGE credential (munge_encode(), base64)
 *                                whose payload is the head line without
 *                                its '\n', so that it stands for this
 *                                request only (munged refuses it a second
 *                                time: EMUNGE_CRED_REPLAYED)
 * The compute nodes' releases (policy `release.port`: spank/SLURM.md,
 * step 5) come over TCP to that port, which takes nothing else:
 *   "<credential>\n"             a MUNGE credential (munge_encode(),
 *                                base64) made by root on the job's first
 *                                node, whose payload is an epilog request
 *                                as above ("FWDALLOC1 E <t0>\n" and the
 *                                job's variables, from the node epilog's
 *                                environment); at most FWD_SVC_NODE_MAX
 *                                bytes; answered as the hooks' epilog
 * Answer:
 *   "FWDALLOC1 <exit> <A|F>\n"  then the operator's notes, one per line:
 *                                the hook's exit status (1 only for a
 *                                prolog that falls back under
 *                                access.fail: closed), A = decided or
 *                                queued, F = fell back
 *   "FWDALLOC1 R <why>\n"       refused (a caller that is neither the
 *                                service's account nor root, a damaged
 *                                request): the hook does the work itself
 *   "FWDALLOC1 0 A <bytes>\n"   a report request answered: the report,
 *                                <bytes> long, follows the head in the
 *                                same message and as many more as it
 *                                takes (each at most FWD_SVC_MSG_MAX
 *                                bytes; SOCK_SEQPACKET keeps them in order)
 * Plain C, no other header: the static hook programs use it too.
 */

#define FWD_SVC_MAGIC "FWDALLOC1"

/* The longest message either way, in bytes: the job's variables, each cut
 * by Slurm's own limits, fit many times over.  A job whose variables do
 * not fit is decided by the hook itself. */
#define FWD_SVC_MSG_MAX 65536

/* The longest report request: its head and a credential whose payload is
 * that head (a few hundred bytes). */
#define FWD_SVC_QUERY_MAX 4096

/* The longest release a node sends: its credential and '\n'.  Its
 * payload, the job's variables from a node epilog's environment, takes a
 * few hundred bytes; a node list of the longest job a few thousand. */
#define FWD_SVC_NODE_MAX 32768

#endif
