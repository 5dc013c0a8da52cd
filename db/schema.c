/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database schema as a list of numbered migrations.
 *
 * Each migration is a list of DDL statements written to be re-runnable
 * (IF NOT EXISTS everywhere): MariaDB commits DDL implicitly, so a
 * migration interrupted half-way is finished by running it again, and its
 * number is recorded in schema_version only once all of its statements
 * succeeded.  Never edit a released migration; append a new one.
 * db/SCHEMA.md documents every table and column.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "db/schema.h"

#define TABLE_OPTS " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"

/* clang-format off */
static const char *const v1_stmts[] = {
	"CREATE TABLE IF NOT EXISTS forwarders ("
	" name VARCHAR(64) NOT NULL,"
	" address VARCHAR(255) NULL,"
	" net_group VARCHAR(64) NOT NULL DEFAULT '',"
	" role ENUM('service','backup') NOT NULL DEFAULT 'service',"
	" bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" last_used_at BIGINT NULL,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (name)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS osts ("
	" name VARCHAR(128) NOT NULL,"
	" kind ENUM('ost','mdt') NOT NULL DEFAULT 'ost',"
	" bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (name)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS jobs ("
	" job_id BIGINT UNSIGNED NOT NULL,"
	" user VARCHAR(64) NOT NULL,"
	" account VARCHAR(64) NULL,"
	" name VARCHAR(255) NOT NULL DEFAULT '',"
	" partition_name VARCHAR(64) NULL,"
	" nodelist TEXT NULL,"
	" node_count INT UNSIGNED NOT NULL DEFAULT 0,"
	" submit_at BIGINT NULL,"
	" start_at BIGINT NULL,"
	" end_at BIGINT NULL,"
	" state VARCHAR(32) NOT NULL DEFAULT 'UNKNOWN',"
	" request VARCHAR(16) NULL,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (job_id),"
	" KEY jobs_app (user, name, node_count, end_at),"
	" KEY jobs_end (end_at),"
	" KEY jobs_state (state)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS job_io ("
	" job_id BIGINT UNSIGNED NOT NULL,"
	" read_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" io_nodes INT UNSIGNED NOT NULL DEFAULT 0,"
	" procs INT UNSIGNED NOT NULL DEFAULT 0,"
	" io_mode ENUM('N-N','N-1','N-M','1-1','none') NOT NULL"
	"  DEFAULT 'none',"
	" node_bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" peak_bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" iops DOUBLE NOT NULL DEFAULT 0,"
	" mdops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" mdops_rate DOUBLE NOT NULL DEFAULT 0,"
	" metadata_queue DOUBLE NOT NULL DEFAULT 0,"
	" forwarders_held INT UNSIGNED NOT NULL DEFAULT 0,"
	" bandwidth_achieved_bps DOUBLE NOT NULL DEFAULT 0,"
	" runtime DOUBLE NOT NULL DEFAULT 0,"
	" phases JSON NULL,"
	" source ENUM('traces','jobstats') NOT NULL,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (job_id)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS profiles ("
	" profile_key VARCHAR(512) NOT NULL,"
	" user VARCHAR(64) NULL,"
	" account VARCHAR(64) NULL,"
	" name VARCHAR(255) NULL,"
	" partition_name VARCHAR(64) NULL,"
	" node_bucket INT UNSIGNED NULL,"
	" runs INT UNSIGNED NOT NULL DEFAULT 0,"
	" read_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" io_nodes INT UNSIGNED NOT NULL DEFAULT 0,"
	" io_mode ENUM('N-N','N-1','N-M','1-1','none') NOT NULL"
	"  DEFAULT 'none',"
	" node_bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" peak_bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" iops DOUBLE NOT NULL DEFAULT 0,"
	" mdops_rate DOUBLE NOT NULL DEFAULT 0,"
	" metadata_queue DOUBLE NOT NULL DEFAULT 0,"
	" runtime DOUBLE NOT NULL DEFAULT 0,"
	" figures JSON NULL,"
	" bandwidth_by_forwarders JSON NULL,"
	" last_job_id BIGINT UNSIGNED NULL,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (profile_key),"
	" KEY profiles_app (user, name, node_bucket)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS samples_raw ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" ts BIGINT NOT NULL,"
	" dt DOUBLE NULL,"
	" read_bytes BIGINT UNSIGNED NULL,"
	" write_bytes BIGINT UNSIGNED NULL,"
	" read_ops BIGINT UNSIGNED NULL,"
	" write_ops BIGINT UNSIGNED NULL,"
	" md_ops BIGINT UNSIGNED NULL,"
	" queue_len DOUBLE NULL,"
	" PRIMARY KEY (kind, name, ts),"
	" KEY samples_raw_ts (ts)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS samples_hist ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" ts BIGINT NOT NULL,"
	" op ENUM('meta','read','write') NOT NULL,"
	" phase ENUM('exe','wait') NOT NULL,"
	" dt DOUBLE NOT NULL,"
	" b0 BIGINT UNSIGNED NOT NULL, b1 BIGINT UNSIGNED NOT NULL,"
	" b2 BIGINT UNSIGNED NOT NULL, b3 BIGINT UNSIGNED NOT NULL,"
	" b4 BIGINT UNSIGNED NOT NULL, b5 BIGINT UNSIGNED NOT NULL,"
	" b6 BIGINT UNSIGNED NOT NULL, b7 BIGINT UNSIGNED NOT NULL,"
	" PRIMARY KEY (kind, name, ts, op, phase),"
	" KEY samples_hist_ts (ts)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS rollups_minute ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" minute BIGINT NOT NULL,"
	" samples INT UNSIGNED NOT NULL,"
	" read_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" read_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" md_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" read_bps_max DOUBLE NULL,"
	" write_bps_max DOUBLE NULL,"
	" queue_len_avg DOUBLE NULL,"
	" queue_len_max DOUBLE NULL,"
	" PRIMARY KEY (kind, name, minute),"
	" KEY rollups_minute_minute (minute)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS rollups_hist_minute ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" minute BIGINT NOT NULL,"
	" op ENUM('meta','read','write') NOT NULL,"
	" phase ENUM('exe','wait') NOT NULL,"
	" b0 BIGINT UNSIGNED NOT NULL, b1 BIGINT UNSIGNED NOT NULL,"
	" b2 BIGINT UNSIGNED NOT NULL, b3 BIGINT UNSIGNED NOT NULL,"
	" b4 BIGINT UNSIGNED NOT NULL, b5 BIGINT UNSIGNED NOT NULL,"
	" b6 BIGINT UNSIGNED NOT NULL, b7 BIGINT UNSIGNED NOT NULL,"
	" PRIMARY KEY (kind, name, minute, op, phase),"
	" KEY rollups_hist_minute_minute (minute)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS jobstats_raw ("
	" kind ENUM('ost','mdt') NOT NULL,"
	" target VARCHAR(128) NOT NULL,"
	" lustre_job_id VARCHAR(255) NOT NULL,"
	" job_id BIGINT UNSIGNED NULL,"
	" ts BIGINT NOT NULL,"
	" op VARCHAR(32) NOT NULL,"
	" samples BIGINT UNSIGNED NOT NULL,"
	" unit VARCHAR(16) NOT NULL DEFAULT '',"
	" min_value BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" max_value BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" sum_value BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" PRIMARY KEY (target, lustre_job_id, ts, op),"
	" KEY jobstats_raw_job (job_id),"
	" KEY jobstats_raw_ts (ts)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS counter_state ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" metric VARCHAR(32) NOT NULL,"
	" ts BIGINT NOT NULL,"
	" v0 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v1 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v2 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v3 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v4 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v5 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v6 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" v7 BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" PRIMARY KEY (kind, name, metric)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS health ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" state ENUM('ok','suspect','excluded') NOT NULL DEFAULT 'ok',"
	" since BIGINT NOT NULL,"
	" reason TEXT NULL,"
	" source ENUM('scanner','admin') NOT NULL DEFAULT 'scanner',"
	" bad_windows INT UNSIGNED NOT NULL DEFAULT 0,"
	" good_windows INT UNSIGNED NOT NULL DEFAULT 0,"
	" last_scan_at BIGINT NULL,"
	" updated_at BIGINT NOT NULL,"
	" PRIMARY KEY (kind, name),"
	" KEY health_state (state)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS health_history ("
	" id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" state ENUM('ok','suspect','excluded') NOT NULL,"
	" start_at BIGINT NOT NULL,"
	" end_at BIGINT NULL,"
	" duration DOUBLE NULL,"
	" reason TEXT NULL,"
	" source ENUM('scanner','admin') NOT NULL DEFAULT 'scanner',"
	" PRIMARY KEY (id),"
	" KEY health_history_comp (kind, name, start_at),"
	" KEY health_history_start (start_at)"
	")" TABLE_OPTS,

	/*
	 * private_holder is set only while a private allocation is held; the
	 * unique key on it makes the database itself refuse a second holder
	 * of the same private forwarder, whatever the allocator's locking.
	 */
	"CREATE TABLE IF NOT EXISTS allocations ("
	" id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
	" job_id BIGINT UNSIGNED NOT NULL,"
	" forwarder VARCHAR(64) NOT NULL,"
	" is_private TINYINT(1) NOT NULL DEFAULT 0,"
	" nodes TEXT NOT NULL,"
	" node_count INT UNSIGNED NOT NULL DEFAULT 0,"
	" action VARCHAR(16) NOT NULL,"
	" acquired_at BIGINT NOT NULL,"
	" released_at BIGINT NULL,"
	" release_reason VARCHAR(64) NULL,"
	" io_mode ENUM('N-N','N-1','N-M','1-1','none') NOT NULL"
	"  DEFAULT 'none',"
	" mdops_rate DOUBLE NOT NULL DEFAULT 0,"
	" bandwidth_bps DOUBLE NOT NULL DEFAULT 0,"
	" iops DOUBLE NOT NULL DEFAULT 0,"
	" private_holder VARCHAR(64) AS"
	"  (IF(is_private <> 0 AND released_at IS NULL, forwarder, NULL))"
	"  PERSISTENT,"
	" PRIMARY KEY (id),"
	" UNIQUE KEY allocations_private (private_holder),"
	" KEY allocations_job (job_id, released_at),"
	" KEY allocations_fwd (forwarder, released_at)"
	")" TABLE_OPTS,

	"CREATE TABLE IF NOT EXISTS audit ("
	" id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,"
	" ts BIGINT NOT NULL,"
	" job_id BIGINT UNSIGNED NOT NULL,"
	" user VARCHAR(64) NULL,"
	" account VARCHAR(64) NULL,"
	" request VARCHAR(16) NULL,"
	" action VARCHAR(16) NOT NULL,"
	" reasons JSON NULL,"
	" inputs JSON NULL,"
	" forwarders_before JSON NULL,"
	" forwarders_after JSON NULL,"
	" outcome VARCHAR(255) NOT NULL,"
	" elapsed_us BIGINT NOT NULL DEFAULT 0,"
	" record JSON NULL,"
	" PRIMARY KEY (id),"
	" KEY audit_job (job_id),"
	" KEY audit_ts (ts),"
	" KEY audit_user (user, ts)"
	")" TABLE_OPTS,
};
/* clang-format on */

/*
 * The node account's whole window on the database (DESIGN.md: node prologs
 * read only the allocation rows they need): held rows only, and only the
 * columns fwdalloc_node.c reads.  SQL SECURITY DEFINER runs it with the
 * rights of its definer, the controller account that ran `fwdctl db
 * init/migrate`, so the node account needs SELECT on the view alone.
 * MERGE keeps `WHERE job_id = ?` on the allocations_job index.
 */
/* clang-format off */
static const char *const v2_stmts[] = {
	"CREATE OR REPLACE ALGORITHM=MERGE SQL SECURITY DEFINER"
	" VIEW node_allocations AS"
	" SELECT a.id AS id, a.job_id AS job_id, a.nodes AS nodes,"
	" a.action AS action, a.forwarder AS forwarder,"
	" f.address AS address"
	" FROM allocations a LEFT JOIN forwarders f ON f.name = a.forwarder"
	" WHERE a.released_at IS NULL",
};
/* clang-format on */

/*
 * Locks only the controller can hold.
 *
 * decision_lock (controller/ledger_store.c): one row; every decision and
 * every reconcile starts its transaction with `SELECT ... FOR UPDATE` on
 * it (db_begin_locked()).  health_lock (monitor/health_db.c): the same
 * for the health scan and the health admin overrides.  Named locks
 * (GET_LOCK), used before, can be taken by any account, the node account
 * too; these rows only by accounts that may read the tables, and the node
 * account may not.
 *
 * node_allocations_for (called by spank/fwdalloc_node.c): the node
 * account's only privilege, EXECUTE, instead of SELECT on the view, which
 * also allowed `SELECT ... FOR UPDATE` (holding the ledger's rows and gaps
 * against the epilog's release and the prolog's insert).  It runs with its
 * definer's rights (the controller account that ran the migration) and
 * returns a job's held rows, the columns node prologs read.  Its SELECT is
 * a plain consistent read; a plain read locks under SERIALIZABLE with
 * autocommit off, and any read's locks last as long as the caller's
 * transaction, so it refuses to run inside a transaction.
 */
/* clang-format off */
static const char *const v3_stmts[] = {
	"CREATE TABLE IF NOT EXISTS decision_lock ("
	" id TINYINT UNSIGNED NOT NULL,"
	" PRIMARY KEY (id)"
	")" TABLE_OPTS,

	"INSERT IGNORE INTO decision_lock (id) VALUES (1)",

	"CREATE TABLE IF NOT EXISTS health_lock ("
	" id TINYINT UNSIGNED NOT NULL,"
	" PRIMARY KEY (id)"
	")" TABLE_OPTS,

	"INSERT IGNORE INTO health_lock (id) VALUES (1)",

	"CREATE OR REPLACE PROCEDURE node_allocations_for("
	"IN p_job_id BIGINT UNSIGNED)"
	" READS SQL DATA SQL SECURITY DEFINER"
	" BEGIN"
	"  IF @@autocommit = 0 OR @@in_transaction = 1 THEN"
	"   SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT ="
	"    'node_allocations_for: call it with autocommit on,"
	" outside a transaction';"
	"  END IF;"
	"  SELECT forwarder, nodes, action, address FROM node_allocations"
	"   WHERE job_id = p_job_id ORDER BY id;"
	" END",
};

/* Job summaries from every source the history loop uses, and when the
 * loop last refreshed the job's profile from its summary. */
static const char *const v4_stmts[] = {
	"ALTER TABLE job_io MODIFY source"
	" ENUM('traces','jobstats','darshan','forwarders','sacct') NOT NULL",
	"ALTER TABLE job_io ADD COLUMN IF NOT EXISTS profiled_at BIGINT NULL",
};
/* clang-format on */

/*
 * History never slows a launch (controller/ledger_store.c): the ledger
 * reads only held rows, `released_at IS NULL`, in job order; this index
 * serves them (NULL sorts first, the primary key id follows job_id in
 * every InnoDB secondary index) and the retention's
 * `released_at < cutoff` deletes.  jobs.end_at, audit.ts already have
 * theirs; job_io and profiles get one on updated_at for retention.
 */
/* clang-format off */
static const char *const v5_stmts[] = {
	"CREATE INDEX IF NOT EXISTS allocations_held"
	" ON allocations (released_at, job_id)",
	"CREATE INDEX IF NOT EXISTS job_io_updated ON job_io (updated_at)",
	"CREATE INDEX IF NOT EXISTS profiles_updated"
	" ON profiles (updated_at)",
};
/* clang-format on */

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/* clang-format off */
/* Whether the forwarders a run had were its own (the curve rule counts
 * private runs first at each k: DESIGN.md "The decision" step 7). */
static const char *const v6_stmts[] = {
	"ALTER TABLE job_io ADD COLUMN IF NOT EXISTS forwarders_private"
	" TINYINT(1) NOT NULL DEFAULT 0",
};
/*
 * Rollups kept by addition (monitor/ingest_rollup.c): the sum and the
 * number of the queue lengths behind queue_len_avg, so a batch of new
 * rows adds to a minute's average exactly.  Rows from before have their
 * average times their samples (every sample then had a queue length, as
 * forwarders' samples do).  ingest_horizon: the time before which a prune
 * may have removed raw rows; those minutes are always recomputed.
 * ingest_lock: one row every ingest transaction holds (two ingests
 * would otherwise deadlock: one's locking read of raw rows to recompute a
 * minute against the other's new rows).
 * ingest_arrivals: the times of the forwarder samples and job_stats an
 * ingest wrote since the history loop last looked; history_examined: the
 * jobs that loop found without statistics, and when (it looks at them
 * again when statistics of their run arrive, or history_loop.late
 * later).
 */
static const char *const v7_stmts[] = {
	"ALTER TABLE rollups_minute"
	" ADD COLUMN IF NOT EXISTS queue_len_sum DOUBLE NULL,"
	" ADD COLUMN IF NOT EXISTS queue_len_samples INT UNSIGNED NOT NULL"
	" DEFAULT 0",
	"UPDATE rollups_minute SET queue_len_samples = samples,"
	" queue_len_sum = queue_len_avg * samples"
	" WHERE queue_len_avg IS NOT NULL AND queue_len_samples = 0",
	"CREATE TABLE IF NOT EXISTS ingest_horizon ("
	" id TINYINT UNSIGNED NOT NULL,"
	" before_ts BIGINT NOT NULL,"
	" PRIMARY KEY (id)"
	")" TABLE_OPTS,
	"CREATE TABLE IF NOT EXISTS ingest_arrivals ("
	" source VARCHAR(16) NOT NULL,"
	" min_ts BIGINT NOT NULL,"
	" max_ts BIGINT NOT NULL,"
	" PRIMARY KEY (source)"
	")" TABLE_OPTS,
	"CREATE TABLE IF NOT EXISTS ingest_lock ("
	" id TINYINT UNSIGNED NOT NULL,"
	" PRIMARY KEY (id)"
	")" TABLE_OPTS,
	"INSERT IGNORE INTO ingest_lock (id) VALUES (1)",
	"CREATE TABLE IF NOT EXISTS history_examined ("
	" job_id BIGINT UNSIGNED NOT NULL,"
	" examined_at BIGINT NOT NULL,"
	" PRIMARY KEY (job_id),"
	" KEY history_examined_at (examined_at)"
	")" TABLE_OPTS,
};
/* A run without forwarders by decision (action direct): its achieved
 * bandwidth is the curve's k = 0 point. */
static const char *const v8_stmts[] = {
	"ALTER TABLE job_io ADD COLUMN IF NOT EXISTS direct"
	" TINYINT(1) NOT NULL DEFAULT 0",
};
/* The ledger's reads do not grow with the released history
 * (controller/ledger_store.c).  Its least-recently-used order is read from
 * forwarders.last_used_at: each forwarder's last release so far, shadow
 * decisions included, a row for forwarders never mirrored, never moving
 * a time backwards.  Its held rows are read from allocations_ledger
 * alone, which holds every column that read needs, in its order
 * (released_at NULL first, then job_id, id): no row lookup per held
 * allocation among a year of released ones.  It serves the retention's
 * `released_at < cutoff` as allocations_held did. */
static const char *const v9_stmts[] = {
	"CREATE INDEX IF NOT EXISTS allocations_ledger ON allocations"
	" (released_at, job_id, id, forwarder, is_private, node_count,"
	" action, acquired_at, io_mode, mdops_rate, bandwidth_bps, iops)",
	"DROP INDEX IF EXISTS allocations_held ON allocations",
	"INSERT INTO forwarders (name, updated_at, last_used_at)"
	" SELECT forwarder, UNIX_TIMESTAMP(), MAX(released_at)"
	" FROM allocations WHERE released_at IS NOT NULL GROUP BY forwarder"
	" ON DUPLICATE KEY UPDATE last_used_at ="
	" GREATEST(COALESCE(forwarders.last_used_at, 0),"
	" VALUES(last_used_at))",
};

/* Forwarders and OSTs that left the topology stay for history (the
 * ledger, the audit and the health episodes name them) but are marked:
 * `fwdctl db init` sets retired_at when a component is no longer in the
 * topology and clears it when one comes back; the health scan skips
 * retired components. */
static const char *const v10_stmts[] = {
	"ALTER TABLE forwarders ADD COLUMN IF NOT EXISTS retired_at"
	" BIGINT NULL",
	"ALTER TABLE osts ADD COLUMN IF NOT EXISTS retired_at BIGINT NULL",
};

/* Quarter-hour rollups (monitor/ingest_rollup.c): the sums, counts and
 * maxima of the rollups_minute rows of each quarter hour, kept by the
 * same ingest transactions that keep rollups_minute, so the reports read a
 * week or a day of a component as 96 rows a day instead of 1,440.  Same
 * columns as rollups_minute; `minute` is the quarter hour's first minute
 * (a multiple of 900).  Filled from the minute rows already stored. */
static const char *const v11_stmts[] = {
	"CREATE TABLE IF NOT EXISTS rollups_15min ("
	" kind ENUM('fwd','ost','mdt') NOT NULL,"
	" name VARCHAR(128) NOT NULL,"
	" minute BIGINT NOT NULL,"
	" samples INT UNSIGNED NOT NULL,"
	" read_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_bytes BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" read_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" write_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" md_ops BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" read_bps_max DOUBLE NULL,"
	" write_bps_max DOUBLE NULL,"
	" queue_len_avg DOUBLE NULL,"
	" queue_len_max DOUBLE NULL,"
	" queue_len_sum DOUBLE NULL,"
	" queue_len_samples INT UNSIGNED NOT NULL DEFAULT 0,"
	" PRIMARY KEY (kind, name, minute),"
	" KEY rollups_15min_minute (minute)"
	")" TABLE_OPTS,
	"INSERT IGNORE INTO rollups_15min (kind, name, minute, samples,"
	" read_bytes, write_bytes, read_ops, write_ops, md_ops, read_bps_max,"
	" write_bps_max, queue_len_avg, queue_len_max, queue_len_sum,"
	" queue_len_samples)"
	" SELECT kind, name, minute - MOD(minute, 900) AS q, SUM(samples),"
	" SUM(read_bytes), SUM(write_bytes), SUM(read_ops), SUM(write_ops),"
	" SUM(md_ops), MAX(read_bps_max), MAX(write_bps_max),"
	" SUM(queue_len_sum) / NULLIF(SUM(queue_len_samples), 0),"
	" MAX(queue_len_max), SUM(queue_len_sum), SUM(queue_len_samples)"
	" FROM rollups_minute GROUP BY kind, name, q",
};

/* A job's job_stats are read by job id in the order (target, Lustre id,
 * ts, op) with their kind, samples and sums: the report's increments
 * (monitor/weather.c) and the history's per-job sums (monitor/jobstats.c).
 * The index on job_id alone held the primary key but not those columns:
 * a row lookup per snapshot (a day of a 512-node job on 144 OSTs: 420,000
 * of them).  It now covers them. */
static const char *const v12_stmts[] = {
	"ALTER TABLE jobstats_raw DROP INDEX IF EXISTS jobstats_raw_job,"
	" ADD INDEX jobstats_raw_job (job_id, target, lustre_job_id, ts, op,"
	" kind, samples, sum_value)",
};

/* The allocations held and the health episodes open at some time of a
 * range (the reports' neighbours, the machine's allocations, the
 * episodes: controller/ledger_store.c, monitor/weather.c) are read
 * through the starts of that range less the longest period ever ended,
 * and the periods still open: a range that does not grow with the
 * history after it, where `released_at >= from` (`end_at > from`) read
 * every row ended since (for a report on a job of last year, all of
 * them).  held_for and lasted are NULL while open; their indexes give the
 * longest at once. */
static const char *const v13_stmts[] = {
	"ALTER TABLE allocations ADD COLUMN IF NOT EXISTS held_for BIGINT AS"
	" (released_at - acquired_at) PERSISTENT,"
	" ADD INDEX IF NOT EXISTS allocations_held_for (held_for),"
	" ADD INDEX IF NOT EXISTS allocations_acquired (acquired_at)",
	"ALTER TABLE health_history ADD COLUMN IF NOT EXISTS lasted BIGINT AS"
	" (end_at - start_at) PERSISTENT,"
	" ADD INDEX IF NOT EXISTS health_history_lasted (lasted),"
	" ADD INDEX IF NOT EXISTS health_history_open (end_at)",
};

/* Version 14: duration classes (db/db.h, DB_DURATION_CLASS): the ended
 * allocations and health periods overlapping a range are one range of the
 * (class, start) index per class, whatever the longest period; version
 * 13's length indexes (which gave that longest period) are dropped, and
 * allocations_acquired with them (allocations_held_class starts with the
 * class). */
static const char *const v14_stmts[] = {
	"ALTER TABLE allocations ADD COLUMN IF NOT EXISTS held_class"
	" TINYINT UNSIGNED AS " DB_DURATION_CLASS("held_for") " PERSISTENT,"
	" ADD INDEX IF NOT EXISTS allocations_held_class"
	" (held_class, acquired_at),"
	" DROP INDEX IF EXISTS allocations_held_for,"
	" DROP INDEX IF EXISTS allocations_acquired",
	"ALTER TABLE health_history ADD COLUMN IF NOT EXISTS lasted_class"
	" TINYINT UNSIGNED AS " DB_DURATION_CLASS("lasted") " PERSISTENT,"
	" ADD INDEX IF NOT EXISTS health_history_lasted_class"
	" (lasted_class, start_at),"
	" DROP INDEX IF EXISTS health_history_lasted",
};

/*
 * ledger_version (controller/ledger_store.c): one row; after a release,
 * the recent releases not numbered yet take its next number
 * (allocations.released_seq), holding the row until they commit, so that
 * a ledger kept in memory reads only the releases numbered after the last
 * it read and the few not numbered yet.
 */
static const char *const v15_stmts[] = {
	"CREATE TABLE IF NOT EXISTS ledger_version ("
	" id TINYINT UNSIGNED NOT NULL,"
	" version BIGINT UNSIGNED NOT NULL DEFAULT 0,"
	" PRIMARY KEY (id)"
	")" TABLE_OPTS,

	"INSERT IGNORE INTO ledger_version (id) VALUES (1)",

	"ALTER TABLE allocations"
	" ADD COLUMN IF NOT EXISTS released_seq BIGINT UNSIGNED NULL,"
	" ADD INDEX IF NOT EXISTS allocations_released_seq"
	" (released_seq, released_at)",
};

static const struct schema_migration migrations[] = {
	{ 1, "initial schema", v1_stmts, N_ELEM(v1_stmts) },
	{ 2, "node_allocations view for the node account",
	  v2_stmts, N_ELEM(v2_stmts) },
	{ 3, "decision and health lock rows; node_allocations_for procedure",
	  v3_stmts, N_ELEM(v3_stmts) },
	{ 4, "job_io sources darshan, forwarders, sacct; profiled_at",
	  v4_stmts, N_ELEM(v4_stmts) },
	{ 5, "held-allocation and retention indexes",
	  v5_stmts, N_ELEM(v5_stmts) },
	{ 6, "job_io.forwarders_private",
	  v6_stmts, N_ELEM(v6_stmts) },
	{ 7, "additive rollups: queue length sums; ingest_horizon;"
	  " ingest_lock, ingest_arrivals, history_examined",
	  v7_stmts, N_ELEM(v7_stmts) },
	{ 8, "job_io.direct",
	  v8_stmts, N_ELEM(v8_stmts) },
	{ 9, "ledger reads without the history: forwarders.last_used_at"
	  " from the released allocations; allocations_ledger index",
	  v9_stmts, N_ELEM(v9_stmts) },
	{ 10, "forwarders.retired_at, osts.retired_at",
	  v10_stmts, N_ELEM(v10_stmts) },
	{ 11, "rollups_15min: quarter-hour rollups",
	  v11_stmts, N_ELEM(v11_stmts) },
	{ 12, "jobstats_raw_job covers a job's snapshots",
	  v12_stmts, N_ELEM(v12_stmts) },
	{ 13, "allocations.held_for, health_history.lasted; start and"
	  " length indexes",
	  v13_stmts, N_ELEM(v13_stmts) },
	{ 14, "duration classes: allocations.held_class,"
	  " health_history.lasted_class and their (class, start) indexes",
	  v14_stmts, N_ELEM(v14_stmts) },
	{ 15, "ledger_version; allocations.released_seq: the ledger's"
	  " changes since a mark",
	  v15_stmts, N_ELEM(v15_stmts) },
};
/* clang-format on */

const struct schema_migration *schema_migrations(size_t *count)
{
	*count = N_ELEM(migrations);
	return migrations;
}

int schema_latest_version(void)
{
	return migrations[N_ELEM(migrations) - 1].version;
}

/* clang-format off */
static const char *const schema_tables[] = {
	"forwarders", "osts", "jobs", "job_io", "profiles",
	"samples_raw", "samples_hist", "rollups_minute", "rollups_15min",
	"rollups_hist_minute", "jobstats_raw", "counter_state",
	"health", "health_history", "allocations", "audit",
	NULL,
};
/* clang-format on */

const char *const *schema_table_names(void)
{
	return schema_tables;
}

int db_table_rows(struct db *db, const char *table, int64_t *rows,
		  fwd_error_t *err)
{
	char sql[128];

	for (size_t i = 0; schema_tables[i]; i++) {
		if (strcmp(schema_tables[i], table))
			continue;
		/* The name comes from the fixed schema list. */
		snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s",
			 schema_tables[i]);
		*rows = 0;
		return db_query_int64(db, err, rows, sql, "") < 0 ? -1 : 0;
	}
	errno = EINVAL;
	return errprintf(err, "no table '%s' in the schema", table);
}

