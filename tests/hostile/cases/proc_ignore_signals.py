# Ignore every catchable signal and block them, then spin: cpu_limit still ends it (SIGKILL cannot be ignored).
# expect: outcome=cpu_limit
# args: --cpu 0.5 --wall 10
# within: 6
import signal
for s in range(1, 65):
    try:
        signal.signal(s, signal.SIG_IGN)
    except (OSError, ValueError):
        pass
signal.pthread_sigmask(signal.SIG_BLOCK, range(1, 65))
while True:
    pass
