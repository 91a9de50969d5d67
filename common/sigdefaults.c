/* sigdefaults.c: every disposition to its default. See sigdefaults.h. */
#include "sigdefaults.h"

#include <signal.h>
#include <string.h>

void
sigdefaults_all(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}