#define VERSION_TABLE                                 \
	"CREATE TABLE IF NOT EXISTS schema_version (" \
	" version INT NOT NULL,"                      \
	" description VARCHAR(255) NOT NULL,"         \
	" applied_at BIGINT NOT NULL,"                \
	" PRIMARY KEY (version)"                      \
	")" TABLE_OPTS

#define MIGRATE_LOCK "fwdalloc.schema"

int schema_current_version(struct db *db, int *version, fwd_error_t *err)
{
	struct db_stmt *st;
	int rv = -1;
	int r;

	st = db_prepare(db,
			"SELECT COALESCE(MAX(version), 0) FROM schema_version",
			err);
	if (!st)
		return -1;
	if (db_exec(st, err) < 0)
		goto out;
	r = db_fetch(st, err);
	if (r < 0)
		goto out;
	*version = r ? (int)db_col_int64(st, 0) : 0;
	rv = 0;
out:
	db_stmt_close(st);
	return rv;
}

static int apply(struct db *db, const struct schema_migration *m,
		 fwd_error_t *err)
{
	for (size_t i = 0; i < m->n_stmts; i++) {
		if (db_execf(db, err, m->stmts[i], "") < 0)
			return errprefix(err,
					 "migration %d (%s), statement %zu",
					 m->version, m->description, i + 1);
	}
	return db_execf(db, err,
			"INSERT INTO schema_version (version, description,"
			" applied_at) VALUES (?, ?, ?)",
			"isi", (int64_t)m->version, m->description,
			(int64_t)time(NULL));
}

