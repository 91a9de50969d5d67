# Allocate and touch memory without end: the run's memory cgroup kills it.
# expect: outcome=memory_limit
# args: --memory 64M --wall 10
# within: 10
chunks = []
while True:
    chunks.append(bytearray(8 << 20))
