/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_COMMON_XML_H
#define FWD_COMMON_XML_H

#include <stdio.h>

/*
 * s written to f escaped for XML and HTML text and for quoted attribute
 * values (& < > " and ' as entities); control characters other than tab
 * and newline dropped, since XML 1.0 allows none of them.  NULL writes
 * nothing.  The reports' HTML and the simulator's SVG charts use it for
 * every stored or user-given string.
 */
void fwd_xml_text(FILE *f, const char *s);

#endif
