/* svcmgr.h: systemd's service-manager protocols, spoken without libsystemd. */
#ifndef AIRLOCK_SVCMGR_H
#define AIRLOCK_SVCMGR_H

#include <stddef.h>
#include <sys/uio.h>

#define SVCMGR_LISTEN_FDS_START 3
#define SVCMGR_JOURNAL_SOCKET "/run/systemd/journal/socket"

/* Send STATE ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET: 1 sent, 0 no
 * socket in the environment, -errno. */
int svcmgr_notify(const char *state);
int svcmgr_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sockets passed by socket activation ($LISTEN_PID is us, $LISTEN_FDS):
 * their count (from SVCMGR_LISTEN_FDS_START), 0 none, -errno; the two
 * variables are unset either way, so no child inherits them. */
int svcmgr_listen_fds(void);

/* 1 when fd is a listening AF_UNIX SOCK_SEQPACKET socket, 0 not, -errno. */
int svcmgr_is_seqpacket_listener(int fd);

/* One journal entry of n "KEY=VALUE" fields, in the journal's native
 * protocol, to PATH (svcmgr_journal_sendv: SVCMGR_JOURNAL_SOCKET). 0 or
 * -errno (-EMSGSIZE: larger than one datagram or than 64 KiB; -EINVAL: a
 * field without '='). */
int svcmgr_journal_sendv(const struct iovec *iov, size_t n);
int svcmgr_journal_sendv_to(const char *path, const struct iovec *iov, size_t n);

#endif
