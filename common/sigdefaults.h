/*
 * sigdefaults.h: every signal disposition back to its default and the mask
 * emptied, allocation-free, before an exec of code that must start as a
 * fresh process would (a run's code, a zygote).
 */
#ifndef AIRLOCKD_SIGDEFAULTS_H
#define AIRLOCKD_SIGDEFAULTS_H

/*
 * execve() keeps ignored dispositions and the mask: a service manager
 * ignores SIGPIPE (systemd's IgnoreSIGPIPE=yes), a shell's "&" ignores
 * SIGINT and SIGQUIT, and the spawner
 * blocks the signals it reads through its signalfd. No error is possible
 * but EINVAL for the signals no one may change (SIGKILL, SIGSTOP, the C
 * library's own), which stay as they are.
 */
void sigdefaults_all(void);

#endif