int db_migrate(struct db *db, int *from, int *to, fwd_error_t *err)
{
	int latest = schema_latest_version();
	int cur = 0;
	int rv = -1;
	bool locked = false;

	if (db_execf(db, err, VERSION_TABLE, "") < 0)
		return -1;
	/* Two `fwdctl db migrate` at once would race on the same DDL. */
	if (db_lock(db, MIGRATE_LOCK, 30, err) < 0)
		return -1;
	locked = true;
	if (schema_current_version(db, &cur, err) < 0)
		goto out;
	if (from)
		*from = cur;
	if (cur > latest) {
		errno = EPROTO;
		errprintf(err,
			  "database schema version %d is newer than this "
			  "fwdalloc knows (%d): upgrade fwdalloc before "
			  "using this database",
			  cur, latest);
		goto out;
	}
	for (size_t i = 0; i < N_ELEM(migrations); i++) {
		if (migrations[i].version <= cur)
			continue;
		if (apply(db, &migrations[i], err) < 0)
			goto out;
		cur = migrations[i].version;
	}
	if (to)
		*to = cur;
	rv = 0;
out:
	if (locked)
		db_unlock(db, MIGRATE_LOCK, NULL);
	return rv;
}

int db_check_schema(struct db *db, fwd_error_t *err)
{
	int latest = schema_latest_version();
	int cur = 0;

	if (schema_current_version(db, &cur, err) < 0)
		return -1;
	if (cur == latest)
		return 0;
	if (cur > latest) {
		errno = EPROTO;
		return errprintf(err,
				 "database schema version %d is newer than "
				 "this fwdalloc knows (%d): upgrade fwdalloc",
				 cur, latest);
	}
	errno = ENOENT;
	return errprintf(err,
			 "database schema version %d is older than %d: run "
			 "`fwdctl db migrate`",
			 cur, latest);
}

