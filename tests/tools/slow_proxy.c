/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test-only tool: a database slowed down.  slow_proxy LISTEN UPSTREAM MS
 * listens on the unix socket LISTEN and relays each connection to the
 * unix socket UPSTREAM, holding every chunk the client sends for MS
 * milliseconds before passing it on: each round trip to the server takes
 * MS longer, as on a loaded server or a distant one.  Runs until killed;
 * one process per connection.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		fprintf(stderr, "slow_proxy: %s: path too long\n", path);
		return -1;
	}
	strcpy(a->sun_path, path);
	return 0;
}

/* Copy one chunk from -> to; 0 at end of stream, -1 on error. */
static int relay(int from, int to, long delay_ms)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf)), off = 0;

	if (n <= 0)
		return n < 0 && errno != ECONNRESET ? -1 : 0;
	if (delay_ms > 0) {
		struct timespec ts = {delay_ms / 1000,
				      (delay_ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	while (off < n) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0)
			return -1;
		off += w;
	}
	return 1;
}

static void serve(int client, const char *upstream, long delay_ms)
{
	struct sockaddr_un a;
	struct pollfd p[2];
	int up = socket(AF_UNIX, SOCK_STREAM, 0);

	if (up < 0 || unix_addr(upstream, &a) < 0 ||
	    connect(up, (struct sockaddr *)&a, sizeof(a)) < 0)
		_exit(1);
	p[0].fd = client;
	p[1].fd = up;
	p[0].events = p[1].events = POLLIN;
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			if (relay(client, up, delay_ms) <= 0)
				_exit(0);
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			if (relay(up, client, 0) <= 0)
				_exit(0);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un a;
	long delay_ms;
	int l;

	if (argc != 4) {
		fprintf(stderr, "usage: slow_proxy LISTEN UPSTREAM MS\n");
		return 2;
	}
	delay_ms = atol(argv[3]);
	signal(SIGCHLD, SIG_IGN); /* no zombies */
	signal(SIGPIPE, SIG_IGN);
	unlink(argv[1]);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || unix_addr(argv[1], &a) < 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 512) < 0) {
		fprintf(stderr, "slow_proxy: %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	for (;;) {
		int c = accept(l, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (fork() == 0) {
			close(l);
			serve(c, argv[2], delay_ms);
		}
		close(c);
	}
}
