/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_AUDIT_H
#define FWD_CONTROLLER_AUDIT_H

/*
 * The audit trail's file half: one JSON object per line, appended with a
 * single write(2) on an O_APPEND descriptor, so records from concurrent
 * controller prologs never interleave or overwrite each other (the kernel
 * positions every O_APPEND write at the end of the file under the inode
 * lock).  The same record goes to the database's audit table.
 *
 * Record fields (DESIGN.md "Audit"):
 *   time (ISO-8601 UTC, ms), job_id, user, account, partition, name,
 *   nodes, request ("scale", ..., "not requested"), action, reasons[],
 *   forwarders_before[], forwarders_after[], mapping[{nodes,forwarder}],
 *   inputs (the profile used, or null), outcome ("applied", "shadow",
 *   "default", "released", "fallback: <error>"), policy_digest,
 *   elapsed_us, event ("prolog", "epilog", "reconcile").
 */

#include <stddef.h>

#include <jansson.h>

#include "common/error.h"

/*
 * Append `record` (serialised compactly, plus '\n') to `path`, creating
 * the file (0640) and its directory (0750) when missing.  One write(2); a
 * short write is an error (EIO).  0, or -1 with errno and err.
 */
int audit_append(const char *path, const json_t *record, fwd_error_t *err);

/* Same for an already serialised line without its '\n'. */
int audit_append_line(const char *path, const char *line, fwd_error_t *err);

/* "2026-11-22T02:30:00.123Z" for `t` (epoch seconds) into buf (>= 32). */
void audit_time(double t, char *buf, size_t len);

#endif
