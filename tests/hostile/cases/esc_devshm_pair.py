# /dev/shm (POSIX shm) is per run: a file one concurrent run leaves there is absent from the other.
# pair: writer reader
# check: out.startswith("WROTE") == (r["_role"] == "writer")
# expect: outcome=exited exit_code=0 stdout~=^(WROTE|BLOCKED) stdout!~=LEAK
import os, time
if "@ROLE@" == "writer":
    with open("/dev/shm/airlock-hostile-shm", "w") as f:
        f.write("secret of the other run")
    print("WROTE", os.listdir("/dev/shm"))
    time.sleep(2)
else:
    time.sleep(0.7)
    seen = os.listdir("/dev/shm")
    print(("LEAK %s" if "airlock-hostile-shm" in seen else "BLOCKED %s") % seen)
