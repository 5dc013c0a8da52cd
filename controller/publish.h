/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CONTROLLER_PUBLISH_H
#define FWD_CONTROLLER_PUBLISH_H

/*
 * The job's decision, published once for its node prologs (policy key
 * remap.decision_dir, a directory the site shares between the controller
 * and the compute nodes).  Without it every node prolog opens a database
 * connection of its own, and a job of thousands of nodes opens thousands
 * within a second (MariaDB's default max_connections is 151).
 *
 *   <dir>/<job>.decision   written by PrologSlurmctld after the decision
 *                          committed, atomically (temporary file,
 *                          rename), mode 0644, owned by SlurmUser; a file
 *                          the database cannot stand in for (direct,
 *                          fallback) is fsync'd before the rename, one
 *                          of the database's rows is not (the commit
 *                          made them durable; a controller crash can
 *                          leave at most an empty file, which a node
 *                          reads as none):
 *     {"version":1,"job":<job>,"rows":[{"forwarder":..,"nodes":..,
 *      "action":..,"address":..|null},...],"digest":"<sha256 hex>"}
 *                          rows are the job's held allocation rows as the
 *                          node account's node_allocations_for returns
 *                          them (same columns, same order; built from
 *                          the decision that wrote them, the addresses
 *                          from the topology it used), or, for
 *                          action direct (no forwarder, no allocation
 *                          row), one row {"forwarder":null,"nodes":<the
 *                          job's nodes>,"action":"direct","address":null}
 *                          (the database cannot say direct: a node that
 *                          finds no file keeps its default mapping, so
 *                          the policy allows direct with a driver that
 *                          changes nodes only with this directory), or,
 *                          when the prolog fell back, one such row of
 *                          action "fallback" (ctl_publish_fallback());
 *                          digest is the SHA-256 of the rows' compact
 *                          JSON (fwd_decision_rows_dump()).  Removed
 *                          when the prolog's worker falls back, replaced
 *                          by the fallback file once the hook's answer
 *                          is a fallback (a requeued job's earlier file
 *                          is never applied), and removed by
 *                          EpilogSlurmctld.
 *   <dir>/<job>.applied    one line "<node> <action>\n" per node prolog
 *                          that did what the decision says (applied it,
 *                          or had nothing to apply), appended the same
 *                          way; with the fallbacks, EpilogSlurmctld tells
 *                          the job's nodes whose prolog never reported
 *                          ("node_outcomes", ctl_publish_collect()).
 *   <dir>/<job>.fallbacks  one line "<node> <why>\n" per node prolog that
 *                          kept its default mapping, appended with a
 *                          single O_APPEND write; EpilogSlurmctld counts
 *                          them into the job's audit record
 *                          ("node_fallbacks": {"count": N, "nodes": [..]})
 *                          and removes the file.
 *
 * The node side (spank/fwdalloc_node.c) reads the decision file without
 * following links, size-limited, and parses it strictly; a missing file
 * sends it to the database, and so does an empty one (all that a crash
 * can leave of a file renamed before its data reached the disk); a
 * damaged one keeps the node's defaults.
 */

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

#include "common/error.h"

#define FWD_DECISION_VERSION 1
#define FWD_DECISION_SUFFIX ".decision"
#define FWD_FALLBACK_SUFFIX ".fallbacks"
#define FWD_APPLIED_SUFFIX ".applied"
/* The action of the decision file's row when the controller fell back. */
#define FWD_ACTION_FALLBACK "fallback"
/* Largest decision file a node accepts (an 8,192-node job with
 * scattered nodes has hostlists of some 100 KB). */
#define FWD_DECISION_MAX_BYTES (4u << 20)
/* Most rows a decision file may hold. */
#define FWD_DECISION_MAX_ROWS 4096
/* One fallback line, newline included, and the most the epilog reads. */
#define FWD_FALLBACK_LINE_MAX 256
#define FWD_FALLBACK_MAX_BYTES (4u << 20)
/* Node names the audit record lists (the count is always exact). */
#define FWD_FALLBACK_MAX_NODES 256

/* The canonical text the digest covers: json_dumps(rows, JSON_COMPACT |
 * JSON_PRESERVE_ORDER).  Both sides call it with the same jansson. */
#define fwd_decision_rows_dump(rows) \
	json_dumps((rows), JSON_COMPACT | JSON_PRESERVE_ORDER)

struct alloc_decision;
struct db;
struct ledger_alloc_row;
struct policy;
struct ctl_job;
struct topology;

/*
 * The decision d wrote its rows (n of them, built with topology t) in the
 * transaction that committed (ledger_store_write()): the file carries
 * them, where the database would have to be asked for them (one round
 * trip a job).  Their addresses are t's, which `fwdctl db init` copies
 * into forwarders for the database's readers.
 */
struct ctl_pub_written {
	const struct topology *t;
	const struct alloc_decision *d;
	const struct ledger_alloc_row *rows;
	size_t n;
};

/*
 * After the decision committed: publish the job's held rows, those w
 * wrote or, with w NULL (a requeued job that kept its rows), those read
 * with the controller's connection (direct: the direct row).  Nothing to
 * do (0) without remap.decision_dir.  On failure the file is removed (the
 * node prologs then read the database) and -1 is returned with err.
 */
int ctl_publish_decision(struct db *db, const struct policy *p,
			 const struct ctl_job *j, bool direct,
			 const struct ctl_pub_written *w, fwd_error_t *err);

/*
 * ctl_publish_decision() in two steps, for a batch of jobs: prepare writes
 * each file under a temporary name, finish syncs it and renames it into
 * place.  Finishing the batch's files after all are written costs the
 * file system one journal commit instead of one a job, and only for the
 * files that are synced (see <dir>/<job>.decision).  A prepared file
 * must be finished (its descriptor stays open until then); on failure of
 * either step nothing is left and -1 is returned with err.
 */
struct ctl_pub {
	int fd;	   /* -1: nothing to finish */
	bool sync; /* fsync before the rename: no database row stands in */
	char tmp[PATH_MAX], path[PATH_MAX];
};
int ctl_publish_prepare(struct db *db, const struct policy *p,
			const struct ctl_job *j, bool direct,
			const struct ctl_pub_written *w, struct ctl_pub *pb,
			fwd_error_t *err);
int ctl_publish_finish(const struct policy *p, const struct ctl_job *j,
		       struct ctl_pub *pb, fwd_error_t *err);

/* The prolog fell back: remove any decision file of the job (one left by
 * an earlier run of a requeued job must not be applied). */
void ctl_publish_withdraw(const struct policy *p, const struct ctl_job *j);

/*
 * The prolog fell back, whatever the cause: publish that, so that the
 * job's node prologs keep their defaults without asking the database and
 * tell the job FWDALLOC_ACTION=fallback: the decision file holds one row
 * {"forwarder":null,"nodes":<the job's nodes>,"action":"fallback",
 * "address":null}.  Nothing to do (0) without remap.decision_dir or
 * without the job's nodes.  On failure no file is left (the nodes then
 * ask the database, which holds no row for the job, and say default) and
 * -1 is returned with err.
 */
int ctl_publish_fallback(const struct policy *p, const struct ctl_job *j,
			 fwd_error_t *err);

/*
 * The epilog: add "node_fallbacks": {"count": N, "nodes": [...]} to rec
 * from the job's fallback file and remove the job's files.  Nothing to do
 * without remap.decision_dir.
 */
void ctl_publish_collect(const struct policy *p, const struct ctl_job *j,
			 json_t *rec);

#endif