struct db *db_connect_current(const struct db_config *cfg, enum db_role role,
			      fwd_error_t *err)
{
	struct db *db = db_connect(cfg, role, err);
	int e;

	if (db && db_check_schema(db, err) < 0) {
		e = errno;
		db_close(db);
		errno = e;
		return NULL;
	}
	return db;
}

static bool ident_ok(const char *s, const char *extra)
{
	if (!s || !*s || strlen(s) > 80)
		return false;
	for (const char *p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
		    *p == '.')
			continue;
		if (strchr(extra, *p))
			continue;
		return false;
	}
	return true;
}

/* What the read-only node account may do (DESIGN.md: node prologs read
 * only their allocation rows and the forwarders' addresses): run the
 * node_allocations_for procedure.  The SELECT grants of earlier versions
 * are taken back: version 1's on tables, version 2's on the view (which
 * also allowed locking reads). */
/* clang-format off */
static const char *const node_procedures[] = { "node_allocations_for" };
static const char *const node_old_selects[] = {
	"allocations", "forwarders", "node_allocations",
};

int db_grant_node(struct db *db, const char *user, const char *host,
		  fwd_error_t *err)
{
	char sql[256];

	/* Account names are identifiers, not values: they cannot be bound
	 * as parameters, so they are checked against a strict character
	 * set instead and quoted. */
	if (!ident_ok(user, "")) {
		errno = EINVAL;
		return errprintf(err,
				 "node account user '%s': use letters, digits, "
				 "'_', '-' and '.'",
				 user ? user : "");
	}
	if (!ident_ok(host, "%:")) {
		errno = EINVAL;
		return errprintf(err,
				 "node account host '%s': use letters, digits, "
				 "'_', '-', '.', ':' and '%%'",
				 host ? host : "");
	}
	for (size_t i = 0; i < N_ELEM(node_procedures); i++) {
		snprintf(sql, sizeof(sql),
			 "GRANT EXECUTE ON PROCEDURE %s TO '%s'@'%s'",
			 node_procedures[i], user, host);
		if (db_execf(db, err, sql, "") < 0)
			return errprefix(err, "granting %s to '%s'@'%s'",
					 node_procedures[i], user, host);
	}
	/* MariaDB has no REVOKE IF EXISTS: a REVOKE of a grant that was
	 * never given fails (1147).  Granting first makes the REVOKE always
	 * valid, so this is idempotent whatever grants of earlier versions
	 * the account holds. */
	for (size_t i = 0; i < N_ELEM(node_old_selects); i++) {
		snprintf(sql, sizeof(sql), "GRANT SELECT ON %s TO '%s'@'%s'",
			 node_old_selects[i], user, host);
		if (db_execf(db, err, sql, "") < 0)
			return errprefix(err, "revoking %s from '%s'@'%s'",
					 node_old_selects[i], user, host);
		snprintf(sql, sizeof(sql),
			 "REVOKE SELECT ON %s FROM '%s'@'%s'",
			 node_old_selects[i], user, host);
		if (db_execf(db, err, sql, "") < 0)
			return errprefix(err, "revoking %s from '%s'@'%s'",
					 node_old_selects[i], user, host);
	}
	return 0;
}
/* clang-format on */
