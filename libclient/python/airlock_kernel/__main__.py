"""python3 -m airlock_kernel: run the kernel (-f FILE) or install a kernelspec."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
