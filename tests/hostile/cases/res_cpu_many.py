# Eight processes spin at once: the sum of their cpu time hits cpu_ms (1 s) well before the wall.
# expect: outcome=cpu_limit wall_ms<=6000
# args: --cpu 1 --wall 20 --processes 16
# within: 10
import os
for i in range(7):
    if os.fork() == 0:
        break
while True:
    pass
