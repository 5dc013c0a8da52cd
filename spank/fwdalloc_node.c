/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * This node's part of a job's decision, read with the read-only node
 * database account through the node_allocations_for procedure, which
 * returns only held rows and is all that account may use: it can read no
 * table, so it can lock none (db/SCHEMA.md).  The epilog's revert reads
 * nothing: the remap driver keeps what it applied per job, so it still works
 * after EpilogSlurmctld has released the rows.  Kept apart from the SPANK
 * callbacks so that the benchmark can time exactly what the job prolog does.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>

#include "db/db.h"
#include "policies/policy.h"
#include "spank/fwdalloc.h"

static bool node_in(const char *hostlist, const char *node)
{
	hostlist_t hl;
	bool in;

	if (!hostlist || !(hl = slurm_hostlist_create(hostlist)))
		return false;
	in = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return in;
}

int fwdalloc_node_decision(const struct policy *p, uint32_t job_id,
			   const char *node, struct fwdalloc_node_decision *nd,
			   fwd_error_t *err)
{
	struct db *db;
	struct db_stmt *st = NULL;
	int rv = -1, r, rows = 0;

	memset(nd, 0, sizeof(*nd));
	if (!(db = db_connect(&p->database, DB_ROLE_NODE, err)))
		return -1;
	/* Columns: forwarder, nodes, action, address. */
	st = db_prepare(db, "CALL node_allocations_for(?)", err);
	if (!st)
		goto out;
	db_bind_uint64(st, 0, job_id);
	if (db_exec(st, err) < 0)
		goto out;
	while ((r = db_fetch(st, err)) > 0) {
		const char *addr = db_col_text(st, 3);
		size_t n = nd->n;

		rows++;
		snprintf(nd->action, sizeof(nd->action), "%s",
			 db_col_text(st, 2) ? db_col_text(st, 2) : "");
		if (!node_in(db_col_text(st, 1), node) ||
		    n >= FWDALLOC_MAX_TARGETS)
			continue;
		snprintf(nd->names[n], sizeof(nd->names[0]), "%s",
			 db_col_text(st, 0));
		nd->t[n].name = nd->names[n];
		if (addr && *addr) {
			snprintf(nd->addrs[n], sizeof(nd->addrs[0]), "%s",
				 addr);
			nd->t[n].address = nd->addrs[n];
		}
		nd->n++;
	}
	if (r < 0)
		goto out;
	rv = rows > 0;
out:
	db_stmt_close(st);
	db_close(db);
	return rv;
}

void fwdalloc_node_names(const struct fwdalloc_node_decision *nd, char *buf,
			 size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nd->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? "," : "", nd->names[i]);
}
