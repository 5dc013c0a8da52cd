/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_SLURM_CONF_H
#define FWD_COMMON_SLURM_CONF_H

/*
 * What fwdalloc needs of slurm.conf: what slurmd allows a node prolog,
 * SlurmUser, the MUNGE socket and the slurmctld hosts (no libslurm:
 * cheap enough for every node prolog, and usable where no controller
 * answers).  slurmd kills a prolog that runs longer, drains the node and
 * requeues the job held, whatever fwdalloc's access.fail says, so every
 * node-side budget must stay below it (DESIGN.md, Slurm releases).
 *
 * The prolog's limit: PrologTimeout (25.05 and later), else
 * PrologEpilogTimeout (every release; from 25.05 the default of
 * PrologTimeout and EpilogTimeout).  Slurm 22.05-24.11 know only
 * PrologEpilogTimeout.  Not set, or 65534 (NO_VAL16): slurmd waits
 * forever.
 */

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* slurm.conf as libslurm finds it: path, else $SLURM_CONF, else
 * /etc/slurm/slurm.conf, else the configless copy /run/slurm/conf. */
const char *fwd_slurm_conf_path(const char *path);

/*
 * The node prolog's time limit from the slurm.conf at `path` (NULL: as
 * fwd_slurm_conf_path()).  1 with *secs and *key (a static string: the
 * key it came from), 0 when slurmd waits forever (not set, or 65534), -1
 * with errno and err when the file cannot be read or the value is not a
 * number of seconds.  Keys are case-insensitive, several may share a
 * line, '#' starts a comment.
 */
int fwd_slurm_prolog_timeout(const char *path, uint32_t *secs, const char **key,
			     fwd_error_t *err);

/*
 * SlurmUser from the slurm.conf at `path` (NULL: as fwd_slurm_conf_path()),
 * the account slurmctld runs as, and so PrologSlurmctld and
 * EpilogSlurmctld: into buf (len bytes), "root" when the file does not set
 * it (Slurm's default).  0, or -1 with errno and err when the file cannot
 * be read or the value is not a user name (letters, digits, '.', '_', '-',
 * not starting with '-') that fits.
 */
int fwd_slurm_user(const char *path, char *buf, size_t len, fwd_error_t *err);

/*
 * The MUNGE socket Slurm's daemons use, from AuthInfo in the slurm.conf at
 * `path` (NULL: as fwd_slurm_conf_path()), read as Slurm reads it
 * (slurm_auth_opts_to_socket(): "socket=<path>" among comma-separated
 * options, or a bare path, the old form): 1 with the path in buf (len
 * bytes), 0 when AuthInfo names none (libmunge's default socket), -1 with
 * errno and err when the file cannot be read or the path does not fit.
 */
int fwd_slurm_munge_socket(const char *path, char *buf, size_t len,
			   fwd_error_t *err);

/* The slurmctld hosts fwd_slurm_controllers() returns at most, and the
 * room for one address. */
#define FWD_SLURM_CTLD_MAX 16
#define FWD_SLURM_HOST_LEN 256

/*
 * The addresses of the slurmctld hosts in the slurm.conf at `path` (NULL:
 * as fwd_slurm_conf_path()), primary first, read as Slurm reads them
 * (read_config.c, _load_slurmctld_host()): each SlurmctldHost line, its
 * address in parentheses ("name(addr)") or else its name; with none, the
 * old keys ControlMachine (address ControlAddr) then BackupController
 * (BackupAddr).  Into hosts, up to FWD_SLURM_CTLD_MAX (the rest are not
 * used): the count, at least 1; or -1 with errno and err when the file
 * cannot be read (errno from fopen), names no controller (ENOENT) or a
 * value is not a host, a host and its address, or too long (EINVAL).
 */
int fwd_slurm_controllers(const char *path, char hosts[][FWD_SLURM_HOST_LEN],
			  fwd_error_t *err);

#endif
