/* compiler.h: the compiler attributes the code uses, named once. */
#ifndef AIRLOCK_COMPILER_H
#define AIRLOCK_COMPILER_H

/*
 * A parameter a callback's signature requires and its body does not read
 * (libevent's fd and event mask, a dispatch table's fds). Written on the
 * parameter, as tmux's __unused, instead of a (void) cast in the body.
 */
#define UNUSED __attribute__((unused))

#endif
