/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parsing a `database.hosts` entry (db/db.h).  Kept apart from db.c so
 * that the policy loader, which checks the entries, links without the
 * MariaDB client library.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

int db_endpoint_parse(const char *s, struct db_endpoint *out, fwd_error_t *err)
{
	const char *host = s, *port = NULL;
	size_t hlen;

	memset(out, 0, sizeof(*out));
	errno = EINVAL;
	if (!s || !*s)
		return errprintf(err, "an empty endpoint");
	if (s[0] == '/') {
		if (strlen(s) >= sizeof(out->socket))
			return errprintf(err,
					 "socket path longer than %zu bytes",
					 sizeof(out->socket) - 1);
		strcpy(out->socket, s);
		return 0;
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close == s + 1)
			return errprintf(err, "an IPv6 address needs its "
					      "closing ']'");
		host = s + 1;
		hlen = (size_t)(close - host);
		if (strspn(host, "0123456789abcdefABCDEF:.") < hlen ||
		    !memchr(host, ':', hlen))
			return errprintf(err, "'%.*s' is not an IPv6 address",
					 (int)hlen, host);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return errprintf(err, "expected ':port' after ']'");
	} else {
		const char *colon = strchr(s, ':');

		if (colon && strchr(colon + 1, ':'))
			return errprintf(err, "an IPv6 address goes in "
					      "brackets, e.g. [::1]:3306");
		hlen = colon ? (size_t)(colon - s) : strlen(s);
		if (!hlen)
			return errprintf(err, "no host before ':'");
		if (strspn(s, "abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") < hlen)
			return errprintf(err,
					 "host '%.*s': only letters, digits, "
					 "'.', '-' and '_'",
					 (int)hlen, s);
		if (colon)
			port = colon + 1;
	}
	if (hlen >= sizeof(out->host))
		return errprintf(err, "host name longer than %zu bytes",
				 sizeof(out->host) - 1);
	memcpy(out->host, host, hlen);
	out->host[hlen] = '\0';
	if (port) {
		unsigned long v = 0;
		size_t nd = strspn(port, "0123456789");

		if (!nd || port[nd] || nd > 5 ||
		    (v = strtoul(port, NULL, 10)) < 1 || v > 65535)
			return errprintf(err, "port '%s': expected 1 to 65535",
					 port);
		out->port = (uint32_t)v;
	}
	return 0;
}
