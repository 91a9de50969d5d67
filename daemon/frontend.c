/* frontend.c: the frontend process: event loop, spawner channel, signals. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fdpass.h"
#include "frontend.h"
#include "log.h"

int
frontend_spawn(struct daemon *d, const struct spawn_req *req, int *fds)
{
	for (;;) {
		struct pollfd p = {.fd = d->spawner_fd, .events = POLLOUT};
		int r = fdpass_send(d->spawner_fd, req, sizeof(*req), fds, SPAWN_REQ_NFDS);

		if (r != -EAGAIN)
			return r;
		/* The spawner is a busy local peer, not a client: wait for it. */
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			return -errno;
	}
}

/* Events from the spawner; its end is the frontend's end. */
static void
frontend_spawner_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	int budget;

	(void)what;
	for (budget = 64; budget > 0; budget--) {
		struct spawn_ev ev;
		int fds[1];
		size_t nfds = 0;
		ssize_t n = fdpass_recv(fd, &ev, sizeof(ev), fds, 1, &nfds);

		if (n == -EAGAIN || n == -EINTR)
			return;
		fdpass_close_all(fds, nfds);
		if (n == 0) {
			log_warnx("the spawner is gone; stopping");
			event_base_loopbreak(d->base);
			return;
		}
		if (n < 0 || (size_t)n != sizeof(ev))
			fatalx("malformed message from the spawner");
		ev.step[sizeof(ev.step) - 1] = '\0';
		run_spawner_event(d, &ev);
	}
}

static void
frontend_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	log_info("signal %d: stopping", (int)sig);
	event_base_loopbreak(d->base);
}

int
frontend_main(struct daemon *d)
{
	TAILQ_INIT(&d->clients);
	TAILQ_INIT(&d->runs);
	signal(SIGPIPE, SIG_IGN);
	if (fcntl(d->spawner_fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	d->spawner_ev =
		event_new(d->base, d->spawner_fd, EV_READ | EV_PERSIST, frontend_spawner_cb, d);
	d->sigterm_ev = evsignal_new(d->base, SIGTERM, frontend_signal_cb, d);
	d->sigint_ev = evsignal_new(d->base, SIGINT, frontend_signal_cb, d);
	if (d->spawner_ev == NULL || d->sigterm_ev == NULL || d->sigint_ev == NULL)
		return -ENOMEM;
	event_add(d->spawner_ev, NULL);
	event_add(d->sigterm_ev, NULL);
	event_add(d->sigint_ev, NULL);
	if (listener_start(d) < 0)
		return -EIO;
	log_info("ready: listening, %u runs at most, memory limit by %s", d->cfg->max_runs,
		 d->memory_cgroup ? "cgroup" : "RLIMIT_AS");
	/* NotifyAccess=all: the main pid is the spawner, readiness is ours. */
	sd_notifyf(0, "READY=1\nSTATUS=listening; %u runs at most", d->cfg->max_runs);
	event_base_dispatch(d->base);
	sd_notify(0, "STOPPING=1");
	/* Leaving closes the spawner channel: the spawner kills every sandbox. */
	while (!TAILQ_EMPTY(&d->clients))
		client_free(TAILQ_FIRST(&d->clients));
	return 0;
}
