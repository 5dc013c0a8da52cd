/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Escaping text for XML and HTML (common/xml.h). */
#include "config.h"

#include "common/xml.h"

void fwd_xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (c >= 0x20 || c == '\t' || c == '\n')
				fputc(c, f);
		}
	}
}
